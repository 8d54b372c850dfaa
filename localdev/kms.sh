# shellcheck shell=bash
# Source this file (like localdev/pg.sh) to run the relay with the KMS signer
# against local-kms instead of AWS:
#
#   source localdev/pg.sh && source localdev/kms.sh && go run ./localdev
#
# It installs github.com/nsmithuk/local-kms with `go install` when missing,
# starts it (once; later calls reuse it) on 127.0.0.1:$KMS_PORT (default
# 4599) seeded with localdev/kms-seed.yaml, data under .localdev/kms, then
# creates a relay key ciphertext once (.localdev/relay-key.kms, made by
# localdev/relaykey) and exports what config.Signer reads:
#   RELAY_SIGNER=kms RELAY_KEY_CIPHERTEXT RELAY_KMS_KEY_ID AWS_ENDPOINT_URL_KMS
# plus a region and dummy credentials when none are set. local-kms has no
# bind-address setting and listens on all interfaces; it is only ever
# addressed through 127.0.0.1 here.
#
# Run it as a script (bash localdev/kms.sh) to only start local-kms.

_buzz_kms() {
  local version=v0.0.0-20260228092603-2a5e92d09ab6 # keep in step with shared/testing/testkit/kms.go
  local root port bin gobin
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)" || return 1
  port="${KMS_PORT:-4599}"
  mkdir -p "$root/.localdev/kms" || return 1

  bin="$(command -v local-kms || true)"
  if [[ -z "$bin" ]]; then
    gobin="$(go env GOBIN)"; [[ -n "$gobin" ]] || gobin="$(go env GOPATH | cut -d: -f1)/bin"
    bin="$gobin/local-kms"
    if [[ ! -x "$bin" ]]; then
      echo "kms.sh: go install github.com/nsmithuk/local-kms@$version" >&2
      go install "github.com/nsmithuk/local-kms@$version" || return 1
    fi
  fi

  if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    PORT="$port" KMS_REGION=eu-west-2 KMS_ACCOUNT_ID=111122223333 \
      KMS_SEED_PATH="$root/localdev/kms-seed.yaml" KMS_DATA_PATH="$root/.localdev/kms/data" \
      nohup "$bin" >"$root/.localdev/kms/local-kms.log" 2>&1 &
    echo $! >"$root/.localdev/kms/local-kms.pid"
    local i
    for i in $(seq 1 100); do
      (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
      sleep 0.1
    done
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "kms.sh: local-kms did not start on port $port, see .localdev/kms/local-kms.log" >&2
      return 1
    fi
    echo "kms.sh: local-kms on 127.0.0.1:$port (pid $(cat "$root/.localdev/kms/local-kms.pid"))" >&2
  fi

  export AWS_ENDPOINT_URL_KMS="http://127.0.0.1:$port"
  export AWS_REGION="${AWS_REGION:-eu-west-2}"
  if [[ -z "${AWS_ACCESS_KEY_ID:-}" && -z "${AWS_PROFILE:-}" ]]; then
    export AWS_ACCESS_KEY_ID=local AWS_SECRET_ACCESS_KEY=local
  fi

  if [[ "${BASH_SOURCE[0]}" != "$0" ]]; then # sourced: configure the signer too
    local ctfile="$root/.localdev/relay-key.kms"
    if [[ ! -s "$ctfile" ]]; then
      (cd "$root" && go run ./localdev/relaykey -kms-key alias/buzz-relay -community "${BUZZ_COMMUNITY:-default}") \
        | sed -n 's/.*"ciphertext": "\(.*\)".*/\1/p' >"$ctfile.tmp" && mv "$ctfile.tmp" "$ctfile" || return 1
    fi
    export RELAY_SIGNER=kms
    RELAY_KEY_CIPHERTEXT="$(cat "$ctfile")"
    export RELAY_KEY_CIPHERTEXT
    export RELAY_KMS_KEY_ID=arn:aws:kms:eu-west-2:111122223333:key/6e9741a4-87fd-47ab-92a6-a2097aef63f6
    unset RELAY_SECRET_KEY RELAY_KEY_FILE
  fi
}
_buzz_kms
