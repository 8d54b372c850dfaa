#!/usr/bin/env bash
# make test's suites, side by side (issue 54: `make test` under 12 minutes on
# a 2-core machine without cutting anything that ran before).
#
# First, one after another, what every suite shares: Postgres (localdev/pg.sh),
# the local DynamoDB (localdev/ddb.sh), `go vet ./...`, every package's test
# binary compiled once into Go's build cache, and the functions' binaries for
# this machine built once into .localdev/functions-bin (BUZZ_FUNCTIONS_BIN:
# the processes-mode smoke checks and end-to-end suite, and the e2e tests that
# run a function as its own process, link them from there instead of each
# building its own).
#
# Then every suite at once in the background, each with its log under
# .localdev/test-logs/ (each suite's relays, databases, session tables and
# S3 servers are its own). Inside the two end-to-end suites the tests run
# E2E_PARALLEL at a time (BUZZ_E2E_PARALLEL=1: a test is mostly waiting on
# its relay, database and clients, not on the CPU), but for the few whose
# assertions are about time or load (localdev/e2e serialTests), which Go
# runs alone before the rest of their suite:
#   core       go test of every package but localdev/e2e
#   e2e        the end-to-end suite in process (sessions in DynamoDB, as everywhere)
#   idle       the idle apps' test (5 minutes of waiting; issue 37)
#   processes  the end-to-end suite with every route through its function's binary
#   smoke      the smoke checks against make dev, then against BUZZ_LAMBDA=processes make dev
#   build      make build (the arm64 zips) then make test-infra (the CDK app)
#   fuzz       make fuzz
# At the end: every log in that order, then one line per suite with its wall
# time, status and CPU (user and system of its own processes; the shared
# Postgres and DynamoDB servers' CPU is in no suite's). Exits non-zero when any suite failed.
#
#   localdev/suites.sh                 every suite
#   SUITES="core e2e" localdev/suites.sh   only those
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root" || exit 1
GO=${GO:-go}
ALL="core vet e2e idle processes smoke build fuzz"
SUITES=${SUITES:-$ALL}
IDLE_TEST='^TestIdleNDKWelshmanBuzzMakeNoDatabaseStatements$'
logs=.localdev/test-logs
mkdir -p "$logs" && rm -f "$logs"/*.log "$logs"/*.status "$logs"/*.time "$logs"/*.times "$logs"/*.cpu "$logs"/*.start "$logs"/*.tests

now() { date +%s; }
t0=$(now)
step() { # step NAME CMD...: a shared preparation step, in the foreground
  local name=$1 s
  shift
  s=$(now)
  if ! "$@"; then
    echo "suites: $name failed" >&2
    exit 1
  fi
  echo "suites: $name took $(($(now) - s)) s"
}

# shellcheck source=localdev/pg.sh
source localdev/pg.sh || exit 1
# shellcheck source=localdev/ddb.sh
source localdev/ddb.sh || exit 1

# The machine's CPU counters (/proc/stat: busy and all jiffies), to say at
# the end how busy both cores were while the suites ran.
cpustat() { awk '/^cpu /{print $2+$3+$4+$7+$8, $2+$3+$4+$5+$6+$7+$8}' /proc/stat 2>/dev/null; }
cpu0=$(cpustat)

# The end-to-end tests, compiled once into one binary that every e2e job
# runs (go test would link it again for each).
E2E_BIN="$root/.localdev/e2e.test"
step "compiling the end-to-end tests" "$GO" test -c -o "$E2E_BIN" ./localdev/e2e

# e2e_run MODE-ARGS...: the e2e binary in its package's folder (where go
# test runs it), verbose so that each test's time is in the log.
e2e_run() { (cd localdev/e2e && "$E2E_BIN" -test.count=1 -test.v -test.timeout 45m "$@"); }

# Shards of the end-to-end suites: the tests of localdev/e2e but the idle
# apps' one, listed by the binary; serialTests (their assertions are about
# time or load, localdev/e2e/testrelay.go) go to a shard of their own,
# where they run one after another as they always did; the others are dealt
# round-robin (by name) into E2E_SHARDS shards, each its own go test
# process running E2E_PARALLEL tests at a time (BUZZ_E2E_PARALLEL=1). Each
# shard of the processes mode has its own local DynamoDB.
E2E_SHARDS=${E2E_SHARDS:-2}
E2E_PARALLEL=${E2E_PARALLEL:-3}
serial_tests=$(awk '/^var serialTests/{on=1;next} on&&/^}/{exit} on' localdev/e2e/testrelay.go | sed -n 's/^[[:space:]]*"\(Test[A-Za-z0-9_]*\)".*/\1/p')
all_tests=$(e2e_run -test.list '^Test' | grep '^Test' | grep -vxF "${IDLE_TEST//[\^\$]/}")
serial_tests=$(grep -xF "$serial_tests" <<<"$all_tests") # (the idle apps' test is a suite of its own)
shard_regex() { # shard_regex N: the -run pattern of shard N (0: the serial tests)
  local n=$1 i=0 t names=()
  if [ "$n" = 0 ]; then
    mapfile -t names <<<"$serial_tests"
  else
    while read -r t; do
      grep -qxF "$t" <<<"$serial_tests" && continue
      [ $((i % E2E_SHARDS + 1)) = "$n" ] && names+=("$t")
      i=$((i + 1))
    done <<<"$all_tests"
  fi
  local IFS='|'
  echo "^(${names[*]})\$"
}
shards=$(seq 0 "$E2E_SHARDS")
for n in $shards; do
  declare "E2E_RUN_$n=$(shard_regex "$n")"
done
# Every test listed is in exactly one shard.
listed=$(for n in $shards; do v="E2E_RUN_$n"; v=${!v#^(}; tr '|' '\n' <<<"${v%)\$}"; done | sort)
if [ "$listed" != "$(sort <<<"$all_tests")" ]; then
  echo "suites: the e2e shards do not hold every test once" >&2
  diff <(echo "$listed") <(sort <<<"$all_tests") >&2
  exit 1
fi
echo "suites: end-to-end shards (tests): $(for n in $shards; do v="E2E_RUN_$n"; printf '%s:%s ' "$n" "$(tr '|' '\n' <<<"${!v}" | wc -l)"; done)(0 the serial ones)"

suite_core() {
  # shellcheck disable=SC2046
  "$GO" test -count=1 -timeout 20m $("$GO" list ./... | grep -v '/localdev/e2e$')
}
suite_vet() { "$GO" vet ./...; }
e2e_shard() { # e2e_shard N [processes]
  local v="E2E_RUN_$1"
  if [ "${2:-}" = processes ]; then
    # Its own local DynamoDB (one node process each): the shards'
    # sessions do not queue on one server.
    BUZZ_DDB_DIR="$root/.localdev/ddb-processes-$1" source localdev/ddb.sh || return 1
    BUZZ_E2E_PARALLEL=1 BUZZ_LAMBDA=processes e2e_run -test.parallel "$E2E_PARALLEL" -test.run "${!v}"
  else
    [ "$1" = 0 ] || { BUZZ_DDB_DIR="$root/.localdev/ddb-e2e-$1" source localdev/ddb.sh || return 1; }
    BUZZ_E2E_PARALLEL=1 e2e_run -test.parallel "$E2E_PARALLEL" -test.run "${!v}"
  fi
}
for n in $shards; do
  eval "suite_e2e$n() { e2e_shard $n; }"
  eval "suite_processes$n() { e2e_shard $n processes; }"
done
suite_idle() { e2e_run -test.timeout 20m -test.run "$IDLE_TEST"; }
suite_smoke() { localdev/smoke-dev.sh && BUZZ_LAMBDA=processes localdev/smoke-dev.sh; }
# The two suites that only use the CPU (compilers, the CDK synth, the
# fuzzers; no assertion about time) run at a lower priority: the tests that
# wait on relays get the cores first.
suite_build() { nice -n 5 make --no-print-directory build && nice -n 5 make --no-print-directory test-infra; }
suite_fuzz() { nice -n 5 make --no-print-directory fuzz; }

# jobs of a suite: e2e and processes are their shards.
jobs_of() {
  case $1 in
  e2e | processes) for n in $shards; do echo "$1$n"; done ;;
  *) echo "$1" ;;
  esac
}

# run NAME: one job, its log, exit status and wall time under $logs.
# The CPU it used (user and system, its processes and theirs) is bash's
# times for the subshell that ran it.
run() {
  local s=$1 t
  t=$(now)
  echo $((t - t0)) >"$logs/$s.start"
  (
    "suite_$s" >"$logs/$s.log" 2>&1
    echo $? >"$logs/$s.status"
    times >"$logs/$s.times" # (not in a pipeline: its subshell has no children)
    tail -1 "$logs/$s.times" | awk '{print $1 " user, " $2 " system"}' >"$logs/$s.cpu"
  )
  echo $(($(now) - t)) >"$logs/$s.time"
}
for s in $SUITES; do
  for j in $(jobs_of "$s"); do
    declare -F "suite_$j" >/dev/null || { echo "suites: no suite $s (have: $ALL)" >&2; exit 2; }
  done
done
pids=()
start() { # start SUITE...: those of SUITES, in the background
  local s j
  for s in "$@"; do
    [[ " $SUITES " == *" $s "* ]] || continue
    echo "suites: $s started at $(($(now) - t0)) s"
    for j in $(jobs_of "$s"); do
      run "$j" &
      pids+=($!)
    done
  done
}
# What needs only the e2e binary starts now; the functions' binaries are
# built meanwhile (the processes suite and smoke need them), then the rest.
start e2e idle
export BUZZ_FUNCTIONS_BIN="$root/.localdev/functions-bin"
step "building the functions for this machine" "$GO" run ./localdev/buildfunctions -o "$BUZZ_FUNCTIONS_BIN"
start processes smoke core vet build fuzz
for p in "${pids[@]}"; do wait "$p"; done
cpu1=$(cpustat)

failed=0
# Each job's log; an end-to-end job's (go test -v) is cut to what a plain
# go test prints (what failed or was skipped, and the result) when it
# passed, whole when it failed. Its top-level tests' times, slowest first,
# are in $logs/JOB.tests.
for s in $SUITES; do
  for j in $(jobs_of "$s"); do
    echo "=== suite $j ($logs/$j.log)"
    if [[ $s == e2e || $s == processes || $s == idle ]]; then
      sed -n 's/^--- \(PASS\|FAIL\|SKIP\): \([^ /]*\) (\([0-9.]*\)s)$/\3 \2 \1/p' "$logs/$j.log" | sort -rn >"$logs/$j.tests"
      if [ "$(cat "$logs/$j.status" 2>/dev/null)" = 0 ]; then
        grep -E '^(--- (FAIL|SKIP)|ddb\.sh:|e2e:|PASS$|FAIL$|ok )' "$logs/$j.log"
        echo "$(wc -l <"$logs/$j.tests") tests; the slowest: $(head -3 "$logs/$j.tests" | awk '{printf "%s %ss; ", $2, $1}')"
      else
        cat "$logs/$j.log"
      fi
    else
      cat "$logs/$j.log"
    fi
  done
done
cpu=$(printf '%s %s' "$cpu0" "$cpu1" | awk '{ if ($4 > $2) printf "%d%%", 100 * ($3 - $1) / ($4 - $2); else print "?" }')
echo "=== suite times (wall, side by side on $(nproc) cores; started: seconds after the start of make test)"
for s in $SUITES; do
  for j in $(jobs_of "$s"); do
    rc=$(cat "$logs/$j.status" 2>/dev/null || echo 1)
    printf '%-11s %5s s  started %4s s  %-18s CPU %s\n' "$j" "$(cat "$logs/$j.time" 2>/dev/null || echo '?')" "$(cat "$logs/$j.start" 2>/dev/null || echo '?')" "$([ "$rc" = 0 ] && echo ok || echo "FAILED (exit $rc)")" "$(cat "$logs/$j.cpu" 2>/dev/null || echo '?')"
    [ "$rc" = 0 ] || failed=1
  done
done
echo "all suites: $(($(now) - t0)) s; both cores $cpu busy meanwhile (every process on the machine); load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
exit $failed
