"""The microphone node: audio through voice activity, end of turn, barge-in and speech
recognition into ``input`` perceptions.

Public: ``run.run_mic`` (``companion run mic``) with ``options``, ``node`` (``MicNode``),
``recognizer_spec`` (``make_recognizer``, ``choose_recognizer``) and the ``stt.Recognizer``
interface, ``audio_source`` and ``audio_devices``. Speech engines load only when chosen.
"""
