#!/usr/bin/env bash
# Prints the path of Debian's chromium, the browser the operator console's
# test drives (localdev/e2e/console_test.go); when it is missing and this
# runs as root with apt-get (CI on Debian/Ubuntu), installs the package
# first. Exits non-zero, saying why, when there is none.
set -euo pipefail
for b in chromium chromium-browser; do
  if p=$(command -v "$b"); then echo "$p"; exit 0; fi
done
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "localdev/chromium.sh: chromium not found; installing Debian's chromium package" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq --no-install-recommends chromium >/dev/null
  for b in chromium chromium-browser; do
    if p=$(command -v "$b"); then echo "$p"; exit 0; fi
  done
fi
echo "localdev/chromium.sh: no chromium (Debian: apt-get install chromium)" >&2
exit 1
