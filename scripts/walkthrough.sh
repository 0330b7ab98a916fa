#!/usr/bin/env bash
# The README's walkthrough, on the bundled sample world. usage: scripts/walkthrough.sh [RECOUNT_BINARY]
set -euo pipefail
cd "$(dirname "$0")/.."
recount=${1:-${CARGO_TARGET_DIR:-target}/release/recount}
export RECOUNT_LAB=${RECOUNT_LAB:-$(mktemp -d)/walkthrough}
run() { echo "\$ recount $*"; NO_COLOR=1 "$recount" "$@"; echo; }
run reset
run land 2026-10-12 2026-10-16
run naive 2026-10-15
run naive 2026-10-15
run check 2026-10-15
run run 2026-10-12 2026-10-16
run check 2026-10-15
run run 2026-10-15
run fingerprint
run daily 2026-10-17
run history 2026-10-16
run diff 2026-10-16
run fingerprint
