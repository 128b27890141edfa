# shellcheck shell=bash
# What each install profile brings: apt packages, Python extras, systemd units, models.
#   minimal   broker, body and brain: a talking, moving companion on the embedded LLM
#   standard  + registry, camera, microphone and the HTTP/WebSocket gateway (the default)
#   jetson    standard + Ollama with CUDA as the LLM, and GPU (TensorRT) YOLO where the
#             JetPack allows it (docs/jetson.md); chosen by default on a Jetson

PROFILES="minimal standard jetson"
# ALL_UNITS and each profile's UNITS_<profile>: one unit per node kind of edge/kinds.py, and the broker
# shellcheck source=deploy/lib/kinds.sh
. "$(dirname "${BASH_SOURCE[0]}")/kinds.sh"

# apt packages: mosquitto (the broker), libportaudio2 (sounddevice), espeak-ng (fallback voice),
# alsa-utils (aplay/arecord: what `companion doctor` suggests), python3-venv (the venv),
# libgomp1 (OpenMP: xllamacpp's wheel links libgomp.so.1 without bundling it, and a minimal
# Debian/Ubuntu image lacks it: `import xllamacpp` then fails and the brain has no embedded LLM),
# procps (/bin/kill: the broker unit's ExecReload=; a minimal Debian image lacks it and
# systemd-analyze verify then rejects the unit)
profile_apt() {
  local pkgs="mosquitto mosquitto-clients libportaudio2 libgomp1 espeak-ng alsa-utils ca-certificates procps"
  case $1 in
    minimal) ;;
    standard) pkgs+=" v4l-utils" ;;
    jetson) pkgs+=" v4l-utils curl" ;;
  esac
  printf '%s\n' "$pkgs"
}

profile_extras() {
  case $1 in
    minimal) echo "brain,body" ;;
    standard | jetson) echo "brain,body,services,camera,mic" ;;
  esac
}

# apt packages for Python dependencies that pip must compile on this Python: a C compiler and
# the Python headers (cmake, ninja and Cython come from PyPI as wheels). pocketsphinx (the mic
# extra) publishes wheels for CPython 3.11 and 3.13 only (its cibuildwheel selection), so on
# 3.12 (JetPack 7, Ubuntu 24.04) pip builds it from source: about 1.5 minutes on two x86 cores.
# Everything else has aarch64 wheels on 3.11-3.13 (deploy/check-wheels.sh; docs/deploy.md).
# Prints nothing when every dependency has a wheel for Python VERSION.
profile_build_apt() {
  [[ ,$(profile_extras "$1"), == *,mic,* ]] || return 0
  case $2 in
    3.11 | 3.13) ;;
    *) printf 'build-essential python%s-dev\n' "$2" ;;
  esac
}

profile_units() {
  local units="UNITS_$1"
  echo "${!units}"
}

# models fetched with `companion models fetch` (names from models/manifest.toml) into
# /var/lib/companion/models; the tiny SmolLM2, the piper voice and the pocketsphinx model come
# from wheels in every profile
profile_models() {
  case $1 in
    minimal) echo "" ;;                              # nothing to download: the smallest install
    standard) echo "qwen2.5-coder-0.5b-instruct" ;;  # the default embedded model, 491 MB
    jetson) echo "" ;;                               # the LLM comes from Ollama; yolo11n with GPU YOLO
  esac
}

# [brain] provider for a new robot.toml. `embedded` is the default model in the models folder
# (the units set COMPANION_MODELS_DIR to it); the tiny SmolLM2 from its wheel is the fallback,
# and the only model of the minimal profile
TINY_PROVIDER=embedded:smollm2-135m-instruct
DEFAULT_GGUF=/var/lib/companion/models/llm/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf
profile_provider() {
  case $1 in
    jetson) echo "ollama:$OLLAMA_MODEL,$TINY_PROVIDER" ;;
    *) # only when the fetch really brought it: a missing file stops the brain at start
      if [[ " $MODELS " == *" qwen2.5-coder-0.5b-instruct "* ]] && { ((DRY_RUN)) || [[ -f $ROOT$DEFAULT_GGUF ]]; }; then
        echo "embedded,$TINY_PROVIDER"
      else
        echo "$TINY_PROVIDER"
      fi ;;
  esac
}

OLLAMA_MODEL_DEFAULT="qwen2.5:1.5b"   # ~1 GB; answers in well under a second on an Orin's GPU

# the system user's groups: serial adapters, sound, cameras (and the GPU on a Jetson);
# gpio/i2c/spi exist on a Raspberry Pi and are added where present
USER_GROUPS="dialout audio video"
USER_GROUPS_OPTIONAL="gpio i2c spi render"
