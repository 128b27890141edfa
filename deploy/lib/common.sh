# shellcheck shell=bash
# Output and actions for deploy/install.sh: every change to the machine goes through `sys` (a
# command) or `put_file` / `put_new_file` (a file), so --dry-run can print each one instead,
# and --root can stage files without touching the system.

DRY_RUN=${DRY_RUN:-0}
ROOT=${ROOT:-}          # set by --root: files go under it, system commands are not run
STEP_NAME=""
CHANGED=0               # files this run wrote (for the summary)
RAN=0                   # system commands this run ran (for the summary)

if [[ -t 1 ]]; then B=$'\033[1m' Y=$'\033[33m' R=$'\033[31m' N=$'\033[0m'; else B="" Y="" R="" N=""; fi

step() { STEP_NAME=$2; printf '\n%s==> [%s] %s%s\n' "$B" "$1" "$2" "$N"; }
info() { printf '    %s\n' "$*"; }
warn() { printf '    %s! %s%s\n' "$Y" "$*" "$N"; }
# die MESSAGE [FIX]: what is wrong, and how to fix it
die() {
  printf '\n%sERROR: %s%s\n' "$R" "$1" "$N" >&2
  [[ -n ${2:-} ]] && printf '  fix: %s\n' "$2" >&2
  exit "${3:-1}"
}

# shown CMD...: the command as one would type it (arguments quoted only where needed)
shown() {
  local arg out=()
  for arg in "$@"; do
    if [[ $arg =~ ^[][A-Za-z0-9_./:=,@+%-]+$ ]]; then out+=("$arg"); else out+=("'${arg//\'/\'\\\'\'}'"); fi
  done
  printf '%s' "${out[*]}"
}

# sys CMD...: a command that changes the system (apt, useradd, pip, systemctl, udevadm)
sys() {
  if ((DRY_RUN)); then
    printf '    would run: %s\n' "$(shown "$@")"
  elif [[ -n $ROOT ]]; then
    printf '    skipped (--root, files only): %s\n' "$(shown "$@")"
  else
    printf '    + %s\n' "$(shown "$@")"
    RAN=$((RAN + 1))
    "$@"
  fi
}

# sys_ok: true when system commands really run (not --dry-run, not --root)
sys_ok() { ((!DRY_RUN)) && [[ -z $ROOT ]]; }

# _own PATH MODE [OWNER:GROUP]: permissions; ownership only when really installing as root
_own() {
  chmod "$2" "$1"
  if [[ -n ${3:-} && -z $ROOT && $EUID -eq 0 ]]; then chown "$3" "$1"; fi
}

# put_file SRC PATH MODE [OWNER:GROUP]: install SRC's content at PATH when it differs
put_file() {
  local src=$1 path=$2 mode=$3 owner=${4:-} target
  target=$ROOT$path
  if [[ -f $target ]] && cmp -s "$src" "$target"; then
    info "unchanged $path"
    if ((!DRY_RUN)); then _own "$target" "$mode" "$owner"; fi
    return 0
  fi
  local what="new"; [[ -e $target ]] && what="changed"
  if ((DRY_RUN)); then info "would write $path ($what)"; return 0; fi
  mkdir -p "${target%/*}"
  # write beside it, then rename: a reader never sees half a file
  cp "$src" "$target.new.$$"
  _own "$target.new.$$" "$mode" "$owner"
  mv -f "$target.new.$$" "$target"
  CHANGED=$((CHANGED + 1))
  info "wrote $path ($what)"
}

# put_new_file SRC PATH MODE [OWNER:GROUP]: only when PATH does not exist (the user's own files)
put_new_file() {
  if [[ -e $ROOT$2 ]]; then info "kept $2 (yours: never overwritten)"; return 0; fi
  put_file "$@"
}

# put_dir PATH MODE [OWNER:GROUP]
put_dir() {
  local target; target=$ROOT$1
  if [[ -d $target ]]; then
    if ((!DRY_RUN)); then _own "$target" "$2" "${3:-}"; fi
    return 0
  fi
  if ((DRY_RUN)); then info "would create $1/"; return 0; fi
  mkdir -p "$target"
  _own "$target" "$2" "${3:-}"
  CHANGED=$((CHANGED + 1))
  info "created $1/"
}

# render SRC: a shipped file with this install's paths and namespace filled in
render() {
  sed -e "s#/opt/companion-edge/venv#${VENV}#g" \
      -e "s#/opt/companion-edge/src#${SRC}#g" \
      -e "s#@NS@#${NS_PREFIX:-}#g" "$1"
}

# tmpfile: a scratch file removed on exit
TMPDIR_INSTALL=$(mktemp -d "${TMPDIR:-/tmp}/companion-install.XXXXXX")
trap 'rm -rf "$TMPDIR_INSTALL"' EXIT
tmpfile() { mktemp "$TMPDIR_INSTALL/f.XXXXXX"; }

# fingerprint FILES...: changes when any of the files' content changes
fingerprint() { cat "$@" 2>/dev/null | sha256sum | cut -c1-16; }
