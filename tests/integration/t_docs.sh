#!/usr/bin/env bash
# The documentation in the repository agrees with itself and with the code:
# every relative link of README.md and docs/*.md resolves to a file of the
# repository (and its #anchor, if any, to a heading there), no link leaves
# the repository, no text points outside it; every command `cronq --help`
# lists, and every long option of `cronq COMMAND --help`, is in
# docs/commands.md and cronq.1; every function of schema cronq that
# sql/grants.sql grants is in docs/sql-api.md and cronq.7, every table in
# docs/schema.md and cronq.7; the SQL examples of docs/sql-api.md run.
. "$(dirname "$0")/lib.sh"

cd "$T_ROOT" || exit 1
docs=(README.md docs/*.md)

# --- links -------------------------------------------------------------
# One line per problem, from a small parser: fenced code blocks and inline
# code spans are not links; [text](target) and [label]: target are.
links_out=$(python3 - "$T_ROOT" "${docs[@]}" <<'EOF'
import os, re, sys
root = os.path.realpath(sys.argv[1])

def strip_code(text):
    out, fenced = [], False
    for line in text.split('\n'):
        if line.lstrip().startswith('```'):
            fenced = not fenced
            out.append('')
            continue
        out.append('' if fenced else re.sub(r'`[^`]*`', '', line))
    return '\n'.join(out)

def slugs(path):
    s, fenced = set(), False
    for line in open(path, encoding='utf-8'):
        if line.lstrip().startswith('```'):
            fenced = not fenced
        m = None if fenced else re.match(r'^#{1,6}\s+(.*?)\s*#*\s*$', line)
        if m:
            t = m.group(1).lower()
            t = re.sub(r'[^\w\- ]', '', t)
            s.add(t.replace(' ', '-'))
    return s

count = 0
for f in sys.argv[2:]:
    text = strip_code(open(os.path.join(root, f), encoding='utf-8').read())
    targets = re.findall(r'\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)', text)
    targets += re.findall(r'^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)', text, re.M)
    for t in targets:
        count += 1
        if re.match(r'^[a-zA-Z][a-zA-Z0-9+.-]*:', t) or t.startswith('//'):
            print(f'{f}: {t}: a link that leaves the repository')
            continue
        path, _, anchor = t.partition('#')
        dest = os.path.realpath(os.path.join(root, os.path.dirname(f), path)) if path \
            else os.path.join(root, f)
        if dest != root and not dest.startswith(root + os.sep):
            print(f'{f}: {t}: outside the repository')
        elif not os.path.isfile(dest):
            print(f'{f}: {t}: no such file')
        elif anchor and anchor not in slugs(dest):
            print(f'{f}: {t}: no heading #{anchor} in {os.path.relpath(dest, root)}')
print(f'checked {count} links')
EOF
)
while IFS= read -r problem; do
    [ -n "$problem" ] && fail "link: $problem"
done < <(grep -v '^checked ' <<<"$links_out")
match "the parser found the links" '^checked [1-9][0-9]* links$' "$(grep '^checked ' <<<"$links_out")"
for f in docs/commands.md docs/sql-api.md docs/schema.md docs/semantics.md docs/performance.md docs/architecture.md; do
    check "README links to $f" grep -qF "]($f)" README.md
done

outside=$(grep -nF -e '../shared' -e 'SPEC.md' "${docs[@]}" cronq.1 cronq.7 crontab.example debian/README.Debian)
eq "no text points outside the repository" "" "${outside//$'\n'/ | }"

# --- commands and options ----------------------------------------------
commands=$("$CRONQ" --help | awk '/^Commands:/ { on = 1; next } on && /^$/ { on = 0 } on { print $1 }')
check "cronq --help lists commands" [ "$(wc -w <<<"$commands")" -ge 10 ]
for c in $commands; do
    check "docs/commands.md has cronq $c in its synopsis" grep -qE "^\| \`cronq $c( |\`)" docs/commands.md
    check "cronq.1 has cronq $c" grep -qE "cronq( |\\\\ )$c( |\\\\|\"|$)" cronq.1
    for opt in $("$CRONQ" "$c" --help | grep -oE '(^|[ ,[])--[a-z][a-z-]*' | sed 's/^[ ,[]*//' | sort -u); do
        check "docs/commands.md has $c $opt" grep -qF -- "\`$opt" docs/commands.md
        check "cronq.1 has $c $opt" grep -qF -- "${opt//-/\\-}" cronq.1
    done
done

# --- the SQL API and the schema --------------------------------------------
granted=$(grep -oE 'cronq\.[a-z_]+\(' sql/grants.sql | tr -d '(' | sort -u)
check "sql/grants.sql grants functions" [ "$(wc -w <<<"$granted")" -ge 10 ]
for fn in $granted; do
    check "$fn is created by a migration" grep -qiE "create (or replace )?function $fn\(" sql/0*.sql
    check "docs/sql-api.md has $fn" grep -qF "\`$fn(" docs/sql-api.md
    check "cronq.7 has $fn" grep -qE "^\.B(R)? ${fn//./\\.}\(" cronq.7
done
tables=$(grep -oE '^CREATE (TABLE|VIEW) cronq\.[a-z_]+' sql/schema.sql | awk '{ print $3 }' | sort -u)
check "sql/schema.sql has tables" [ "$(wc -w <<<"$tables")" -ge 5 ]
for t in $tables; do
    check "docs/schema.md has $t" grep -qF "\`$t\`" docs/schema.md
    check "cronq.7 has $t" grep -qE "^\.B ${t//./\\.}$" cronq.7
done

# The examples, as they stand (job 4711 being one of the jobs made first).
cronq migrate
check "cronq migrate" [ "$RC" = 0 ]
q "select cronq.enqueue('noop') from generate_series(1, 42)" >/dev/null
awk '/^## Examples/ { on = 1 } /^## Roles/ { on = 0 } on' docs/sql-api.md |
    awk '/^```sql/ { c = 1; next } /^```/ { c = 0; next } c' | sed 's/4711/40/g' >"$T_DIR/examples.sql"
check "docs/sql-api.md has SQL examples" [ "$(grep -c 'select cronq\.' "$T_DIR/examples.sql")" -ge 10 ]
out=$("$PSQL" -XAtq -v ON_ERROR_STOP=1 -f "$T_DIR/examples.sql" 2>&1); rc=$?
check "the SQL examples of docs/sql-api.md run ($(grep -m1 ERROR <<<"$out"))" [ "$rc" = 0 ]

# --- the man pages render ----------------------------------------------
# (cronq.1's long function signatures under ROLES cannot be adjusted to
# the line: that warning alone is let pass there.)
if command -v groff >/dev/null; then
    eq "cronq.7 renders without groff warnings" "" "$(groff -man -Tutf8 -ww -z cronq.7 2>&1)"
    eq "cronq.1 renders without groff warnings" "" \
        "$(groff -man -Tutf8 -ww -z cronq.1 2>&1 | grep -v 'warning .*: cannot adjust line$')"
fi
check "cronq.1 refers to cronq(7)" grep -qx '.BR cronq (7),' cronq.1

done_testing
