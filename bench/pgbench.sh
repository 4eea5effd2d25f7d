#!/usr/bin/env bash
# Compares, on the same PostgreSQL, the store's ticket-issue rate (the
# engine's group commit over queue/store/postgres, CLIENTS concurrent
# kiosks) with pgbench running the same SQL statements (bench/issue.sql) with
# the same number of clients, one transaction per ticket. Prints both rates
# and their ratio.
#
#   bench/pgbench.sh                # 16 clients, 20000 tickets, 15 s of pgbench
#   CLIENTS=16 TICKETS=40000 DURATION=30 bench/pgbench.sh
set -euo pipefail
cd "$(dirname "$0")/.."
DSN=${NOWSERVING_TEST_POSTGRES:-postgres://postgres@127.0.0.1:5432/test?sslmode=disable}
CLIENTS=${CLIENTS:-16}
TICKETS=${TICKETS:-20000}
DURATION=${DURATION:-15}
[ "$CLIENTS" = 16 ] || { echo "the Go benchmark runs 16 clients (BenchmarkEngineIssue16); set CLIENTS=16" >&2; exit 2; }
command -v pgbench >/dev/null || { echo "pgbench not found (Debian: postgresql or postgresql-contrib)" >&2; exit 2; }

echo "== store: Engine.Issue over PostgreSQL, $CLIENTS clients, $TICKETS tickets"
out=$(NOWSERVING_TEST_POSTGRES="$DSN" go test ./queue/store/postgres -run '^$' -bench 'BenchmarkEngineIssue16$' -benchtime "${TICKETS}x" -count 1)
echo "$out" | grep Benchmark
store=$(echo "$out" | awk '/^BenchmarkEngineIssue16/ { for (i = 1; i < NF; i++) if ($(i+1) == "ops/s") print $i }')

schema="nsbench_$$"
sep='?'; case "$DSN" in *\?*) sep='&';; esac
cleanup() { psql -q "$DSN" -c "DROP SCHEMA IF EXISTS $schema CASCADE" >/dev/null 2>&1 || true; }
trap cleanup EXIT
psql -q "$DSN" -c "CREATE SCHEMA $schema"
go run ./cmd/nowserving migrate --db "${DSN}${sep}search_path=${schema}" >/dev/null

echo "== pgbench: bench/issue.sql, $CLIENTS clients, ${DURATION}s"
pgout=$(PGOPTIONS="-c search_path=$schema" pgbench -n -c "$CLIENTS" -j 2 -T "$DURATION" -f bench/issue.sql "$DSN")
echo "$pgout" | grep -E "^(tps|latency|number of (transactions|failed))"
pg=$(echo "$pgout" | awk '/^tps/ { print $3 }')

awk -v s="$store" -v p="$pg" 'BEGIN { printf "store %.0f tickets/s, pgbench %.0f tickets/s, ratio %.2f\n", s, p, s / p }'
