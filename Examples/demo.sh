#!/usr/bin/env bash
# make demo: what a user sees, end to end. Grows with each capability.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-.build/release/cloudbackup}
step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; "$@" || echo "(exit $?)"; }
step "$BIN" --help
