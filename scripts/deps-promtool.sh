#!/bin/sh
# deps-promtool.sh — make sure promtool (Debian's prometheus package) is
# there for the tests that validate `cronq status --prometheus`; installs
# the package only when promtool is missing. Exit 0 when promtool runs,
# 1 (with the reason on stderr) when it cannot be had.
set -eu

command -v promtool >/dev/null 2>&1 && exit 0
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
echo "deps-promtool.sh: installing prometheus (for promtool)" >&2
if ! { $SUDO apt-get install -y -qq --no-install-recommends prometheus >&2 ||
       { $SUDO apt-get update -qq >&2 && $SUDO apt-get install -y -qq --no-install-recommends prometheus >&2; }; }; then
    echo "deps-promtool.sh: could not install prometheus" >&2
    exit 1
fi
command -v promtool >/dev/null 2>&1 || { echo "deps-promtool.sh: prometheus installed but no promtool" >&2; exit 1; }
