#!/usr/bin/env bash
# Captures the explorer's screens from the real binary in tmux, for docs/guide.md, on the lab a
# first run builds. tests/guide.rs checks that the guide embeds these captures as they are.
# usage: scripts/capture-screens.sh [RECOUNT_BINARY]   (writes docs/captures/*.txt)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-${CARGO_TARGET_DIR:-target}/release/recount}
out=docs/captures
data=$(mktemp -d)
session=recount-capture-$$
mkdir -p "$out"
# The lab a first run builds: day by day (land, v1, v2 per upload), the newest two uploads held back.
env -u RECOUNT_LAB XDG_DATA_HOME="$data" "$bin" >/dev/null
lab=$data/recount/lab
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
tmux send-keys -t "$session" "Enter"; sleep 0.3; tmux capture-pane -p -t "$session" > "$out/explain-drill.txt"; tmux send-keys -t "$session" "Escape"; sleep 0.3
tmux send-keys -t "$session" "3"; wait_for "which copy counts"; tmux capture-pane -p -t "$session" > "$out/baskets.txt"
tmux send-keys -t "$session" "4"; wait_for "quarantine"; tmux capture-pane -p -t "$session" > "$out/late.txt"
tmux send-keys -t "$session" "5"; wait_for "history of"; tmux capture-pane -p -t "$session" > "$out/history.txt"
tmux send-keys -t "$session" "6"; wait_for "completeness"; tmux capture-pane -p -t "$session" > "$out/promises.txt"
tmux send-keys -t "$session" "7"; wait_for "v1 spikes on"; tmux capture-pane -p -t "$session" > "$out/trend.txt"
tmux send-keys -t "$session" "?"; wait_for "keys (? or Esc closes)"; tmux capture-pane -p -t "$session" > "$out/help.txt"
tmux send-keys -t "$session" "End"; sleep 0.3; tmux capture-pane -p -t "$session" > "$out/help-end.txt"; tmux send-keys -t "$session" "Escape"; sleep 0.3
tmux send-keys -t "$session" "1" "r"; wait_for "Rebuild 2026-10-24"; tmux capture-pane -p -t "$session" > "$out/rebuild-preview.txt"; tmux send-keys -t "$session" "n"
# A closed date with baskets past its window: the Late screen offers to reopen it.
tmux send-keys -t "$session" ":" ; wait_for "go to date"; tmux send-keys -t "$session" "10-20" Enter
wait_for "2026-10-20 per country"
tmux send-keys -t "$session" "4"; wait_for "beyond the 2-day window"; tmux capture-pane -p -t "$session" > "$out/late-reopen.txt"
tmux send-keys -t "$session" "o"; wait_for "who decides"; tmux send-keys -t "$session" "docs-writer" Enter
wait_for "why reopen"; tmux send-keys -t "$session" "late GB tills approved" Enter
wait_for "Reopen 2026-10-20"; tmux capture-pane -p -t "$session" > "$out/reopen-confirm.txt"; tmux send-keys -t "$session" "n"
tmux send-keys -t "$session" "q"
echo "captured: $(ls $out)"
