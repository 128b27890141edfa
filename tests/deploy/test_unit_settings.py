"""A node's settings come from robot.toml on a device: each systemd unit passes ``--config`` and
nothing that shadows it, and what an older install kept in companion.env moves into robot.toml
(deploy/lib/robot_settings.py)."""

from __future__ import annotations

import importlib.util
import sys
import tomllib
from pathlib import Path
from types import ModuleType

import pytest
from camera_cli_run import run_camera_cli, still_folder
from deploy_harness import DEPLOY

from edge.config import load_toml
from edge.environment import LEGACY_UNIT_VARIABLES

DATA = Path("/usr/share/doc/opencv-doc/examples/data")
UNITS = DEPLOY / "systemd"
ROBOT = "/etc/companion/robot.toml"
# what an old companion.env may still set: none of it may reach a unit's command line now
OLD_ENV = {name: "7" for name in LEGACY_UNIT_VARIABLES} | {"COMPANION_CAMERA_ARGS": "--track",
                                                           "COMPANION_MIC_ARGS": "--stt pocketsphinx"}


def deploy_lib(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"deploy_lib_{name}", DEPLOY / "lib" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[f"deploy_lib_{name}"] = module   # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


broker_accounts = deploy_lib("broker_accounts")
robot_settings = deploy_lib("robot_settings")


@pytest.mark.parametrize("kind", ["registry", "body", "brain", "camera", "mic", "gateway", "mcp"])
def test_a_unit_passes_its_robot_toml_and_nothing_that_shadows_it(kind):
    argv = broker_accounts.unit_command(UNITS / f"companion-{kind}.service", OLD_ENV)
    assert argv == ["/opt/companion-edge/venv/bin/companion", "run", kind, "--config", ROBOT]
    assert "COMPANION_" not in "".join(line for line in (UNITS / f"companion-{kind}.service").read_text().splitlines()
                                       if line.startswith("Environment=") and "COMPANION_MODELS_DIR" not in line)


@pytest.mark.skipif(not (DATA / "messi5.jpg").is_file(), reason="opencv-doc samples missing (apt-get install opencv-doc)")
def test_the_camera_unit_runs_the_source_robot_toml_names(broker, tmp_path):
    folder = still_folder(tmp_path / "hallway", DATA / "messi5.jpg", 3)
    robot = tmp_path / "robot.toml"
    robot.write_text(f'[camera]\nsource = "{folder}"\ndetector = "haar"\nfps = 5\n')
    argv = broker_accounts.unit_command(UNITS / "companion-camera.service", OLD_ENV)
    assert argv[1:3] == ["run", "camera"]
    run = run_camera_cli(broker, *[str(robot) if word == ROBOT else word for word in argv[3:]])
    online = [s for s in run.statuses if s.state == "online"]
    assert online and {s.node for s in online} == {"camera-hallway"}
    assert {(s.extra.get("source"), s.extra.get("detector")) for s in online if "source" in s.extra} == \
        {(str(folder), "haar")}
    assert run.perceptions and {p.sender for p in run.perceptions} == {"camera-hallway"}


def test_a_flag_still_overrides_robot_toml_for_one_run(tmp_path):
    from edge.cli import build_parser, settings_from
    robot = tmp_path / "robot.toml"
    robot.write_text('[camera]\nsource = "/dev/video2"\ndetector = "hog"\n')
    args = build_parser().parse_args(["run", "camera", "--config", str(robot), "--source", "clip.mp4"])
    camera = settings_from(args).section("camera")
    assert (camera.source, camera.detector) == ("clip.mp4", "hog")


# -- moving an older install's companion.env into robot.toml ---------------------------------------

SHIPPED = (DEPLOY / "robot.example.toml").read_text().replace('"../companions/', '"companions/')
ALL = ["registry", "body", "brain", "camera", "mic", "gateway", "mcp"]


def written(tmp_path: Path, robot: str, env: str, units: list[str] = ALL) -> tuple[str, str, str]:
    (tmp_path / "robot.toml").write_text(robot)
    (tmp_path / "companion.env").write_text(env)
    out = tmp_path / "out.toml"
    import contextlib
    import io
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        code = robot_settings.main(["--robot", str(tmp_path / "robot.toml"), "--env", str(tmp_path / "companion.env"),
                                    "--robot-out", str(out), "--env-out", str(tmp_path / "out.env"), *units])
    assert code == 0
    return out.read_text(), (tmp_path / "out.env").read_text(), printed.getvalue()


def test_an_old_companion_env_moves_into_robot_toml_and_means_what_it_meant(tmp_path):
    env = ("COMPANION_GATEWAY_TOKEN=abc\nCOMPANION_CAMERA_SOURCE=/dev/video2\n"
           "COMPANION_CAMERA_ARGS=--track --size 640x480 --fps 5\nCOMPANION_GATEWAY_HOST=0.0.0.0\n"
           "COMPANION_MIC_ARGS=--stt pocketsphinx --end-silence 0.5\n")
    robot, new_env, notes = written(tmp_path, SHIPPED, env)
    (tmp_path / "robot.toml").write_text(robot)
    settings = load_toml(tmp_path / "robot.toml")
    camera = settings.section("camera")
    assert (camera.source, camera.track, camera.size, camera.fps) == ("/dev/video2", True, (640, 480), 5.0)
    assert camera.detector == "haar,hog"
    mic = settings.section("mic")
    assert (mic.source, mic.stt, mic.end_silence) == ("default", "pocketsphinx", 0.5)
    assert settings.section("gateway").host == "0.0.0.0"
    assert settings.section("registry").folder == str(tmp_path / "companions")
    assert settings.section("mcp").companion == str(tmp_path / "companions/pip.json")
    assert "COMPANION_GATEWAY_TOKEN=abc\n" in new_env        # secrets stay
    assert "\n# moved to robot.toml [camera] source by install.sh: COMPANION_CAMERA_SOURCE=/dev/video2\n" in new_env
    assert not [line for line in new_env.splitlines() if line.startswith(tuple(LEGACY_UNIT_VARIABLES))]
    assert "info\tmoved COMPANION_CAMERA_ARGS from companion.env to robot.toml [camera] track, size, fps" in notes
    again = written(tmp_path, robot, new_env)
    assert again[:2] == (robot, new_env)   # a rerun changes nothing


def test_robot_toml_keeps_its_own_keys_unless_companion_env_set_them(tmp_path):
    mine = SHIPPED + '\n[camera]   # the hallway camera\nsource = 2\nsend_image = true\n\n[gateway]\nport = 9000\n'
    robot, _, _ = written(tmp_path, mine, "")
    data = tomllib.loads(robot)
    assert data["camera"] == {"source": 2, "send_image": True} and data["gateway"] == {"port": 9000}
    assert "[camera]   # the hallway camera\nsource = 2\n" in robot   # its comments stay
    robot, _, notes = written(tmp_path, mine, "COMPANION_CAMERA_SOURCE=/dev/video4\n")
    assert tomllib.loads(robot)["camera"] == {"source": "/dev/video4", "send_image": True}   # what ran
    assert robot.count("\n[camera]") == 1


def test_only_the_units_installed_get_sections(tmp_path):
    robot, _, _ = written(tmp_path, SHIPPED, "", ["registry", "body", "brain", "gateway"])
    data = tomllib.loads(robot)
    assert "camera" not in data and "mic" not in data and "mcp" not in data
    assert data["registry"] == {"folder": "companions"} and "gateway" not in data   # its defaults are the unit's


def test_a_word_that_is_no_setting_is_left_in_companion_env_and_named(tmp_path):
    robot, env, notes = written(tmp_path, SHIPPED, "COMPANION_CAMERA_ARGS=--track --frobnicate\n")
    assert "COMPANION_CAMERA_ARGS=--track --frobnicate\n" in env
    assert "warn\tcompanion.env: COMPANION_CAMERA_ARGS has --frobnicate, which is no [camera] setting" in notes
    assert "track" not in tomllib.loads(robot)["camera"]


def test_a_bad_value_stays_in_companion_env_named_with_its_key(tmp_path):
    env = "COMPANION_CAMERA_ARGS=--fps 0\nCOMPANION_GATEWAY_PORT=http\n"
    robot, new_env, notes = written(tmp_path, SHIPPED, env)
    assert new_env == env and "fps" not in tomllib.loads(robot)["camera"]
    assert ("warn\tcompanion.env: COMPANION_CAMERA_ARGS: camera.fps: '0' is not a number from 0.1 to 240 (e.g. 10): "
            "left in companion.env, and nothing reads it now") in notes
    assert "warn\tcompanion.env: COMPANION_GATEWAY_PORT: http is not a number: left in companion.env" in notes


def test_a_robot_toml_with_a_mistake_is_left_as_it_was_and_the_mistake_named(tmp_path):
    mine = SHIPPED + '\n[camera]\nsource = 2\nfps = 0\n'
    robot, env, notes = written(tmp_path, mine, "COMPANION_MIC_SOURCE=usb\n")
    assert (robot, env) == (mine, "COMPANION_MIC_SOURCE=usb\n")
    assert notes == (f"warn\t{tmp_path / 'robot.toml'}: camera.fps: '0' is not a number from 0.1 to 240 (e.g. 10): "
                     "robot.toml and companion.env left as they were; fix it and rerun\n")
    robot, env, notes = written(tmp_path, SHIPPED + "\n[mic\n", "")
    assert robot == SHIPPED + "\n[mic\n" and f"{tmp_path / 'robot.toml'}: not valid TOML" in notes


def test_the_services_access_variables_move_to_each_installed_service(tmp_path):
    env = "COMPANION_ALLOWED_HOSTS=robot.lan,robot.example\nCOMPANION_TOKEN_ON_LOOPBACK=1\n"
    robot, new_env, _ = written(tmp_path, SHIPPED, env, ["registry", "body", "brain", "gateway"])
    (tmp_path / "robot.toml").write_text(robot)
    settings = load_toml(tmp_path / "robot.toml")
    for kind in ("gateway", "registry"):
        assert settings.section(kind).allowed_hosts == ("robot.lan", "robot.example")
        assert settings.section(kind).token_on_loopback is True
    assert "mcp" not in tomllib.loads(robot)
    assert "# moved to robot.toml allowed_hosts of each HTTP service by install.sh: " \
           "COMPANION_ALLOWED_HOSTS=robot.lan,robot.example\n" in new_env
