#!/bin/sh
# deps.sh — install what cronq needs to build and test on a fresh Debian
# machine, and nothing that is already there. Called by `make test`,
# `make demo`, `make bench` and .ci/run. Needs root (or sudo) only when
# something is missing.
set -eu

need=""
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'ok installed'; }
for pkg in make gcc pkg-config libpq-dev libjansson-dev postgresql-15 tzdata locales pgbouncer iproute2 time ${CRONQ_EXTRA_DEPS:-}; do
    have_pkg "$pkg" || need="$need $pkg"
done
[ -z "$need" ] && exit 0

echo "deps.sh: installing:$need" >&2
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >&2
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $need >&2
