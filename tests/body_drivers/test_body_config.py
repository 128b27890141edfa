"""The [body] joints of robot.toml: the shipped example loads; every mistake names its key."""

from __future__ import annotations

import copy
import re
from pathlib import Path

import pytest

from body_drivers.body_config import BodyConfigError, load_body_config, parse_body_config
from body_drivers.body_types import Gesture, LinearMap, PanTilt
from edge.config import ConfigError
from repo_paths import REPO

EXAMPLE = REPO / "deploy" / "pan-tilt.example.toml"


def _body() -> dict:
    joint = {"name": "pan", "protocol": "feetech", "port": "/dev/ttyUSB0", "id": 1,
             "min_deg": -90, "max_deg": 90}
    return {"joints": [joint, {**joint, "name": "tilt", "id": 2, "min_deg": -30, "max_deg": 40}],
            "kinematics": {"look": {"kind": "pan_tilt", "pan": "pan", "tilt": "tilt"}}}


def test_the_shipped_pan_tilt_example_loads():
    config = load_body_config(EXAMPLE)
    pan, tilt = config.joints
    assert (pan.name, pan.protocol, pan.id, pan.direction, pan.min_deg, pan.max_deg) == ("pan", "feetech", 1, 1, -80, 80)
    assert (tilt.direction, tilt.rest_deg, tilt.neutral_deg, tilt.max_step_deg) == (-1, -20, 0, 6)
    assert config.kinematics["look"] == PanTilt("pan", "tilt")
    assert config.kinematics["move"] == LinearMap({"pan": {"x": 120}, "tilt": {"y": 40, "offset": -10}})
    assert isinstance(config.kinematics["nod"], Gesture) and config.kinematics["nod"].repeat == "times"
    assert config.control.watchdog_s == 300 and config.control.control_hz == 50
    assert list(config.ports()) == [("feetech", "/dev/ttyUSB0")]


def test_defaults_and_a_relative_port_resolved_against_the_file(tmp_path):
    path = tmp_path / "robot.toml"
    path.write_text('[body]\nsim = false\n[[body.joints]]\nname = "pan"\nprotocol = "dynamixel"\n'
                    'port = "run/servos"\nid = 7\nmin_deg = -45\nmax_deg = 45\n')
    config = load_body_config(path)
    (joint,) = config.joints
    assert joint.port == str(tmp_path / "run" / "servos")
    assert (joint.direction, joint.offset_deg, joint.neutral_deg, joint.baudrate) == (1, 0, 0, 1_000_000)
    assert config.kinematics == {} and config.control.watchdog_s == 0


def _set(path: str, value):
    """A mutation of the base [body] table at a dotted path (list indexes as numbers)."""
    def apply(body: dict) -> None:
        *parents, last = path.split(".")
        node = body
        for p in parents:
            node = node[int(p)] if p.isdigit() else node.setdefault(p, {})
        if value is _DELETE:
            del node[last]
        else:
            node[int(last) if last.isdigit() else last] = value
    return apply


_DELETE = object()


@pytest.mark.parametrize("mutate, key, words", [
    (_set("kinematics.look.tilt", "neck"), "body.kinematics.look.tilt", "unknown joint 'neck'"),
    (_set("joints.0.min_deg", 100), "body.joints[0] (pan).min_deg", "must be below max_deg 90"),
    (_set("joints.1.neutral_deg", 60), "body.joints[1] (tilt).neutral_deg", "outside the joint's limits [-30, 40]"),
    (_set("joints.1.safe_deg", -31), "body.joints[1] (tilt).safe_deg", "outside"),
    (_set("joints.0.protocol", "lx16a"), "body.joints[0] (pan).protocol", "unknown protocol 'lx16a'"),
    (_set("joints.1.id", 1), "body.joints[1] (tilt).id", "id 1 on /dev/ttyUSB0 is already joint 'pan'"),
    (_set("joints.1.name", "pan"), "body.joints[1].name", "already used"),
    (_set("joints.0.max_deg", "90"), "body.joints[0] (pan).max_deg", "must be a finite number (got '90')"),
    (_set("joints.0.max_deg", float("nan")), "body.joints[0] (pan).max_deg", "finite"),
    (_set("joints.0.max_deg", _DELETE), "body.joints[0] (pan).max_deg", "is required"),
    (_set("joints.0.direction", 0), "body.joints[0] (pan).direction", "must be 1 or -1"),
    (_set("joints.0.id", 300), "body.joints[0] (pan).id", "0..253"),
    (_set("joints.0.id", True), "body.joints[0] (pan).id", "integer"),
    (_set("joints.0.max_speed_dps", 0), "body.joints[0] (pan).max_speed_dps", "greater than 0"),
    (_set("joints.0.speed", 3), "body.joints[0] (pan).speed", "unknown key"),
    (_set("joints.0.offset_deg", 170), "body.joints[0] (pan).max_deg", "beyond what the servo can reach"),
    (_set("joints.0.model", "xl330-m288"), "body.joints[0] (pan).model", "is a dynamixel servo, not feetech"),
    (_set("joints.0.model", "sg90"), "body.joints[0] (pan).model", "unknown servo model 'sg90'"),
    (_set("joints.1.protocol", "dynamixel"), "body.joints[1] (tilt).protocol", "one port speaks one protocol"),
    (_set("joints.0.name", "pan tilt"), "body.joints[0].name", "letters, digits"),
    (_set("joints", []), "body.joints", "at least one"),
    (_set("servo.control_hz", 0), "body.servo.control_hz", "1..500"),
    (_set("servo.watchdog", 5), "body.servo.watchdog", "unknown key"),
    (_set("servo.safe_on_brain_offline", "yes"), "body.servo.safe_on_brain_offline", "true or false"),
    (_set("kinematics.look.kind", "ik"), "body.kinematics.look.kind", "unknown kind 'ik'"),
    (_set("kinematics.move", {"kind": "linear", "joints": {"wheel": {"x": 1}}}), "body.kinematics.move.joints.wheel", "unknown joint"),
    (_set("kinematics.move", {"kind": "linear", "joints": {"pan": {"x": "lots"}}}), "body.kinematics.move.joints.pan.x", "finite number"),
    (_set("kinematics.nod", {"kind": "gesture", "frames": [{"tilt": 10}, {"jaw": 3}]}), "body.kinematics.nod.frames[1].jaw", "unknown joint"),
    (_set("kinematics.nod", {"kind": "gesture", "frames": []}), "body.kinematics.nod.frames", "list of poses"),
])
def test_each_mistake_is_named(mutate, key, words):
    body = copy.deepcopy(_body())
    mutate(body)
    with pytest.raises(BodyConfigError) as err:
        parse_body_config(body, source="robot.toml")
    assert f"robot.toml: {key}: " in str(err.value)
    assert words in str(err.value)
    assert isinstance(err.value, ConfigError)  # the CLI reports it like every other config error


def test_same_id_on_two_ports_is_fine():
    body = _body()
    body["joints"][1].update(id=1, port="/dev/ttyUSB1")
    config = parse_body_config(body)
    assert len(config.ports()) == 2


@pytest.mark.parametrize("text, words", [
    ("[body\n", "not valid TOML"),
    ("[brain]\nprovider = 'embedded'\n", "no [body] section"),
])
def test_file_level_problems(tmp_path, text, words):
    path = tmp_path / "robot.toml"
    path.write_text(text)
    with pytest.raises(BodyConfigError, match=re.escape(words)):
        load_body_config(path)
    with pytest.raises(BodyConfigError, match="no such file"):
        load_body_config(tmp_path / "missing.toml")
