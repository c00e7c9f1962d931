#!/usr/bin/env bash
# soak.sh — a soak run: a fresh earshot server on loopback and `earshot
# replay` feeding it CALLS calls spread evenly over DURATION, while RSS,
# goroutines and open files of the server are sampled every SAMPLE. A flat
# line is the pass: nothing grows with the number of calls served.
#
# Usage: scripts/soak.sh FILE...        (recordings for earshot replay)
# Env:   CALLS (1000), DURATION (1800 s), SAMPLE (10 s), IDLE (60 s sampled after
#        the last call), OUT (/tmp/earshot-soak),
#        PORT (18180; +1 metrics), REPLAY_FLAGS (extra replay flags, e.g.
#        "--register-share 0.2").
# Out:   $OUT/samples.csv (elapsed_s, rss_kib, goroutines, open_fds, streams_active,
#        calls_done), $OUT/summary.json and replay.txt (the replay's summary),
#        $OUT/server.log, and $OUT/soak.png when gnuplot is installed.
# It stops by itself: the replay ends after its last call (and is killed at
# DURATION + 10 minutes whatever happens), then the server is stopped.
#
# Example (docs/PERFORMANCE.md, the soak):
#   scripts/soak.sh /tmp/corpus-soak/calls/*.wav
set -euo pipefail
if [[ $# -lt 1 || "$1" == -h || "$1" == --help ]]; then
  sed -n '2,19p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 2
fi
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
calls=${CALLS:-1000}; duration=${DURATION:-1800}; sample=${SAMPLE:-10}
out=${OUT:-/tmp/earshot-soak}; port=${PORT:-18180}
rm -rf "$out"; mkdir -p "$out"
ulimit -n "$(ulimit -Hn)"

go build -o "$out/earshot" "$root/cmd/earshot"
"$out/earshot" serve --data-dir "$out/data" --addr "127.0.0.1:$port" \
  --metrics-addr "127.0.0.1:$((port + 1))" --log-format json >"$out/server.log" 2>&1 &
server=$!
pids=("$server")
cleanup() { kill "${pids[@]}" 2>/dev/null || true; }
trap cleanup EXIT
for _ in $(seq 300); do grep -q '"listening"' "$out/server.log" 2>/dev/null && break; sleep 0.1; done
creds=$(grep -m1 '"bootstrap credentials"' "$out/server.log")
field() { printf '%s' "$creds" | sed -n "s/.*\"$1\":\"\([^\"]*\)\".*/\1/p"; }
key=$(field api_key); secret=$(field audiohook_client_secret)
[[ -n $key && -n $secret ]] || { echo "no bootstrap credentials in $out/server.log" >&2; exit 1; }
metrics="http://127.0.0.1:$((port + 1))/metrics"

# The sampler: the server's own view (/proc) and its metrics.
metric() { printf '%s\n' "$2" | awk -v m="$1" '$1 == m { print $2; exit }'; }
echo "elapsed_s,rss_kib,goroutines,open_fds,streams_active,calls_done" >"$out/samples.csv"
start=$(date +%s)
(
  while kill -0 "$server" 2>/dev/null; do
    m=$(curl -s --max-time 5 "$metrics" || true)
    rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$server/status" 2>/dev/null || echo "")
    fds=$(ls "/proc/$server/fd" 2>/dev/null | wc -l)
    ended=$(printf '%s\n' "$m" | awk '/^earshot_audiohook_streams_ended_total/ { s += $2 } END { print s + 0 }')
    echo "$(( $(date +%s) - start )),$rss,$(metric go_goroutines "$m"),$fds,$(metric earshot_audiohook_streams_active "$m"),$ended" \
      >>"$out/samples.csv"
    sleep "$sample"
  done
) </dev/null >/dev/null 2>&1 &
pids+=("$!")

rate=$(awk -v c="$calls" -v d="$duration" 'BEGIN { printf "%.4f", c / d }')
status=0
# shellcheck disable=SC2086 # REPLAY_FLAGS is a list of flags
timeout $((duration + 600)) "$out/earshot" replay --url "ws://127.0.0.1:$port" --api-key "$key" --client-secret "$secret" --quiet \
  --calls "$calls" --rate "$rate" --register --server-metrics "$metrics" --json "$out/summary.json" \
  ${REPLAY_FLAGS:-} "$@" | tee "$out/replay.txt" || status=$?
# Idle after the last call: what the calls leave behind.
sleep "${IDLE:-60}"
kill "$server"; wait "$server" 2>/dev/null || true

if command -v gnuplot >/dev/null; then
  gnuplot <<GP
set terminal pngcairo size 1000,900 font ",10"
set output "$out/soak.png"
set datafile separator ","
set key autotitle columnhead left top
set xlabel "elapsed (s)"
set grid
set multiplot layout 3,1 title "earshot soak: $calls calls over $duration s, sampled every $sample s"
set ylabel "MiB"
plot "$out/samples.csv" using 1:(\$2/1024) with lines lw 2 title "resident memory"
set ylabel "count"
plot "$out/samples.csv" using 1:3 with lines lw 2 title "goroutines", "" using 1:5 with lines title "live calls"
set ylabel "count"
plot "$out/samples.csv" using 1:4 with lines lw 2 title "open files", "" using 1:6 with lines title "calls ended (cumulative)"
unset multiplot
GP
fi
echo "soak: samples in $out/samples.csv${status:+, replay exit $status}"
exit $status
