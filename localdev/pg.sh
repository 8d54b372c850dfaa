# shellcheck shell=bash
# Sourced by the Makefile: makes sure a Postgres is reachable and exports
# DATABASE_URL. With DATABASE_URL already set it only checks it. Otherwise it
# runs a private cluster for this checkout (data survives restarts):
#   - finds PostgreSQL's binaries (Debian: /usr/lib/postgresql/<ver>/bin),
#     installing Debian's postgresql package when they are missing and we are root;
#   - initdb refuses to run as root, so as root the cluster belongs to the
#     postgres user;
#   - listens on 127.0.0.1:${BUZZ_PG_PORT:-54329}, trust auth on loopback only;
#   - records its data directory in .localdev/pg-clusters, where
#     localdev/stop.sh (make stop, make reset) finds it;
#   - exports BUZZ_PG_STARTED=1 when this call started the cluster, 0 when
#     it was already running.

buzz_pg_fail() { echo "localdev/pg.sh: $*" >&2; return 1; }

buzz_pg_main() {
  local root port bindir ver datadir logfile runas=()
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
  port=${BUZZ_PG_PORT:-54329}

  if [ -n "${DATABASE_URL:-}" ]; then
    return 0
  fi

  bindir=""
  for ver in 17 16 15 14; do
    if [ -x "/usr/lib/postgresql/$ver/bin/pg_ctl" ]; then bindir=/usr/lib/postgresql/$ver/bin; break; fi
  done
  if [ -z "$bindir" ] && command -v pg_ctl >/dev/null 2>&1; then
    bindir=$(dirname "$(readlink -f "$(command -v pg_ctl)")")
  fi
  if [ -z "$bindir" ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
      echo "localdev/pg.sh: PostgreSQL not found; installing Debian's postgresql package" >&2
      DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null &&
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null ||
        { buzz_pg_fail "apt-get install postgresql failed"; return 1; }
      for ver in 17 16 15 14; do
        if [ -x "/usr/lib/postgresql/$ver/bin/pg_ctl" ]; then bindir=/usr/lib/postgresql/$ver/bin; break; fi
      done
    fi
    [ -n "$bindir" ] || { buzz_pg_fail "no PostgreSQL server binaries (pg_ctl). Install them (Debian: apt-get install postgresql) or set DATABASE_URL."; return 1; }
  fi

  datadir=${BUZZ_PGDATA:-$root/.localdev/pgdata}
  if [ "$(id -u)" = 0 ]; then
    id postgres >/dev/null 2>&1 || { buzz_pg_fail "running as root but there is no postgres user to own the cluster (install Debian's postgresql package, or set DATABASE_URL)"; return 1; }
    runas=(runuser -u postgres --)
    mkdir -p "$datadir" && chown postgres: "$datadir" && chmod 700 "$datadir"
    if ! "${runas[@]}" test -w "$datadir"; then
      # The checkout lives where the postgres user cannot reach (e.g. under
      # /root): keep the cluster in postgres's home, one per checkout.
      datadir=/var/lib/postgresql/buzz-$(printf '%s' "$root" | sha256sum | cut -c1-12)
      mkdir -p "$datadir" && chown postgres: "$datadir" && chmod 700 "$datadir"
    fi
  else
    mkdir -p "$datadir" && chmod 700 "$datadir"
  fi
  logfile=$datadir/server.log
  # localdev/stop.sh (make stop, make reset) finds the clusters through this list.
  mkdir -p "$root/.localdev" && { grep -qxF "$datadir" "$root/.localdev/pg-clusters" 2>/dev/null ||
    echo "$datadir" >>"$root/.localdev/pg-clusters"; }

  if [ ! -f "$datadir/PG_VERSION" ]; then
    "${runas[@]}" "$bindir/initdb" -D "$datadir" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >/dev/null ||
      { buzz_pg_fail "initdb failed in $datadir"; return 1; }
    cat >>"$datadir/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
unix_socket_directories = ''
max_connections = 400
shared_buffers = 256MB
CONF
  fi

  if "${runas[@]}" "$bindir/pg_ctl" -D "$datadir" status >/dev/null 2>&1; then
    # Already running (an earlier make dev/test): use the port it listens on.
    port=$(sed -n 4p "$datadir/postmaster.pid" 2>/dev/null || echo "$port")
    export BUZZ_PG_STARTED=0
  else
    # Another server may hold the port (a cluster of another checkout):
    # take the next free one; the port is chosen at each start.
    local tries=0
    while "$bindir/pg_isready" -q -h 127.0.0.1 -p "$port" >/dev/null 2>&1 && [ $tries -lt 20 ]; do
      port=$((port + 1)); tries=$((tries + 1))
    done
    "${runas[@]}" "$bindir/pg_ctl" -D "$datadir" -l "$logfile" -o "-p $port" -w -t 60 start >/dev/null ||
      { buzz_pg_fail "Postgres did not start; see $logfile"; tail -20 "$logfile" >&2; return 1; }
    export BUZZ_PG_STARTED=1
  fi
  # BUZZ_PG_DB names the database (default buzz): `make dev` in processes
  # mode keeps its own (buzz_kms), because its relay keys are sealed by
  # local-kms and the default mode's local sealer cannot open them.
  local db="${BUZZ_PG_DB:-buzz}"
  [[ "$db" =~ ^[a-z_][a-z0-9_]*$ ]] || { buzz_pg_fail "BUZZ_PG_DB must be a plain database name, not $db"; return 1; }
  "$bindir/psql" -h 127.0.0.1 -p "$port" -U postgres -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname='$db'" | grep -q 1 ||
    "$bindir/psql" -h 127.0.0.1 -p "$port" -U postgres -d postgres -qc "CREATE DATABASE $db" ||
    { buzz_pg_fail "could not create database $db"; return 1; }
  export DATABASE_URL="postgres://postgres@127.0.0.1:$port/$db?sslmode=disable"
}

buzz_pg_main || exit 1
