"""The action names the stack itself gives a meaning to, read by the brain, the body and the microphone.

A companion file names its own actions; a few names mean the same thing to every node:

* ``stop``: the body's own stop. Every body understands it, whether or not a companion file
  declares it; it jumps the body's queue and passes an engaged emergency stop.
* the speech actions (``speak``, ``say``): words said aloud. The brain may stream them a clause
  at a time and checks that they answer a person; the body speaks them, and a person talking
  over the robot (barge-in) cuts the one playing and drops those waiting; the microphone holds
  its ears while one plays.

One list, so that no node treats ``say`` as speech while another treats it as a gesture
(docs/protocol.md, "Actions"). A companion file may name its voice otherwise (``whisper``,
``shaberu``): edge/protocol/speech_action.py says which action that is, for every node alike.
"""

from __future__ import annotations

STOP = "stop"
SPEECH_ACTION = "speak"      # what every body speaks: a companion's voice is handed to it by this name
SPEECH_ACTIONS: tuple[str, ...] = (SPEECH_ACTION, "say")

