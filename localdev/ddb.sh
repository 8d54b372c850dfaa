# shellcheck shell=bash
# Sourced by the Makefile (like localdev/s3.sh): makes sure the local
# DynamoDB (dynalite 4.0.0, pinned in localdev/ddb/package.json and
# package-lock.json, installed with `npm ci`) runs for this checkout, with
# the WebSocket sessions' table created, and exports what the relay reads:
#   SESSION_TABLE (default buzz-sessions)
#   AWS_ENDPOINT_URL_DYNAMODB=http://127.0.0.1:$port
# The port starts at BUZZ_DDB_PORT (default 48000); one another checkout's
# server holds is skipped, as localdev/pg.sh picks its port; a server this
# checkout already runs is reused on the port it recorded. The table lives
# in memory (sessions last two hours; a restart forgets them, as a
# redeploy's new table would). Its log is .localdev/ddb/ddb.log, its pid
# .localdev/ddb/ddb.pid and its port .localdev/ddb/port (`make stop` stops
# it); BUZZ_DDB_DIR names another folder for a second server (make test's
# processes suite runs its own, so one dynalite is not the bottleneck of
# both end-to-end suites). With SESSION_TABLE set and the endpoint pointing
# elsewhere (a real table) it does nothing. Run it as a script to only
# start the server.

# _buzz_ddb_call sends one DynamoDB JSON request to the local server
# (dynalite checks that a request is signed, not the signature).
_buzz_ddb_call() {
  curl -sS -m 5 -X POST "http://127.0.0.1:$1" \
    -H "X-Amz-Target: DynamoDB_20120810.$2" -H 'Content-Type: application/x-amz-json-1.0' \
    -H "X-Amz-Date: $(date -u +%Y%m%dT%H%M%SZ)" \
    -H 'Authorization: AWS4-HMAC-SHA256 Credential=local/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=host;x-amz-date, Signature=local' \
    -d "$3"
}

_buzz_ddb() {
  local root dir port pid tries table out
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)" || return 1
  if [[ -n "${SESSION_TABLE:-}" && -n "${AWS_ENDPOINT_URL_DYNAMODB:-}" && "${AWS_ENDPOINT_URL_DYNAMODB}" != http://127.0.0.1:* ]]; then
    return 0
  fi
  table="${SESSION_TABLE:-buzz-sessions}"
  dir="${BUZZ_DDB_DIR:-$root/.localdev/ddb}" # another folder, another server (suites.sh)
  mkdir -p "$dir" || return 1
  pid=$(cat "$dir/ddb.pid" 2>/dev/null)
  port=$(cat "$dir/port" 2>/dev/null)
  if [[ -z "$pid" || -z "$port" ]] || ! kill -0 "$pid" 2>/dev/null; then
    if [[ ! -x "$root/localdev/ddb/node_modules/.bin/dynalite" ]]; then
      (cd "$root/localdev/ddb" && npm ci --no-audit --no-fund --loglevel=error >/dev/null) ||
        { echo "ddb.sh: npm ci in localdev/ddb failed" >&2; return 1; }
    fi
    port="${BUZZ_DDB_PORT:-48000}"
    tries=0
    while (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && [ $tries -lt 20 ]; do
      port=$((port + 1)); tries=$((tries + 1))
    done
    nohup node "$root/localdev/ddb/server.js" --host 127.0.0.1 --port "$port" \
      --createTableMs 0 --deleteTableMs 0 --updateTableMs 0 >"$dir/ddb.log" 2>&1 &
    echo $! >"$dir/ddb.pid"
    echo "$port" >"$dir/port"
    for _ in $(seq 1 100); do
      (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
      sleep 0.1
    done
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "ddb.sh: dynalite did not start on port $port, see $dir/ddb.log" >&2
      return 1
    fi
    echo "ddb.sh: local DynamoDB on 127.0.0.1:$port (pid $(cat "$dir/ddb.pid"))" >&2
  fi
  # The table as infra/sessions.go declares it (pk, sk; ttl is the expiry
  # attribute, which dynalite does not enforce: readers skip expired items,
  # and make dev deletes them every minute, localdev/ddbttl).
  out=$(_buzz_ddb_call "$port" DescribeTable "{\"TableName\":\"$table\"}") || return 1
  if [[ "$out" == *ResourceNotFoundException* ]]; then
    out=$(_buzz_ddb_call "$port" CreateTable "{\"TableName\":\"$table\",\"BillingMode\":\"PAY_PER_REQUEST\",
      \"AttributeDefinitions\":[{\"AttributeName\":\"pk\",\"AttributeType\":\"S\"},{\"AttributeName\":\"sk\",\"AttributeType\":\"S\"}],
      \"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"},{\"AttributeName\":\"sk\",\"KeyType\":\"RANGE\"}]}") || return 1
    [[ "$out" == *TableDescription* ]] || { echo "ddb.sh: create table $table: $out" >&2; return 1; }
  fi
  export SESSION_TABLE="$table"
  export AWS_ENDPOINT_URL_DYNAMODB="http://127.0.0.1:$port"
}
_buzz_ddb || { [[ "${BASH_SOURCE[0]}" != "$0" ]] && return 1 || exit 1; }
