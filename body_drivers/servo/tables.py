"""Control tables per servo model: data only, shared by the drivers and the simulators.

Every model maps the same canonical register names (``torque_enable``, ``goal_position``,
``goal_speed``, ``present_position``, ``hardware_error`` ...) to its own address and size,
so a driver is one piece of code per protocol and the simulator answers from the same
table it is checked against. Sources for every address are listed in ``docs/servos.md``
(ROBOTIS e-Manual X-series control tables, Feetech's STS/SMS memory table as used by its
``scservo_sdk`` and by LeRobot, Pololu's Maestro User's Guide §5).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping


@dataclass(frozen=True)
class Register:
    address: int
    size: int            # bytes: 1, 2 or 4
    writable: bool = True


@dataclass(frozen=True)
class ServoModel:
    name: str
    family: str                    # "dynamixel" | "feetech" | "maestro"
    model_number: int | None       # what PING / address 0 (Dynamixel) or 3 (Feetech) reports
    registers: Mapping[str, Register]
    ticks_min: int                 # lowest valid position
    ticks_max: int                 # highest valid position
    degrees_span: float            # the angle ticks_min..ticks_max covers
    speed_unit_ticks_s: float      # one raw unit of the speed register, in ticks per second
    max_speed_ticks_s: float       # no-load top speed (the simulator's "speed 0 = as fast as it goes")
    speed_unit: str                # the raw speed unit in words, for docs and messages
    center: int                    # the neutral position (0° in ticks_from_degrees)
    defaults: Mapping[str, int] = field(default_factory=dict)  # power-on values (simulator)

    @property
    def ticks_per_degree(self) -> float:
        return (self.ticks_max - self.ticks_min) / self.degrees_span

    def reg(self, name: str) -> Register:
        try:
            return self.registers[name]
        except KeyError:
            raise KeyError(f"{self.name} has no register {name!r}") from None


def ticks_from_degrees(model: ServoModel, degrees: float, center: float | None = None) -> int:
    """Degrees from the model's center (or from ``center`` ticks) to raw ticks, clamped."""
    mid = model.center if center is None else center
    ticks = round(mid + degrees * model.ticks_per_degree)
    return max(model.ticks_min, min(model.ticks_max, ticks))


def degrees_from_ticks(model: ServoModel, ticks: int, center: float | None = None) -> float:
    mid = model.center if center is None else center
    return (ticks - mid) / model.ticks_per_degree


def _regs(**items: tuple) -> Mapping[str, Register]:
    return MappingProxyType({name: Register(*spec) for name, spec in items.items()})


# --- Dynamixel X-series, Protocol 2.0 (XL330-M077/M288, XM430-W210/W350 share the table) --
# Vendor names in comments where ours differ.
_DXL_X = _regs(
    model_number=(0, 2, False),
    firmware_version=(6, 1, False),
    id=(7, 1),
    baud_rate=(8, 1),
    return_delay_time=(9, 1),
    operating_mode=(11, 1),
    homing_offset=(20, 4),
    temperature_limit=(31, 1),
    max_voltage_limit=(32, 2),
    min_voltage_limit=(34, 2),
    velocity_limit=(44, 4),
    max_position_limit=(48, 4),
    min_position_limit=(52, 4),
    shutdown=(63, 1),
    torque_enable=(64, 1),
    led=(65, 1),
    status_return_level=(68, 1),
    hardware_error=(70, 1, False),       # "Hardware Error Status"
    profile_acceleration=(108, 4),
    goal_speed=(112, 4),                 # "Profile Velocity" (0 = no limit)
    goal_position=(116, 4),
    moving=(122, 1, False),
    present_velocity=(128, 4, False),
    present_position=(132, 4, False),
    present_voltage=(144, 2, False),     # "Present Input Voltage", 0.1 V
    present_temperature=(146, 1, False),
)

# Hardware Error Status (address 70) bits → our error names.
DXL_HARDWARE_ERROR_BITS = MappingProxyType({
    0: "voltage", 2: "overheat", 3: "encoder", 4: "electrical", 5: "overload"})
# Status packet error byte, bits 0-6: the instruction's result; bit 7: hardware alert.
DXL_RESULT_ERRORS = MappingProxyType({
    1: ("instruction", "result fail"), 2: ("instruction", "instruction error"),
    3: ("checksum", "the servo saw a CRC error in our packet"),
    4: ("value", "data range error"), 5: ("value", "data length error"),
    6: ("angle_limit", "data limit error (goal outside the position limits)"),
    7: ("instruction", "access error (read-only register or EEPROM while torque is on)")})
DXL_ALERT_BIT = 0x80

_DXL_RPM_UNIT = 0.229 * 4096 / 60      # Profile Velocity unit 0.229 rev/min, 4096 ticks/rev


def _dxl(name: str, number: int, top_rpm: float) -> ServoModel:
    return ServoModel(
        name=name, family="dynamixel", model_number=number, registers=_DXL_X,
        ticks_min=0, ticks_max=4095, degrees_span=360 * 4095 / 4096,
        speed_unit_ticks_s=_DXL_RPM_UNIT, max_speed_ticks_s=top_rpm * 4096 / 60,
        speed_unit="0.229 rev/min", center=2048,
        defaults=MappingProxyType({
            "model_number": number, "firmware_version": 52, "baud_rate": 1,
            "return_delay_time": 250, "operating_mode": 3, "temperature_limit": 70,
            "max_voltage_limit": 70 if name.startswith("xl") else 160,
            "min_voltage_limit": 35 if name.startswith("xl") else 95,
            "velocity_limit": 445 if name.startswith("xl") else 200,
            "max_position_limit": 4095, "min_position_limit": 0,
            "shutdown": 0x34,                          # overheat, electrical, overload
            "status_return_level": 2, "present_voltage": 50 if name.startswith("xl") else 120,
            "present_temperature": 28, "present_position": 2048, "goal_position": 2048}))


# --- Feetech STS/SMS (little-endian) and SCS (big-endian) memory table -------------------
_FEETECH = _regs(
    firmware_major=(0, 1, False),
    firmware_minor=(1, 1, False),
    model_number=(3, 2, False),
    id=(5, 1),
    baud_rate=(6, 1),
    return_delay_time=(7, 1),
    status_return_level=(8, 1),          # "Response Status Level"
    min_position_limit=(9, 2),           # "Min Angle Limit"
    max_position_limit=(11, 2),          # "Max Angle Limit"
    temperature_limit=(13, 1),
    max_voltage_limit=(14, 1),
    min_voltage_limit=(15, 1),
    max_torque=(16, 2),
    unloading_condition=(19, 1),         # which faults drop torque
    homing_offset=(31, 2),               # "Offset"
    operating_mode=(33, 1),
    torque_enable=(40, 1),
    acceleration=(41, 1),
    goal_position=(42, 2),
    goal_time=(44, 2),
    goal_speed=(46, 2),                  # "Goal Speed"/"Running Speed" (0 = top speed)
    torque_limit=(48, 2),
    lock=(55, 1),
    present_position=(56, 2, False),
    present_speed=(58, 2, False),
    present_load=(60, 2, False),
    present_voltage=(62, 1, False),      # 0.1 V
    present_temperature=(63, 1, False),
    hardware_error=(65, 1, False),       # "Status"
    moving=(66, 1, False),
    present_current=(69, 2, False),
)
# Status packet error byte (and the Status register) bits, as scservo_sdk names them.
FEETECH_ERROR_BITS = MappingProxyType({
    0: "voltage", 1: "angle_limit", 2: "overheat", 3: "electrical", 5: "overload"})


def _feetech(name: str, number: int, ticks_max: int, span: float, top: float) -> ServoModel:
    return ServoModel(
        name=name, family="feetech", model_number=number, registers=_FEETECH,
        ticks_min=0, ticks_max=ticks_max, degrees_span=span,
        speed_unit_ticks_s=1.0, max_speed_ticks_s=top, speed_unit="ticks/s",
        center=(ticks_max + 1) // 2,
        defaults=MappingProxyType({
            "firmware_major": 3, "firmware_minor": 10, "model_number": number,
            "baud_rate": 0, "return_delay_time": 0, "status_return_level": 1,
            "min_position_limit": 0, "max_position_limit": ticks_max,
            "temperature_limit": 70, "max_voltage_limit": 140, "min_voltage_limit": 40,
            "max_torque": 1000, "unloading_condition": 0x2C, "torque_limit": 1000,
            "present_voltage": 74, "present_temperature": 30, "lock": 1,
            "present_position": (ticks_max + 1) // 2, "goal_position": (ticks_max + 1) // 2}))


# --- Pololu Maestro: a controller, not a servo; "registers" are its serial commands --------
MAESTRO_COMMANDS = MappingProxyType({
    "set_target": 0x84, "set_speed": 0x87, "set_acceleration": 0x89,
    "set_multiple_targets": 0x9F, "get_position": 0x90, "get_moving_state": 0x93,
    "get_errors": 0xA1, "go_home": 0xA2})
MAESTRO_ERROR_BITS = MappingProxyType({
    0: "serial_signal", 1: "serial_overrun", 2: "serial_buffer_full", 3: "serial_crc",
    4: "serial_protocol", 5: "serial_timeout", 6: "script_stack", 7: "script_call_stack",
    8: "script_program_counter"})
MAESTRO_DEFAULT_DEVICE = 12


def _maestro(name: str, channels: int) -> ServoModel:
    # Positions are quarter-microseconds of pulse width. 500-2500 µs ≈ 180° is the common
    # hobby-servo datasheet figure (SG90, MG996R); the Maestro's own default window is
    # 992-2000 µs, so widen each channel's range in Maestro Control Center to use it all.
    return ServoModel(
        name=name, family="maestro", model_number=channels, registers=_regs(),
        ticks_min=2000, ticks_max=10000, degrees_span=180.0,
        speed_unit_ticks_s=100.0,      # 0.25 µs per 10 ms = 100 quarter-µs per second
        max_speed_ticks_s=8000.0, speed_unit="0.25 µs / 10 ms", center=6000,
        defaults=MappingProxyType({"channels": channels}))


MODELS: Mapping[str, ServoModel] = MappingProxyType({m.name: m for m in (
    _dxl("xl330-m077", 1190, 383),
    _dxl("xl330-m288", 1200, 104),
    _dxl("xm430-w210", 1030, 77),
    _dxl("xm430-w350", 1020, 46),
    _feetech("sts3215", 777, 4095, 360 * 4095 / 4096, 3072),
    _feetech("scs0009", 1284, 1023, 300.0, 1100),
    _maestro("maestro-6", 6),
    _maestro("maestro-12", 12),
    _maestro("maestro-18", 18),
    _maestro("maestro-24", 24),
)})

DEFAULT_MODEL = MappingProxyType({
    "dynamixel": "xl330-m288", "feetech": "sts3215", "feetech-scs": "scs0009",
    "maestro": "maestro-24", "maestro-pololu": "maestro-24"})


def model(name: str) -> ServoModel:
    try:
        return MODELS[name.lower()]
    except KeyError:
        raise KeyError(f"unknown servo model {name!r}; known: {', '.join(MODELS)}") from None
