"""The robot's voice: text to speech sentence by sentence, played while the next is synthesized.

Public: ``speaker`` (``Speaker``), ``tts`` (``make_synthesizer``, ``PiperSynthesizer``),
``playback`` (``AudioOutput``), ``wav_output`` (speech to files), ``hold`` (a pause while the
microphone listens).
"""
