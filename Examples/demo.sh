#!/usr/bin/env bash
# make demo: the whole story as a user sees it (README, "Quick start"), against the bundled
# Google emulator, in a temporary folder. Two devices back up to one Drive app folder, a new
# machine dry-runs and then merges a restore, and an old backup is checked before merging;
# a server without a browser logs in by pasting the redirect back, or with a device code.
# Leaves nothing running and nothing behind.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BIN=${BIN:-$ROOT/.build/release/cloudbackup}
PYTHON=${PYTHON:-python3}
# A fixed clock for the tombstone window, the guards and every "how long ago", so every run
# tells the same story: each command that measures time against the clock is given it.
NOW=2026-11-30T00:30:00Z

WORK=$(mktemp -d)
EMULATOR_PID=
cleanup() {
    [ -n "$EMULATOR_PID" ] && kill "$EMULATOR_PID" 2>/dev/null && wait "$EMULATOR_PID" 2>/dev/null
    rm -rf "$WORK"
}
trap cleanup EXIT

# Colour only for a person at a terminal, and never under NO_COLOR (no-color.org): the
# demo's output piped to a file or a pager stays plain text.
if [ -t 1 ] && [ -z "${NO_COLOR:-}" ]; then
    BOLD=$'\033[1m' CYAN=$'\033[36m' YELLOW=$'\033[33m' PLAIN=$'\033[0m'
else
    BOLD= CYAN= YELLOW= PLAIN=
fi
say() { printf '\n%s# %s%s\n' "$BOLD" "$*" "$PLAIN"; }
# Shows the command, runs it, and shows a non-zero exit status (some steps exit 7 on purpose).
step() {
    printf '%s$ %s%s\n' "$CYAN" "$(echo "$*" | sed "s#$BIN#cloudbackup#g; s#$WORK/##g")" "$PLAIN"
    local status=0
    "$@" || status=$?
    [ "$status" = 0 ] || printf '%s(exit %s)%s\n' "$YELLOW" "$status" "$PLAIN"
}

say "Start the local stand-in for Google's sign-in and Drive (never the real Google)"
# Reading its first line blocks until it listens: no polling, no sleeps.
exec 3< <(exec "$PYTHON" Tests/Emulator/google_emulator.py --ignore-stdin 2>"$WORK/emulator.err")
EMULATOR_PID=$!
read -r word EMU <&3 || { cat "$WORK/emulator.err"; exit 1; }
[ "$word" = LISTENING ] || { echo "emulator said: $word $EMU"; exit 1; }
echo "emulator at $EMU"

# The stand-in browser clicks "Allow" on the consent page, like a user would.
cat >"$WORK/browser" <<BROWSER
#!/bin/sh
exec "$PYTHON" "$ROOT/Tests/Emulator/fake_browser.py" "\$1"
BROWSER
chmod +x "$WORK/browser"

export CLOUDBACKUP_CLIENT_ID=test-client-id CLOUDBACKUP_CLIENT_SECRET=test-client-secret
export CLOUDBACKUP_AUTH_URL=$EMU/o/oauth2/v2/auth CLOUDBACKUP_TOKEN_URL=$EMU/token
export CLOUDBACKUP_REVOKE_URL=$EMU/revoke CLOUDBACKUP_DRIVE_URL=$EMU
export BROWSER=$WORK/browser
machine() { export XDG_CONFIG_HOME=$WORK/$1/config; mkdir -p "$WORK/$1"; }

say "The files: two devices of one user, and two old backups"
step "$BIN" validate Examples/phone.json Examples/laptop.json Examples/old-v1.json Examples/old-v2.json --verbose
echo "(the demo's clock is $NOW: every age, window and streak below is measured from it)"
step "$BIN" inspect Examples/phone.json --now "$NOW"
step "$BIN" validate Examples/invalid/target-10000.json

say "The phone logs in once and backs up (cron would run this line nightly)"
machine phone
cp Examples/phone.json "$WORK/phone/state.json"
step "$BIN" login
step "$BIN" backup --file "$WORK/phone/state.json" --now "$NOW" --verbose
echo "(status and history say when things really ran, by this machine's clock: --now moves"
echo " only the tombstone window and the ages measured from it)"
step "$BIN" status --remote --file "$WORK/phone/state.json"

say "The laptop backs up too: it merges into the phone's backup before uploading"
machine laptop
cp Examples/laptop.json "$WORK/laptop/state.json"
step "$BIN" login
step "$BIN" backup --file "$WORK/laptop/state.json" --now "$NOW" --json

say "A new machine: first a dry run, which writes nothing, then the real restore"
echo "(a deleted item is remembered as a tombstone for 90 days, the tombstone window; a file"
echo " older than that may bring back items deleted since, so merges hold its stale items back)"
machine new
step "$BIN" login
step "$BIN" restore --file "$WORK/new/state.json" --merge --dry-run --now "$NOW"
test ! -e "$WORK/new/state.json" || { echo "the dry run wrote state.json"; exit 1; }
step "$BIN" restore --file "$WORK/new/state.json" --merge --yes --now "$NOW"
step "$BIN" inspect "$WORK/new/state.json" --now "$NOW"

say "An old backup turns up: does it predate the 90-day tombstone window?"
step "$BIN" verify Examples/old-v1.json --against "$WORK/new/state.json" --now "$NOW"
step "$BIN" merge "$WORK/new/state.json" Examples/old-v1.json -o "$WORK/new/merged.json" --dry-run --now "$NOW"

say "A bad merge reaches Drive; a rollback to the revision before it undoes it on every device"
BEFORE=$(date -u +%FT%T.%3NZ)
# The old v1 file is merged in and backed up by mistake: its forgotten deletes come back.
"$BIN" merge "$WORK/new/state.json" Examples/old-v1.json -o "$WORK/new/state.json" --allow-stale --now "$NOW" >/dev/null
step "$BIN" backup --file "$WORK/new/state.json" --now "$NOW"
step "$BIN" history --contents
echo "(the bad merge happened after $BEFORE)"
step "$BIN" rollback --file "$WORK/new/state.json" --as-of "$BEFORE" --dry-run --now "$NOW"
step "$BIN" rollback --file "$WORK/new/state.json" --as-of "$BEFORE" --yes --now "$NOW"
step "$BIN" inspect "$WORK/new/state.json" --now "$NOW"

say "Encrypted: with a passphrase (read from a file, never an argument) the backup is an age file"
# A file of its own, so the plain backup above stays as it is.
export CLOUDBACKUP_FILE_NAME=habit-backup-encrypted.json
# Only its owner may read it: cloudbackup refuses a secret file others can read.
(umask 077 && printf 'correct horse battery staple\n' >"$WORK/new/passphrase")
step env CLOUDBACKUP_ENCRYPT=1 "$BIN" backup --file "$WORK/new/state.json" \
    --password-file "$WORK/new/passphrase" --now "$NOW" --verbose
# Without the passphrase nothing can be read, and nothing is written (exit 3).
step "$BIN" restore --file "$WORK/new/decrypted.json" --replace --yes --now "$NOW"
step "$BIN" restore --file "$WORK/new/decrypted.json" --replace --yes --now "$NOW" \
    --password-file "$WORK/new/passphrase"
echo "(any age tool opens it too: age -d habit-backup-encrypted.json asks for the passphrase)"
unset CLOUDBACKUP_FILE_NAME

say "Log out: the token is revoked at the server and the saved login deleted"
step "$BIN" logout
step "$BIN" status

say "A server without a browser: the login's address is opened on a phone and pasted back"
machine server
step "$PYTHON" Examples/tools/other_device.py paste "$EMU" -- "$BIN" login --paste
step "$BIN" status

say "Or with a code typed on the phone (a \"TVs and Limited Input devices\" client)"
machine server2
# Google asks for a poll every 5 s; the emulator is told 1 s so the demo does not wait.
"$PYTHON" -c 'import sys, urllib.request; urllib.request.urlopen(urllib.request.Request(sys.argv[1] + "/__emulator/settings", b"{\"deviceInterval\": 1}", {"Content-Type": "application/json"}))' "$EMU"
export CLOUDBACKUP_DEVICE_CLIENT_ID=test-device-client-id
export CLOUDBACKUP_DEVICE_CLIENT_SECRET=test-device-client-secret
export CLOUDBACKUP_DEVICE_CODE_URL=$EMU/device/code
step "$PYTHON" Examples/tools/other_device.py device "$EMU" -- "$BIN" login --device
step "$BIN" status
