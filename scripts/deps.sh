#!/bin/sh
# deps.sh PACKAGE... -- makes sure the Debian packages are installed.
# As root, missing ones are installed (apt-get update once, then install);
# otherwise the exact apt-get line is printed and the script fails.
set -eu
missing=""
for p in "$@"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $p"
    fi
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" -eq 0 ]; then
    echo "deps: installing:$missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    # shellcheck disable=SC2086
    apt-get install -y -qq --no-install-recommends $missing
else
    echo "deps: missing Debian packages:$missing" >&2
    echo "deps: run: sudo apt-get install -y$missing" >&2
    exit 1
fi
