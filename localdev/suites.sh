#!/usr/bin/env bash
# make test's suites, side by side (issue 54: `make test` under 12 minutes on
# a 2-core machine without cutting anything that ran before). Most of a
# suite's time is waiting (on its relays, Postgres, dynalite, node clients),
# not CPU, so the suites run at once, and the two end-to-end suites are cut
# into shards that run at once too.
#
# From the start, in this order:
#   1. the end-to-end tests compiled once into one binary (.localdev/e2e.test,
#      which every e2e job runs: go test would link it again for each),
#      while Postgres (localdev/pg.sh) and the local DynamoDB (localdev/ddb.sh)
#      start; then `build` (its compile at nice 5: the tests that assert
#      something about time get the cores first) and `fuzz`; then the e2e shards' own DynamoDB
#      servers, one after another;
#   2. when the binary is there: the in-process e2e shards and `idle`;
#   3. the functions' binaries for this machine built once into
#      .localdev/functions-bin (BUZZ_FUNCTIONS_BIN: the processes-mode
#      smoke checks and e2e suite, and the e2e tests that run a function as
#      its own process, link them from there); then the processes-mode
#      shards, smoke, core and vet (at nice 5).
# Each job's log is under .localdev/test-logs/ (each test's relay, database,
# session table and S3 server are its own):
#   core        go test of every package but localdev/e2e (the slowest
#               packages named first, so they start first)
#   vet         go vet ./...
#   e2eN        the end-to-end suite in process (sessions in DynamoDB, as
#               everywhere), shard N
#   idle        the idle apps' test (5 minutes of waiting; issue 37)
#   processesN  the end-to-end suite with every route through its
#               function's binary, shard N
#   smoke       the smoke checks against make dev, then against
#               BUZZ_LAMBDA=processes make dev
#   build       make build (the arm64 zips) then make test-infra (the CDK app)
#   fuzz        make fuzz
# The e2e shards: shard 0 holds the serialTests of localdev/e2e/testrelay.go
# (their assertions are about time or load), which run one after another,
# alone in their go test process, as they always did; the other tests are
# dealt round-robin into shards 1..E2E_SHARDS (default 2), each a go test
# process running E2E_PARALLEL (default 3) tests at a time
# (BUZZ_E2E_PARALLEL=1: a test is mostly waiting, not on the CPU). Every
# mode's parallel shards share a local DynamoDB of their own, and the
# processes-mode serial shard has one too (one node process each: the
# shards' sessions do not all queue on one server).
# At the end: every log in that order (a passing e2e job's cut to what a
# plain go test prints, plus its slowest tests; its tests' times are in
# .localdev/test-logs/JOB.tests), then one line per job with its wall
# time, when it started, its status and CPU (user and system of its own
# processes; Postgres's and the DynamoDB servers' CPU is in no job's), and
# how busy the machine's cores were. Exits non-zero when any job failed.
#
#   localdev/suites.sh                       every suite
#   SUITES="core e2e" localdev/suites.sh     only those
#   E2E_TESTS='^TestAuth' localdev/suites.sh  only the e2e tests matching
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root" || exit 1
GO=${GO:-go}
ALL="core vet e2e idle processes smoke build fuzz"
SUITES=${SUITES:-$ALL}
IDLE_TEST='^TestIdleNDKWelshmanBuzzMakeNoDatabaseStatements$'
E2E_SHARDS=${E2E_SHARDS:-2}
E2E_PARALLEL=${E2E_PARALLEL:-3}
E2E_TESTS=${E2E_TESTS:-.}
logs=.localdev/test-logs
mkdir -p "$logs" && rm -f "$logs"/*.log "$logs"/*.status "$logs"/*.time "$logs"/*.times "$logs"/*.cpu "$logs"/*.start "$logs"/*.tests

now() { date +%s; }
t0=$(now)
# The machine's CPU counters (/proc/stat: busy and all jiffies), to say at
# the end how busy both cores were while the suites ran.
cpustat() { awk '/^cpu /{print $2+$3+$4+$7+$8, $2+$3+$4+$5+$6+$7+$8}' /proc/stat 2>/dev/null; }
cpu0=$(cpustat)
has() { [[ " $SUITES " == *" $1 "* ]]; }
for s in $SUITES; do
  [[ " $ALL " == *" $s "* ]] || { echo "suites: no suite $s (have: $ALL)" >&2; exit 2; }
done

step() { # step NAME CMD...: a shared preparation step, in the foreground
  local name=$1 s
  shift
  s=$(now)
  if ! "$@"; then
    echo "suites: $name failed" >&2
    exit 1
  fi
  echo "suites: $name took $(($(now) - s)) s (done at $(($(now) - t0)) s)"
}

# run JOB: one job, its log, start, exit status and wall time under $logs.
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
pids=()
start() { # start SUITE...: those of SUITES, each job in the background
  local s j
  for s in "$@"; do
    has "$s" || continue
    echo "suites: $s started at $(($(now) - t0)) s"
    for j in $(jobs_of "$s"); do
      run "$j" &
      pids+=($!)
    done
  done
}
# jobs_of SUITE: its jobs (e2e and processes: their shards).
jobs_of() {
  case $1 in
  e2e | processes) for n in $(seq 0 "$E2E_SHARDS"); do echo "$1$n"; done ;;
  *) echo "$1" ;;
  esac
}

# make build's compile and vet at a lower priority (nice 5): they assert
# nothing about time, so the tests that do get the cores first. Not the
# fuzzers (at nice 10, on a machine loaded by others, they ran 0 execs/s
# for minutes and would end last) nor the CDK test (a 15-minute timeout).
suite_build() { nice -n 5 make --no-print-directory build && make --no-print-directory test-infra; }
suite_fuzz() { make --no-print-directory fuzz; }
# core: the packages whose tests took longest first (go test starts them in
# the order given), so that the slowest does not start last.
CORE_FIRST="shared/service/ingest shared/service/query localdev shared/postgres/store localdev/e2e/blossom shared/service/sessions shared/service/relay localdev/wsbench"
suite_core() {
  local mod pkgs first=()
  mod=$("$GO" list -m) || return 1
  pkgs=$("$GO" list ./... | grep -v '/localdev/e2e$') || return 1
  for p in $CORE_FIRST; do
    grep -qxF "$mod/$p" <<<"$pkgs" && first+=("$mod/$p")
  done
  # shellcheck disable=SC2046
  "$GO" test -count=1 -timeout 20m "${first[@]}" $(grep -vxF -f <(printf '%s\n' "${first[@]}") <<<"$pkgs")
}
suite_vet() { nice -n 5 "$GO" vet ./...; }
suite_smoke() { localdev/smoke-dev.sh && BUZZ_LAMBDA=processes localdev/smoke-dev.sh; }

# 1. The compiler, the CPU-only suites and the services, at once.
E2E_BIN="$root/.localdev/e2e.test"
rm -f "$E2E_BIN" "$root"/.localdev/ddb-*/endpoint
compile_t0=$(now)
"$GO" test -c -o "$E2E_BIN" ./localdev/e2e >"$logs/e2e-compile.log" 2>&1 &
compile=$!
# shellcheck source=localdev/pg.sh
source localdev/pg.sh || exit 1
# shellcheck source=localdev/ddb.sh
source localdev/ddb.sh || exit 1
start build fuzz
# The e2e shards' own local DynamoDB servers, one after another (each
# takes the next free port) before any shard starts: the in-process serial
# shard shares the first one with idle; the processes-mode serial shard has
# its own; the parallel shards of each mode share one per mode.
ddb_dir() { # ddb_dir JOB: the folder of that job's local DynamoDB ("" for the first)
  case $1 in
  e2e0 | idle) echo "" ;;
  processes0) echo "$root/.localdev/ddb-processes0" ;;
  e2e*) echo "$root/.localdev/ddb-e2e" ;;
  processes*) echo "$root/.localdev/ddb-processes" ;;
  esac
}
ddb_env() { # ddb_env JOB: the AWS_ENDPOINT_URL_DYNAMODB of that job
  local d
  d=$(ddb_dir "$1")
  if [ -z "$d" ]; then echo "$AWS_ENDPOINT_URL_DYNAMODB"; else cat "$d/endpoint"; fi
}
for s in e2e processes; do
  has "$s" || continue
  for j in $(jobs_of "$s"); do
    d=$(ddb_dir "$j")
    [ -n "$d" ] && [ ! -s "$d/endpoint" ] || continue
    # Three tries: on a loaded machine another checkout may take the port
    # between ddb.sh's probe and dynalite's listen.
    for try in 1 2 3; do
      (BUZZ_DDB_DIR="$d" source localdev/ddb.sh && echo "$AWS_ENDPOINT_URL_DYNAMODB" >"$d/endpoint") && break
      [ "$try" = 3 ] && exit 1
      sleep 5
    done
  done
done
if ! wait "$compile"; then
  cat "$logs/e2e-compile.log"
  echo "suites: compiling the end-to-end tests failed" >&2
  exit 1
fi
echo "suites: Postgres, DynamoDB and compiling the end-to-end tests took $(($(now) - compile_t0)) s (done at $(($(now) - t0)) s)"

# e2e_run ARGS...: the e2e binary in its package's folder (where go test
# runs it), verbose so that each test's time is in the log.
e2e_run() { (cd localdev/e2e && "$E2E_BIN" -test.count=1 -test.v -test.timeout 45m "$@"); }

# The shards (see the top).
serial_tests=$(awk '/^var serialTests/{on=1;next} on&&/^}/{exit} on' localdev/e2e/testrelay.go | sed -n 's/^[[:space:]]*"\(Test[A-Za-z0-9_]*\)".*/\1/p')
all_tests=$(e2e_run -test.list '^Test' | grep '^Test' | grep -E -- "$E2E_TESTS" | grep -vxF "${IDLE_TEST//[\^\$]/}")
serial_tests=$(grep -xF "$serial_tests" <<<"$all_tests") # (the idle apps' test is a suite of its own)
shard_regex() { # shard_regex N: the -run pattern of shard N (0: the serial tests)
  local n=$1 i=0 t names=()
  if [ "$n" = 0 ]; then
    mapfile -t names <<<"$serial_tests"
  else
    while read -r t; do
      [ -n "$t" ] || continue
      grep -qxF "$t" <<<"$serial_tests" && continue
      [ $((i % E2E_SHARDS + 1)) = "$n" ] && names+=("$t")
      i=$((i + 1))
    done <<<"$all_tests"
  fi
  local IFS='|'
  echo "^(${names[*]})\$"
}
for n in $(seq 0 "$E2E_SHARDS"); do
  declare "E2E_RUN_$n=$(shard_regex "$n")"
done
# Every test listed is in exactly one shard.
listed=$(for n in $(seq 0 "$E2E_SHARDS"); do v="E2E_RUN_$n"; v=${!v#^(}; tr '|' '\n' <<<"${v%)\$}"; done | grep . | sort)
if [ "$listed" != "$(grep . <<<"$all_tests" | sort)" ]; then
  echo "suites: the e2e shards do not hold every test once" >&2
  diff <(echo "$listed") <(sort <<<"$all_tests") >&2
  exit 1
fi
echo "suites: end-to-end shards (tests): $(for n in $(seq 0 "$E2E_SHARDS"); do v="E2E_RUN_$n"; printf '%s:%s ' "$n" "$(tr '|' '\n' <<<"${!v}" | grep -c '[A-Za-z]')"; done)(0: the serial ones)"
e2e_shard() { # e2e_shard JOB N [processes]
  local v="E2E_RUN_$2"
  [ "${!v}" != '^()$' ] || { echo "no tests in this shard"; return 0; }
  AWS_ENDPOINT_URL_DYNAMODB=$(ddb_env "$1") || return 1
  export AWS_ENDPOINT_URL_DYNAMODB
  echo "ddb: $AWS_ENDPOINT_URL_DYNAMODB"
  if [ "${3:-}" = processes ]; then
    BUZZ_E2E_PARALLEL=1 BUZZ_LAMBDA=processes e2e_run -test.parallel "$E2E_PARALLEL" -test.run "${!v}"
  else
    BUZZ_E2E_PARALLEL=1 e2e_run -test.parallel "$E2E_PARALLEL" -test.run "${!v}"
  fi
}
for n in $(seq 0 "$E2E_SHARDS"); do
  eval "suite_e2e$n() { e2e_shard e2e$n $n; }"
  eval "suite_processes$n() { e2e_shard processes$n $n processes; }"
done
suite_idle() { e2e_run -test.timeout 20m -test.run "$IDLE_TEST"; }

# 2. What needs only the e2e binary.
start e2e idle
# 3. The functions, then the rest.
export BUZZ_FUNCTIONS_BIN="$root/.localdev/functions-bin"
step "building the functions for this machine" "$GO" run ./localdev/buildfunctions -o "$BUZZ_FUNCTIONS_BIN"
start processes smoke core vet
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
        grep -E '^(--- (FAIL|SKIP)|ddb:|e2e:|no tests|PASS$|FAIL$|ok )' "$logs/$j.log"
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
echo "=== suite times (wall; started: seconds after the start of suites.sh)"
for s in $SUITES; do
  for j in $(jobs_of "$s"); do
    rc=$(cat "$logs/$j.status" 2>/dev/null || echo 1)
    printf '%-11s %5s s  started %4s s  %-18s CPU %s\n' "$j" "$(cat "$logs/$j.time" 2>/dev/null || echo '?')" "$(cat "$logs/$j.start" 2>/dev/null || echo '?')" "$([ "$rc" = 0 ] && echo ok || echo "FAILED (exit $rc)")" "$(cat "$logs/$j.cpu" 2>/dev/null || echo '?')"
    [ "$rc" = 0 ] || failed=1
  done
done
echo "all suites: $(($(now) - t0)) s on $(nproc) cores, $cpu of them busy meanwhile (every process on the machine); load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
exit $failed
