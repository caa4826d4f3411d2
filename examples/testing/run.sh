#!/usr/bin/env bash
# Starts the demo origin, a scripted demo bidder and ssatd (with
# -ready-file), then runs the command given, with ORIGIN, BIDDER, SSATD and
# ADMIN set to their base URLs. Everything is stopped on exit.
# usage: run.sh SSATD_BINARY COMMAND...   (docs/testing.md)
set -euo pipefail
ssatd="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
shift
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

# waitfor FILE PATTERN: the first line of FILE matching PATTERN, once it is there.
waitfor() {
	for _ in $(seq 100); do
		if line="$(grep -m1 -E "$2" "$1")"; then echo "$line"; return; fi
		sleep 0.1
	done
	echo "timed out waiting for $2 in $1:" >&2; cat "$1" >&2; exit 1
}

"$ssatd" demo-origin -listen 127.0.0.1:0 >"$work/origin.out" 2>&1 & pids+=($!)
"$ssatd" demo-bidder -listen 127.0.0.1:0 -script "$here/script.json" >"$work/bidder.out" 2>&1 & pids+=($!)
ORIGIN="$(waitfor "$work/origin.out" 'http://127\.0\.0\.1:[0-9]+' | grep -oE 'http://127\.0\.0\.1:[0-9]+' | head -1)"
BIDDER="$(waitfor "$work/bidder.out" 'http://127\.0\.0\.1:[0-9]+' | grep -oE 'http://127\.0\.0\.1:[0-9]+' | head -1)"
sed -e "s#ORIGIN#$ORIGIN#" -e "s#BIDDER#$BIDDER#" "$here/ssatd.toml.in" >"$work/ssatd.toml"

"$ssatd" serve -config "$work/ssatd.toml" -ready-file "$work/ready.json" 2>"$work/ssatd.log" & pids+=($!)
for _ in $(seq 100); do [ -f "$work/ready.json" ] && break; sleep 0.1; done
[ -f "$work/ready.json" ] || { echo "ssatd did not start:" >&2; cat "$work/ssatd.log" >&2; exit 1; }
SSATD="$(jq -r .client_url "$work/ready.json")"
ADMIN="$(jq -r .admin_url "$work/ready.json")"
export ORIGIN BIDDER SSATD ADMIN
"$@"
