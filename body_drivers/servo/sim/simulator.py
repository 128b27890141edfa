"""A simulated servo bus on a pty, one handler per protocol: ``start_simulator`` (in-process, in a
background thread) and ``run_servo_sim`` (the ``companion servo-sim`` command, until SIGINT/SIGTERM)."""

from __future__ import annotations

from typing import Callable, Iterable

from body_drivers.servo.sim.dynamixel import DynamixelHandler
from body_drivers.servo.sim.faults import BUS_FAULTS, FaultPlan, parse_fault_spec
from body_drivers.servo.sim.feetech import FeetechHandler
from body_drivers.servo.sim.handler import Handler
from body_drivers.servo.sim.maestro import MaestroHandler
from body_drivers.servo.sim.pty_server import PtyServer
from body_drivers.servo.tables import DEFAULT_MODEL, MAESTRO_DEFAULT_DEVICE, model as model_named
from edge.runtime.signals import stop_on_signals

SIM_PROTOCOLS = ("feetech", "feetech-scs", "dynamixel", "maestro", "maestro-pololu")

__all__ = ["BUS_FAULTS", "SIM_PROTOCOLS", "ServoSimulator", "make_handler", "parse_ids",
           "run_servo_sim", "start_simulator"]


def make_handler(protocol: str, ids: Iterable[int], model: str | None = None,
                 speed: float | None = None, device: int = MAESTRO_DEFAULT_DEVICE,
                 crc7: bool = False) -> Handler:
    if protocol not in SIM_PROTOCOLS:
        raise ValueError(f"unknown protocol {protocol!r}; expected one of {', '.join(SIM_PROTOCOLS)}")
    chosen = model_named(model or DEFAULT_MODEL[protocol])
    family = protocol.split("-")[0]
    if chosen.family != family:
        raise ValueError(f"model {chosen.name} is a {chosen.family} model, not {family}")
    ids = list(ids)
    if protocol.startswith("feetech"):
        return FeetechHandler(ids, chosen, speed, big_endian=protocol == "feetech-scs")
    if protocol == "dynamixel":
        return DynamixelHandler(ids, chosen, speed)
    return MaestroHandler(ids, chosen, speed, pololu=protocol == "maestro-pololu",
                          device=device, crc7=crc7)


def parse_ids(text: str) -> list[int]:
    """``"1,2,5-7"`` → [1, 2, 5, 6, 7]; a clear ValueError otherwise."""
    ids: list[int] = []
    for part in (p.strip() for p in text.split(",") if p.strip()):
        try:
            if "-" in part:
                low, high = (int(x) for x in part.split("-", 1))
                ids.extend(range(low, high + 1))
            else:
                ids.append(int(part))
        except ValueError:
            raise ValueError(f"bad servo id list {text!r}: {part!r} is not an id or a range") from None
    bad = [i for i in ids if not 0 <= i <= 252]
    if bad or not ids:
        raise ValueError(f"bad servo id list {text!r}: ids must be 0..252")
    return ids


class ServoSimulator:
    """A running simulated bus. ``link`` is the path to open; stop() removes it."""

    def __init__(self, handler: Handler, link: str | None = None):
        self.handler = handler
        self.faults = FaultPlan()
        self.server = PtyServer(handler, self.faults, link)
        self.protocol = handler.protocol

    @property
    def link(self) -> str:
        return self.server.path

    @property
    def servos(self) -> dict:
        return getattr(self.handler, "servos", {})

    def start(self) -> "ServoSimulator":
        self.server.start()
        return self

    def stop(self) -> None:
        self.server.stop()

    def __enter__(self) -> "ServoSimulator":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- fault injection ---------------------------------------------------------------

    def inject(self, kind: str, ids: list[int] | None = None, count: int | None = None) -> None:
        """A bus fault (``BUS_FAULTS``), for some servos, for the next ``count`` replies."""
        self.faults.inject(kind, ids, count)

    def clear_faults(self, kind: str | None = None) -> None:
        self.faults.clear(kind)

    def set_errors(self, servo_id: int | None, names: Iterable[str]) -> None:
        """Servo fault bits (``overload``, ``overheat``, ``voltage`` …); empty to clear."""
        with self.server.lock:
            self.handler.set_errors(servo_id, names)

    def position(self, servo_id: int) -> float:
        with self.server.lock:
            return self.handler.position(servo_id)


def start_simulator(protocol: str, link: str | None = None, ids: Iterable[int] = (1,), *,
                    model: str | None = None, speed: float | None = None,
                    device: int = MAESTRO_DEFAULT_DEVICE, crc7: bool = False,
                    faults: Iterable[str] = ()) -> ServoSimulator:
    """A simulator serving in a background thread. ``speed``: top speed in ticks/s
    (Maestro: the channels' initial speed limit, quarter-µs/s); ``faults``: CLI specs."""
    sim = ServoSimulator(make_handler(protocol, ids, model, speed, device, crc7), link)
    try:
        for spec in faults:
            sim.inject(*parse_fault_spec(spec))
    except ValueError:
        sim.stop()
        raise
    return sim.start()


def run_servo_sim(protocol: str, link: str, ids: Iterable[int] = (1,), *,
                  model: str | None = None, speed: float | None = None,
                  device: int = MAESTRO_DEFAULT_DEVICE, crc7: bool = False,
                  faults: Iterable[str] = (), errors: dict[int, list[str]] | None = None,
                  on_ready: Callable[[str], None] = print) -> int:
    """Serve on a pty linked at ``link`` until SIGINT/SIGTERM; remove the link; return 0."""
    sim = start_simulator(protocol, link, ids, model=model, speed=speed, device=device,
                          crc7=crc7, faults=faults)
    with stop_on_signals() as stop:
        try:
            for servo_id, names in (errors or {}).items():
                sim.set_errors(servo_id, names)
            ids_text = ",".join(str(i) for i in (list(sim.servos) or getattr(sim.handler, "ids", [])))
            on_ready(f"servo-sim {protocol} on {link} -> {sim.server.device} (ids {ids_text}); "
                     f"Ctrl-C to stop")
            while not stop.wait(0.5):
                pass
        finally:
            sim.stop()
    return 0
