#!/usr/bin/env bash
# Load benchmark: hello-world py3 jobs against a real goboxd on 127.0.0.1,
# at 1, 10, 50 and 100 concurrent clients, with wrk. Prints one line per
# level and a Markdown table for docs/benchmarks.md. Bounded: each level
# runs GOBOXD_LOAD_SECONDS (default 20) and the script stops the daemon.
#
#   tests/load/load.sh path/to/goboxd [extra goboxd options...]
#   GOBOXD_LOAD_LEVELS="100" GOBOXD_LOAD_SECONDS=300 tests/load/load.sh ...  (soak)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
bin=${1:?usage: tests/load/load.sh path/to/goboxd [goboxd options]}
shift
seconds=${GOBOXD_LOAD_SECONDS:-20}
levels=${GOBOXD_LOAD_LEVELS:-"1 10 50 100"}
jail=${GOBOXD_LOAD_JAIL:-auto}
command -v wrk >/dev/null || { echo "wrk is missing: apt-get install wrk" >&2; exit 1; }

tmp=$(mktemp -d /tmp/goboxd-load-XXXXXX)
chmod 711 "$tmp"
port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$bin" --listen 127.0.0.1 --port "$port" --languages-dir "$top/languages" \
	--jail-dir "$tmp/jails" --jail "$jail" --max-queue-size 1024 --log-level warn "$@" \
	>"$tmp/goboxd.log" 2>&1 &
pid=$!
cleanup() {
	kill "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

for _ in $(seq 100); do
	curl -fs "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break
	sleep 0.1
done
info=$(curl -fs "http://127.0.0.1:$port/info")
driver=$(echo "$info" | /usr/bin/python3 -c 'import json,sys; i=json.load(sys.stdin); print(i["nsjail"]["driver"], i["limits"]["workers"], i["limits"]["max_concurrent_jobs"])')
echo "goboxd $(echo "$info" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["build_info"]["version"])'), jail/workers/max-concurrency: $driver, $(nproc) CPUs"

# warm-up: page cache, first jobs
wrk -t1 -c2 -d3s -s "$here/run.lua" "http://127.0.0.1:$port/run" >/dev/null

rows=()
for c in $levels; do
	t=$(( c < 4 ? c : 4 ))
	out=$(wrk -t"$t" -c"$c" -d"${seconds}s" --timeout 60s -s "$here/run.lua" \
		"http://127.0.0.1:$port/run")
	line=$(echo "$out" | grep '^RESULT')
	echo "clients=$c $line"
	# RESULT key=value... into r_key variables
	eval "$(echo "$line" | sed 's/^RESULT //; s/\([a-z0-9_]*\)=/r_\1=/g')"
	rows+=("| $c | $r_requests | $r_rps | $r_p50_ms | $r_p95_ms | $r_p99_ms | $r_max_ms | $((r_errors + r_non_accepted)) |")
done
echo
echo "| clients | requests | req/s | p50 ms | p95 ms | p99 ms | max ms | errors |"
echo "|---|---|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
curl -fs "http://127.0.0.1:$port/info" | /usr/bin/python3 -c 'import json,sys; s=json.load(sys.stdin)["stats"]; print("jobs_total=%d jobs_failed_internal=%d queue_rejected=%d" % (s["jobs_total"], s["jobs_failed_internal"], s["queue_rejected_full"] + s["queue_rejected_timeout"]))'
