#!/bin/sh
# deps-html.sh — install Debian's chromium, the headless browser that
# tests/integration/t_html.sh loads `cronq status --html` pages in, when it
# is missing. Called by that test and by .ci/run. Exit 0 when chromium can
# be run afterwards, 1 (with the reason on stderr) when it cannot.
set -eu

command -v chromium >/dev/null 2>&1 && exit 0
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if ! command -v sudo >/dev/null 2>&1; then
        echo "deps-html.sh: chromium is missing and there is no root or sudo to install it" >&2
        exit 1
    fi
    SUDO="sudo -n"
fi
echo "deps-html.sh: installing chromium" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >&2 || true
$SUDO apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >&2 || {
    echo "deps-html.sh: could not install chromium with apt-get" >&2
    exit 1
}
command -v chromium >/dev/null 2>&1
