"""Knowing when the robot itself is talking, so the microphone does not transcribe it.

The bus carries the ``speak`` action (published before the sound starts) and its
``actions/results`` entry (published when playback has ended, or was refused or cut short).
Between the two, plus ``tail_s`` for the room's echo and the output buffer, whatever the
microphone hears is taken to be the robot (``active``). A result that never comes (a body that
crashed) must not deafen the node forever, so each hold also expires after a time estimated
from the text.

What a person could talk over (``speaking``) starts later: when the sound does. A body says so
on ``speaking`` (a ``Speaking`` payload, when the first audio of the action went to the device);
on a busy CPU that is seconds after the action (synthesis), and barge-in, which learns the
robot's voice from the start of each sound, learned the room instead and took the robot's own
voice for a person. Once one such announcement was heard, a sound counts only from its own; a
body that never announces (an older one) is taken at its action's word, as before.

Code that plays audio in the same process can call ``hold``/``release`` directly. When a
person talks over the robot (edge/perception/microphone/barge_in.py), ``interrupt`` ends the holds at once.

``speaking(at=...)`` and ``active(at=...)`` answer for a moment in the recent past: on a busy CPU
the microphone node works through audio up to a second after it arrived, and what it asks is
whether the robot was talking when that audio was heard, not when it is looked at (asking "now"
took the robot's first words for the room before it spoke, and the room for the robot after).
"""

from __future__ import annotations

import collections
import threading
import time
from collections.abc import Callable, Iterable

from edge.protocol.action_names import SPEECH_ACTIONS
from edge.protocol.speech_action import words_key
from edge.protocol.payloads import Action, ActionResult, Speaking


class SelfVoiceGate:
    """Thread-safe: bus handlers call in from paho's thread, the mic loop asks ``active()``."""

    def __init__(self, tail_s: float = 0.6, max_hold_s: float = 60.0, seconds_per_char: float = 0.15,
                 sound_actions: Iterable[str] = SPEECH_ACTIONS, clock: Callable[[], float] = time.monotonic):
        self.tail_s = tail_s
        self.max_hold_s = max_hold_s
        self.seconds_per_char = seconds_per_char
        self.sound_actions = frozenset(sound_actions)
        self._clock = clock
        self._lock = threading.Lock()
        self._holds: dict[str, float] = {}  # key -> expiry
        self._quiet_from = 0.0               # end of the last tail
        self._finished: collections.deque[str] = collections.deque(maxlen=256)
        self._started: dict[str, float] = {}    # key -> when its hold began
        # the holds that ended, newest last: (began, ended, tail's end, key)
        self._ended: collections.deque[tuple[float, float, float, str]] = collections.deque(maxlen=64)
        self._announced = False   # a body says when each sound starts (``Speaking``)
        self._sound_at: collections.OrderedDict[str, float] = collections.OrderedDict()   # key -> its sound began

    def hold(self, key: str, expected_s: float | None = None) -> None:
        """Sound starts (or is about to); it ends at ``release(key)`` or after the expected time."""
        with self._lock:
            if key in self._finished:  # its result overtook the action on the way here
                return
            span = self.max_hold_s if expected_s is None else min(max(expected_s, 0.0), self.max_hold_s)
            now = self._clock()
            self._holds[key] = now + span
            self._started.setdefault(key, now)

    def release(self, key: str) -> None:
        with self._lock:
            if key in self._finished and key not in self._holds:
                return  # already over (talked over, or a repeated result): no second echo tail
            self._finished.append(key)
            now = self._clock()
            self._end(key, now, now + self.tail_s)
            self._quiet_from = max(self._quiet_from, now + self.tail_s)

    def _end(self, key: str, ended: float, quiet_from: float) -> None:
        """(lock held) ``key``'s hold is over: kept for questions about the recent past."""
        self._holds.pop(key, None)
        self._ended.append((self._started.pop(key, ended), ended, quiet_from, key))

    def sounding(self, key: str, at: float) -> None:
        """``key``'s sound began at ``at`` (this gate's clock): from now on a sound counts as playing
        only from its own start (see the module docstring)."""
        with self._lock:
            self._announced = True
            self._sound_at[key] = at
            while len(self._sound_at) > 256:
                self._sound_at.popitem(last=False)

    @property
    def announced(self) -> bool:
        """Whether a body has said when one of its sounds started (then sounds count from their own)."""
        return self._announced

    def _sounds(self, key: str, at: float) -> bool:
        """(lock held) Whether ``key``'s sound had begun at ``at``, as far as a body said."""
        return not self._announced or self._sound_at.get(key, at + 1.0) <= at

    def speaking(self, at: float | None = None) -> list[str]:
        """The sounds playing now, or at ``at`` (this gate's clock, in the recent past): their keys,
        tail excluded: what a person could talk over."""
        now = self._clock()
        with self._lock:
            if at is None or at >= now:
                return [key for key, expiry in self._holds.items() if expiry > now and self._sounds(key, now)]
            held = [key for key, expiry in self._holds.items()
                    if self._started[key] <= at < expiry and self._sounds(key, at)]
            return held + [key for began, ended, _, key in self._ended
                           if began <= at < ended and key not in held and self._sounds(key, at)]

    def interrupt(self, at: float | None = None) -> list[str]:
        """A person talked over the robot (barge-in): its sound is being cut, so what is heard from
        then on is the person; the holds end at once, without the echo tail. ``at`` (this gate's
        clock): when the audio that showed the person was heard. A node behind its microphone
        fires a moment after that, and the audio heard in between is the person's, not the
        robot's (ended "now", it was marked as the robot's and the person's words dropped).
        Returns the keys cut."""
        with self._lock:
            keys = list(self._holds)
            self._finished.extend(keys)
            now = self._clock()
            end = now if at is None else min(max(at, 0.0), now)
            for key in keys:
                self._end(key, max(end, self._started.get(key, end)), end)
            self._quiet_from = end
        return keys

    def active(self, at: float | None = None) -> bool:
        """True while any sound is held, or within ``tail_s`` after the last one ended; with ``at``,
        whether that was so then (this gate's clock, in the recent past)."""
        now = self._clock()
        with self._lock:
            for key, expiry in list(self._holds.items()):
                if expiry <= now:  # no result came: stop waiting for it
                    self._end(key, expiry, expiry + self.tail_s)
                    self._quiet_from = max(self._quiet_from, expiry + self.tail_s)
            if at is None or at >= now:
                return bool(self._holds) or now < self._quiet_from
            return any(began <= at for began in self._started.values()) or \
                any(began <= at < quiet_from for began, _, quiet_from, _ in self._ended)

    # -- bus handlers -------------------------------------------------------------------

    def on_action(self, action: Action) -> None:
        if action.name not in self.sound_actions:
            return
        key = words_key(action.params)   # message, text, ことば, 内容 ...
        text = action.params[key] if key is not None else ""
        expected = 3.0 + self.seconds_per_char * len(text) if isinstance(text, str) else None
        self.hold(action.id, expected)

    def on_speaking(self, speaking: Speaking) -> None:
        """The body's word that a sound began (wall time), on this gate's clock."""
        self.sounding(speaking.action, self._clock() - max(time.time() - speaking.at, 0.0))

    def on_result(self, result: ActionResult) -> None:
        if result.name in self.sound_actions or result.id in self._holds:
            self.release(result.id)
