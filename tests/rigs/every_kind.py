"""A robot.toml that names every node kind, each runnable without hardware: a folder of one grey
frame for the camera, half a second of silence for the microphone (pocketsphinx), port 0 for
the services. For the tests that start all of them (``companion up`` on a broker, a stack on the hub)."""

from __future__ import annotations

import wave
from pathlib import Path

import cv2
import numpy as np

from repo_paths import REPO

PIP = REPO / "companions" / "pip.json"


def silence(path: Path, seconds: float = 0.5) -> Path:
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(16000)
        out.writeframes(np.zeros(int(16000 * seconds), np.int16).tobytes())
    return path


def every_kind_toml(folder: Path, broker: object = None) -> Path:
    """``folder/robot.toml`` with ``[broker] address`` when ``broker`` is given."""
    frames = folder / "frames"
    frames.mkdir()
    cv2.imwrite(str(frames / "00.png"), np.full((120, 160, 3), 128, np.uint8))
    wav = silence(folder / "quiet.wav")
    path = folder / "robot.toml"
    path.write_text((f'[broker]\naddress = "{broker}"\n' if broker is not None else "") + f"""
[brain]
companions = ["{PIP}"]
[body]
tts = "none"
[camera]
source = "{frames}"
detector = "haar"
quiet = true
[mic]
source = "{wav}"
stt = "pocketsphinx"
quiet = true
[gateway]
port = 0
[registry]
port = 0
[mcp]
port = 0
""")
    return path
