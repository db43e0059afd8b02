#!/usr/bin/env bash
# deb-check.sh — `make deb-check`, run by CI: build the Debian package with
# dpkg-buildpackage in a scratch copy of the tree (nothing built lands in the
# checkout), run lintian on the .deb and the .changes (an error fails; the
# warnings are printed), then as root install it with dpkg, check what it
# installed, remove it and check that it is gone. Installs what it needs
# (dpkg-dev, debhelper, lintian, man-db) first. Ends with
# "deb-check: N passed, M failed". It replaces an installed cronq package.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
# `make WERROR=1 deb-check` must not reach the package build through
# MAKEFLAGS: debian/rules decides its flags.
unset MAKEFLAGS MFLAGS MAKELEVEL
CRONQ_EXTRA_DEPS="dpkg-dev debhelper lintian man-db" "$root/scripts/deps.sh" || exit 1
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

passed=0; failed=0
pass() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "not ok deb-check: $*"; }
check() { local desc=$1; shift; if "$@"; then pass; else fail "$desc"; fi; }
finish() { echo "deb-check: $passed passed, $failed failed"; [ "$failed" -eq 0 ]; exit; }

tmp=$(mktemp -d /tmp/cronq-deb.XXXXXX)
trap 'rm -rf "$tmp"' EXIT INT TERM

# The files of the checkout as they are (uncommitted changes included, build
# products and what .gitignore names left out).
version=$(dpkg-parsechangelog -l "$root/debian/changelog" -S Version)
src="$tmp/cronq-$version"
mkdir -p "$src"
if git -C "$root" rev-parse --git-dir >/dev/null 2>&1; then
    (cd "$root" && git ls-files -z --cached --others --exclude-standard |
        while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
        xargs -0 cp --parents -t "$src")
else
    (cd "$root" && tar --exclude=./build --exclude=./bin --exclude=./.demo -cf - .) | tar -xf - -C "$src"
fi

echo "== dpkg-buildpackage -us -uc -b (log: build.log)"
if (cd "$src" && dpkg-buildpackage -us -uc -b -j"$(nproc)") >"$tmp/build.log" 2>&1; then pass; else
    tail -n 40 "$tmp/build.log"
    fail "dpkg-buildpackage failed"
    finish
fi
arch=$(dpkg --print-architecture)
deb="$tmp/cronq_${version}_${arch}.deb"
changes="$tmp/cronq_${version}_${arch}.changes"
check "the package is built" [ -f "$deb" ]
check "no build product in the checkout" [ ! -e "$root/debian/cronq" ] && check "no debian/files in the checkout" [ ! -e "$root/debian/files" ]

echo "== lintian"
# The .changes names the .deb (and the dbgsym package and the .buildinfo).
# Errors and warnings are shown; only an error fails.
lintian --fail-on error "$changes" 2>&1 | tee "$tmp/lintian.log"
check "lintian reports no error" [ "${PIPESTATUS[0]}" = 0 ]

echo "== dpkg -i"
if $SUDO dpkg -i "$deb" >"$tmp/dpkg.log" 2>&1; then pass; else
    cat "$tmp/dpkg.log"; fail "dpkg -i failed"; finish
fi
out=$(/usr/bin/cronq --version 2>&1)
check "cronq --version runs from /usr/bin (got: $out)" [ "$out" = "cronq ${version%%-*}" ]
man_page=$(man -w cronq 2>/dev/null)
check "man -w cronq finds the page (got: $man_page)" [ "$man_page" = /usr/share/man/man1/cronq.1.gz ]
check "man renders the page" bash -c 'man -P cat cronq 2>/dev/null | grep -q "cronq run"'
man_page7=$(man -w 7 cronq 2>/dev/null)
check "man -w 7 cronq finds the SQL API page (got: $man_page7)" [ "$man_page7" = /usr/share/man/man7/cronq.7.gz ]
check "man renders cronq(7)" bash -c 'man -P cat 7 cronq 2>/dev/null | grep -q "cronq.enqueue"'
unitdir=$(pkg-config --variable=systemdsystemunitdir systemd 2>/dev/null)
unitdir=${unitdir:-/lib/systemd/system}
for u in cronq.service cronq.timer; do
    check "$u is in $unitdir" [ -f "$unitdir/$u" ]
done
check "the service runs /usr/bin/cronq" grep -q '^ExecStart=/usr/bin/cronq run ' "$unitdir/cronq.service"
check "the timer is not enabled" [ ! -e /etc/systemd/system/timers.target.wants/cronq.timer ]
check "the copyright file is there" [ -f /usr/share/doc/cronq/copyright ]
check "the README is there" bash -c 'ls /usr/share/doc/cronq/README.md* >/dev/null 2>&1'
for d in commands sql-api schema semantics performance architecture; do
    check "docs/$d.md is there" bash -c "ls /usr/share/doc/cronq/docs/$d.md* >/dev/null 2>&1"
done
check "the crontab example is there" [ -f /usr/share/doc/cronq/examples/crontab.example ]
check "the migrations are there" [ -f /usr/share/cronq/sql/0001_init.sql ]
installed=$(dpkg -L cronq | grep -v '/$' | while read -r f; do [ -d "$f" ] || echo "$f"; done)

echo "== dpkg -r"
if $SUDO dpkg -r cronq >>"$tmp/dpkg.log" 2>&1; then pass; else cat "$tmp/dpkg.log"; fail "dpkg -r failed"; fi
left=$(for f in $installed; do [ -e "$f" ] && echo "$f"; done)
check "dpkg -r removes every file it installed (left: $left)" [ -z "$left" ]
check "no cronq on the PATH" [ ! -e /usr/bin/cronq ]
for u in cronq.service cronq.timer; do
    check "$u is gone" [ ! -e "$unitdir/$u" ]
done
$SUDO dpkg -P cronq >>"$tmp/dpkg.log" 2>&1 || fail "dpkg -P failed"
finish
