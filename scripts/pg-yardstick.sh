#!/usr/bin/env bash
# pg-yardstick.sh COMMITLAB WORKDIR [ROUNDS] [SECONDS] [CLIENTS] [WORKLOADS] --
# commitlab bench's PostgreSQL against pgbench running the same statements
# on the same server.
#
# For each workload (kv, tpcb), `commitlab bench --reuse` makes and keeps
# one cluster; that cluster, with the settings bench wrote for it
# (commitlab.conf) and its table emptied, is the template of every
# pgbench run.  Each measured run, of either tool, starts from a fresh
# copy loaded through SQL after the copy's last checkpoint: bench makes
# its own (a copy of its template, loaded 1,000 rows a transaction);
# pgbench gets a `cp -a` of the kept cluster, started by pg_ctl on a
# socket in WORKDIR, and the same rows in one INSERT.  So neither run
# inherits another's dead tuples, and in neither does the measured phase
# pay full-page images for pages the load already wrote since the last
# checkpoint (a copy of a loaded cluster, whose shutdown checkpoint came
# after the load, would pay one at each page's first change).  pgbench runs
#   kv    the driver's put, prepared, one per transaction in autocommit:
#         INSERT INTO kv (k, v) VALUES ($1, $2) ON CONFLICT (k) DO UPDATE
#         SET v = excluded.v, with bench's keys ('k' and 15 digits) and a
#         value of --value-size bytes;
#   tpcb  the driver's transaction for bench's tpcb: BEGIN; per account,
#         teller and branch SELECT ... FOR UPDATE then the upsert; the
#         account read again (FOR UPDATE, as every read of a transaction
#         that writes); the history row inserted, its key the client's
#         number and its count of transactions, as bench's; COMMIT.
# The copy is synced (sync -f) before its server starts, as bench syncs
# its own, so that no later run's measured phase writes it back.  Round
# by round, client count by client count, the two tools alternate,
# pgbench first in odd rounds and bench first in even ones.  Prints one
# line per run (round, workload, clients, tool, tps, WAL bytes per
# transaction and commits per WAL sync, from pg_stat_wal for both, and
# CPU microseconds per transaction of the server's processes and the
# client's: for pgbench read from /proc and the shell's `times`, for
# bench its own cpu us/txn), then the medians per workload and client
# count.
#
# WAITS=1 also samples pg_stat_activity every 0.1 s during each run and
# keeps the samples of its last SECONDS (the measured phase: bench's load
# and warm-up are left out); at the end it prints, per workload, client
# count and tool, the share of the client backends' samples in each
# state and wait event: where the two tools' servers spend their time.
#
# Needs root (the server runs as the postgres account), PostgreSQL 15's
# server and pgbench (apt-get install -y postgresql-15), and a built
# commitlab with libpq.
set -u
[ $# -ge 2 ] || {
    echo "usage: pg-yardstick.sh COMMITLAB WORKDIR [ROUNDS] [SECONDS] [CLIENTS] [WORKLOADS]" >&2
    exit 2
}
cl=$1 work=$2 rounds=${3:-3} secs=${4:-10} clients=${5:-"1 16 64"} workloads=${6:-"kv tpcb"}
pgbin=/usr/lib/postgresql/15/bin
[ "$(id -u)" -eq 0 ] || { echo "pg-yardstick: needs root (the server runs as postgres)" >&2; exit 2; }
[ -x $pgbin/pgbench ] || { echo "pg-yardstick: no PostgreSQL 15: apt-get install -y postgresql-15" >&2; exit 2; }
[ -x "$cl" ] || { echo "pg-yardstick: $cl: not an executable" >&2; exit 2; }
[ -d "$work" ] || { echo "pg-yardstick: WORKDIR $work: no such directory" >&2; exit 2; }
for w in $workloads; do
    case $w in kv|tpcb) ;; *) echo "pg-yardstick: workload '$w': want kv or tpcb" >&2; exit 2 ;; esac
done
work=$(cd "$work" && pwd)/pg-yardstick.d
[ ! -e "$work" ] || { echo "pg-yardstick: $work exists: remove it or choose another WORKDIR" >&2; exit 2; }
mkdir "$work" && chmod 755 "$work"
mkdir "$work/pg" && chown postgres "$work/pg" # the server's socket and log
port=$((20000 + $$ % 10000))
declare -A load # workload -> the SQL that loads its store

stop_run() { # the server of the run's copy stopped, and the copy removed
    [ -f "$work/run/postmaster.pid" ] && su postgres -c "$pgbin/pg_ctl -D $work/run -m immediate stop" >/dev/null 2>&1
    rm -rf "$work/run"
}
trap 'stop_run; [ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

cat >"$work/kv.sql" <<'EOF'
\set k random(0, 99999)
INSERT INTO kv (k, v) VALUES (convert_to('k' || lpad(:k::text, 15, '0'), 'UTF8'), :v) ON CONFLICT (k) DO UPDATE SET v = excluded.v;
EOF
cat >"$work/tpcb.sql" <<'EOF'
\set aid random(0, 99999)
\set tid random(0, 9)
\set bid 0
\set hid :client_id * 10000000000 + :seq
\set seq :seq + 1
BEGIN;
SELECT v FROM kv WHERE k = convert_to('a' || lpad(:aid::text, 15, '0'), 'UTF8') FOR UPDATE;
INSERT INTO kv (k, v) VALUES (convert_to('a' || lpad(:aid::text, 15, '0'), 'UTF8'), :v) ON CONFLICT (k) DO UPDATE SET v = excluded.v;
SELECT v FROM kv WHERE k = convert_to('a' || lpad(:aid::text, 15, '0'), 'UTF8') FOR UPDATE;
SELECT v FROM kv WHERE k = convert_to('t' || lpad(:tid::text, 15, '0'), 'UTF8') FOR UPDATE;
INSERT INTO kv (k, v) VALUES (convert_to('t' || lpad(:tid::text, 15, '0'), 'UTF8'), :v) ON CONFLICT (k) DO UPDATE SET v = excluded.v;
SELECT v FROM kv WHERE k = convert_to('b' || lpad(:bid::text, 15, '0'), 'UTF8') FOR UPDATE;
INSERT INTO kv (k, v) VALUES (convert_to('b' || lpad(:bid::text, 15, '0'), 'UTF8'), :v) ON CONFLICT (k) DO UPDATE SET v = excluded.v;
INSERT INTO kv (k, v) VALUES (convert_to('h' || lpad(:hid::text, 15, '0'), 'UTF8'), :h) ON CONFLICT (k) DO UPDATE SET v = excluded.v;
COMMIT;
EOF
# bench's values: 100 bytes (kv's --value-size default, tpcb's rows), 50
# (tpcb's history); the rows are loaded with the value the updates write,
# as bench's kv rewrites a key's own value (so in both, PostgreSQL's log
# record of an update carries only what changed)
v100='\x'$(printf '20%.0s' $(seq 100)) v50='\x'$(printf '20%.0s' $(seq 50))

echo "# $(uname -r), PostgreSQL $($pgbin/postgres --version | awk '{print $3}'), $($cl --version 2>/dev/null | head -1)," \
    "rounds $rounds, $secs s, filesystem $(findmnt -no FSTYPE -T "$work")"
# psql_run SQL: one statement on the run's server
psql_run() {
    su postgres -c "$pgbin/psql -h $work/pg -p $port -U commitlab -At -F ' ' -v ON_ERROR_STOP=1 -c \"$1\" postgres"
}
start_run() { # CLIENTS
    su postgres -c "$pgbin/pg_ctl -D $work/run -w -l $work/pg/run.log -o \"-k $work/pg -p $port -c max_connections=$(($1 + 10 > 100 ? $1 + 10 : 100))\" start" \
        >/dev/null || { tail -5 "$work/pg/run.log" >&2; return 1; }
}
for w in $workloads; do
    "$cl" bench --engine postgres --workload "$w" --sync commit --clients 1 --duration 1 --warmup 0 \
        --dir "$work/tmpl-$w" --reuse >"$work/tmpl-$w.out" 2>&1 || {
        echo "pg-yardstick: making the $w template failed:" >&2
        tail -5 "$work/tmpl-$w.out" >&2
        exit 1
    }
    # the template: bench's cluster, its table emptied, shut down cleanly
    t=$work/tmpl-$w/postgres.db/cluster
    cp -a "$t" "$work/run" && start_run 1 && psql_run "TRUNCATE kv" >/dev/null &&
        su postgres -c "$pgbin/pg_ctl -D $work/run -m fast -w stop" >/dev/null && rm -rf "$t" && mv "$work/run" "$t" || exit 1
    # what bench's preload writes: keys 0 .. n-1 of each prefix, 100-byte values
    rows() { echo "SELECT convert_to('$1' || lpad(i::text, 15, '0'), 'UTF8'), decode(repeat('20', 100), 'hex') FROM generate_series(0, $2) i"; }
    case $w in
    kv) load[$w]="INSERT INTO kv $(rows k 99999)" ;;
    tpcb) load[$w]="INSERT INTO kv $(rows b 0) UNION ALL $(rows t 9) UNION ALL $(rows a 99999)" ;;
    esac
done

# wal: pg_stat_wal's bytes and syncs so far on the run's server
wal() { psql_run "SELECT wal_bytes, wal_sync FROM pg_stat_wal"; }
tck=$(getconf CLK_TCK)
# server_ticks: CPU ticks of the run's server so far: the postmaster's own
# and its reaped children's (utime, stime, cutime, cstime), and its live
# children's (utime, stime)
server_ticks() {
    local pm p t=0 f
    pm=$(head -1 "$work/run/postmaster.pid")
    f=$(cut -d')' -f2- "/proc/$pm/stat") && set -- $f && t=$((${12} + ${13} + ${14} + ${15}))
    for p in $(pgrep -P "$pm"); do
        f=$(cut -d')' -f2- "/proc/$p/stat" 2>/dev/null) && set -- $f && t=$((t + ${12} + ${13}))
    done
    echo $t
}
# ticks FILE: the CPU ticks of this shell's waited-for children in the
# output of `times` in FILE (its second line: user and system time)
ticks() {
    awk -v hz="$tck" 'NR == 2 {s = 0; for (i = 1; i <= 2; i++) {split($i, a, /[ms]/); s += a[1] * 60 + a[2]}
        printf "%.0f\n", s * hz}' "$1"
}
# sample PIDFILE TAG: pg_stat_activity's client backends (pgbench's, or
# bench's but its connection that reads settings and statistics), every
# 0.1 s, appended to waits.TAG (timestamp, state, wait event), from the server
# of the data directory whose postmaster.pid is PIDFILE, until killed
# (WAITS=1 only; in the background)
sample() {
    [ -n "${WAITS:-}" ] || return 0
    (
        trap 'exit 0' TERM
        for _ in $(seq 600); do [ "$(wc -l <"$1" 2>/dev/null)" -ge 5 ] 2>/dev/null && break; sleep 0.1; done
        while :; do # again when the server was not yet up, until killed
            su postgres -c "$pgbin/psql -h $(sed -n 5p "$1") -p $(sed -n 4p "$1") -U commitlab -At -F '|' postgres" \
                >>"$work/waits.$2" 2>/dev/null <<EOF
SELECT extract(epoch FROM clock_timestamp())::numeric(20,1), state, coalesce(wait_event_type || ':' || wait_event, '-')
  FROM pg_stat_activity WHERE application_name IN ('pgbench', 'commitlab')
   AND query NOT LIKE '%current_setting%' AND query NOT LIKE '%pg_stat%' \\watch 0.1
EOF
            sleep 0.2
        done
    ) >/dev/null 2>&1 &
    sampler=$!
}
# sample_stop TAG: the sampler stopped, and only the samples of the last
# SECONDS kept
sample_stop() {
    [ -n "${WAITS:-}" ] || return 0
    kill "$sampler" 2>/dev/null
    pkill -f "psql -h $work/" 2>/dev/null
    wait "$sampler" 2>/dev/null
    awk -F'|' -v s="$secs" '{t[NR] = $1; l[NR] = $0; if ($1 > m) m = $1}
        END {for (i = 1; i <= NR; i++) if (t[i] > m - s) print l[i]}' "$work/waits.$1" >"$work/waits.kept" &&
        mv "$work/waits.kept" "$work/waits.$1"
}
# pgbench_run WORKLOAD CLIENTS ROUND: "tps log-bytes-per-txn
# commits-per-sync cpu-us-per-txn" of one run on a fresh copy of the
# template
pgbench_run() {
    cp -a "$work/tmpl-$1/postgres.db/cluster" "$work/run" && sync -f "$work/run" && start_run "$2" &&
        psql_run "${load[$1]}" >/dev/null || return 1
    local w0 w1 s0 s1 out
    w0=$(wal)
    s0=$(server_ticks)
    sample "$work/run/postmaster.pid" "$1.$2.pgbench.$3"
    times >"$work/times0" # in this shell: its waited-for children are pgbench (through su) from here
    out=$(su postgres -c "$pgbin/pgbench -h $work/pg -p $port -U commitlab -n -M prepared -f $work/$1.sql \
        -D 'v=$v100' -D 'h=$v50' -D seq=0 -c $2 -j $2 -T $secs postgres" 2>&1)
    times >"$work/times1"
    sample_stop "$1.$2.pgbench.$3"
    echo "$out" >>"$work/pgbench.out"
    sleep 1 # the backends' statistics, flushed as they exit, and the backends reaped
    s1=$(server_ticks)
    w1=$(wal)
    echo "$out" | awk -v w0="$w0" -v w1="$w1" -v cpu=$((s1 - s0 + $(ticks "$work/times1") - $(ticks "$work/times0"))) \
        -v hz="$tck" '
        /^number of transactions actually processed/ {n = $NF}
        /^tps/ {t = $3}
        END {split(w0, a, " "); split(w1, b, " ")
             if (n > 0 && b[2] > a[2]) printf "%s %.0f %.2f %.1f\n", t, (b[1] - a[1]) / n, n / (b[2] - a[2]), cpu * 1e6 / hz / n}'
    stop_run
}
# bench_run WORKLOAD CLIENTS ROUND: the same four of one bench run
bench_run() {
    rm -f "$work/bench/postgres.db/cluster/postmaster.pid"
    sample "$work/bench/postgres.db/cluster/postmaster.pid" "$1.$2.bench.$3"
    "$cl" bench --engine postgres --workload "$1" --sync commit --clients "$2" --duration "$secs" \
        --dir "$work/bench" 2>&1 | awk '$1 == "postgres" {print $4, $11, $10, $13}'
    sample_stop "$1.$2.bench.$3"
}

for r in $(seq "$rounds"); do
    for w in $workloads; do
        for c in $clients; do
            if [ $((r % 2)) = 1 ]; then order="pgbench bench"; else order="bench pgbench"; fi
            for t in $order; do
                tps=$("${t}"_run "$w" "$c" "$r")
                echo "$r $w $c $t ${tps:-failed}" | tee -a "$work/runs"
            done
        done
    done
done
echo "# medians: workload clients, tps of pgbench and bench and bench/pgbench, CPU us/txn of pgbench and bench"
for w in $workloads; do
    for c in $clients; do
        # med TOOL COLUMN: the median of one column of the tool's runs
        med() { awk -v w="$w" -v c="$c" -v t="$1" -v k="$2" '$2 == w && $3 == c && $4 == t && $5 + 0 > 0 && $k != "" {print $k}' \
            "$work/runs" | sort -g | awk '{a[NR] = $1} END {print NR ? a[int((NR + 1) / 2)] : "-"}'; }
        p=$(med pgbench 5) b=$(med bench 5)
        echo "$w $c $p $b $(awk -v p="$p" -v b="$b" 'BEGIN {print (p + 0 > 0 && b + 0 > 0) ? sprintf("%.2f", b / p) : "-"}')" \
            "$(med pgbench 8) $(med bench 8)"
    done
done
[ -n "${WAITS:-}" ] || exit 0
echo "# the measured phase's client backends: workload clients tool (samples), then each state or wait event over 1% of them"
for w in $workloads; do
    for c in $clients; do
        for t in pgbench bench; do
            cat "$work"/waits.$w.$c.$t.* 2>/dev/null | awk -F'|' -v tag="$w $c $t" '
                {n++; k = ($2 == "active" ? "" : $2 " ") $3; a[k]++}
                END {if (!n) exit; printf "%s (%d):", tag, n
                     for (k in a) if (a[k] * 100 / n >= 1) printf " %s %.1f%%", k, a[k] * 100 / n; print ""}'
        done
    done
done
