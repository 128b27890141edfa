"""Opening the servo bus of a protocol family on a serial port: the one place that knows which
driver speaks which protocol (``bus.py`` is the interface they all implement)."""

from __future__ import annotations

from body_drivers.servo.bus import PROTOCOLS, ServoBus, ServoError

DEFAULT_TIMEOUT_S = 0.05


def open_bus(protocol: str, port: str, baudrate: int = 1_000_000,
             timeout_s: float = DEFAULT_TIMEOUT_S, retries: int = 2, **options) -> ServoBus:
    """Open the driver for ``protocol`` on ``port``.

    ``options`` are per protocol: ``model`` (a name from ``tables.MODELS``) for all,
    ``crc7`` (bool) and ``device`` (Pololu protocol device number, default 12) for the
    Maestro, ``echo`` (bool, default "auto") for half-duplex adapters that echo requests.
    """
    if protocol not in PROTOCOLS:
        raise ServoError("value", f"unknown servo protocol {protocol!r}; expected one of "
                         f"{', '.join(PROTOCOLS)}", port=port)
    if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
        raise ServoError("value", f"retries must be a non-negative int, got {retries!r}", port=port)
    if isinstance(timeout_s, bool) or not isinstance(timeout_s, (int, float)) or timeout_s <= 0:
        raise ServoError("value", f"timeout_s must be a number > 0, got {timeout_s!r}", port=port)
    if isinstance(baudrate, bool) or not isinstance(baudrate, int) or baudrate <= 0:
        raise ServoError("value", f"baudrate must be a positive int, got {baudrate!r}", port=port)
    try:
        if protocol.startswith("feetech"):
            from body_drivers.servo.feetech import FeetechBus
            return FeetechBus(port, baudrate, timeout_s, retries,
                              big_endian=protocol == "feetech-scs", **options)
        if protocol == "dynamixel":
            from body_drivers.servo.dynamixel import DynamixelBus
            return DynamixelBus(port, baudrate, timeout_s, retries, **options)
        from body_drivers.servo.maestro import MaestroBus
        return MaestroBus(port, baudrate, timeout_s, retries,
                          pololu=protocol == "maestro-pololu", **options)
    except TypeError as exc:       # an option this protocol does not take
        raise ServoError("value", f"bad option for {protocol}: {exc}", port=port) from None
    except (KeyError, ValueError) as exc:   # unknown model, or a model of another family
        raise ServoError("value", str(exc).strip("'\""), port=port) from None
