"""``companion servo-sim``: the arguments and the run, for the CLI to wire in.

    companion servo-sim --protocol feetech|feetech-scs|dynamixel|maestro|maestro-pololu
                        --link PATH [--ids 1,2] [--model NAME] [--speed TICKS_PER_S]
                        [--device N] [--crc7] [--fault KIND[@IDS][xCOUNT]]... [--error ID:NAME[,NAME]]...

Also runnable as ``python -m body_drivers.servo.sim``. Bad arguments exit 2 with one line
naming what was wrong, never a traceback.
"""

from __future__ import annotations

import argparse
import sys

from body_drivers.servo.sim.simulator import BUS_FAULTS, SIM_PROTOCOLS, parse_ids, run_servo_sim
from body_drivers.servo.sim.faults import parse_fault_spec
from body_drivers.servo.tables import MAESTRO_DEFAULT_DEVICE, MODELS


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--protocol", required=True, choices=SIM_PROTOCOLS)
    parser.add_argument("--link", required=True, help="path of the symlink to the pty (e.g. /tmp/ttySERVO)")
    parser.add_argument("--ids", default="1", help="servo ids (Maestro: channels), e.g. 1,2 or 1-4")
    parser.add_argument("--model", choices=sorted(MODELS), help="control table to emulate")
    parser.add_argument("--speed", type=float, help="top speed in ticks/s (Maestro: quarter-µs/s)")
    parser.add_argument("--device", type=int, default=MAESTRO_DEFAULT_DEVICE,
                        help="Maestro device number for the Pololu protocol")
    parser.add_argument("--crc7", action="store_true", help="Maestro: require CRC-7 on commands")
    parser.add_argument("--fault", action="append", default=[], metavar="KIND[@IDS][xCOUNT]",
                        help=f"inject a bus fault ({', '.join(BUS_FAULTS)}), e.g. no_reply@2x3, echo")
    parser.add_argument("--error", action="append", default=[], metavar="ID:NAME[,NAME]",
                        help="servo fault bits at start, e.g. 1:overload")


def _parse_errors(specs: list[str]) -> dict[int, list[str]]:
    errors: dict[int, list[str]] = {}
    for spec in specs:
        who, _, names = spec.partition(":")
        if not names:
            raise ValueError(f"bad --error {spec!r}: expected ID:NAME[,NAME]")
        try:
            errors[int(who)] = [n for n in names.split(",") if n]
        except ValueError:
            raise ValueError(f"bad --error {spec!r}: {who!r} is not a servo id") from None
    return errors


def run_from_args(args: argparse.Namespace) -> int:
    try:
        ids = parse_ids(args.ids)
        for spec in args.fault:
            kind = parse_fault_spec(spec)[0]
            if kind not in BUS_FAULTS:
                raise ValueError(f"bad --fault {spec!r}: unknown fault {kind!r} "
                                 f"(expected {', '.join(BUS_FAULTS)})")
        errors = _parse_errors(args.error)
        return run_servo_sim(args.protocol, args.link, ids, model=args.model, speed=args.speed,
                             device=args.device, crc7=args.crc7, faults=args.fault, errors=errors,
                             on_ready=lambda line: print(line, flush=True))
    except (ValueError, KeyError, OSError) as exc:
        print(f"servo-sim: {exc}", file=sys.stderr)
        return 2


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="companion servo-sim",
                                     description="a simulated servo bus on a pseudo-terminal")
    add_arguments(parser)
    return run_from_args(parser.parse_args(argv))
