"""The action executor for real servos: kinematics -> safety -> sync-writes at a fixed rate.

``execute`` turns an action into poses (``kinematics.plan``), then drives the joints toward
each pose one control tick at a time through the ``SafetyGate`` (clamped, slew-limited),
reading the servos back every tick, until every joint is within tolerance of its goal or
the planned time plus ``settle_s`` has run out. A servo fault, a timeout or a cancel stops
the motion where it is (hold) and fails the action with a message naming the joint.
``speak`` and ``say`` go to the speech Speaker when one is given. ``go_safe`` brings the body to its
safe pose slowly and turns torque off (brain offline, watchdog, shutdown). The estop stops
every motion, the safe pose included, at the next control tick; releasing it moves nothing.
"""

from __future__ import annotations

import collections
import threading
import time
from typing import Any, Callable

from body_drivers.body_types import BodyConfig
from body_drivers.joint_io import BusOpener, JointIO
from body_drivers.kinematics import KinematicsError, Pose, plan
from body_drivers.node import ActionFailure
from body_drivers.safety import SafetyError, SafetyGate
from body_drivers.servo.bus import ServoError
from body_drivers.servo.buses import open_bus
from body_drivers.timeline import Timeline
from edge.log import get_logger
from edge.protocol.action_codes import ActionCode
from edge.protocol.action_names import SPEECH_ACTIONS
from edge.protocol.payloads import Action

log = get_logger(__name__)


class ServoBody:
    """An ``ActionExecutor`` over servo buses. ``on_fault`` and ``on_state`` let a monitor publish."""

    def __init__(self, config: BodyConfig, io: JointIO | None = None, speaker: Any = None,
                 timeline: Timeline | None = None, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep):
        self.config = config
        self.io = io or JointIO(config)
        self.speaker = speaker
        self.timeline = timeline or Timeline()
        self.clock = clock
        self.sleep = sleep
        self.gate = SafetyGate(self.io, config, clock)
        self.faults: collections.deque[dict[str, Any]] = collections.deque(maxlen=8)
        self.on_fault: Callable[[dict[str, Any]], None] | None = None
        self.on_state: Callable[[str], None] | None = None
        self._motion = threading.RLock()       # one mover at a time: actions, homing, safe pose
        self._interrupt = threading.Event()    # stop(): leave the current motion, hold
        self._busy = 0
        self._last_activity = clock()
        self.blocked: dict[str, str] = {}      # sender -> why its actions are refused (its brain died)

    # -- lifecycle --------------------------------------------------------------------------

    def start(self) -> "ServoBody":
        """Read the joints and home slowly to neutral; a failure is reported, not raised:
        the next action tries again (a servo powered later, a link that appears later)."""
        try:
            with self._motion:
                self._home()
        except (ServoError, SafetyError) as exc:
            self._report_fault(exc, during="homing")
        return self

    def close(self) -> None:
        """Safe pose, torque off, ports closed: the shutdown path."""
        self.go_safe("shutdown")
        self.io.close()

    @property
    def state(self) -> str:
        return "estop" if self.gate.estop else self.gate.state

    def idle_s(self) -> float:
        """Seconds since the last action started or ended; 0 while one is running."""
        return 0.0 if self._busy else self.clock() - self._last_activity

    # -- ActionExecutor ---------------------------------------------------------------------

    def execute(self, action: Action, cancel: threading.Event) -> None:
        self._busy += 1
        self._last_activity = self.clock()
        try:
            if action.sender in self.blocked:
                raise ActionFailure(ActionCode.BRAIN_OFFLINE, self.blocked[action.sender])
            if action.name in SPEECH_ACTIONS and action.name not in self.config.kinematics:
                self._speak(action, cancel)
                return
            mapping = self.config.kinematics.get(action.name)
            if mapping is None:
                known = ", ".join(sorted(self.config.kinematics)) or "none"
                raise ActionFailure(ActionCode.UNKNOWN_ACTION, f"this body maps no joints to {action.name!r} "
                                    f"({self.config.source} [body.kinematics] has: {known})")
            self._interrupt.clear()
            with self._motion:
                self._ensure_active()
                try:
                    poses = plan(action.name, mapping, action.params, dict(self.gate.limiter.commanded))
                except KinematicsError as exc:
                    raise ActionFailure(ActionCode.INVALID_PARAMS, str(exc)) from None
                for pose in poses:
                    self._move(pose, cancel)
            self.timeline.record("servo.done", id=action.id, name=action.name,
                                 at={n: round(d, 2) for n, d in self.gate.limiter.commanded.items()})
        except ServoError as exc:
            self._halt()
            raise ActionFailure(ActionCode.SERVO_FAULT, self._report_fault(exc, during=action.name)) from None
        except SafetyError as exc:
            raise ActionFailure(exc.code, exc.message) from None
        finally:
            self._busy -= 1
            self._last_activity = self.clock()

    def stop(self) -> None:
        """Leave the current motion now; the loop holds the joints where they are."""
        self._interrupt.set()

    # -- safety hooks (driven by SafetyMonitor) ---------------------------------------------

    def set_estop(self, engaged: bool) -> None:
        """Engaged: refuse motion and hold at the servo level; the motion in progress, a safe
        pose too, ends at its next tick. Released: the body stays where it stopped, torque as
        it was, until an action moves it. A safe pose the estop cut short is not resumed (a
        released estop must not start motion by itself); the watchdog's count starts again,
        so an unattended body still comes to rest ``watchdog_s`` later.

        Quick enough for a bus handler: no motion lock, only the gate's (one write long).
        """
        if engaged:
            self._interrupt.set()
        try:
            self.gate.set_estop(engaged)
        except ServoError as exc:
            self._report_fault(exc, during="estop hold")
        if not engaged:
            self._last_activity = self.clock()
        self._changed()

    def block_sender(self, sender: str, reason: str | None) -> None:
        """Refuse ``sender``'s actions (None: accept them again). A brain that vanished may
        have left actions in the queue; they must not wake the body it just put to rest."""
        if reason is None:
            self.blocked.pop(sender, None)
        else:
            self.blocked[sender] = reason

    def go_safe(self, reason: str) -> bool:
        """Safe pose at homing speed, then torque off. Not while the estop holds the body,
        and an estop on the way stops it there (False): the body holds where it stopped."""
        if self.gate.estop:
            log.warning("safety.safe_pose_skipped", reason=reason, because="estop engaged")
            return False
        self._interrupt.set()
        with self._motion:
            self._interrupt.clear()
            if self.gate.state != "active":
                return False
            log.warning("safety.safe_pose", reason=reason)
            rest = {j.name: j.rest_deg for j in self.config.joints}
            try:
                self._move(rest, None, speed_cap=self.config.control.home_speed_dps)
            except (ActionFailure, ServoError) as exc:
                log.warning("safety.safe_pose_incomplete", reason=str(exc))
            except SafetyError:  # estop engaged on the way: the gate holds it there
                log.warning("safety.safe_pose_stopped", reason=reason, because="estop engaged")
                return False
            try:
                self.gate.relax()
            except ServoError as exc:
                self._report_fault(exc, during="torque off")
            except SafetyError:  # estop engaged just as the pose was reached: torque stays on
                return False
            self.timeline.record("safety.rest", reason=reason)
            self._changed()
            return True

    # -- motion -----------------------------------------------------------------------------

    def _ensure_active(self) -> None:
        if self.gate.state == "unhomed":
            self._home()
        elif self.gate.state == "resting":
            self.gate.wake()
            self._changed()

    def _home(self) -> None:
        problems = list(self.io.ping().values())
        if len(problems) == 1:
            raise problems[0]
        if problems:
            raise ServoError(problems[0].code, "; ".join(p.message for p in problems))
        present = self.gate.wake()
        neutral = {j.name: j.neutral_deg for j in self.config.joints}
        log.info("body.homing", speed_dps=self.config.control.home_speed_dps,
                 **{n: f"{present[n]:.1f}->{neutral[n]:.1f}" for n in neutral})
        self._changed()
        self._move(neutral, None, speed_cap=self.config.control.home_speed_dps)
        self.timeline.record("servo.homed", at=neutral)

    def _move(self, pose: Pose, cancel: threading.Event | None, speed_cap: float | None = None) -> Pose:
        """Drive the named joints to ``pose`` (clamped) one control tick at a time.

        ``cancel`` None: not interruptible by ``stop`` (homing, the safe pose); only the
        estop, through the gate, stops it.
        """
        c = self.config.control
        limiter = self.gate.limiter
        limited = {n: limiter.goal(n, v) for n, v in pose.items()}
        goals = {n: g for n, g in limited.items() if g is not None}
        clamped = {n: round(pose[n], 2) for n, v in goals.items() if v != pose[n]}
        if clamped:
            self.timeline.record("servo.clamped", asked=clamped)
        start = dict(limiter.commanded)
        planned = max((abs(goals[n] - start[n]) / self._speed(n, speed_cap) for n in goals), default=0.0)
        deadline = self.clock() + planned + c.settle_s + c.max_dt_s
        period = 1.0 / c.control_hz
        next_tick = self.clock()
        names = list(goals)
        while True:
            if cancel is not None and (cancel.is_set() or self._interrupt.is_set()):
                held = self._halt()
                where = ", ".join(f"{n} {d:.1f}°" for n, d in (held or {}).items() if n in goals)
                raise ActionFailure(ActionCode.CANCELLED, f"motion stopped before its goal (estop or stop); held at {where or 'its last position'}")
            setpoints = self.gate.command(goals, speed_cap)
            present = self.io.read(names)
            if all(setpoints[n] == goals[n] and abs(present[n] - goals[n]) <= c.tolerance_deg for n in names):
                return present
            if self.clock() > deadline:
                self._timed_out(goals, present)
            next_tick += period
            pause = next_tick - self.clock()
            if pause < 0:
                next_tick = self.clock()
            self.sleep(max(0.0, pause))

    def _speed(self, name: str, cap: float | None) -> float:
        speed = self.config.joint(name).max_speed_dps
        return speed if cap is None else min(speed, cap)

    def _timed_out(self, goals: Pose, present: Pose) -> None:
        """A joint that did not get there: ask it why (overload?), hold, fail naming it."""
        tol = self.config.control.tolerance_deg
        lagging = [n for n in goals if abs(present[n] - goals[n]) > tol]
        for name in lagging:
            bits = self.io.faults(name)
            if bits:
                joint = self.config.joint(name)
                raise ServoError(sorted(bits)[0], f"reports {', '.join(sorted(bits))} (at {present[name]:.1f}°, "
                                 f"goal {goals[name]:.1f}°)", joint.id, name, joint.port)
        self._halt()
        detail = ", ".join(f"{n} at {present[n]:.1f}° (goal {goals[n]:.1f}°)" for n in lagging)
        raise ActionFailure(ActionCode.TIMEOUT, f"joints did not reach their goal within ±{tol:g}°: {detail}; "
                                       f"blocked, or too slow for max_speed_dps?")

    def _halt(self) -> Pose | None:
        try:
            return self.gate.hold()
        except ServoError as exc:
            log.warning("safety.hold_failed", reason=str(exc))
            return None

    # -- speech and reports -----------------------------------------------------------------

    def _speak(self, action: Action, cancel: threading.Event) -> None:
        if self.speaker is None:
            raise ActionFailure(ActionCode.UNSUPPORTED, f"{action.name}: this body has no voice (body.tts = \"none\")")
        text = action.params.get("message") if isinstance(action.params, dict) else None
        if not isinstance(text, str) or not text.strip():
            raise ActionFailure(ActionCode.INVALID_PARAMS, f"{action.name}: message must be non-empty text")
        report = self.speaker.speak(text, cancel=cancel)
        if getattr(report, "cancelled", False):
            raise ActionFailure(ActionCode.CANCELLED, "speech cut short (estop or stop)")
        self.timeline.record("speech.done", id=action.id, seconds=getattr(report, "seconds", None))

    def _report_fault(self, exc: ServoError | SafetyError, during: str) -> str:
        fault = {"joint": getattr(exc, "joint", None), "fault": exc.code, "message": exc.message,
                 "during": during, "ts": time.time()}
        self.faults.append(fault)
        log.warning("servo.fault", **fault)
        self.timeline.record("servo.fault", **fault)
        if self.on_fault is not None:
            self.on_fault(fault)
        return exc.message

    def _changed(self) -> None:
        if self.on_state is not None:
            self.on_state(self.state)


def build_servo_body(body_config: BodyConfig, speaker: Any = None, timeline: Timeline | None = None,
                     opener: BusOpener = open_bus) -> ServoBody:
    """The hardware executor for ``companion up --config robot.toml``; call ``start()`` to home."""
    return ServoBody(body_config, JointIO(body_config, opener), speaker=speaker, timeline=timeline)

