"""Is each node's configuration good enough to enable its systemd unit?

Run by ``deploy/install.sh`` with the installed venv's Python, so it checks with the same code
the nodes will run (``robot.toml`` parsing, companion-file validation, the provider chain).
One line per unit on stdout, tab-separated::

    UNIT  ok|warn|skip  WHAT WAS FOUND  HOW TO FIX (may be empty)

``ok``/``warn`` units get enabled (a warning is something that may be fixed later without a
reinstall, such as an unplugged servo adapter); ``skip`` units are not. Nothing here changes
anything; ``--etc`` and ``--dev`` let the installer's tests point at a staged tree.
"""

from __future__ import annotations

import argparse
import glob
import importlib.util
import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from edge.kinds import units

Result = tuple[str, str, str]  # state, message, fix
RERUN = "then run deploy/install.sh again"


class Context:
    """Where the staged configuration and the devices are, and the secrets companion.env holds."""

    def __init__(self, etc: Path, dev: Path, root: Path):
        self.etc, self.dev, self.root = etc, dev, root
        self.env = dict(os.environ)
        self.env.update(read_env_file(etc / "companion.env"))
        self._settings: object = None
        self._settings_error: str | None = None

    def device(self, path: str) -> Path:
        """``/dev/x`` under ``--dev``; any other path as given (under ``--root`` when absolute in /etc)."""
        if path.startswith("/dev/"):
            return self.dev / path[len("/dev/"):]
        return Path(path)

    def settings(self):
        """robot.toml, parsed once by the package's own loader; None when it does not load."""
        if self._settings is None and self._settings_error is None:
            from edge.config import ConfigError, load_toml
            path = self.etc / "robot.toml"
            try:
                self._settings = load_toml(path)
            except (ConfigError, ValueError, OSError) as exc:
                self._settings_error = str(exc)
        return self._settings


def read_env_file(path: Path) -> dict[str, str]:
    """KEY=VALUE lines as systemd's EnvironmentFile= reads them; none when the file is missing."""
    from edge.environment import env_file_values
    try:
        return env_file_values(path.read_text(encoding="utf-8"))
    except OSError:
        return {}


def missing_modules(*names: str) -> list[str]:
    return [n for n in names if importlib.util.find_spec(n) is None]


def _extra_missing(*modules: str) -> Result | None:
    if missing := missing_modules(*modules):
        return ("skip", f"the services extra is not installed ({', '.join(missing)})",
                "install with --profile standard")
    return None


def _with_notes(message: str, notes: list[str]) -> Result:
    """ok, or warn when something lesser is missing (the unit still gets enabled)."""
    return ("warn", f"{message} ({'; '.join(notes)})", "") if notes else ("ok", message, "")


def _config_problem(ctx: Context) -> Result | None:
    if ctx.settings() is None:
        return ("skip", f"robot.toml: {ctx._settings_error}", f"fix {ctx.etc / 'robot.toml'}, {RERUN}")
    return None


def _companions_problem(ctx: Context, paths: list[Path]) -> Result | None:
    from edge.protocol.companion import format_problem, validate_file
    if not paths:
        return ("skip", "no companion files", f"put one in {ctx.etc / 'companions'}, {RERUN}")
    for path in paths:
        problems = validate_file(path)
        if problems:
            return ("skip", format_problem(problems[0], str(path)),
                    f"`companion validate {path}` lists every problem; fix them, {RERUN}")
    return None


def check_broker(ctx: Context) -> Result:
    binary = shutil.which("mosquitto") or next((p for p in ("/usr/sbin/mosquitto",) if os.access(p, os.X_OK)), None)
    if binary is None:
        return ("skip", "mosquitto is not installed", "apt-get install mosquitto")
    conf = ctx.etc / "mosquitto" / "mosquitto.conf"
    if not conf.is_file():
        return ("skip", f"{conf} is missing", RERUN)
    for line in conf.read_text(encoding="utf-8").splitlines():
        key, _, value = line.strip().partition(" ")
        if key in ("password_file", "acl_file"):
            staged = ctx.root / value.strip().lstrip("/")
            if not staged.is_file():
                return ("skip", f"{key} {value.strip()} does not exist", f"{RERUN} with --lan to create the accounts")
    return ("ok", f"{binary} with {conf.name}", "")


def check_registry(ctx: Context) -> Result:
    if problem := _extra_missing("starlette", "uvicorn"):
        return problem
    section = _section(ctx, "registry")
    folder = Path(section.folder) if section is not None and section.folder else ctx.etc / "companions"
    problem = _companions_problem(ctx, sorted(p for p in folder.glob("*.json") if p.name != "schema.json"))
    return problem or ("ok", f"serves {folder}", "")


def check_brain(ctx: Context) -> Result:
    if problem := _config_problem(ctx):
        return problem
    settings = ctx.settings()
    if problem := _companions_problem(ctx, list(settings.companions)):
        return problem
    usable: list[str] = []
    notes: list[str] = []
    for spec in str(settings.provider).split(","):
        ok, note = provider_usable(spec.strip(), ctx)
        if not ok and spec.strip().partition(":")[0] in BUILT_AT_START:
            # a missing model file fails the whole chain when the brain starts, not just this link
            return ("skip", f"provider {spec.strip()!r}: {note}",
                    f"fetch it, or fix [brain] provider in {ctx.etc / 'robot.toml'}; {RERUN}")
        (usable if ok else notes).append(spec.strip() if ok else note)
    if not usable:
        return ("skip", f"no usable LLM provider in {settings.provider!r}: {'; '.join(notes)}",
                f"fix [brain] provider in {ctx.etc / 'robot.toml'} or {ctx.etc / 'companion.env'}, {RERUN}")
    names = ", ".join(p.name for p in settings.companions)
    return _with_notes(f"{names} on {', '.join(usable)}", notes)


BUILT_AT_START = ("embedded", "scripted")  # these open their files when the chain is built
KEY_VARS = {"openai": ("OPENAI_API_KEY",), "anthropic": ("ANTHROPIC_API_KEY",),
            "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY")}


def provider_usable(spec: str, ctx: Context) -> tuple[bool, str]:
    """A cheap, offline judgement: is the model file there, the key set, the server installed?"""
    kind, _, rest = spec.partition(":")
    if kind == "embedded":
        return embedded_usable(rest.partition("?")[0] or None, ctx)
    if kind in KEY_VARS:
        url = rest.partition("@")[2]
        local = url.startswith(("http://127.", "http://localhost", "http://["))
        has_key = any(ctx.env.get(v) for v in KEY_VARS[kind])
        return (has_key or local, f"{kind}: set {KEY_VARS[kind][0]} in {ctx.etc / 'companion.env'}")
    if kind == "ollama":
        url = rest.partition("@")[2]
        if url or shutil.which("ollama"):
            return (True, "")
        return (False, "ollama is not installed (curl -fsSL https://ollama.com/install.sh | sh)")
    if kind == "scripted":
        return (Path(rest).is_file(), f"scripted responses {rest} are missing")
    return (False, f"unknown provider {spec!r}")


def embedded_usable(arg: str | None, ctx: Context) -> tuple[bool, str]:
    """The model file `embedded[:arg]` names, in the models folder the units use (present; not hashed)."""
    from edge.models.store import Store
    from edge.providers.base import ProviderError
    from edge.providers.model_files import fix_for, locate
    try:
        choice = locate(arg, store=Store(ctx.root / "var/lib/companion/models"))
    except ProviderError as exc:
        return (False, exc.message)
    if choice.entry is None:
        return (choice.path.is_file(), f"the model file {arg} is missing (companion models list)")
    return (choice.path.is_file(), f"the model {choice.entry.name} is not installed: {fix_for(choice.entry)}")


def check_body(ctx: Context) -> Result:
    if problem := _config_problem(ctx):
        return problem
    settings = ctx.settings()
    notes = []
    if settings.tts == "piper" and missing_modules("piper"):
        notes.append("piper is not installed (espeak-ng will speak)")
    if settings.body_config is None:
        return _with_notes("simulated body", notes)
    if missing_modules("serial"):
        return ("skip", "pyserial is not installed", "install the body extra")
    ports = sorted({joint.port for joint in settings.body_config.joints})
    absent = [p for p in ports if not ctx.device(str(p)).exists()]
    if absent:
        message = (f"servo port {', '.join(map(str, absent))} is not there (adapter unplugged, or another "
                   f"name?); the body will retry")
        return ("warn", message, "plug the adapter in; `companion doctor` checks the servos")
    return _with_notes(f"servos on {', '.join(map(str, ports))}", notes)


def _section(ctx: Context, kind: str) -> Any:
    """``[kind]`` of robot.toml (its defaults when absent); None when robot.toml does not load."""
    settings = ctx.settings()
    return None if settings is None else settings.section(kind)  # type: ignore[attr-defined]


def check_camera(ctx: Context) -> Result:
    if missing_modules("cv2"):
        return ("skip", "OpenCV is not installed", "install the camera extra (--profile standard)")
    if problem := _config_problem(ctx):
        return problem
    fix = f"set [camera] source in {ctx.etc / 'robot.toml'}"
    if _section(ctx, "camera").source is None:
        return ("skip", "robot.toml has no [camera] source", f"{fix}; {RERUN}")
    source = str(_section(ctx, "camera").source).strip()
    if source.isdigit():
        device = ctx.device(f"/dev/video{source}")
        if not device.exists():
            found = sorted(glob.glob(str(ctx.dev / "video*")))
            return ("skip", f"no camera at /dev/video{source}" + (f" (found {', '.join(found)})" if found else ""),
                    f"plug in a USB camera, or {fix}; {RERUN}")
        return ("ok", f"/dev/video{source}", "")
    if "://" in source or ctx.device(source).exists():
        return ("ok", f"source {source}", "")
    return ("skip", f"camera source {source!r} does not exist", fix)


def check_mic(ctx: Context) -> Result:
    if importlib.util.find_spec("edge.perception.microphone.node") is None:
        return ("skip", "the microphone node is not in this version of companion-edge", "")
    if missing_modules("sounddevice"):
        return ("skip", "sounddevice is not installed", "install the body extra")
    if problem := _config_problem(ctx):
        return problem
    source = str(_section(ctx, "mic").source or "default").strip()
    if source.lower().endswith((".wav", ".wave")):
        return ("ok", f"source {source}", "") if Path(source).is_file() else ("skip", f"{source} does not exist", "")
    captures = sorted(glob.glob(str(ctx.dev / "snd" / "pcmC*D*c")))
    if not captures:
        return ("skip", "no microphone (no capture device in /dev/snd)",
                f"plug in a USB microphone (`arecord -l` lists it); {RERUN}")
    return ("ok", f"input {source} ({len(captures)} capture device(s))", "")


def check_gateway(ctx: Context) -> Result:
    if problem := _extra_missing("starlette", "uvicorn", "websockets"):
        return problem
    if not ctx.env.get("COMPANION_GATEWAY_TOKEN"):
        return ("skip", "no COMPANION_GATEWAY_TOKEN: the gateway would refuse every other machine",
                f"set COMPANION_GATEWAY_TOKEN in {ctx.etc / 'companion.env'}; {RERUN}")
    if problem := _config_problem(ctx):
        return problem
    section = _section(ctx, "gateway")
    return ("ok", f"listens on {section.host}:{section.port or 8765} with a token", "")


def check_mcp(ctx: Context) -> Result:
    if problem := _extra_missing("mcp", "starlette", "uvicorn"):
        return problem
    if problem := _config_problem(ctx):
        return problem
    companions = ctx.settings().companions  # type: ignore[attr-defined]
    named = _section(ctx, "mcp").companion or (companions[0] if len(companions) == 1 else None)
    if named is None:
        return ("skip", "robot.toml has no [mcp] companion", f"name one in {ctx.etc / 'robot.toml'}; {RERUN}")
    path = Path(named)
    if str(path).startswith("/etc/"):
        path = ctx.root / str(path).lstrip("/")
    problem = _companions_problem(ctx, [path] if path.is_file() else [])
    return problem or ("ok", f"serves {path.name}", "")


def check_nothing(ctx: Context) -> Result:
    return ("ok", "nothing to check before enabling it", "")


# the units with something to check; any other node kind's unit (edge/kinds.py) is enabled as it is
CHECKS: dict[str, Callable[[Context], Result]] = {
    "broker": check_broker, "registry": check_registry, "body": check_body, "brain": check_brain,
    "camera": check_camera, "mic": check_mic, "gateway": check_gateway, "mcp": check_mcp}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("units", nargs="+", choices=units())
    parser.add_argument("--root", type=Path, default=Path("/"), help="where the staged /etc lives")
    parser.add_argument("--dev", type=Path, default=Path("/dev"))
    args = parser.parse_args(argv)
    ctx = Context(args.root / "etc" / "companion", args.dev, args.root)
    for unit in args.units:
        try:
            state, message, fix = CHECKS.get(unit, check_nothing)(ctx)
        except Exception as exc:  # noqa: BLE001  (a check that breaks is itself the finding)
            state, message, fix = "skip", f"the check failed: {exc!r}", "report this; `companion doctor` may say more"
        print("\t".join((unit, state, message.replace("\t", " ").replace("\n", " "), fix)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
