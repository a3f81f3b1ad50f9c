#!/usr/bin/env bash
# Drive the real musetui binary under tmux: launch on sample_transcripts, press o, y, q;
# check the screen shows the azure/muse-special worker, the tmux paste buffer holds its
# evidence (OSC 52 with set-clipboard on), and the app exits with status 0.
#
# Usage: scripts/tmux_smoke.sh            (uses `musetui` from PATH, else `python -m musetui`)
#        MUSETUI_BIN="python -m musetui" scripts/tmux_smoke.sh
set -euo pipefail
cd "$(dirname "$0")/.."

command -v tmux >/dev/null || { echo "tmux_smoke: tmux is not installed" >&2; exit 2; }
if [[ -n "${MUSETUI_BIN:-}" ]]; then
  BIN="$MUSETUI_BIN"
elif command -v musetui >/dev/null; then
  BIN="musetui"
else
  BIN="${PYTHON:-python3} -m musetui"
fi

SOCK="musetui-smoke-$$"
WORK="$(mktemp -d)"
RC_FILE="$WORK/rc"
T="tmux -L $SOCK -f /dev/null"
cleanup() { $T kill-server 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT

fail() {
  echo "tmux_smoke: FAIL: $*" >&2
  echo "---- screen ----" >&2
  $T capture-pane -p -t smoke 2>/dev/null >&2 || true
  exit 1
}

wait_for() {  # wait_for <seconds> <command...>: poll until the command succeeds
  local limit=$1; shift
  local end=$((SECONDS + limit))
  while (( SECONDS < end )); do
    if "$@"; then return 0; fi
    sleep 0.2
  done
  return 1
}

screen_has() { $T capture-pane -p -t smoke | grep -qF -- "$1"; }
buffer_has() { $T show-buffer 2>/dev/null | grep -qF -- "$1"; }
exited() { [[ -s "$RC_FILE" ]]; }

# A private tmux server; set-clipboard on makes OSC 52 from the app fill a paste buffer.
$T new-session -d -s smoke -x 160 -y 48 \
  "env MUSETUI_NO_PYPERCLIP=1 TERM=tmux-256color $BIN sample_transcripts; echo \$? > '$RC_FILE'; sleep 30"
$T set-option -s set-clipboard on

wait_for 20 screen_has "Indexed:" || fail "indexing did not finish on screen"
$T send-keys -t smoke o
wait_for 10 screen_has "muse-special" || fail "o did not show the muse-special worker"
wait_for 5 screen_has "openai/azure" || fail "the outlier is not shown as openai/azure"
wait_for 5 screen_has "⚑" || fail "no outlier flag glyph on screen"

$T send-keys -t smoke y
wait_for 10 buffer_has "01a05efe-03bb-72c8-854a-4c1c088cc3b9" || fail "y did not fill the tmux paste buffer"
buffer_has "flags: outlier" || fail "the copied evidence does not name the outlier flag"
buffer_has "muse-special" || fail "the copied evidence does not name the declared model"
wait_for 5 screen_has "Copied evidence for" || fail "no copy notification"

$T send-keys -t smoke q
wait_for 15 exited || fail "q did not exit"
rc="$(cat "$RC_FILE")"
[[ "$rc" == "0" ]] || fail "exit status $rc"

echo "tmux_smoke: OK (o → azure/muse-special worker, y → $($T show-buffer | wc -c) bytes in the tmux buffer, q → exit 0)"
