# shellcheck shell=bash
# Sourced by the Makefile (like localdev/pg.sh): makes sure the local S3
# server (localdev/s3: gofakes3 over a folder) runs and exports what the
# relay's media service reads:
#   MEDIA_BUCKET (default buzz-media)  AWS_ENDPOINT_URL_S3=http://127.0.0.1:$BUZZ_S3_PORT
# (the WebSocket sessions live in the local DynamoDB: localdev/ddb.sh).
# It builds the command into .localdev/s3/s3, keeps the buckets under
# .localdev/s3/data, its log in .localdev/s3/s3.log and its pid in
# .localdev/s3/s3.pid (`make stop` stops it). With MEDIA_BUCKET set and
# AWS_ENDPOINT_URL_S3 pointing elsewhere (a real bucket) it does nothing;
# BUZZ_MEDIA=0 turns media off. Run it as a script to only start the server.

_buzz_s3() {
  local root port dir bucket i
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)" || return 1
  if [[ "${BUZZ_MEDIA:-1}" == 0 ]]; then
    unset MEDIA_BUCKET
    return 0
  fi
  if [[ -n "${MEDIA_BUCKET:-}" && -n "${AWS_ENDPOINT_URL_S3:-}" && "${AWS_ENDPOINT_URL_S3}" != http://127.0.0.1:* ]]; then
    return 0
  fi
  port="${BUZZ_S3_PORT:-9000}"
  bucket="${MEDIA_BUCKET:-buzz-media}"
  dir="$root/.localdev/s3"
  mkdir -p "$dir/data" || return 1

  if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    (cd "$root" && go build -o "$dir/s3" ./localdev/s3) || { echo "s3.sh: go build ./localdev/s3 failed" >&2; return 1; }
    nohup "$dir/s3" -addr "127.0.0.1:$port" -dir "$dir/data" -buckets "$bucket" >"$dir/s3.log" 2>&1 &
    echo $! >"$dir/s3.pid"
    for i in $(seq 1 100); do
      (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
      sleep 0.1
    done
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "s3.sh: the local S3 server did not start on port $port, see $dir/s3.log" >&2
      return 1
    fi
    echo "s3.sh: local S3 on 127.0.0.1:$port (pid $(cat "$dir/s3.pid"), data in $dir/data)" >&2
  fi
  export MEDIA_BUCKET="$bucket"
  export AWS_ENDPOINT_URL_S3="http://127.0.0.1:$port"
}
_buzz_s3 || { [[ "${BASH_SOURCE[0]}" != "$0" ]] && return 1 || exit 1; }
