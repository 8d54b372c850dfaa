#!/usr/bin/env bash
# CI's smoke test of `make dev`: starts `make dev` in the background on a free
# port (BUZZ_ADDR), waits for GET /healthz, runs `make smoke` against it, then
# stops it. Exits with the smoke command's status. Used by `make test`.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
mkdir -p .localdev
port=${SMOKE_PORT:-18080}
for _ in $(seq 1 50); do
  (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null || break
  port=$((port + 1))
done
log=.localdev/smoke-dev.log
wait=120s
if [ "${BUZZ_LAMBDA:-}" = processes ]; then
  # Every route through its function's own binary: the start builds them
  # and runs migrate first, so it may take longer.
  log=.localdev/smoke-dev-processes.log
  wait=300s
fi
# Build first so the wait below is the relay starting, not the compiler.
go build -o /dev/null ./localdev ./localdev/smoke
set -m # make dev gets its own process group, stopped as a whole below
BUZZ_ADDR="127.0.0.1:$port" make --no-print-directory dev >"$log" 2>&1 &
dev=$!
set +m
stop() { kill -TERM -- "-$dev" 2>/dev/null || true; wait "$dev" 2>/dev/null || true; }
trap stop EXIT
status=0
make --no-print-directory smoke URL="http://127.0.0.1:$port" SMOKE_ARGS="-wait $wait" || status=$?
if [ "$status" = 0 ] && [ "${BUZZ_LAMBDA:-}" = processes ]; then
  # make dev listens only once every function logged its cold start from
  # its own binary (emulator.ProcessStack.CheckColdStarts); say so.
  grep -h '^functions: ' "$log" || { echo "smoke-dev: no cold-start summary in $log" >&2; status=1; }
fi
if [ "$status" != 0 ]; then
  echo "smoke-dev: make dev log ($log):" >&2
  tail -40 "$log" >&2
fi
exit "$status"
