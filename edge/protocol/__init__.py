"""What every part of the stack agrees on: the wire's payloads and codec, and companion files.

Public: ``payloads`` (each message's topic, QoS and schema), ``codec`` (the one JSON codec),
``companion`` (``Companion``, ``load_companion``, ``CompanionError``: reading and validating a
companion file), ``sentences`` (``SentenceMatcher``), ``action_codes``, ``action_names`` (``STOP``
and the speech actions, read by the brain, the body and the microphone), ``dedupe``;
``validate_cli`` is ``companion validate``, which answers at once: nothing here loads a model.
"""
