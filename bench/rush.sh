#!/usr/bin/env bash
# Issue 28's worst run, once: at 1.12 M slots (2,000 resources, 14 days), the
# rush of 5,000 bookings/s on 20 doctors for 30 s with 2,000 slot lists/s
# (bench book's scale mode, at the daemon's priority), and another site's
# kiosk taking 20 tickets/s over the protocol from a process of its own,
# started when the rush begins. It prints the kiosk's p50/p99/errors, the
# rush's answers and transport errors, the daemon threads' wait for a CPU
# during the rush (/proc/PID/task/*/schedstat) and the machine's TCP drops.
#
#   bench/rush.sh BIN STORE [TAG]
#     BIN    the daemon binary under test (e.g. bin/nowserving, or an older build)
#     STORE  sqlite or postgres
#   e.g. side by side, alternating (the figures are noisy: take medians):
#   for i in 1 2 3; do for b in old/nowserving bin/nowserving; do bench/rush.sh $b sqlite; done; done
#
# The first run writes $DIR/sqlite.yaml or $DIR/pg.yaml (bench book
# --write-config, with listen.rate_limit 1000 so the kiosk is not limited;
# PostgreSQL in schema $SCHEMA of $PG) and the first serve on it makes the
# slots (about 4 minutes; the script waits for /readyz). The clients are
# always $CLIENT (default bin/nowserving), so two daemons compare on the
# same load.
#
# Env: DIR (default ./scale), CLIENT, PG, SCHEMA (scale), NICE (nice level of
# the load client, default 0: the daemon's priority), FULL=1 (the whole bench
# book: read ladder and distinct bookings; default a short read step and the
# rush), TRACE=1 (a 5 s execution trace in the rush, through serve --pprof),
# PROFILE=1 (a 20 s CPU profile), EXTRA (more serve flags).
set -u
BIN=${1:?binary}; STORE=${2:?sqlite or postgres}; TAG=${3:-$(basename "$BIN")}
DIR=${DIR:-scale}; CLIENT=${CLIENT:-bin/nowserving}; NICE=${NICE:-0}
PG=${PG:-postgres://postgres@127.0.0.1:5432/test?sslmode=disable}; SCHEMA=${SCHEMA:-scale}
case $STORE in
sqlite) CFG=$DIR/sqlite.yaml; HTTP=7782; PROTO=7702; APPTS=7783; PPROF=7784 ;;
postgres) CFG=$DIR/pg.yaml; HTTP=7792; PROTO=7712; APPTS=7793; PPROF=7794 ;;
*) echo "store: sqlite or postgres" >&2; exit 2 ;;
esac
mkdir -p "$DIR"
if [ ! -f "$CFG" ]; then
	if [ "$STORE" = sqlite ]; then DRV=sqlite; DSN=$(realpath "$DIR")/scale.db; else
		DRV=postgres; DSN="$PG&search_path=$SCHEMA"
		psql -q "$PG" -c "CREATE SCHEMA IF NOT EXISTS $SCHEMA" >/dev/null
	fi
	"$CLIENT" bench book --resources 2000 --days 14 --write-config "$CFG" --config-store-driver $DRV \
		--config-store-dsn "$DSN" --config-protocol 127.0.0.1:$PROTO --config-http 127.0.0.1:$HTTP \
		--config-appointments 127.0.0.1:$APPTS
	sed -i 's/^listen:$/listen:\n  rate_limit: 1000/' "$CFG"
fi
OUT=$DIR/runs/$TAG-$STORE-$(date +%H%M%S); mkdir -p "$OUT"
NSTAT="ListenOverflows|ListenDrops|AbortOnData|AbortOnClose|Syncookies|OutRsts|ReqQFullDrop|EstabResets"
nstat -az 2>/dev/null | grep -E "$NSTAT" >"$OUT/nstat0"
"$BIN" serve --config "$CFG" --pprof 127.0.0.1:$PPROF ${EXTRA:-} >"$OUT/serve.log" 2>&1 &
PID=$!
trap 'kill $PID 2>/dev/null; wait $PID 2>/dev/null' EXIT
for _ in $(seq 600); do curl -sf 127.0.0.1:$HTTP/readyz >/dev/null && break; sleep 1; done
STEPS="--read-rates 1000 --step 5s --book-rate 0"
[ "${FULL:-0}" = 1 ] && STEPS=""
nice -n "$NICE" "$CLIENT" bench book --resources 2000 --days 14 --pid $PID \
	--url http://127.0.0.1:$HTTP --appointments-url http://127.0.0.1:$APPTS \
	--token scale-bench-token-0123 $STEPS >"$OUT/book.txt" 2>&1 &
BOOK=$!
# The rush begins right after the ladder's last line (or the distinct
# bookings' line with FULL=1).
MARK="read ceiling"; [ "${FULL:-0}" = 1 ] && MARK="daemon CPU per booking"
until grep -q "$MARK" "$OUT/book.txt" 2>/dev/null; do
	kill -0 $BOOK 2>/dev/null || { echo "$TAG: bench book ended early"; cat "$OUT/book.txt"; exit 1; }
	sleep 0.2
done
runq() { cat /proc/$PID/task/*/schedstat 2>/dev/null | awk '{d+=$2} END {printf "%d", d/1e6}'; }
cpu() { awk '{printf "%d", ($14+$15)*10}' /proc/$PID/stat; }
Q0=$(runq); C0=$(cpu); L0=$(cut -d' ' -f1 /proc/loadavg)
"$CLIENT" bench issue --config "$CFG" --addr 127.0.0.1:$PROTO --device kiosk-1 --kiosks 4 \
	--rate 20/s --duration 30s --json >"$OUT/kiosk.json" 2>"$OUT/kiosk.err" &
KIOSK=$!
if [ "${TRACE:-0}" = 1 ]; then
	sleep 10; curl -s "127.0.0.1:$PPROF/debug/pprof/trace?seconds=5" -o "$OUT/trace.out"
elif [ "${PROFILE:-0}" = 1 ]; then
	sleep 5; curl -s "127.0.0.1:$PPROF/debug/pprof/profile?seconds=20" -o "$OUT/cpu.pprof"
fi
wait $KIOSK
Q1=$(runq); C1=$(cpu); L1=$(cut -d' ' -f1 /proc/loadavg)
wait $BOOK; RC=$?
nstat -az 2>/dev/null | grep -E "$NSTAT" >"$OUT/nstat1"
python3 - "$OUT" "$TAG" "$STORE" "$RC" "$((Q1 - Q0))" "$((C1 - C0))" "$L0/$L1" <<'EOF'
import json, re, sys
out, tag, store, rc, runq, cpu, load = sys.argv[1:]
k = json.load(open(out + "/kiosk.json"))
book = open(out + "/book.txt").read()
rush = re.search(r"scale: rush on .*", book)
reads = re.search(r"scale: reads meanwhile.*", book)
resets = book.count("connection reset")
print(f"{tag} {store}: kiosk {json.dumps({x: k[x] for x in k if x in ('tickets','p50_ms','p99_ms','max_ms','errors')})}"
      f" | in the rush: daemon CPU {cpu} ms, its threads' run-queue delay {runq} ms, load {load} | bench rc {rc} resets-in-output {resets}")
print("  " + (rush.group(0) if rush else "no rush line"))
print("  " + (reads.group(0) if reads else "no reads line"))
n0 = dict(l.split()[:2] for l in open(out + "/nstat0"))
n1 = dict(l.split()[:2] for l in open(out + "/nstat1"))
print("  tcp (whole run, machine-wide): " + " ".join(f"{k}+{int(n1[k])-int(n0.get(k,0))}" for k in n1 if int(n1[k]) != int(n0.get(k,0))))
print("  out: " + out)
EOF
