#!/usr/bin/env bash
# make install and make uninstall into a DESTDIR: exactly the files listed
# here, with their modes, the unit files naming the installed binary, bindir
# and mandir apart from PREFIX; uninstall leaves no file and no directory of
# cronq's own. Then the build flags: CPPFLAGS, CFLAGS and LDFLAGS reach the
# compiler, and -Werror follows WERROR. Needs no database.
. "$(dirname "$0")/lib.sh"
# The make that runs the suite (make test WERROR=0, make asan) must not pass
# its variables and flags down to the ones here.
unset MAKEFLAGS MFLAGS MAKELEVEL WERROR

# The binary under test is installed as it is: -o keeps make from rebuilding
# it (under make asan it is build/asan/bin/cronq, built with other flags).
mk() { make --no-print-directory -C "$T_ROOT" -o "$CRONQ" BIN="$CRONQ" "$@" >>"$T_DIR/make.log" 2>&1; }
files_in() { (cd "$1" && find . \( -type f -o -type l \) | sed 's|^\./||' | LC_ALL=C sort); }

dest="$T_DIR/dest"
rm -rf "$dest"
mk install DESTDIR="$dest" PREFIX=/usr
check "make install DESTDIR PREFIX=/usr succeeds" [ $? = 0 ]

# What the tree says install writes.
expected=$(
    cd "$T_ROOT" || exit 1
    echo usr/bin/cronq
    for f in cronq.[1-8]; do [ -e "$f" ] && echo "usr/share/man/man${f##*.}/$f"; done
    for f in sql/*.sql; do echo "usr/share/cronq/sql/$(basename "$f")"; done
    for f in $(find lib -name '*.sql'); do echo "usr/share/cronq/sql/statements/$(basename "$f")"; done
    echo usr/share/doc/cronq/README.md
    echo usr/share/doc/cronq/LICENSE
    for f in docs/*.md; do echo "usr/share/doc/cronq/docs/$(basename "$f")"; done
    echo usr/share/doc/cronq/examples/crontab.example
    echo usr/lib/systemd/system/cronq.service
    echo usr/lib/systemd/system/cronq.timer
)
expected=$(LC_ALL=C sort <<<"$expected")
eq "install writes exactly these files" "$expected" "$(files_in "$dest")"

eq "the binary is mode 755" 755 "$(stat -c %a "$dest/usr/bin/cronq" 2>/dev/null)"
others=$(cd "$dest" && find . -type f ! -path ./usr/bin/cronq ! -perm 644)
eq "every other file is mode 644" "" "$others"
out=$("$dest/usr/bin/cronq" --version 2>&1)
match "the installed binary runs" '^cronq [0-9]' "$out"
check "the man page is cronq.1" cmp -s "$T_ROOT/cronq.1" "$dest/usr/share/man/man1/cronq.1"
check "a migration is copied as it is" cmp -s "$T_ROOT/sql/0001_init.sql" "$dest/usr/share/cronq/sql/0001_init.sql"
check "the SQL API man page is cronq.7, in man7" cmp -s "$T_ROOT/cronq.7" "$dest/usr/share/man/man7/cronq.7"
for d in commands sql-api schema semantics performance architecture; do
    check "docs/$d.md is installed as it is" cmp -s "$T_ROOT/docs/$d.md" "$dest/usr/share/doc/cronq/docs/$d.md"
done

unit="$dest/usr/lib/systemd/system/cronq.service"
eq "the service runs the installed binary" \
    "ExecStart=/usr/bin/cronq run --linger 50s --poll 1s --max-runtime 55s" "$(grep '^ExecStart=' "$unit")"
eq "no /usr/local and no @bindir@ left in the units" "" \
    "$(grep -l -e /usr/local -e @ "$dest/usr/lib/systemd/system/"* 2>/dev/null)"
check "the timer is the repository's" cmp -s "$T_ROOT/scripts/systemd/cronq.timer" "$dest/usr/lib/systemd/system/cronq.timer"

mk uninstall DESTDIR="$dest" PREFIX=/usr
check "make uninstall succeeds" [ $? = 0 ]
check "uninstall removes cronq.7" [ ! -e "$dest/usr/share/man/man7/cronq.7" ]
check "uninstall removes the docs/ pages" [ ! -e "$dest/usr/share/doc/cronq/docs" ]
eq "uninstall leaves no file" "" "$(files_in "$dest")"
eq "uninstall leaves no directory of cronq's own" "" "$(cd "$dest" && find . -name '*cronq*')"

# bindir and mandir apart from PREFIX (the default PREFIX, /usr/local).
rm -rf "$dest"
mk install DESTDIR="$dest" bindir=/opt/cq/sbin mandir=/opt/cq/man
check "install with bindir and mandir succeeds" [ $? = 0 ]
check "bindir is used" [ -x "$dest/opt/cq/sbin/cronq" ]
check "mandir is used" [ -f "$dest/opt/cq/man/man1/cronq.1" ]
check "mandir is used for section 7" [ -f "$dest/opt/cq/man/man7/cronq.7" ]
check "PREFIX defaults to /usr/local" [ -f "$dest/usr/local/share/doc/cronq/README.md" ]
eq "the service names bindir" "ExecStart=/opt/cq/sbin/cronq" \
    "$(grep -o '^ExecStart=[^ ]*' "$dest/usr/local/lib/systemd/system/cronq.service" 2>/dev/null)"
mk uninstall DESTDIR="$dest" bindir=/opt/cq/sbin mandir=/opt/cq/man
eq "uninstall with the same variables leaves no file" "" "$(files_in "$dest")"
rm -rf "$dest"

# The compile and link lines, printed by make -n into a build directory of
# the test's own (nothing is compiled).
flags() { make --no-print-directory -C "$T_ROOT" -n -B BUILD="$T_DIR/build" BIN="$T_DIR/bin/cronq" "$@" "$T_DIR/bin/cronq" 2>&1; }
lines=$(flags CPPFLAGS=-DT_INSTALL_CPP CFLAGS=-DT_INSTALL_C LDFLAGS=-Wl,-z,now)
check "CPPFLAGS reaches the compiler" grep -qE -e '-DT_INSTALL_CPP .* -c ' <<<"$lines"
check "CFLAGS reaches the compiler" grep -qE -e '-DT_INSTALL_C .* -c ' <<<"$lines"
check "LDFLAGS reaches the linker" grep -qE -e '-Wl,-z,now -o [^ ]*/bin/cronq ' <<<"$lines"
if [ -e "$T_ROOT/.git" ]; then
    check "a git checkout builds with -Werror" grep -q -e ' -Werror ' <<<"$(flags)"
else
    eq "a copy without .git builds without -Werror" 0 "$(flags | grep -c -e -Werror)"
fi
eq "WERROR=0 builds without -Werror" 0 "$(flags WERROR=0 | grep -c -e -Werror)"
check "WERROR=1 builds with -Werror" grep -q -e ' -Werror ' <<<"$(flags WERROR=1)"

done_testing
