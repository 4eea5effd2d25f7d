#!/usr/bin/env bash
# Runs in one go, on this machine and its databases, the raw SQL beside the
# daemon and prints the figures of issue 12 next to their targets:
#   - raw SQLite synchronous=FULL, one transaction per ticket (nowserving bench raw)
#     against the daemon on SQLite FULL over TCP, same client count;
#   - pgbench with the store's SQL (bench/issue.sql) and with the minimal
#     upsert + insert (bench/minimal.sql) against the daemon on PostgreSQL;
#   - the issue rate with 10,000 tickets waiting against an empty queue;
#   - the daemon's CPU per ticket (/proc), p99 at an offered rate (open loop);
#   - call-next while kiosks flood the daemon, keypad -> LED frame latency on
#     a pty board (socat) under a background rate.
# The machine may be shared: everything runs under nice, side by side.
#
#   bench/compare.sh
#   CLIENTS=64 DURATION=10 RATE=1000 FLOOD=200 BG=200 bench/compare.sh
set -euo pipefail
cd "$(dirname "$0")/.."
PG=${NOWSERVING_TEST_POSTGRES:-postgres://postgres@127.0.0.1:5432/test?sslmode=disable}
CLIENTS=${CLIENTS:-64}
DURATION=${DURATION:-10}
RATE=${RATE:-1000}
FLOOD=${FLOOD:-200}
BG=${BG:-200}
CALLS=${CALLS:-200}
PORT=${PORT:-7491}
NICE="nice -n ${NICENESS:-5}"
for p in socat pgbench psql jq; do
	command -v $p >/dev/null || { echo "compare: $p not found" >&2; exit 2; }
done

work=$(mktemp -d)
daemon=""
schemas=()
cleanup() {
	[ -n "$daemon" ] && kill "$daemon" 2>/dev/null && wait "$daemon" 2>/dev/null || true
	[ -n "${socat:-}" ] && kill "$socat" 2>/dev/null || true
	for s in "${schemas[@]}"; do psql -q "$PG" -c "DROP SCHEMA IF EXISTS $s CASCADE" >/dev/null 2>&1 || true; done
	rm -rf "$work"
}
trap cleanup EXIT
go build -o "$work/nowserving" ./cmd/nowserving
ns="$work/nowserving"

socat pty,raw,echo=0,link="$work/led-daemon" pty,raw,echo=0,link="$work/led-bench" 2>"$work/socat.log" &
socat=$!
for _ in $(seq 50); do [ -e "$work/led-bench" ] && break; sleep 0.1; done
sed "s#@LED@#$work/led-daemon#; s#@PORT@#$PORT#" bench/daemon.yaml >"$work/daemon.yaml"
cfg=(--config "$work/daemon.yaml")

# pgschema NAME: a fresh schema of $PG with the store's migrations; prints its DSN.
pgschema() {
	local sep='?'
	case "$PG" in *\?*) sep='&' ;; esac
	psql -q "$PG" -c "CREATE SCHEMA $1" >/dev/null
	schemas+=("$1")
	"$ns" migrate --db "${PG}${sep}search_path=$1" >/dev/null
	echo "${PG}${sep}search_path=$1"
}

# start DRIVER DSN: the daemon in the background, once its port answers.
start() {
	NOWSERVING_STORE_DRIVER=$1 NOWSERVING_STORE_DSN=$2 $NICE "$ns" serve "${cfg[@]}" >"$work/serve-$1.log" 2>&1 &
	daemon=$!
	for _ in $(seq 600); do
		(exec 3<>/dev/tcp/127.0.0.1/$PORT) 2>/dev/null && return 0
		kill -0 "$daemon" 2>/dev/null || { cat "$work/serve-$1.log" >&2; exit 1; }
		sleep 0.1
	done
	echo "compare: the daemon did not listen on $PORT" >&2
	exit 1
}
stop() { kill -INT "$daemon"; wait "$daemon" || true; daemon=""; }

# issue NAME ARGS...: bench issue as JSON into $work/NAME.json.
issue() {
	local name=$1
	shift
	$NICE "$ns" bench issue "${cfg[@]}" --kiosks "$CLIENTS" --pid "$daemon" --json "$@" >"$work/$name.json"
}
j() { jq -r "$2" "$work/$1.json"; }

# pgbackends: the PostgreSQL backends serving the daemon's connections
# (matched by client port in pg_stat_activity), "pid cpu_ticks" a line.
pgbackends() {
	local ports
	ports=$(ss -tnp 2>/dev/null | awk -v p="pid=$daemon," 'index($0, p) && $5 ~ /:5432$/ { n = split($4, a, ":"); printf "%s%s", sep, a[n]; sep = "," }')
	[ -n "$ports" ] || return 0
	for pid in $(psql -Atq "$PG" -c "SELECT pid FROM pg_stat_activity WHERE client_port IN ($ports)"); do
		[ -r "/proc/$pid/stat" ] && awk -v pid="$pid" '{ print pid, $14 + $15 }' "/proc/$pid/stat"
	done
	return 0
}

echo "== raw SQLite FULL, $CLIENTS clients, ${DURATION}s"
$NICE "$ns" bench raw --db "$work/raw.db" --clients "$CLIENTS" --duration "${DURATION}s" | tee "$work/raw.txt"
raw_sqlite=$(awk '{ print $NF }' "$work/raw.txt")

echo "== daemon on SQLite FULL"
start sqlite "$work/bench.db"
issue sq_empty --duration "${DURATION}s"
while [ "$(sqlite3 "$work/bench.db" "SELECT count(*) FROM tickets WHERE status = 'WAITING'")" -lt 10000 ]; do
	issue sq_fill --duration 5s
done
issue sq_10k --duration "${DURATION}s"
issue sq_open --duration "${DURATION}s" --rate "$RATE/s"
$NICE "$ns" bench call "${cfg[@]}" --calls "$CALLS" --kiosks "$FLOOD" | tee "$work/call_flood.txt"
$NICE "$ns" bench call "${cfg[@]}" --calls "$CALLS" --kiosks 16 --rate "$BG/s" --led "$work/led-bench" | tee "$work/call_led.txt"
stop

echo "== pgbench, $CLIENTS clients, ${DURATION}s"
dsn=$(pgschema "nscmp_issue_$$")
PGOPTIONS="-c search_path=nscmp_issue_$$" pgbench -n -c "$CLIENTS" -j 2 -T "$DURATION" -f bench/issue.sql "$PG" >"$work/pg_issue.txt" 2>&1
dsn=$(pgschema "nscmp_min_$$")
PGOPTIONS="-c search_path=nscmp_min_$$" pgbench -n -c "$CLIENTS" -j 2 -T "$DURATION" -f bench/minimal.sql "$PG" >"$work/pg_min.txt" 2>&1
pg_issue=$(awk '/^tps/ { print $3 }' "$work/pg_issue.txt")
pg_min=$(awk '/^tps/ { print $3 }' "$work/pg_min.txt")

echo "== daemon on PostgreSQL"
start postgres "$(pgschema "nscmp_d_$$")"
pgbackends >"$work/pgcpu0"
issue pg_d --duration "${DURATION}s"
pgbackends >"$work/pgcpu1"
pg_server_ticks=$(awk 'NR == FNR { t0[$1] = $2; next } { s += $2 - ($1 in t0 ? t0[$1] : 0) } END { print s + 0 }' "$work/pgcpu0" "$work/pgcpu1")
issue pg_open --duration "${DURATION}s" --rate "$RATE/s"
stop

loaded() { awk -v k="$2" '$0 ~ k { for (i = 1; i <= NF; i++) if ($i == "p99") print $(i+1) }' "$work/$1.txt"; }
echo
echo "== figures (targets of issue 12)"
awk -v raw="$raw_sqlite" -v d="$(j sq_empty .tickets_per_s)" -v tenk="$(j sq_10k .tickets_per_s)" \
	-v cpu="$(j sq_empty .daemon_cpu_us_per_ticket)" -v pgi="$pg_issue" -v pgm="$pg_min" -v pgd="$(j pg_d .tickets_per_s)" \
	-v c="$CLIENTS" 'BEGIN {
	printf "SQLite FULL, %d kiosks: daemon %.0f/s, raw %.0f tx/s, ratio %.2f (target >= 3)\n", c, d, raw, d / raw
	printf "daemon CPU per ticket on SQLite FULL: %.0f us (target <= 300)\n", cpu
	printf "10,000 waiting: %.0f/s against %.0f/s empty, %.1f%% (target within 10%%)\n", tenk, d, 100 * (tenk - d) / d
	printf "PostgreSQL, %d kiosks: daemon %.0f/s, pgbench store SQL %.0f tps (ratio %.2f, target >= 2), minimal %.0f tps (ratio %.2f, target >= 1)\n", c, pgd, pgi, pgd / pgi, pgm, pgd / pgm
}'
awk -v t="$pg_server_ticks" -v hz="$(getconf CLK_TCK)" -v n="$(j pg_d .tickets)" -v d="$(j pg_d '.daemon_cpu_us_per_ticket // 0')" 'BEGIN {
	printf "PostgreSQL, per ticket: daemon CPU %.0f us, server CPU (the daemon'"'"'s backends) %.0f us\n", d, 1e6 * t / hz / n
}'
printf "open loop %s/s: p99 %s ms on SQLite (%s/s taken, errors %s), %s ms on PostgreSQL (%s/s, errors %s) (target < 50)\n" "$RATE" \
	"$(j sq_open .p99_ms)" "$(j sq_open '.tickets_per_s|floor')" "$(j sq_open '[.errors[]]|add // 0')" \
	"$(j pg_open .p99_ms)" "$(j pg_open '.tickets_per_s|floor')" "$(j pg_open '[.errors[]]|add // 0')"
echo "call-next p99 with $FLOOD kiosks flooding: $(loaded call_flood 'call-next loaded') (idle: $(loaded call_flood 'call-next idle')) (target < 50ms)"
echo "keypad -> LED p99 at $BG/s background: $(loaded call_led 'LED loaded') (idle: $(loaded call_led 'LED idle')) (target < 20ms)"
