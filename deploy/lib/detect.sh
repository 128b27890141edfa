# shellcheck shell=bash
# Which machine is this? Sets OS_ID, OS_NAME, ARCH, BOARD (pi | jetson | generic),
# BOARD_MODEL and, on a Jetson, L4T_MAJOR (35 = JetPack 5, 36 = JetPack 6, 38+ = JetPack 7).
# The files read can be replaced for tests: INSTALL_OS_RELEASE, INSTALL_DT_MODEL,
# INSTALL_TEGRA_RELEASE, INSTALL_ARCH.

detect_platform() {
  local os_release=${INSTALL_OS_RELEASE:-/etc/os-release}
  local dt_model=${INSTALL_DT_MODEL:-/proc/device-tree/model}
  local tegra=${INSTALL_TEGRA_RELEASE:-/etc/nv_tegra_release}
  # the userland's architecture, not the kernel's: 32-bit Raspberry Pi OS runs a 64-bit kernel
  ARCH=${INSTALL_ARCH:-$(dpkg --print-architecture 2>/dev/null || uname -m)}

  [[ -r $os_release ]] || die "cannot read $os_release: which operating system is this?" \
    "run on Raspberry Pi OS (Debian bookworm/trixie), Debian, Ubuntu or Jetson Linux"
  # shellcheck source=/dev/null  # os-release is shell assignments by definition
  OS_ID=$(. "$os_release" && printf '%s' "${ID:-unknown}")
  local like
  # shellcheck source=/dev/null
  like=$(. "$os_release" && printf '%s' "${ID_LIKE:-}")
  # shellcheck source=/dev/null
  OS_NAME=$(. "$os_release" && printf '%s' "${PRETTY_NAME:-$OS_ID}")
  case " $OS_ID $like " in
    *" debian "* | *" ubuntu "* | *" raspbian "*) ;;
    *) die "$OS_NAME is not supported: this installer uses apt and systemd" \
         "use Raspberry Pi OS 64-bit, Debian 12+, Ubuntu 22.04+ or Jetson Linux (JetPack 5-7)" ;;
  esac

  BOARD=generic BOARD_MODEL="" L4T_MAJOR=""
  [[ -r $dt_model ]] && BOARD_MODEL=$(tr -d '\0' <"$dt_model")
  if [[ -r $tegra ]]; then
    BOARD=jetson
    L4T_MAJOR=$(sed -n 's/^# R\([0-9]*\) (release).*/\1/p' "$tegra" | head -n1)
    [[ -n $BOARD_MODEL ]] || BOARD_MODEL="NVIDIA Jetson"
  elif [[ $BOARD_MODEL == *"Raspberry Pi"* ]]; then
    BOARD=pi
  fi

  case $ARCH in
    aarch64 | arm64 | x86_64 | amd64) ;;
    armv7l | armv6l | armhf | armel)
      die "this is a 32-bit system ($ARCH): the LLM runtime (xllamacpp) and onnxruntime ship no 32-bit ARM wheels" \
        "flash Raspberry Pi OS (64-bit) with Raspberry Pi Imager and start again" ;;
    *) die "unsupported processor architecture: $ARCH" "use a 64-bit ARM (aarch64) or x86-64 machine" ;;
  esac
  if [[ $BOARD == jetson && -n $L4T_MAJOR && $L4T_MAJOR -lt 35 ]]; then
    die "Jetson Linux R$L4T_MAJOR (JetPack 4) is too old: Ubuntu 18.04 has no Python 3.11" \
      "flash JetPack 6 or newer (Orin), see docs/jetson.md"
  fi
}

# jetpack_name: "JetPack 6 (L4T R36)" for messages
jetpack_name() {
  local jp="?"
  case $L4T_MAJOR in 35) jp=5 ;; 36) jp=6 ;; 3[7-9] | 4[0-9]) jp=7 ;; esac
  printf 'JetPack %s (L4T R%s)' "$jp" "${L4T_MAJOR:-?}"
}

# pick_python: the first python3 >= 3.11 here, in PYTHON ("" when none), with PY_VERSION and
# PY_HAS_VENV / PY_HAS_TRT (0|1: can it make a venv; are JetPack's TensorRT bindings importable)
pick_python() {
  PYTHON="" PY_VERSION="" PY_HAS_VENV=0 PY_HAS_TRT=0
  local candidate facts
  for candidate in /usr/bin/python3 python3 python3.13 python3.12 python3.11; do
    command -v "$candidate" >/dev/null || continue
    facts=$("$candidate" -c 'import sys
from importlib.util import find_spec as f
if sys.version_info >= (3, 11):
    print("%d.%d" % sys.version_info[:2], int(bool(f("ensurepip") and f("venv"))), int(bool(f("tensorrt"))))' \
      2>/dev/null) || continue
    [[ -n $facts ]] || continue
    PYTHON=$(command -v "$candidate")
    read -r PY_VERSION PY_HAS_VENV PY_HAS_TRT <<<"$facts"
    return 0
  done
}
