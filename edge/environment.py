"""The environment variables companion-edge reads, each declared once: secrets and paths only.

Settings live in robot.toml (flags override them for one run); the environment carries what must
not be written there (tokens, API keys, MQTT passwords) and where things are on this machine (the
model store, a CA file, a server a tool of its own already finds through a variable). Every other
module takes its values from ``value``/``is_set`` here instead of reading ``os.environ``, so this
table is the whole list (docs/configuration.md shows it; a test keeps the two the same).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from edge.log import get_logger

log = get_logger(__name__)

SECRET, PATH, LIBRARY, DEPRECATED = "secret", "path", "library", "deprecated"


@dataclass(frozen=True)
class Variable:
    """``kind``: ``secret``; ``path`` (a file, a folder, or the URL of a server: where a thing is);
    ``library`` (another library's own switch, which we read or set for it); ``deprecated``: a
    setting older versions read from here, now the robot.toml key ``instead`` (still honoured,
    with a warning). No setting is read from here any more."""

    name: str
    kind: str
    purpose: str
    default: str = ""
    instead: str = ""


VARIABLES: dict[str, Variable] = {v.name: v for v in (
    Variable("COMPANION_MQTT_USERNAME", SECRET, "MQTT user name on a broker with accounts", "the node's client id"),
    Variable("COMPANION_MQTT_PASSWORD", SECRET, "MQTT password on a broker with accounts (install.sh --lan writes "
                                               "one per unit in /etc/companion/mqtt/)"),
    Variable("COMPANION_MQTT_CAFILE", PATH, "CA certificate: connect to the broker over TLS, trusting it"),
    Variable("COMPANION_GATEWAY_TOKEN", SECRET, "the gateway's bearer token ([gateway] token / --token win)"),
    Variable("COMPANION_MCP_TOKEN", SECRET, "the MCP server's bearer token"),
    Variable("COMPANION_REGISTRY_TOKEN", SECRET, "the registry's bearer token", "none: open"),
    Variable("OPENAI_API_KEY", SECRET, "API key of `openai:` providers"),
    Variable("OPENAI_ORG_ID", SECRET, "OpenAI organization, sent as OpenAI-Organization"),
    Variable("OPENAI_PROJECT_ID", SECRET, "OpenAI project, sent as OpenAI-Project"),
    Variable("ANTHROPIC_API_KEY", SECRET, "API key of `anthropic:` providers"),
    Variable("GEMINI_API_KEY", SECRET, "API key of `gemini:` providers"),
    Variable("GOOGLE_API_KEY", SECRET, "API key of `gemini:` providers when GEMINI_API_KEY is not set"),
    Variable("OLLAMA_API_KEY", SECRET, "API key of an Ollama behind a proxy that wants one"),
    Variable("OPENAI_BASE_URL", PATH, "where `openai:` providers without @URL send requests",
             "https://api.openai.com/v1"),
    Variable("OLLAMA_HOST", PATH, "where `ollama:` providers without @URL and `companion models` find Ollama "
                                  "(Ollama's own variable)", "http://127.0.0.1:11434"),
    Variable("COMPANION_MODELS_DIR", PATH, "the model store", "$XDG_DATA_HOME/companion-edge/models"),
    Variable("XDG_DATA_HOME", PATH, "where the model store is when COMPANION_MODELS_DIR is not set", "~/.local/share"),
    Variable("COMPANION_ALLOWED_HOSTS", DEPRECATED, "host names the HTTP services accept (comma-separated)",
             instead="allowed_hosts in [gateway], [registry], [mcp]"),
    Variable("COMPANION_ALLOWED_ORIGINS", DEPRECATED, "web pages allowed to call the HTTP services (comma-separated)",
             instead="allowed_origins in [gateway], [registry], [mcp]"),
    Variable("COMPANION_TOKEN_ON_LOOPBACK", DEPRECATED, "1: the HTTP services want their token from this machine too",
             instead="token_on_loopback = true in [gateway], [registry], [mcp]"),
    Variable("COMPANION_RETRIEVAL", DEPRECATED, "how the brain ranks a large set of actions: auto, onnx or bm25",
             instead="retrieval in [brain]"),
    Variable("OPENCV_LOG_LEVEL", LIBRARY, "OpenCV's own log level; unset, the camera keeps only OpenCV's errors"),
    Variable("YOLO_OFFLINE", LIBRARY, "Ultralytics' switch; set to 1 unless already set (no downloads at run time)"),
    Variable("YOLO_VERBOSE", LIBRARY, "Ultralytics' switch; set to False unless already set"),
)}


def value(name: str) -> str | None:
    """The variable's value with the blanks around it taken off; None when unset or empty."""
    text = os.environ.get(_declared(name), "").strip()
    return text or None


def deprecated(name: str) -> str | None:
    """A setting older versions read from the environment: its value, and once per process a
    warning naming the robot.toml key that replaces it."""
    text = value(name)
    variable = VARIABLES[name]
    if variable.kind != DEPRECATED:
        raise ValueError(f"{name} is not a deprecated setting")
    if text is not None and name not in _warned:
        _warned.add(name)
        log.warning("environment.deprecated", variable=name,
                    fix=f"{name} is still honoured but will go: set {variable.instead} of robot.toml instead")
    return text


_warned: set[str] = set()


def is_set(name: str) -> bool:
    """Whether the variable is in the environment at all (even empty: a user's choice to keep)."""
    return _declared(name) in os.environ


def set_default(name: str, text: str) -> None:
    """Give a library's switch our value unless the user set it (``library`` variables only)."""
    if VARIABLES[_declared(name)].kind != LIBRARY:
        raise ValueError(f"{name} is not a library switch: companion-edge only reads it")
    os.environ.setdefault(name, text)


def _declared(name: str) -> str:
    if name not in VARIABLES:
        raise KeyError(f"{name} is not declared in edge/environment.py (secrets and paths only)")
    return name


# Variables that older systemd units turned into flags of ``companion run KIND``: kind, and the
# robot.toml key it set (None: a string of that kind's flags). robot.toml holds these settings
# now; deploy/install.sh moves them there (deploy/lib/robot_settings.py).
LEGACY_UNIT_VARIABLES: dict[str, tuple[str, str | None]] = {
    "COMPANION_CAMERA_SOURCE": ("camera", "source"),
    "COMPANION_CAMERA_DETECTOR": ("camera", "detector"),
    "COMPANION_CAMERA_ARGS": ("camera", None),
    "COMPANION_MIC_SOURCE": ("mic", "source"),
    "COMPANION_MIC_ARGS": ("mic", None),
    "COMPANION_GATEWAY_HOST": ("gateway", "host"),
    "COMPANION_GATEWAY_PORT": ("gateway", "port"),
    "COMPANION_REGISTRY_HOST": ("registry", "host"),
    "COMPANION_REGISTRY_PORT": ("registry", "port"),
    "COMPANION_MCP_HOST": ("mcp", "host"),
    "COMPANION_MCP_PORT": ("mcp", "port"),
    "COMPANION_MCP_COMPANION": ("mcp", "companion"),
}

# Deprecated variables that are keys of each HTTP service's section now (still honoured).
SERVICE_ACCESS_VARIABLES: dict[str, str] = {"COMPANION_ALLOWED_HOSTS": "allowed_hosts",
                                            "COMPANION_ALLOWED_ORIGINS": "allowed_origins",
                                            "COMPANION_TOKEN_ON_LOOPBACK": "token_on_loopback"}
TRUE_WORDS = ("1", "true", "yes")


def legacy_settings(environ: Mapping[str, str] | None = None, honoured: bool = False) -> list[str]:
    """One sentence per old unit variable that is set: nothing reads it now, robot.toml has its key.
    With ``honoured``, the deprecated variables still read (with a warning) come first."""
    environ = os.environ if environ is None else environ   # the old variables are read here and nowhere else
    lines = [f"{v.name}={environ[v.name].strip()} is still honoured but will go: set {v.instead} of robot.toml"
             for v in VARIABLES.values() if honoured and v.kind == DEPRECATED and environ.get(v.name, "").strip()]
    for name, (kind, key) in LEGACY_UNIT_VARIABLES.items():
        value = environ.get(name, "").strip()
        if value:
            what = (f"{key} in [{kind}]" if key
                    else f"its flags as keys of [{kind}] (--some-flag VALUE: some_flag = VALUE)")
            lines.append(f"{name}={value} is no longer read: set {what} of robot.toml instead "
                         f"(rerunning deploy/install.sh moves it there; docs/deploy.md)")
    return lines


def env_file_values(text: str) -> dict[str, str]:
    """``KEY=value`` lines as systemd's EnvironmentFile= reads them (comments skipped, one pair of
    quotes taken off): what the units of /etc/companion/companion.env see."""
    values: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith(("#", ";")) or "=" not in line:
            continue
        key, _, value = line.partition("=")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        values[key.strip()] = value
    return values
