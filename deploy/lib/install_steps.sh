# shellcheck shell=bash
# Steps 5-9 of deploy/install.sh: models and GPU, configuration, udev, units, check and enable.

models_and_gpu() {
  step 5/9 "models"
  if [[ $MODELS == "-" ]]; then
    MODELS=$(profile_models "$PROFILE")
    if ((GPU_YOLO)); then MODELS+=" yolo11n"; fi   # the .pt and its exports, with Ultralytics
  fi
  info "the tiny embedded LLM (SmolLM2) and the piper voice came with the Python packages"
  local companion="$VENV/bin/companion" known="" name
  if [[ -n $MODELS ]]; then
    if sys_ok && ! known=$("$companion" models list 2>/dev/null); then
      warn "this version has no \`companion models\`: not fetched: $MODELS"
    else
      for name in $MODELS; do
        if sys_ok && ! grep -qw -- "$name" <<<"$known"; then warn "$name is not in the model manifest: skipped"; continue; fi
        local formats=()   # with GPU YOLO, the TensorRT engine is built here, for this GPU
        if [[ $name == yolo11n ]] && ((GPU_YOLO)); then formats=(--export "onnx,engine"); fi
        sys runuser -u companion -- env HOME="$STATE" COMPANION_MODELS_DIR="$STATE/models" \
          "$companion" models fetch "$name" "${formats[@]}"
      done
    fi
  fi
  [[ $PROFILE == jetson ]] || return 0

  info "Jetson: the LLM runs on the GPU through Ollama ($OLLAMA_MODEL)"
  if command -v ollama >/dev/null; then
    info "ollama is installed: $(ollama --version 2>/dev/null | head -n1)"
  else
    # Ollama's installer recognises JetPack and installs its CUDA build and ollama.service
    sys bash -c "curl -fsSL https://ollama.com/install.sh | sh"
  fi
  if sys_ok; then wait_for_ollama; fi
  sys ollama pull "$OLLAMA_MODEL"
  if ((GPU_YOLO)); then
    info "GPU YOLO: torch from $TORCH_INDEX and Ultralytics are in the venv; yolo11n's TensorRT engine"
    info "was built above for this GPU (docs/jetson.md)"
  elif ((JETSON_TRT)); then
    info "GPU YOLO: not selected; pass --torch-index URL (NVIDIA's torch for $(jetpack_name), docs/jetson.md)"
  else
    warn "GPU YOLO: JetPack's TensorRT Python bindings do not match $PYTHON; the camera runs YOLO on the"
    warn "CPU (ONNX) while the LLM uses the GPU. JetPack 7 has both; see docs/jetson.md"
  fi
}

# wait_for_ollama: its service takes a moment after the installer starts it
wait_for_ollama() {
  local i
  for i in $(seq 30); do
    ollama list >/dev/null 2>&1 && return 0
    ((i == 1)) && info "waiting for the Ollama service to answer..."
    sleep 1
  done
  die "Ollama does not answer after 30 s" "sudo systemctl status ollama; journalctl -u ollama"
}

configuration() {
  step 6/9 "configuration in $ETC"
  put_dir "$ETC" 0750 root:companion
  put_dir "$ETC/companions" 0750 root:companion
  local f tmp robot_src
  for f in "$SRC"/companions/*.json; do
    [[ $(basename "$f") == schema.json ]] && continue
    put_new_file "$f" "$ETC/companions/$(basename "$f")" 0640 root:companion
  done

  # robot.toml: paths in the shipped examples are relative to deploy/; here the companions sit beside it
  [[ -z $ROBOT_CONFIG || -r $ROBOT_CONFIG ]] || die "--config $ROBOT_CONFIG: no such file" "give the path of a robot.toml"
  robot_src=$(tmpfile)
  sed -e 's#"\.\./companions/#"companions/#g' "${ROBOT_CONFIG:-$SRC/deploy/robot.example.toml}" >"$robot_src"
  if [[ -z $ROBOT_CONFIG ]]; then
    sed -i "s#^provider = \"embedded\" #provider = \"$(profile_provider "$PROFILE")\"#" "$robot_src"
  fi
  if [[ ! -e $ROOT$ETC/companion.env ]]; then
    tmp=$(tmpfile)
    companion_env >"$tmp"
    put_file "$tmp" "$ETC/companion.env" 0640 root:companion
  else
    info "kept $ETC/companion.env (yours: never overwritten)"
    add_missing_tokens "$ROOT$ETC/companion.env"
  fi

  # yours stays yours (--config replaces it): only the settings the units need are added to it
  if [[ -z $ROBOT_CONFIG && -f $ROOT$ETC/robot.toml ]]; then cp "$ROOT$ETC/robot.toml" "$robot_src"; fi
  node_settings "$robot_src"
  if [[ -z $ROBOT_CONFIG && -f $ROOT$ETC/robot.toml ]] && cmp -s "$robot_src" "$ROOT$ETC/robot.toml"; then
    info "kept $ETC/robot.toml (yours: never overwritten)"
  else
    if [[ -f $ROOT$ETC/robot.toml ]] && ! cmp -s "$robot_src" "$ROOT$ETC/robot.toml" && ((!DRY_RUN)); then
      cp -p "$ROOT$ETC/robot.toml" "$ROOT$ETC/robot.toml.bak"
      info "previous robot.toml saved as robot.toml.bak"
    fi
    put_file "$robot_src" "$ETC/robot.toml" 0640 root:companion
  fi

  # the robot's topic namespace, for the broker's ACL
  local robot; robot=$ROOT$ETC/robot.toml
  [[ -f $robot ]] || robot=$robot_src
  NS=$("$PYTHON" -c 'import sys, tomllib; print(tomllib.load(open(sys.argv[1], "rb")).get("broker", {}).get("namespace", ""))' \
       "$robot" 2>/dev/null || true)
  [[ $NS =~ ^[A-Za-z0-9_./-]*$ ]] || die "robot.toml: broker.namespace \"$NS\" has characters a topic prefix cannot have" \
    "use letters, digits, '_', '-', '.' and '/' (e.g. robot1)"
  NS_PREFIX=${NS:+$NS/}
  mosquitto_config
}

# node_settings ROBOT_TOML: the robot.toml about to be installed gets, in place, the camera, mic
# and service settings the units need (they pass only --config): a unit's old default where it has
# none, and what an older install kept in companion.env (COMPANION_CAMERA_SOURCE ...), moved over;
# companion.env keeps those lines commented out, its previous text as companion.env.bak
# (deploy/lib/robot_settings.py).
node_settings() {
  local robot=$1 env=$ROOT$ETC/companion.env new_env notes level message
  if [[ ! -x $VENV/bin/python ]]; then   # a dry run before the first install
    info "would add the settings of: ${UNITS} to $ETC/robot.toml (and move any from companion.env)"
    return 0
  fi
  new_env=$(tmpfile) notes=$(tmpfile)
  # shellcheck disable=SC2086  # UNITS is a list of words
  "$VENV/bin/python" "$SRC/deploy/lib/robot_settings.py" --robot "$robot" --env "$env" \
    --robot-out "$robot" --env-out "$new_env" $UNITS >"$notes" ||
    die "robot.toml: the nodes' settings could not be added (the message above says why)" "fix it and rerun"
  while IFS=$'\t' read -r level message; do
    if [[ $level == warn ]]; then warn "$message"; else info "$message"; fi
  done <"$notes"
  [[ -f $env ]] && ! cmp -s "$new_env" "$env" || return 0
  if ((!DRY_RUN)); then cp -p "$env" "$env.bak"; info "previous companion.env saved as companion.env.bak"; fi
  put_file "$new_env" "$ETC/companion.env" 0640 root:companion
}

new_token() { od -An -N24 -tx1 /dev/urandom | tr -d ' \n'; }

# add_missing_tokens FILE: a companion.env from an older install gets the tokens it lacks
# (appended; nothing already there changes)
add_missing_tokens() {
  local env=$1 name
  [[ -f $env ]] || return 0
  for name in COMPANION_GATEWAY_TOKEN COMPANION_MCP_TOKEN; do
    grep -q "^$name=" "$env" && continue
    if ((DRY_RUN)); then info "would add $name to $ETC/companion.env"; continue; fi
    printf '%s=%s\n' "$name" "$(new_token)" >>"$env"
    info "added a generated $name to $ETC/companion.env"
  done
}

# companion.env: the units' secrets (EnvironmentFile=); settings are in robot.toml
companion_env() {
  cat <<EOF
# companion-edge services read this file (systemd EnvironmentFile=); keep it 0640 root:companion.
# After a change: sudo systemctl restart companion.target

# bearer tokens (generated at install): clients on other machines must send them; clients on
# this machine may (docs/gateway.md, docs/mcp.md; token_on_loopback = true in robot.toml's
# [gateway] requires them from local clients too, e.g. behind a reverse proxy on this machine).
COMPANION_GATEWAY_TOKEN=$(new_token)
COMPANION_MCP_TOKEN=$(new_token)
# COMPANION_REGISTRY_TOKEN=            # the registry is read-only and open unless you set one

# remote LLM providers, when robot.toml's [brain] provider names one
# OPENAI_API_KEY=
# ANTHROPIC_API_KEY=
# GEMINI_API_KEY=

# Settings (the camera's source, the gateway's host, port and allowed_hosts ...) are in
# robot.toml, beside this file: [camera], [mic], [gateway] ... (docs/configuration.md).
# This file holds secrets only.
EOF
}

mosquitto_config() {
  put_dir "$ETC/mosquitto" 0750 root:mosquitto
  put_dir "$ETC/mosquitto/conf.d" 0750 root:mosquitto
  local tmp; tmp=$(tmpfile)
  if ((LAN)); then render "$SRC/deploy/mosquitto/lan.conf" >"$tmp"; else render "$SRC/deploy/mosquitto/mosquitto.conf" >"$tmp"; fi
  put_file "$tmp" "$ETC/mosquitto/mosquitto.conf" 0640 root:mosquitto
  ((LAN)) || return 0
  broker_accounts
}

# broker_accounts: one MQTT account per node of the installed units, named after the node's
# client id (<node id>[@<namespace>]), plus the estop and observer accounts; the ACL that keeps
# each to its own topics; and the password files. A unit's password is in
# /etc/companion/mqtt/<unit>.env, 0600 root:root: systemd reads it as root (EnvironmentFile=)
# and hands it to that unit's process alone; no node can read any of these files.
broker_accounts() {
  if [[ ! -x $VENV/bin/python || ! -f $ROOT$ETC/robot.toml ]]; then   # a dry run before the first install
    ((DRY_RUN)) || die "--lan: $VENV/bin/python or $ETC/robot.toml is missing, so the nodes' ids cannot be worked out" \
      "rerun the installer: steps 4 and 6 put them in place"
    info "would create one MQTT account per node of: ${UNITS/broker /} (and estop, observer)"
    return 0
  fi
  local list acl
  list=$(tmpfile) acl=$(tmpfile)
  # shellcheck disable=SC2086  # UNITS is a list of words
  "$VENV/bin/python" "$SRC/deploy/lib/broker_accounts.py" --root "${ROOT:-/}" --units-dir "$SRC/deploy/systemd" \
    --template "$SRC/deploy/mosquitto/acl.template" --acl "$acl" --namespace "$NS" $UNITS >"$list" ||
    die "--lan: the broker accounts could not be worked out (the message above says why)" "fix it and rerun"
  put_file "$acl" "$ETC/mosquitto/acl" 0640 root:mosquitto
  command -v mosquitto_passwd >/dev/null || ((DRY_RUN)) || die "mosquitto_passwd is missing" "apt-get install mosquitto"
  put_dir "$ETC/mqtt" 0700 root:root

  local account file kind node order=() lines=""
  local -A logins=()
  while IFS=$'\t' read -r account file kind node; do
    if [[ $account == "!" ]]; then warn "$file"; continue; fi
    info "MQTT account $account ($kind): $ETC/mqtt/$file.env"
    [[ -n ${logins[$file]:-} ]] || order+=("$file")
    logins[$file]+="${logins[$file]:+ }$account"
  done <"$list"
  for file in "${order[@]}"; do mqtt_env "$file" "${logins[$file]}"; done
  ((DRY_RUN)) && return 0
  for file in "${order[@]}"; do
    for account in ${logins[$file]}; do
      lines+="$account:$(sed -n 's/^COMPANION_MQTT_PASSWORD=//p' "$ROOT$ETC/mqtt/$file.env")"$'\n'
    done
  done
  mosquitto_password_file "$lines"
}

# mqtt_env FILE "ACCOUNT...": /etc/companion/mqtt/FILE.env with its password (kept across reruns).
# A tool's file (estop, observer: for a panel or a dashboard) also names its user name; a node's
# does not, since the node logs in as its own client id.
mqtt_env() {
  local env=$ROOT$ETC/mqtt/$1.env names=$2 password tmp
  password=$(sed -n 's/^COMPANION_MQTT_PASSWORD=//p' "$env" 2>/dev/null || true)
  [[ -n $password ]] || password=$(od -An -N18 -tx1 /dev/urandom | tr -d ' \n')
  tmp=$(tmpfile)
  {
    if [[ " $ALL_UNITS " == *" $1 "* ]]; then
      printf '# MQTT password of companion-%s.service, whose node(s) log in as: %s\n' "$1" "$names"
      printf '# (install.sh --lan). systemd reads this file as root (EnvironmentFile=); keep it 0600 root:root.\n'
    else
      printf '# MQTT login for a %s client (install.sh --lan; docs/deploy.md "Broker accounts and ACL").\n' "$1"
      printf 'COMPANION_MQTT_USERNAME=%s\n' "$names"
    fi
    printf 'COMPANION_MQTT_PASSWORD=%s\n' "$password"
  } >"$tmp"
  put_file "$tmp" "$ETC/mqtt/$1.env" 0600 root:root
}

# mosquitto_password_file "USER:PASSWORD\n...": /etc/companion/mosquitto/passwd with exactly these
# accounts (stale ones, from renamed nodes or an older installer, go). mosquitto_passwd salts
# each hash, so the file is rebuilt only when the list differs from the last one written.
mosquitto_password_file() {
  local sum stamp=$ROOT$ETC/mqtt/.passwd.sha256 passwd=$ROOT$ETC/mosquitto/passwd user password tmp
  sum=$(printf '%s' "$1" | sha256sum | cut -c1-64)
  if [[ -f $passwd && -f $stamp && $(cat "$stamp") == "$sum" ]]; then
    _own "$passwd" 0640 root:mosquitto
    info "unchanged $ETC/mosquitto/passwd"
    return 0
  fi
  tmp=$(tmpfile)
  while IFS=: read -r user password; do
    if [[ -n $user ]]; then mosquitto_passwd -b "$tmp" "$user" "$password"; fi
  done <<<"$1"
  put_file "$tmp" "$ETC/mosquitto/passwd" 0640 root:mosquitto
  printf '%s\n' "$sum" >"$stamp"
  _own "$stamp" 0600 root:root
}

udev_rules() {
  step 7/9 "udev rules for servo adapters"
  put_file "$SRC/deploy/udev/99-companion-servo.rules" /etc/udev/rules.d/99-companion-servo.rules 0644
  if ((OFFLINE)); then info "offline: udev reads the rules when the system boots"; return 0; fi
  sys udevadm control --reload
  sys udevadm trigger --subsystem-match=tty --action=add
}

systemd_units() {
  step 8/9 "systemd units (installed, not yet enabled)"
  local unit tmp staged=()
  for unit in $ALL_UNITS; do
    tmp=$(tmpfile)
    render "$SRC/deploy/systemd/companion-$unit.service" >"$tmp"
    put_file "$tmp" "/etc/systemd/system/companion-$unit.service" 0644
    staged+=("$ROOT/etc/systemd/system/companion-$unit.service")
  done
  tmp=$(tmpfile)
  render "$SRC/deploy/systemd/companion.target" >"$tmp"
  put_file "$tmp" /etc/systemd/system/companion.target 0644
  if ((DRY_RUN)) || ! command -v systemd-analyze >/dev/null; then
    info "not verified (dry run, or no systemd-analyze)"
  elif [[ ! -x $VENV/bin/companion ]]; then
    info "not verified: $VENV/bin/companion does not exist yet"
  else
    local out
    # --man=no: whether man(1) is installed says nothing about the units (a minimal image lacks it)
    out=$(systemd-analyze verify --man=no "${staged[@]}" "$ROOT/etc/systemd/system/companion.target" 2>&1) ||
      die "the unit files do not verify: $out" "report this; nothing was enabled"
    if [[ -n $out ]]; then warn "systemd-analyze verify: $out"; else info "systemd-analyze verify: ok"; fi
  fi
  if ((OFFLINE)); then info "offline: systemd reads the units when the system boots"; return 0; fi
  sys systemctl daemon-reload
}

check_and_enable() {
  step 9/9 "check each node's configuration, then enable"
  ENABLE=() SKIPPED=()
  local unit state message fix
  if ((DRY_RUN)) || [[ ! -x $VENV/bin/python ]]; then
    info "would check the configuration of: $UNITS"
    for unit in $UNITS; do ENABLE+=("$unit"); done
  else
    # shellcheck disable=SC2086  # UNITS is a list of words
    while IFS=$'\t' read -r unit state message fix; do
      case $state in
        ok) info "ok    $unit: $message"; ENABLE+=("$unit") ;;
        warn) warn "$unit: $message${fix:+ (fix: $fix)}"; ENABLE+=("$unit") ;;
        *) warn "not enabled: $unit: $message"; [[ -n $fix ]] && info "      fix: $fix"
           SKIPPED+=("$unit") ;;
      esac
    done < <("$VENV/bin/python" "$SRC/deploy/lib/unit_checks.py" --root "${ROOT:-/}" --dev "$DEV" $UNITS)
  fi
  local names=() off=() now=(--now)
  ((OFFLINE)) && now=()   # nothing runs yet: disabling is enough
  for unit in "${ENABLE[@]}"; do names+=("companion-$unit.service"); done
  for unit in $ALL_UNITS; do [[ " ${ENABLE[*]} " == *" $unit "* ]] || off+=("companion-$unit.service"); done
  if [[ " ${ENABLE[*]} " == *" broker "* ]] && { ! sys_ok || systemctl is-enabled -q mosquitto.service 2>/dev/null; }; then
    sys systemctl disable "${now[@]}" mosquitto.service   # the distribution's broker would hold port 1883
  fi
  if sys_ok; then
    if ! systemctl enable companion.target "${names[@]}"; then
      systemctl disable "${names[@]}" >/dev/null 2>&1 || true
      die "systemctl enable failed; the units of this run were disabled again" "see the message above, then rerun"
    fi
    ENABLED=1
    info "enabled: companion.target ${names[*]}$( ((OFFLINE)) && echo ' (they start at the next boot)')"
    for unit in "${off[@]}"; do
      if systemctl is-enabled -q "$unit" 2>/dev/null; then sys systemctl disable "${now[@]}" "$unit"; fi
    done
  else
    sys systemctl enable companion.target "${names[@]}"
  fi
  if ((!NO_START)); then
    sys systemctl restart companion.target || warn "not every unit started: systemctl status 'companion-*'"
  fi
}

summary() {
  printf '\n%s==> done%s (%s profile%s)\n' "$B" "$N" "$PROFILE" "$( ((DRY_RUN)) && echo ', dry run: nothing was changed')"
  info "$( ((DRY_RUN)) || [[ -n $ROOT ]] && echo "would enable" || echo "enabled"): ${ENABLE[*]:-none}"
  ((${#SKIPPED[@]})) && info "not enabled: ${SKIPPED[*]} (the reasons are above; fix them and rerun)"
  if ((!DRY_RUN)); then
    if ((CHANGED + RAN == 0)); then
      info "changes: none, everything was already in place"
    else
      info "changes: $CHANGED file(s) written, $RAN system command(s) run (each is marked above)"
    fi
  fi
  info "logs:    journalctl -u 'companion-*' -f"
  info "check:   sudo -u companion $VENV/bin/companion doctor --config $ETC/robot.toml"
  info "talk:    $VENV/bin/companion perceive input \"hello\""
  ((LAN)) && info "LAN broker: one account per node; estop.env is for an emergency-stop panel, observer.env for a dashboard ($ETC/mqtt/)"
  return 0
}
