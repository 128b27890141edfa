"""The camera node: frames from a camera, a file, a folder or a stream, through a detector and
the scene policy, into ``vision`` perceptions (and ``look`` reflexes).

Public: ``node`` (``CameraNode``, ``run_camera``), ``options`` (``companion run camera``),
``detector_spec.make_detector`` and the ``detectors.Detector`` interface, ``devices`` (for
``companion doctor``). Torch, Ultralytics and onnxruntime load only when a detector needs them.
"""
