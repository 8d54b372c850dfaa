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
ALL="core e2e idle processes smoke build fuzz"
SUITES=${SUITES:-$ALL}
IDLE_TEST='^TestIdleNDKWelshmanBuzzMakeNoDatabaseStatements$'
logs=.localdev/test-logs
mkdir -p "$logs" && rm -f "$logs"/*.log "$logs"/*.status "$logs"/*.time "$logs"/*.times "$logs"/*.cpu

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

step "go vet ./..." "$GO" vet ./...
compile_tests() { "$GO" test -count=1 -run '^$' ./... >/dev/null; }
step "compiling every package's tests" compile_tests
export BUZZ_FUNCTIONS_BIN="$root/.localdev/functions-bin"
step "building the functions for this machine" "$GO" run ./localdev/buildfunctions -o "$BUZZ_FUNCTIONS_BIN"

suite_core() {
  # shellcheck disable=SC2046
  "$GO" test -count=1 -timeout 20m $("$GO" list ./... | grep -v '/localdev/e2e$')
}
E2E_PARALLEL=${E2E_PARALLEL:-3}
suite_e2e() { BUZZ_E2E_PARALLEL=1 "$GO" test -count=1 -timeout 45m -parallel "$E2E_PARALLEL" -skip "$IDLE_TEST" ./localdev/e2e; }
suite_idle() { "$GO" test -count=1 -timeout 20m -run "$IDLE_TEST" ./localdev/e2e; }
suite_processes() {
  # Its own local DynamoDB (one node process each): the two end-to-end
  # suites' sessions do not queue on one server.
  BUZZ_DDB_DIR="$root/.localdev/ddb-processes" source localdev/ddb.sh || return 1
  BUZZ_E2E_PARALLEL=1 BUZZ_LAMBDA=processes "$GO" test -count=1 -timeout 45m -parallel "$E2E_PARALLEL" ./localdev/e2e
}
suite_smoke() { localdev/smoke-dev.sh && BUZZ_LAMBDA=processes localdev/smoke-dev.sh; }
suite_build() { make --no-print-directory build && make --no-print-directory test-infra; }
suite_fuzz() { make --no-print-directory fuzz; }

# run NAME: one suite, its log, exit status and wall time under $logs.
# The CPU it used (user and system, its processes and theirs) is bash's
# times for the subshell that ran it.
run() {
  local s=$1 t
  t=$(now)
  (
    "suite_$s" >"$logs/$s.log" 2>&1
    echo $? >"$logs/$s.status"
    times >"$logs/$s.times" # (not in a pipeline: its subshell has no children)
    tail -1 "$logs/$s.times" | awk '{print $1 " user, " $2 " system"}' >"$logs/$s.cpu"
  )
  echo $(($(now) - t)) >"$logs/$s.time"
}
for s in $SUITES; do
  declare -F "suite_$s" >/dev/null || { echo "suites: no suite $s (have: $ALL)" >&2; exit 2; }
done
pids=()
for s in $SUITES; do
  run "$s" &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done

failed=0
for s in $SUITES; do
  echo "=== suite $s ($logs/$s.log)"
  cat "$logs/$s.log"
done
echo "=== suite times (wall, side by side on $(nproc) cores)"
for s in $SUITES; do
  rc=$(cat "$logs/$s.status" 2>/dev/null || echo 1)
  printf '%-10s %5s s  %-22s CPU %s\n' "$s" "$(cat "$logs/$s.time" 2>/dev/null || echo '?')" "$([ "$rc" = 0 ] && echo ok || echo "FAILED (exit $rc)")" "$(cat "$logs/$s.cpu" 2>/dev/null || echo '?')"
  [ "$rc" = 0 ] || failed=1
done
echo "all suites: $(($(now) - t0)) s"
exit $failed
