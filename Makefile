# cronq — a plain Makefile. `make` builds bin/cronq; `make test` runs every
# test against a throwaway PostgreSQL; `make asan` runs the same suite with
# AddressSanitizer and UBSan; `make install` / `make uninstall` (PREFIX,
# DESTDIR, bindir, mandir, ...); `make deb-check` builds the Debian package.
# CPPFLAGS, CFLAGS and LDFLAGS from the environment or the command line are
# added to ours (dpkg-buildflags' hardening flags come that way).

CC      ?= cc
BUILD   ?= build/release
BIN     ?= bin/cronq

# Where `make install` puts things: the GNU names, each settable on its own.
PREFIX         ?= /usr/local
DESTDIR        ?=
bindir         ?= $(PREFIX)/bin
datadir        ?= $(PREFIX)/share
mandir         ?= $(datadir)/man
docdir         ?= $(datadir)/doc/cronq
# systemd reads /usr/local/lib/systemd/system as well as /usr/lib/systemd/system.
systemdunitdir ?= $(PREFIX)/lib/systemd/system

PKGS      := libpq jansson
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   = $(shell pkg-config --libs $(PKGS) 2>/dev/null)

# _DEFAULT_SOURCE exposes POSIX and BSD interfaces (getopt_long, clock_gettime,
# kill, setenv) that strict -std=c11 hides.
STD  = -std=c11 -D_DEFAULT_SOURCE -D_GNU_SOURCE
# -Werror in a git checkout (development and CI: a warning fails the build),
# not in a copy without .git (a release tarball, a package build), where a
# newer compiler's new warnings must not stop a build. WERROR=1 or WERROR=0
# says which outright; debian/rules says 0.
WERROR ?= $(if $(wildcard .git),1,0)
WARN = -Wall -Wextra $(if $(filter 1,$(WERROR)),-Werror) -Wformat=2 -Wmissing-prototypes \
       -Wstrict-prototypes -Wvla -Wwrite-strings -Wshadow
OPT ?= -O2 -g
# Extra flags for a sanitizer build (set by `make asan`).
SAN ?=
CFLAGS_ALL  = $(STD) $(WARN) $(OPT) $(SAN) -Ilib -I$(BUILD) $(PKG_CFLAGS) $(CPPFLAGS) $(CFLAGS)
LDFLAGS_ALL = $(SAN) $(LDFLAGS)
LIBS_ALL    = $(PKG_LIBS) -lpthread -lm

LIB_SRC  := $(sort $(shell find lib -name '*.c'))
CMD_SRC  := $(sort $(wildcard cmd/cronq/*.c))
# The migrations and grants.sql; sql/schema.sql is a dump for people to
# read (make schema), not a migration.
SQL_SRC  := $(sort $(filter-out sql/schema.sql,$(wildcard sql/*.sql)))
# The long statements, each in a .sql file beside the C that sends it.
STMT_SRC := $(sort $(shell find lib -name '*.sql'))
UNIT_SRC := $(sort $(wildcard tests/unit/test_*.c))

LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o) $(BUILD)/sql_embed.o
CMD_OBJ  := $(CMD_SRC:%.c=$(BUILD)/%.o)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)

.PHONY: FORCE all deps test unit integration asan valgrind soak bench mutate demo demo-stop fuzz install uninstall deb-check clean schema
all: $(BIN)

deps:
	@scripts/deps.sh

$(BIN): $(CMD_OBJ) $(BUILD)/libcronq.a
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_ALL) -o $@ $(CMD_OBJ) $(BUILD)/libcronq.a $(LIBS_ALL)

$(BUILD)/libcronq.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -MMD -MP -c -o $@ $<

# The migrations and the statements of lib/ are compiled into the binary:
# see scripts/embed-sql.sh. sql.list is rewritten only when the list of
# files changes, so that a file gone (a checkout of an older commit)
# regenerates it too.
$(BUILD)/sql.list: FORCE
	@mkdir -p $(dir $@)
	@echo '$(SQL_SRC) $(STMT_SRC)' | cmp -s - $@ || echo '$(SQL_SRC) $(STMT_SRC)' > $@
FORCE:

$(BUILD)/sql_embed.c: $(SQL_SRC) $(STMT_SRC) $(BUILD)/sql.list scripts/embed-sql.sh
	@mkdir -p $(dir $@)
	scripts/embed-sql.sh $(SQL_SRC) $(STMT_SRC) > $@.tmp && mv $@.tmp $@

$(BUILD)/sql_embed.o: $(BUILD)/sql_embed.c
	$(CC) $(CFLAGS_ALL) -Ilib -c -o $@ $<

$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libcronq.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -Itests/unit $(LDFLAGS_ALL) -o $@ $< $(BUILD)/libcronq.a $(LIBS_ALL)

unit-bins: $(UNIT_BIN)

# The whole suite: unit tests, then integration tests, two at a time, each
# lane against a PostgreSQL started for the run (TEST_LANES=1: one at a
# time). Ends with "N passed, N failed".
test: deps
	@$(MAKE) --no-print-directory $(BIN) unit-bins
	@CRONQ=$(abspath $(BIN)) UNIT_DIR=$(abspath $(BUILD)/tests) scripts/run-tests.sh

# The two halves of `make test`: the unit tests (no database), and the
# integration tests against a throwaway PostgreSQL (TESTS="t_run t_ops"
# picks some).
unit: deps
	@$(MAKE) --no-print-directory $(BIN) unit-bins
	@UNIT_ONLY=1 CRONQ=$(abspath $(BIN)) UNIT_DIR=$(abspath $(BUILD)/tests) scripts/run-tests.sh

integration: deps
	@$(MAKE) --no-print-directory $(BIN)
	@NO_UNIT=1 CRONQ=$(abspath $(BIN)) UNIT_DIR=$(abspath $(BUILD)/tests) scripts/run-tests.sh

asan:
	@$(MAKE) --no-print-directory test BUILD=build/asan BIN=build/asan/bin/cronq OPT="-O1 -g" \
	    SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all"

# The integration tests whose timing allows it, with every cronq process
# under valgrind memcheck: a memory error or a definite leak exits 99, which
# no test expects; the reports stay in build/valgrind/. The load scenarios
# (contention, crash loop, restarts, network cut) are left out: they measure
# concurrency and timing that valgrind's serialised speed would distort.
VALGRIND_TESTS ?= t_cli t_migrate t_enqueue t_run t_schedules t_ops t_status t_tasks \
	t_reliability t_hostile t_passwords t_grants t_roles t_occurrences t_every t_history
valgrind: deps
	@$(MAKE) --no-print-directory $(BIN)
	@rm -rf build/valgrind && mkdir -p build/valgrind
	@CRONQ_EXTRA_DEPS=valgrind scripts/deps.sh
	@VALGRIND_LOGS=$(abspath build/valgrind) CRONQ_REAL=$(abspath $(BIN)) \
	    CRONQ=$(abspath scripts/valgrind-cronq) UNIT_DIR=/nonexistent \
	    TESTS="$(VALGRIND_TESTS)" scripts/run-tests.sh

# The reliability scenarios at full size (minutes): contention on 50,000
# jobs, 10 minutes of kill -9, database restarts, through PgBouncer too.
soak: deps
	@$(MAKE) --no-print-directory $(BIN) unit-bins
	@SOAK=1 TESTS=t_contention CRONQ=$(abspath $(BIN)) UNIT_DIR=/nonexistent scripts/run-tests.sh
	@SOAK=1 TESTS=t_crash CRONQ=$(abspath $(BIN)) UNIT_DIR=/nonexistent scripts/run-tests.sh
	@SOAK=1 TESTS=t_restart CRONQ=$(abspath $(BIN)) UNIT_DIR=/nonexistent scripts/run-tests.sh

# Break each guarantee of tests/mutations in a scratch copy and check that a
# test fails: "N killed, N survived". Minutes; not part of `make test`.
mutate: deps
	@scripts/mutate.sh

# sql/schema.sql, the schema after every migration as pg_dump prints it:
# regenerate it with each new migration (t_sql fails until it is).
schema: deps $(BIN)
	@CRONQ=$(abspath $(BIN)) scripts/schema-dump.sh

bench: deps $(BIN)
	@CRONQ=$(abspath $(BIN)) scripts/bench.sh

demo: deps $(BIN)
	@CRONQ=$(abspath $(BIN)) scripts/demo.sh

demo-stop:
	@scripts/demo.sh stop

# Fuzz targets: every tests/fuzz/fuzz_NAME.c, built with clang's libFuzzer and
# run FUZZ_SECONDS each over its corpus in tests/fuzz/corpus/NAME.
FUZZ_SECONDS ?= 60
FUZZ_SRC := $(sort $(wildcard tests/fuzz/fuzz_*.c))
fuzz: deps $(BUILD)/sql_embed.c
	@scripts/fuzz.sh $(FUZZ_SECONDS) $(FUZZ_SRC)

# What `make install` writes, and `make uninstall` removes. The SQL is
# compiled into the binary; the copies are for DBAs to read. The unit files
# name the installed binary (@bindir@ in cronq.service.in); nothing is
# enabled: the timer needs a configured database first.
MAN_PAGES := cronq.1 $(wildcard cronq.[2-8])
DOC_FILES := README.md LICENSE
DOC_PAGES := $(sort $(wildcard docs/*.md))
EXAMPLES  := crontab.example
SQL_FILES := $(SQL_SRC) sql/schema.sql
UNITS     := cronq.service cronq.timer

install: $(BIN)
	install -d $(DESTDIR)$(bindir) $(DESTDIR)$(datadir)/cronq/sql/statements \
	    $(DESTDIR)$(docdir)/docs $(DESTDIR)$(docdir)/examples $(DESTDIR)$(systemdunitdir)
	install -m 755 $(BIN) $(DESTDIR)$(bindir)/cronq
	for m in $(MAN_PAGES); do \
	    install -d $(DESTDIR)$(mandir)/man$${m##*.} && install -m 644 $$m $(DESTDIR)$(mandir)/man$${m##*.}/ || exit 1; \
	done
	install -m 644 $(SQL_FILES) $(DESTDIR)$(datadir)/cronq/sql/
	install -m 644 $(STMT_SRC) $(DESTDIR)$(datadir)/cronq/sql/statements/
	install -m 644 $(DOC_FILES) $(DESTDIR)$(docdir)/
	install -m 644 $(DOC_PAGES) $(DESTDIR)$(docdir)/docs/
	install -m 644 $(EXAMPLES) $(DESTDIR)$(docdir)/examples/
	sed 's|@bindir@|$(bindir)|g' scripts/systemd/cronq.service.in > $(DESTDIR)$(systemdunitdir)/cronq.service
	chmod 644 $(DESTDIR)$(systemdunitdir)/cronq.service
	install -m 644 scripts/systemd/cronq.timer $(DESTDIR)$(systemdunitdir)/

# Exactly what install wrote, then the directories that are cronq's own
# (bin/, man1/, man7/ and the unit directory are shared: left in place).
uninstall:
	rm -f $(DESTDIR)$(bindir)/cronq
	for m in $(MAN_PAGES); do rm -f $(DESTDIR)$(mandir)/man$${m##*.}/$$m; done
	rm -f $(addprefix $(DESTDIR)$(datadir)/cronq/sql/,$(notdir $(SQL_FILES)))
	rm -f $(addprefix $(DESTDIR)$(datadir)/cronq/sql/statements/,$(notdir $(STMT_SRC)))
	rm -f $(addprefix $(DESTDIR)$(docdir)/,$(DOC_FILES))
	rm -f $(addprefix $(DESTDIR)$(docdir)/docs/,$(notdir $(DOC_PAGES)))
	rm -f $(addprefix $(DESTDIR)$(docdir)/examples/,$(EXAMPLES))
	rm -f $(addprefix $(DESTDIR)$(systemdunitdir)/,$(UNITS))
	-rmdir $(DESTDIR)$(datadir)/cronq/sql/statements $(DESTDIR)$(datadir)/cronq/sql $(DESTDIR)$(datadir)/cronq \
	    $(DESTDIR)$(docdir)/docs $(DESTDIR)$(docdir)/examples $(DESTDIR)$(docdir)

# Build the Debian package in a scratch copy, lintian it, install it, check
# what it installed and remove it (as root; installs what it needs).
deb-check:
	@scripts/deb-check.sh

clean:
	rm -rf build bin

-include $(shell find build -name '*.d' 2>/dev/null)
