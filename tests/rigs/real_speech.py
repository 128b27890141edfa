"""Recordings of real people (and of real noise) for the microphone tests, from Debian packages.

Synthetic voices are clean and regular; people are not. Two packages installed by
``deploy/setup.sh --test`` carry human speech with known words:

* ``alsa-utils``: ``/usr/share/sounds/alsa/{Front,Rear,Side}_{Left,Right,Center}.wav``, a man
  announcing speaker channels ("front left"), 48 kHz mono, plus ``Noise.wav``, a recorded noise
  burst (no voice). GPL-2+ like the package.
* ``asterisk-core-sounds-en`` + ``-wav``: Allison Smith's telephone prompts (8 kHz mono), with
  their words in ``core-sounds-en.txt.gz``. CC-BY-SA-3.0. Nothing from either is copied into
  this repository; the tests read them where the packages put them.

The words of each clip are sentences no companion grammar holds ("front left", "please hang
up and try again"), which is what the tests need: nothing here may come out as a command.
"""

from __future__ import annotations

import gzip
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ALSA = Path("/usr/share/sounds/alsa")
ASTERISK = Path("/usr/share/asterisk/sounds/en_US_f_Allison")
ASTERISK_TEXT = Path("/usr/share/doc/asterisk-core-sounds-en/core-sounds-en.txt.gz")
CHANNELS = ("Front_Left", "Front_Right", "Front_Center", "Rear_Left", "Rear_Right", "Rear_Center",
            "Side_Left", "Side_Right")

needs_alsa_sounds = pytest.mark.skipif(not (ALSA / "Front_Left.wav").is_file(),
                                       reason="alsa-utils' sounds not installed (apt-get install alsa-utils)")
needs_asterisk = pytest.mark.skipif(not (ASTERISK_TEXT.is_file() and ASTERISK.is_dir()),
                                    reason="apt-get install asterisk-core-sounds-en asterisk-core-sounds-en-wav")


@dataclass(frozen=True)
class Clip:
    path: Path
    words: str  # what the person says, as a recognizer would write it (normalize_text)


def channel_clips() -> list[Clip]:
    """The eight ALSA channel announcements: "front left" ... "side right"."""
    return [Clip(ALSA / f"{name}.wav", name.replace("_", " ").lower()) for name in CHANNELS]


# Short prompts: each a sentence or two, none of them a companion command.
PROMPTS = ("all-circuits-busy-now", "cannot-complete-as-dialed", "check-number-dial-again", "call-forwarding",
           "please-try-again", "vm-nomore", "conf-onlyperson", "privacy-unident", "vm-incorrect",
           "ss-noservice", "pbx-invalid", "tt-weasels", "hello-world", "activated")


def prompt_clips(names: tuple[str, ...] = PROMPTS) -> list[Clip]:
    """Asterisk prompts with their words; a prompt whose text has no words (a tone) is skipped."""
    from edge.perception.microphone.phrases import normalize_text

    texts: dict[str, str] = {}
    for line in gzip.open(ASTERISK_TEXT, "rt", encoding="utf-8", errors="replace"):
        found = re.match(r"^([\w/-]+): (.+)$", line.strip())
        if found and "[" not in found.group(2):
            texts[found.group(1)] = found.group(2)
    return [Clip(ASTERISK / f"{n}.wav", normalize_text(texts[n])) for n in names
            if n in texts and (ASTERISK / f"{n}.wav").is_file()]


def short_prompts(max_seconds: float = 4.0, limit: int = 60) -> list[Clip]:
    """Up to ``limit`` Asterisk prompts of at most ``max_seconds`` (for benches: many sentences)."""
    import wave

    names = []
    for line in gzip.open(ASTERISK_TEXT, "rt", encoding="utf-8", errors="replace"):
        found = re.match(r"^([\w-]+): (.+)$", line.strip())   # top folder only: no digits/letters
        path = ASTERISK / f"{found.group(1)}.wav" if found else None
        if found and "[" not in found.group(2) and path is not None and path.is_file():
            with wave.open(str(path)) as w:
                if w.getnframes() / w.getframerate() <= max_seconds:
                    names.append(found.group(1))
    return prompt_clips(tuple(names[:limit]))
