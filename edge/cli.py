"""``companion``: the command line (a black-box contract, see docs/protocol.md).

Each sub-command is a small function; heavy imports (llama.cpp, piper) happen inside the
commands that need them, so ``companion validate`` answers instantly.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from edge import log as logs
from edge.runtime.broker import BrokerAddress, BrokerError
from edge.runtime.bus import BusError
from edge.config import (NODE_SECTIONS, RUN_FLAG_SECTIONS, TTS_ENGINES, ConfigError, Settings, load_toml,
                         node_id_arg)
from edge.config_fields import add_flags, overlay
from edge.kinds import NAMES as KIND_NAMES, NODE_ID_KINDS, kind
from edge.providers.base import ProviderError

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2


def _broker_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--broker", default=None, metavar="HOST:PORT", help="MQTT broker (default 127.0.0.1:1883)")
    p.add_argument("--namespace", default=None, metavar="NS", help="topic prefix, e.g. robot1")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="companion", description="An AI companion for a small robot.")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="-v: info logs, -vv: debug logs")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    up = sub.add_parser("up", help="run broker (if needed), body and brain in one process")
    _broker_arg(up)
    up.add_argument("--config", type=Path, help="robot.toml")
    up.add_argument("--companion", type=Path, action="append", help="companion definition file (repeatable)")
    up.add_argument("--sim", action="store_true", help="simulated body (the default without a robot.toml naming servos)")
    up.add_argument("--provider", help="LLM provider SPEC, e.g. embedded or scripted:FILE")
    up.add_argument("--tts", choices=TTS_ENGINES, help="speech engine (default piper)")
    up.add_argument("--audio-device", help="sounddevice output device name or index")
    up.add_argument("--timeline", type=Path, help="write the body's JSONL timeline here")
    up.add_argument("--demo", nargs="?", const="", metavar="SCENARIO",
                    help="play a short scenario (or a JSON file of perceptions) and exit")
    up.add_argument("--json", action="store_true", help="print events as JSON lines")
    up.add_argument("--registry", metavar="URL", help="a Registry to learn other companions from")
    up.add_argument("--node-id", type=node_id_arg, metavar="ID",
                    help="the body's node id, its retained status/ID (default: body); brains stay "
                         "brain-<companion id>. Stacks sharing a broker need their own --namespace, "
                         "or their own node id and companions")

    run = sub.add_parser("run", help="run one node (for systemd): a stack of one")
    run.add_argument("node", choices=KIND_NAMES)
    _broker_arg(run)
    run.add_argument("--config", type=Path, help="robot.toml: the node's [section] gives the defaults of its flags")
    run.add_argument("--companion", type=Path, action="append")
    run.add_argument("--provider")
    run.add_argument("--tts", choices=TTS_ENGINES)
    run.add_argument("--audio-device")
    run.add_argument("--timeline", type=Path)
    run.add_argument("--json", action="store_true")
    run.add_argument("--registry", metavar="URL")
    add_flags(run, RUN_FLAG_SECTIONS)   # each node kind's own flags, declared with its robot.toml keys

    val = sub.add_parser("validate", help="check companion definition files")
    val.add_argument("files", nargs="+")

    per = sub.add_parser("perceive", help="publish one perception")
    _broker_arg(per)
    per.add_argument("title")
    per.add_argument("body")
    per.add_argument("--format", choices=["text", "object", "image"], default="text")
    per.add_argument("--to", default="all")

    ask = sub.add_parser("ask", help="one provider call; prints the ProviderResponse as JSON")
    ask.add_argument("--provider", default="embedded")
    ask.add_argument("--companion", type=Path, help="offer this companion's actions as tools")
    ask.add_argument("--stream", action="store_true", help="print the normalized stream events, one JSON per line")
    ask.add_argument("--structured", action="store_true", help="structured-output mode instead of native tools")
    ask.add_argument("--timeout", type=float, help="seconds for the call")
    ask.add_argument("prompt")

    sim = sub.add_parser("servo-sim", help="a simulated servo bus on a pseudo-terminal linked at PATH")
    from body_drivers.servo.sim.cli import add_arguments as servo_sim_arguments
    servo_sim_arguments(sim)

    doc = sub.add_parser("doctor", help="check broker, models, LLM, audio, cameras, serial/servos, groups, "
                                       "systemd units, clock, temperature, disk")
    _broker_arg(doc)
    doc.add_argument("--config", type=Path, help="robot.toml (adds the servo survey)")
    doc.add_argument("--provider", help="LLM provider SPEC to test (default: the config's, or embedded)")

    kinds = sub.add_parser("kinds", help="the node kinds, in start order (--json: the whole table)")
    shown = kinds.add_mutually_exclusive_group()
    shown.add_argument("--json", action="store_true", help="every kind's row: section, builder, node id, topics ...")
    shown.add_argument("--sh", action="store_true", help="the install profiles' unit lists (deploy/lib/kinds.sh)")
    shown.add_argument("--acl", action="store_true", help="each kind's broker ACL lines, from its topics")

    models = sub.add_parser("models", help="list/fetch model files (resumable, sha256-checked)")
    from edge.models.cli import add_arguments as models_arguments
    models_arguments(models)
    return parser


def settings_from(args: argparse.Namespace) -> Settings:
    settings = load_toml(args.config) if getattr(args, "config", None) else Settings()
    if getattr(args, "broker", None):
        settings.broker = BrokerAddress.parse(args.broker)
    for attr in ("namespace", "provider", "tts", "audio_device", "timeline", "registry"):
        value = getattr(args, attr, None)
        if value is not None:
            setattr(settings, attr, value)
    if getattr(args, "companion", None):
        settings.companions = list(args.companion)
    node = getattr(args, "node", None)     # `companion run KIND`: its flags over its [section]
    if node in NODE_SECTIONS:
        settings.nodes[node] = overlay(settings.section(node), args)
    elif node == "body" and getattr(args, "node_id", None):
        settings.body_id = args.node_id
    return settings


def cmd_validate(args: argparse.Namespace) -> int:
    from edge.protocol.validate_cli import run_validate
    return run_validate(args.files)


def cmd_perceive(args: argparse.Namespace) -> int:
    from edge.runtime.bus import Bus
    from edge.protocol import codec
    from edge.protocol.payloads import Perception, PayloadError

    body: object = args.body
    if args.format == "object":
        try:
            body = codec.decode(args.body, Perception.LIMITS)
        except codec.CodecError as exc:
            print(f"companion perceive: BODY is not acceptable JSON (needed for --format object): {exc}", file=sys.stderr)
            return EXIT_USAGE
    perception = Perception(title=args.title, body=body, format=args.format, to=args.to, sender="cli")
    try:
        Perception.check(perception.to_dict())
        perception.encode()  # e.g. undecodable bytes in an argument arrive as lone surrogates
    except (PayloadError, codec.CodecError) as exc:
        print(f"companion perceive: {exc}", file=sys.stderr)
        return EXIT_USAGE
    bus = Bus("perceive", "cli", settings_from(args).broker, namespace=args.namespace, persistent=False, announce=False)
    bus.connect(timeout=10)
    try:
        bus.publish(perception).wait_for_publish(5)
    finally:
        bus.close()
    print(json.dumps(perception.to_dict(), ensure_ascii=False))
    return EXIT_OK


def cmd_ask(args: argparse.Namespace) -> int:
    from edge.brain import prompt
    from edge.protocol.companion import load_companion
    from edge.providers.base import ProviderContext, ProviderError
    from edge.providers.events import event_json
    from edge.providers.factory import make_provider
    from edge.providers.resilience import stream_of

    context = ProviderContext(timeout_s=args.timeout, structured=args.structured or None)
    if args.companion:
        companion = load_companion(args.companion)
        context.system = prompt.system_text(companion)
        context.tools = prompt.offered_tools(companion, "", events_only=False)
    try:
        provider = make_provider(args.provider)
        try:
            if args.stream:
                for event in stream_of(provider, args.prompt, context):
                    print(json.dumps(event_json(event), ensure_ascii=False), flush=True)
                return EXIT_OK
            response = provider.generate(args.prompt, context)
        finally:
            provider.close()
    except ProviderError as exc:
        print(json.dumps({"error": exc.to_json()}, ensure_ascii=False))
        return EXIT_FAIL
    print(json.dumps(response.to_json(), ensure_ascii=False, indent=2))
    return EXIT_OK


def cmd_up(args: argparse.Namespace) -> int:
    from edge.app import Stack
    from edge.runtime.signals import wait_for_signal
    from edge.console import ConsoleObserver
    from edge import demo

    settings = settings_from(args)
    if args.sim:
        settings.sim = True  # --sim wins over a robot.toml that names servos
    if args.node_id:
        settings.body_id = args.node_id
    scenario = demo.load_scenario(args.demo or None) if args.demo is not None else None

    def say(text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    stack = Stack(settings, observer_factory=lambda name: ConsoleObserver(args.json, name=name), notify=say)
    others = "".join(f", {kind}" for kind in settings.nodes)
    print(f"starting: provider {settings.provider}, companions {', '.join(p.name for p in settings.companions)}"
          f"{others} (loading models takes a few seconds)", file=sys.stderr, flush=True)
    with stack:
        print(f"ready: broker {settings.broker}; publish perceptions with `companion perceive input \"hello\"`"
              + ("" if scenario else "; Ctrl-C stops"), file=sys.stderr, flush=True)
        if scenario is not None:
            ok = demo.play(stack, scenario)
            return EXIT_OK if ok else EXIT_FAIL
        wait_for_signal()
    return EXIT_OK


def cmd_run(args: argparse.Namespace) -> int:
    """``companion run KIND``: a stack of one node, until it ends or SIGINT/SIGTERM."""
    from edge.app import Stack
    from edge.console import ConsoleObserver

    row = kind(args.node)
    if args.node_id and not row.node_id_flag:
        *others, last = NODE_ID_KINDS
        print(f"companion run {args.node}: --node-id is for {', '.join(others)} and {last}; "
              f"{'a' if row.name == 'brain' else 'the'} {row.name} is {row.default_id}", file=sys.stderr)
        return EXIT_USAGE
    observers = (lambda name: ConsoleObserver(args.json, name=name)) if args.node == "brain" else None
    return Stack(settings_from(args), observer_factory=observers, kinds=(args.node,), start_broker=False).run()


def cmd_doctor(args: argparse.Namespace) -> int:
    from edge.doctor import run_doctor
    return run_doctor(settings_from(args))


def cmd_kinds(args: argparse.Namespace) -> int:
    from edge.kinds_cli import run_kinds
    return run_kinds(json_out=args.json, sh=args.sh, acl=args.acl)


def cmd_servo_sim(args: argparse.Namespace) -> int:
    from body_drivers.servo.sim.cli import run_from_args
    return run_from_args(args)


def cmd_models(args: argparse.Namespace) -> int:
    from edge.models.cli import run_from_args
    return run_from_args(args)


COMMANDS = {"validate": cmd_validate, "perceive": cmd_perceive, "ask": cmd_ask, "up": cmd_up, "run": cmd_run,
            "servo-sim": cmd_servo_sim, "doctor": cmd_doctor, "models": cmd_models, "kinds": cmd_kinds}


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logs.configure(args.verbose)
    from edge.protocol.companion import CompanionError
    if args.command in ("run", "up"):
        from edge.environment import legacy_settings
        for line in legacy_settings():
            print(f"companion {args.command}: warning: {line}", file=sys.stderr)
    try:
        return COMMANDS[args.command](args)
    except (ConfigError, CompanionError) as exc:
        # a bad robot.toml or companion file: restarting will not help (systemd units use
        # RestartPreventExitStatus=2), so say so with exit 2
        print(f"companion {args.command}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except (BrokerError, BusError, ProviderError, ValueError, OSError, RuntimeError) as exc:
        print(f"companion {args.command}: {exc}", file=sys.stderr)
        return EXIT_FAIL
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
