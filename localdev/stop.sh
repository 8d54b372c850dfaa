#!/usr/bin/env bash
# Stops the local services the scripts under localdev/ started for this
# checkout, each found through what it left under .localdev/:
#   - the Postgres clusters of localdev/pg.sh: every data directory listed in
#     .localdev/pg-clusters (pg.sh records each one it runs, also one outside
#     .localdev/) and any data directory under .localdev/; a running cluster
#     has a postmaster.pid, and its postmaster gets a fast shutdown (SIGINT);
#   - every other process a script recorded as a pid file under .localdev/
#     (.localdev/kms/local-kms.pid of localdev/kms.sh; a later server started
#     by a script keeps its pid in .localdev/<service>/<name>.pid and is
#     stopped the same way, nothing to add here): SIGTERM, then SIGKILL after
#     10 s. A pid file older than its process's start (the pid was reused)
#     is ignored.
#
#   localdev/stop.sh                  stop everything (make stop)
#   localdev/stop.sh --postgres       stop the Postgres clusters only
#   localdev/stop.sh --running        list what runs; exit 0 when a cluster runs
#   localdev/stop.sh --reset          stop everything, say what it deletes, delete
#                                     .localdev/ and the clusters' data (make reset)
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
local_dir="$root/.localdev"
list="$local_dir/pg-clusters"
stopped=0

# clusters prints each known data directory once.
clusters() {
  {
    [ -f "$list" ] && cat "$list"
    [ -d "$local_dir" ] && find "$local_dir" -maxdepth 3 -name PG_VERSION -printf '%h\n' 2>/dev/null
  } | awk 'NF && !seen[$0]++'
}

# statfield PID N prints field N of /proc/PID/stat counted after the
# command name (which may hold spaces): 1 is the state, 20 the start time.
statfield() {
  local stat
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  echo "${stat##*) }" | awk -v n="$2" '{print $n}'
}

# alive PID [NAME]: the process runs, not a zombie waiting for its parent
# (and its command name contains NAME).
alive() {
  kill -0 "$1" 2>/dev/null || return 1
  [ "$(statfield "$1" 1)" != Z ] || return 1
  [ -z "${2:-}" ] || grep -q "$2" "/proc/$1/comm" 2>/dev/null
}

# postmaster DATADIR prints the pid of the cluster's running postmaster.
postmaster() {
  local pid
  pid=$(head -1 "$1/postmaster.pid" 2>/dev/null) || return 1
  [[ "$pid" =~ ^[0-9]+$ ]] && alive "$pid" postgres && echo "$pid"
}

# started_after PID FILE: the process started after FILE was written (its
# pid is not the one the file recorded).
started_after() {
  local ticks hz boot start mtime
  ticks=$(statfield "$1" 20) && [ -n "$ticks" ] || return 1
  hz=$(getconf CLK_TCK)
  boot=$(awk '/^btime/ {print $2}' /proc/stat)
  start=$((boot + ticks / hz))
  mtime=$(stat -c %Y "$2")
  [ "$start" -gt $((mtime + 2)) ]
}

# wait_gone PID SECONDS
wait_gone() {
  local i
  for ((i = 0; i < $2 * 10; i++)); do
    alive "$1" || return 0
    sleep 0.1
  done
  return 1
}

stop_postgres() {
  local dir pid status=0
  while read -r dir; do
    pid=$(postmaster "$dir") || continue
    echo "stop.sh: stopping Postgres (pid $pid, data $dir)"
    kill -INT "$pid" 2>/dev/null
    stopped=$((stopped + 1))
    if ! wait_gone "$pid" 60; then
      echo "stop.sh: Postgres pid $pid did not stop within 60 s" >&2
      status=1
    fi
  done < <(clusters)
  return $status
}

stop_pidfiles() {
  local file pid status=0
  [ -d "$local_dir" ] || return 0
  while read -r file; do
    pid=$(head -1 "$file" 2>/dev/null)
    [[ "$pid" =~ ^[0-9]+$ ]] || continue
    if ! alive "$pid"; then
      rm -f "$file"
      continue
    fi
    if started_after "$pid" "$file"; then
      echo "stop.sh: $file names pid $pid, a newer process; left alone" >&2
      rm -f "$file"
      continue
    fi
    echo "stop.sh: stopping $(cat "/proc/$pid/comm" 2>/dev/null || echo process) (pid $pid, from ${file#"$root"/})"
    kill -TERM "$pid" 2>/dev/null
    stopped=$((stopped + 1))
    if ! wait_gone "$pid" 10; then
      kill -KILL "$pid" 2>/dev/null
      wait_gone "$pid" 5 || { echo "stop.sh: pid $pid did not stop" >&2; status=1; continue; }
    fi
    rm -f "$file"
  done < <(find "$local_dir" -name '*.pid' ! -name postmaster.pid 2>/dev/null)
  return $status
}

running() {
  local dir pid any=1
  while read -r dir; do
    if pid=$(postmaster "$dir"); then
      echo "Postgres pid $pid, data $dir"
      any=0
    fi
  done < <(clusters)
  return $any
}

reset() {
  stop_postgres && stop_pidfiles || {
    echo "stop.sh: not deleting anything while a service still runs" >&2
    return 1
  }
  local dir outside=()
  while read -r dir; do
    case "$dir" in "$local_dir"/*) ;; *) [ -d "$dir" ] && outside+=("$dir") ;; esac
  done < <(clusters)
  if [ ! -d "$local_dir" ] && [ ${#outside[@]} = 0 ]; then
    echo "reset: nothing to delete (no .localdev/)"
    return 0
  fi
  echo "reset: deleting this checkout's local data:"
  if [ -d "$local_dir" ]; then
    echo "  $local_dir/ ($(du -sh "$local_dir" 2>/dev/null | cut -f1)):"
    local entry what
    while read -r entry; do
      case "$entry" in
      pgdata) what="the local Postgres cluster (every event, channel and community)" ;;
      pg-clusters) what="the list of clusters stop.sh reads" ;;
      kms) what="local-kms's data, pid file and log" ;;
      relay.key) what="the local relay key: the relay's public key changes" ;;
      relay-key.kms) what="the relay key's ciphertext made by localdev/kms.sh" ;;
      seal.key) what="the local key sealing the communities' relay keys" ;;
      bin) what="commands built here (e.g. nip98token)" ;;
      *.log) what="a log" ;;
      *) what="$(du -sh "$local_dir/$entry" 2>/dev/null | cut -f1)" ;;
      esac
      echo "    $entry: $what"
    done < <(find "$local_dir" -mindepth 1 -maxdepth 1 -printf '%f\n' | sort)
  fi
  for dir in "${outside[@]}"; do
    echo "  $dir/ ($(du -sh "$dir" 2>/dev/null | cut -f1)): a Postgres cluster of this checkout kept outside it"
  done
  rm -rf -- "${outside[@]}" "$local_dir" || return 1
  echo "reset: done; the next make dev or make test starts from an empty database"
}

case "${1:-}" in
"")
  s=0
  stop_postgres || s=1
  stop_pidfiles || s=1
  [ "$stopped" != 0 ] || echo "stop.sh: no local service of this checkout was running"
  exit $s
  ;;
--postgres) stop_postgres ;;
--running) running ;;
--reset) reset ;;
*)
  echo "usage: localdev/stop.sh [--postgres | --running | --reset]" >&2
  exit 2
  ;;
esac
