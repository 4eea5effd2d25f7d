#!/usr/bin/env bash
# Ticket throughput of 1, 2 and 3 daemons on one PostgreSQL (or MariaDB)
# database with the same number of kiosks, for one busy site and for SITES
# sites, the kiosks placed on the daemons two ways:
#   spread    kiosk i starts at daemon i mod N (`bench issue --addr A,B,C`);
#   by site   every device of site s names daemon s mod N first in its
#             devices[].daemons (the others after it, for failover).
# Each round runs every case once, side by side, on a fresh schema; the
# machine is noisy, so compare within a round and run several rounds.
#
#   bench/daemons.sh                          # PostgreSQL, 96 kiosks, 30 sites, 15 s, 2 rounds
#   KIOSKS=96 SITES=30 DURATION=15s ROUNDS=3 bench/daemons.sh
#   DRIVER=mysql bench/daemons.sh             # MariaDB on 127.0.0.1:3306
#   KEEP=1 bench/daemons.sh                   # keep the daemons' logs of every case (printed: warns)
#   SITELIST=30 MODES=by-site NS="1 2" bench/daemons.sh   # only some cases
#   COMMITTERS=4 bench/daemons.sh             # store.committers 4 in total: 4, 2, 2 per daemon
#   BIN="old/nowserving bin/nowserving" bench/daemons.sh   # each case with each binary, side by side
#   PROFILE=/tmp/prof bench/daemons.sh        # a CPU profile of each daemon of each case there
#   PROCS=split bench/daemons.sh              # GOMAXPROCS of each of N daemons: the cores / N
#   DAEMON_ENV="GOGC=200" bench/daemons.sh    # more environment of the daemons
#
# Columns: tickets/s and latency of the bench client; the daemons' CPU per
# ticket (utime+stime of every daemon, from /proc, over the bench) and that
# of the PostgreSQL backends serving them (their connections, found with
# ss), in µs; errors of the client and WARN/ERROR lines of the daemons.
set -euo pipefail
cd "$(dirname "$0")/.."
DRIVER=${DRIVER:-postgres}
KIOSKS=${KIOSKS:-96}
SITES=${SITES:-30}
DURATION=${DURATION:-15s}
ROUNDS=${ROUNDS:-2}
PORT=${PORT:-17400} # the daemons listen on PORT+1 .. PORT+3
PG=${NOWSERVING_TEST_POSTGRES:-postgres://postgres@127.0.0.1:5432/test?sslmode=disable}
MY=${NOWSERVING_TEST_MYSQL:-root@tcp(127.0.0.1:3306)/test}

work=$(mktemp -d)
pids=()
stop() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done; pids=(); }
trap 'stop; [ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
if [ -n "${BIN:-}" ]; then
	read -r -a bins <<<"$BIN"
else
	go build -o "$work/nowserving" ./cmd/nowserving
	bins=("$work/nowserving")
fi

# config SITES N: one site per s1..sSITES, KIOSKS kiosks spread over them,
# each naming the N daemons, its site's daemon first.
config() {
	local sites=$1 n=$2 f="$work/c$1-$2.yaml"
	{
		echo "listen: { rate_limit: 0 }   # measure the daemons, not the per-device limit"
		echo "sites:"
		for s in $(seq 1 "$sites"); do
			echo "  - { id: s$s, timezone: UTC, services: [ { code: A, name: { en: A }, width: 6 } ], counters: [ { id: \"1\", services: [A] } ] }"
		done
		echo "devices:"
		for k in $(seq 1 "$KIOSKS"); do
			local s=$(( (k - 1) % sites + 1 )) list=""
			for j in $(seq 0 $((n - 1))); do list+="${list:+, }\"127.0.0.1:$((PORT + 1 + (s - 1 + j) % n))\""; done
			echo "  - { id: k$k, role: kiosk, site: s$s, secret: \"0123456789abcdef-k$k\", daemons: [$list] }"
		done
	} >"$f"
	echo "$f"
}

# fresh NAME: a new schema (database) and its DSN.
fresh() {
	if [ "$DRIVER" = postgres ]; then
		psql -q "$PG" -c "CREATE SCHEMA $1" >/dev/null
		local sep='?'; case "$PG" in *\?*) sep='&';; esac
		echo "${PG}${sep}search_path=$1"
	else
		mysql -uroot -h127.0.0.1 -e "CREATE DATABASE $1 CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"
		echo "${MY%/*}/$1"
	fi
}
drop() {
	if [ "$DRIVER" = postgres ]; then psql -q "$PG" -c "SET client_min_messages = warning; DROP SCHEMA $1 CASCADE" >/dev/null
	else mysql -uroot -h127.0.0.1 -e "DROP DATABASE $1"; fi
}

# committers N: store.committers of each of N daemons: COMMITTERS (the
# total over the daemons) split evenly, rounded up; the default without it.
committers() {
	[ -n "${COMMITTERS:-}" ] && echo $(((COMMITTERS + $1 - 1) / $1))
	return 0
}

# cpu PID...: the processes' utime+stime in clock ticks.
cpu() {
	local t=0 p f
	for p in "$@"; do
		f=$(cat "/proc/$p/stat" 2>/dev/null) || continue
		f=${f##*) }
		read -r -a a <<<"$f"
		t=$((t + a[11] + a[12]))
	done
	echo "$t"
}

# backends PID...: the PostgreSQL backends serving these processes'
# connections (their client ports, found with ss).
backends() {
	[ "$DRIVER" = postgres ] || return 0
	local ports="" p
	for p in "$@"; do
		ports+=" $(ss -tnpH state established "dport = :5432" 2>/dev/null | grep "pid=$p," | awk '{print $3}' | sed 's/.*://')"
	done
	ports=$(echo $ports | tr ' ' ',')
	[ -n "$ports" ] || return 0
	psql -qAt "$PG" -c "SELECT pid FROM pg_stat_activity WHERE client_port IN ($ports)"
}

# run BIN N SITES MODE: start N daemons, bench, stop; prints one table row.
run() {
	local ns=$1 n=$2 sites=$3 mode=$4 cfg db dsn addrs="" out
	cfg=$(config "$sites" "$n")
	db="nsdaemons_$$_${n}_${sites}"
	dsn=$(fresh "$db")
	rm -f "$work"/d*.log
	"$ns" migrate --config "$cfg" --store-driver "$DRIVER" --store-dsn "$dsn" >/dev/null 2>&1
	for i in $(seq 1 "$n"); do
		local port=$((PORT + i))
		local c
		c=$(committers "$n")
		local procs=""
		[ "${PROCS:-}" != split ] || procs=$(( $(nproc) / n > 0 ? $(nproc) / n : 1 ))
		env ${c:+NOWSERVING_STORE_COMMITTERS=$c} ${procs:+GOMAXPROCS=$procs} ${DAEMON_ENV:-} "$ns" serve --config "$cfg" --store-driver "$DRIVER" --store-dsn "$dsn" --store-pool 20 \
			--listen-protocol "127.0.0.1:$port" --listen-http "" --log-level warn \
			${PROFILE:+--pprof "127.0.0.1:$((port + 100))"} >"$work/d$i.log" 2>&1 &
		pids+=($!)
		addrs+="${addrs:+,}127.0.0.1:$port"
	done
	for i in $(seq 1 "$n"); do
		for _ in $(seq 100); do grep -q . <(ss -ltn "sport = :$((PORT + i))" | tail -n +2) && break; sleep 0.1; done
	done
	local dcpu0 pcpu0
	dcpu0=$(cpu "${pids[@]}")
	pcpu0=$(cpu $(backends "${pids[@]}"))
	local where=(--addr "$addrs")
	[ "$mode" = spread ] || where=()
	local profs=()
	if [ -n "${PROFILE:-}" ]; then
		mkdir -p "$PROFILE"
		local secs=${DURATION%s}
		for i in $(seq 1 "$n"); do
			curl -s -o "$PROFILE/$sites-$mode-$n-d$i-$(basename "$ns").pprof" \
				"http://127.0.0.1:$((PORT + i + 100))/debug/pprof/profile?seconds=$((secs > 3 ? secs - 2 : 1))" &
			profs+=($!)
		done
	fi
	out=$("$ns" bench issue --config "$cfg" "${where[@]}" --kiosks "$KIOSKS" --duration "$DURATION" --service A 2>&1) || true
	for p in "${profs[@]}"; do wait "$p" || true; done
	local warns dcpu pcpu hz
	hz=$(getconf CLK_TCK)
	dcpu=$(($(cpu "${pids[@]}") - dcpu0))
	pcpu=$(($(cpu $(backends "${pids[@]}")) - pcpu0))
	warns=$(cat "$work"/d*.log | grep -c 'level=\(WARN\|ERROR\)' || true)
	if [ -n "${KEEP:-}" ]; then
		for f in "$work"/d*.log; do cp "$f" "$work/r$r-$sites-$mode-$n-$(basename "$ns")-$(basename "$f")"; done
	fi
	stop
	drop "$db"
	local rate p50 p99 errs tickets dus pus
	tickets=$(echo "$out" | sed -n 's/^tickets: \([0-9]*\) in.*/\1/p')
	rate=$(echo "$out" | sed -n 's/^tickets: .* = \([0-9]*\)\/s.*/\1/p')
	errs=$(echo "$out" | sed -n 's/^tickets: .*errors \([0-9]*\).*/\1/p')
	p50=$(echo "$out" | sed -n 's/^latency: .*p50 \([^ ,]*\).*/\1/p')
	p99=$(echo "$out" | sed -n 's/^latency: .*p99 \([^ ,]*\).*/\1/p')
	dus=? pus=?
	if [ "${tickets:-0}" -gt 0 ]; then
		dus=$((dcpu * 1000000 / hz / tickets))
		pus=$((pcpu * 1000000 / hz / tickets))
	fi
	printf "%-8s %-8s %-8s %9s %10s %10s %7s %7s %7s %6s %s\n" "$sites" "$mode" "$n" "${rate:-?}" "${p50:-?}" "${p99:-?}" "$dus" "$pus" "${errs:-?}" "$warns" "$label"
	[ -n "$rate" ] || echo "$out" >&2
}

echo "$DRIVER, $KIOSKS kiosks, $DURATION per case"
for r in $(seq 1 "$ROUNDS"); do
	echo "round $r"
	printf "%-8s %-8s %-8s %9s %10s %10s %7s %7s %7s %6s %s\n" sites kiosks daemons tickets/s p50 p99 "µs/t" "pg µs/t" errors warns bin
	for sites in ${SITELIST:-1 $SITES}; do
		for mode in ${MODES:-spread by-site}; do
			for n in ${NS:-1 2 3}; do
				[ "$mode$n" = by-site1 ] && continue # the same as spread over 1
				for b in "${bins[@]}"; do
					label=""
					[ "${#bins[@]}" -eq 1 ] || label=$b
					run "$b" "$n" "$sites" "$mode"
				done
			done
		done
	done
done
