#!/usr/bin/env bash
# capacity.sh — one capacity step of docs/PERFORMANCE.md: a fresh earshot
# server and earshot replay on this machine, over loopback.
#
# Usage: scripts/capacity.sh NAME [replay flags...] FILE...
#   NAME   the run's directory under ${OUT:-/tmp/earshot-capacity}: server.log,
#          summary.json (the replay's --json summary, with its server and
#          generator sections), replay.txt, cpu.pprof, heap.pprof (taken
#          after a collection, so it is the live heap), metrics-profile.txt
#          (the server's metrics then) and metrics.txt (at the end)
# Env:     SERVER_ENV (e.g. GOGC=50) for the server only; PROFILE_AT seconds
#          after the start to take a 15 s CPU profile, then a heap profile
#          (default 40; 0 for none); PORT (default 18080; +1 metrics, +2 pprof).
#
# Example (the capacity target of 2,000 calls with sessions):
#   scripts/capacity.sh t1 --calls 2000 --rate 200 --duration 60s --register \
#       /tmp/corpus-dev/calls/call_0*.wav
set -euo pipefail
if [[ $# -lt 2 || "$1" == -h || "$1" == --help ]]; then
  sed -n '2,17p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 2
fi
name=$1; shift
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${OUT:-/tmp/earshot-capacity}/$name"
port=${PORT:-18080}
rm -rf "$out"; mkdir -p "$out"
ulimit -n "$(ulimit -Hn)"

go build -o "$out/earshot" "$root/cmd/earshot"
env ${SERVER_ENV:-} "$out/earshot" serve --data-dir "$out/data" --addr "127.0.0.1:$port" \
  --metrics-addr "127.0.0.1:$((port + 1))" --pprof-addr "127.0.0.1:$((port + 2))" --log-format json \
  >"$out/server.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
for _ in $(seq 100); do grep -q '"listening"' "$out/server.log" 2>/dev/null && break; sleep 0.1; done
creds=$(grep -m1 '"bootstrap credentials"' "$out/server.log")
field() { printf '%s' "$creds" | sed -n "s/.*\"$1\":\"\([^\"]*\)\".*/\1/p"; }
key=$(field api_key); secret=$(field audiohook_client_secret)
[[ -n $key && -n $secret ]] || { echo "no bootstrap credentials in $out/server.log" >&2; exit 1; }

if [[ ${PROFILE_AT:-40} != 0 ]]; then
  ( sleep "${PROFILE_AT:-40}"
    curl -s -o "$out/cpu.pprof" "http://127.0.0.1:$((port + 2))/debug/pprof/profile?seconds=15"
    curl -s -o "$out/heap.pprof" "http://127.0.0.1:$((port + 2))/debug/pprof/heap?gc=1"
    curl -s -o "$out/metrics-profile.txt" "http://127.0.0.1:$((port + 1))/metrics" ) &
fi
status=0
"$out/earshot" replay --url "ws://127.0.0.1:$port" --api-key "$key" --client-secret "$secret" --quiet \
  --server-metrics "http://127.0.0.1:$((port + 1))/metrics" --json "$out/summary.json" "$@" \
  | tee "$out/replay.txt" || status=$?
curl -s -o "$out/metrics.txt" "http://127.0.0.1:$((port + 1))/metrics" || true
kill "$server"; wait || true
exit $status
