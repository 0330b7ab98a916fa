#!/usr/bin/env bash
# Captures the explorer's screens from the real binary in tmux, for docs/guide.md.
# usage: scripts/capture-screens.sh [RECOUNT_BINARY]   (writes docs/captures/*.txt)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-${CARGO_TARGET_DIR:-target}/release/recount}
out=docs/captures
lab=$(mktemp -d)/lab
session=recount-capture-$$
mkdir -p "$out"
"$bin" --lab "$lab" land 2026-10-12 2026-11-01 >/dev/null
for d in $(seq 0 20); do
  day=$(date -d "2026-10-12 + $d days" +%F)
  "$bin" --lab "$lab" naive "$day" >/dev/null
  "$bin" --lab "$lab" run "$day" >/dev/null
done
"$bin" --lab "$lab" naive 2026-10-24 >/dev/null   # a retry: v1 doubles the day
tmux new-session -d -s "$session" -x 120 -y 36 "TERM=xterm-256color $bin --lab $lab tui --no-mouse"
trap 'tmux kill-session -t $session 2>/dev/null || true' EXIT
wait_for() { for _ in $(seq 1 200); do tmux capture-pane -p -t "$session" | grep -q "$1" && return 0; sleep 0.1; done; echo "timed out waiting for $1" >&2; return 1; }
wait_for "per country"
tmux send-keys -t "$session" ":" ; wait_for "go to date"; tmux send-keys -t "$session" "10-24" Enter
wait_for "2026-10-24 per country"
tmux capture-pane -p -t "$session" > "$out/overview.txt"
tmux send-keys -t "$session" "c"; sleep 0.3; tmux capture-pane -p -t "$session" > "$out/overview-by-country.txt"; tmux send-keys -t "$session" "c"
tmux send-keys -t "$session" "2"; wait_for "double counted"; tmux capture-pane -p -t "$session" > "$out/explain.txt"
tmux send-keys -t "$session" "Enter"; sleep 0.3; tmux capture-pane -p -t "$session" > "$out/explain-drill.txt"; tmux send-keys -t "$session" "Escape"
tmux send-keys -t "$session" "3"; wait_for "which copy counts"; tmux capture-pane -p -t "$session" > "$out/baskets.txt"
tmux send-keys -t "$session" "4"; wait_for "quarantine"; tmux capture-pane -p -t "$session" > "$out/late.txt"
tmux send-keys -t "$session" "5"; wait_for "history of"; tmux capture-pane -p -t "$session" > "$out/history.txt"
tmux send-keys -t "$session" "6"; wait_for "completeness"; tmux capture-pane -p -t "$session" > "$out/promises.txt"
tmux send-keys -t "$session" "?"; wait_for "keys (? or Esc closes)"; tmux capture-pane -p -t "$session" > "$out/help.txt"; tmux send-keys -t "$session" "Escape"
tmux send-keys -t "$session" "1" "r"; wait_for "Rebuild 2026-10-24"; tmux capture-pane -p -t "$session" > "$out/rebuild-preview.txt"; tmux send-keys -t "$session" "n"
tmux send-keys -t "$session" "q"
echo "captured: $(ls $out)"
