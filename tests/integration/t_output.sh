#!/usr/bin/env bash
# Output for people and for programs (issue 23): colour on a terminal only
# (never with NO_COLOR, through a pipe or into --output's file), tables
# fitted to the terminal's width (or COLUMNS) without breaking the column
# alignment of a long unicode queue name, and --csv on every command that
# prints a table, parsed back by python's csv module and compared with the
# same command's JSON (a value holding a comma, quotes and a line break
# among them); --csv with --json is a usage error.
. "$(dirname "$0")/lib.sh"
unset COLUMNS NO_COLOR
migrate

# tty [ENV=V…] ARGS…: cronq's stdout through a pseudo-terminal of 60
# columns (script(1)); OUT holds it, CR-LF turned back into LF.
tty() {
    local envs=()
    while [[ "$1" == *=* ]]; do envs+=("$1"); shift; done
    OUT=$(env "${envs[@]}" script -qec "stty cols 60 2>/dev/null; $(printf '%q ' "$CRONQ" "$@")" /dev/null \
        </dev/null | tr -d '\r')
}
# COLS: python that lays a line out in terminal columns: cols(l) is its
# characters, a wide one (East Asian W/F) followed by a "\0" filler, a
# combining or format character (zero columns) left out.
COLS='import re, sys, unicodedata
def width(ch):
    if unicodedata.combining(ch) or unicodedata.category(ch) in ("Mn", "Me", "Cf"):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
def cols(l):
    return [c for ch in l for c in ([ch] + ["\0"] * (width(ch) - 1) if width(ch) else [])]
'
# widest: the widest line of stdin in terminal columns, SGR codes left out.
widest() {
    python3 -c "$COLS"'
text = re.sub(r"\x1b\[[0-9;]*m", "", sys.stdin.buffer.read().decode())
print(max((len(cols(l)) for l in text.split("\n")), default=0))'
}
has_sgr() { [[ "$1" == *$'\033['* ]]; }
no_sgr() { ! has_sgr "$1"; }
# plain: stdin without its SGR codes.
plain() { sed $'s/\033\\[[0-9;]*m//g'; }

# --- usage ---------------------------------------------------------------------
for cmd in status list "schedule list" "limit list"; do
    cronq $cmd --help
    match "$cmd --help mentions --csv" '--csv' "$OUT"
    label=$cmd; [ "$cmd" = "limit list" ] && label=limit
    cronq $cmd --csv --json
    expect "$cmd: --csv with --json" 64 "" "cronq: error: --json and --csv cannot be used together
Try \"cronq $label --help\" for more information."
done
cronq status --csv --html
expect "status: --csv with --html" 64 "" $'cronq: error: --html and --csv cannot be used together\nTry "cronq status --help" for more information.'
cronq schedule show x --csv
expect "schedule show takes no --csv" 64 "" $'cronq: error: unrecognized option "--csv"\nTry "cronq schedule show --help" for more information.'
cronq limit queue:x --max-running 2 --csv
expect "--csv goes with a listing" 64 "" $'cronq: error: --csv goes with cronq limit list or cronq limit KEY\nTry "cronq limit --help" for more information.'


# --- data ------------------------------------------------------------------------
# A queue name longer than a cell (48 characters) in letters of two bytes.
Q="ünïcødé-quèüé-wïth-à-nàmé-fàr-lòngér-thàn-ány-cèll-cän-höld"
ERRMSG=$'bad, "quoted" value\nsecond line'
ok=$("$CRONQ" enqueue noop --queue "$Q")
bad=$("$CRONQ" enqueue fail "$(python3 -c 'import json, sys; print(json.dumps({"permanent": True, "code": "boom", "message": sys.argv[1]}))' "$ERRMSG")" --queue "$Q")
"$CRONQ" enqueue noop --in 1h >/dev/null
"$CRONQ" run >/dev/null 2>&1
eq "setup: one succeeded, one dead, one queued, in the long queue" "succeeded|dead|queued" \
    "$(q "select string_agg(status, '|' order by id) from cronq.jobs")"
"$CRONQ" limit "queue:$Q" --max-running 3 >/dev/null
"$CRONQ" schedule add report-weekly '0 6 * * 1' noop --queue "$Q" >/dev/null

# --- colour ------------------------------------------------------------------------
for cmd in status list "schedule list" "limit list"; do
    tty $cmd
    check "$cmd: colour on a terminal" has_sgr "$OUT"
    tty NO_COLOR=1 $cmd
    check "$cmd: no colour with NO_COLOR=1" no_sgr "$OUT"
    tty NO_COLOR= $cmd
    check "$cmd: an empty NO_COLOR leaves colour on" has_sgr "$OUT"
    OUT=$("$CRONQ" $cmd | cat)
    check "$cmd: no colour through a pipe" no_sgr "$OUT"
    tty $cmd --csv
    check "$cmd --csv: no colour on a terminal" no_sgr "$OUT"
done
tty list
match "list: a dead job's status in red" $'\033\\[31mdead\033\\[0m' "$OUT"
match "list: the header in bold" $'\033\\[1mID\033\\[0m' "$OUT"
tty status --output "$T_DIR/status.txt"
check "status --output: no colour in the file" no_sgr "$(cat "$T_DIR/status.txt")"
tty status --json
check "status --json: no colour" no_sgr "$OUT"

# --- width -------------------------------------------------------------------------
for cmd in status list "schedule list" "limit list"; do
    tty $cmd
    eq "$cmd: no line wider than a 60-column terminal" 1 "$(( $(widest <<<"$OUT") <= 60 ))"
    OUT=$(COLUMNS=60 "$CRONQ" $cmd)
    eq "$cmd: no line wider than COLUMNS=60" 1 "$(( $(widest <<<"$OUT") <= 60 ))"
done
OUT=$("$CRONQ" list | cat)
eq "list through a pipe: whole lines (wider than 60)" 1 "$(( $(widest <<<"$OUT") > 60 ))"
OUT=$(COLUMNS=wide "$CRONQ" list)
eq "list: COLUMNS that is no number is ignored" 1 "$(( $(widest <<<"$OUT") > 60 ))"

# aligned NAME TEXT: each line's column NAME (found in the header) starts at
# the header's character position with a value, never one character off.
aligned() {
    python3 -c "$COLS"'
name, text = sys.argv[1], re.sub(r"\x1b\[[0-9;]*m", "", sys.argv[2])
lines = ["".join(cols(l)) for l in text.split("\n") if l]
at = lines[0].index(name)
bad = [l for l in lines[1:] if len(l) <= at or l[at] == " " or l[at - 1] != " "]
print("ok" if not bad else "misaligned: %r" % bad)' "$1" "$2"
}
OUT=$("$CRONQ" list)
eq "list: the long unicode queue keeps ATTEMPTS aligned" ok "$(aligned ATTEMPTS "$OUT")"
clipped=$(python3 -c 'import sys; print(sys.argv[1][:45] + "...")' "$Q")
check "list: the long queue clipped to 48 characters, not bytes" grep -qF -- "  $clipped  " <<<"$OUT"
tty list
eq "list, 60 columns: ATTEMPTS (abbreviated) aligned" ok "$(aligned ATT "$OUT")"
tty status
eq "status, 60 columns: the queues table aligned" ok "$(aligned LAG "$(plain <<<"$OUT" | sed -n '/^Queues/,/^$/p' | sed 1d)")"
tty status
eq "status, 60 columns: every count column of the jobs table kept, headers abbreviated" \
    "QUEUE TYPE QUEUED BLOCK. RUNNI. SUCCE. FAILED DEAD CANCE.|9 9 9" \
    "$(plain <<<"$OUT" | sed -n '/^Jobs/,/^$/p' | sed '1d;/^$/d' | awk 'NR == 1 { h = $0; next } { n = n (n ? " " : "") NF } END { print h "|" n }' | tr -s ' ')"
OUT=$("$CRONQ" schedule list)
eq "schedule list: NEXT RUN aligned" ok "$(aligned 'NEXT RUN' "$OUT")"

# --- CSV ---------------------------------------------------------------------------
# csv_vs_json CSV JSON EXPR…: the CSV's rows after its header against the
# JSON array: row i's field k is EXPR k over element i (e), as text. Prints
# the header, or what differs.
csv_vs_json() {
    python3 - "$@" <<'PY'
import csv, io, json, sys
csv_text, json_text, exprs = sys.argv[1], sys.argv[2], sys.argv[3:]
rows = list(csv.reader(io.StringIO(csv_text, newline="")))
data = json.loads(json_text)
def text(v):
    return "" if v is None else str(v).lower() if isinstance(v, bool) else str(v)
want = [[text(eval(x, {}, {"e": e})) for x in exprs] for e in data]
if rows[1:] != want:
    print("rows differ:\n %r\n %r" % (rows[1:], want))
elif not csv_text.endswith("\r\n") or csv_text.count("\r\n") < len(rows):
    print("records not ended by CRLF")
else:
    print(",".join(rows[0]))
PY
}
CSV=$("$CRONQ" list --csv; echo x); CSV=${CSV%x}
cronq list --json
eq "list --csv: the same jobs as --json, values whole" \
    "id,status,type,queue,attempts,run_at,finished_at,error" \
    "$(csv_vs_json "$CSV" "$OUT" 'e["id"]' 'e["status"]' 'e["type"]' 'e["queue"]' \
        'str(e["attempts"]) + "/" + str(e["max_attempts"])' 'e["run_at"]' 'e.get("finished_at")' \
        '(e["error_code"] + ": " if e.get("error_code") else "") + (e.get("last_error") or "")')"
eq "list --csv: the error with its comma, quotes and line break" "boom: $ERRMSG" \
    "$(python3 -c 'import csv, io, sys; print([r for r in csv.reader(io.StringIO(sys.argv[1], newline="")) if r[0] == sys.argv[2]][0][7])' "$CSV" "$bad")"
CSV=$("$CRONQ" status --csv; echo x); CSV=${CSV%x}
cronq status --json
eq "status --csv: the jobs table, as in --json" \
    "queue,type,queued,blocked,running,succeeded,failed,dead,cancelled" \
    "$(csv_vs_json "$CSV" "$(python3 -c 'import json, sys; print(json.dumps(json.loads(sys.argv[1])["types"]))' "$OUT")" \
        'e["queue"]' 'e["type"]' 'e.get("queued", 0)' 'e.get("blocked", 0)' 'e.get("running", 0)' \
        'e.get("succeeded", 0)' 'e.get("failed", 0)' 'e.get("dead", 0)' 'e.get("cancelled", 0)')"
CSV=$("$CRONQ" schedule list --csv; echo x); CSV=${CSV%x}
cronq schedule list --json
eq "schedule list --csv: as in --json" "name,cron,timezone,type,queue,enabled,next_run,last_job" \
    "$(csv_vs_json "$CSV" "$OUT" 'e["name"]' 'e["cron"]' 'e["timezone"]' 'e["type"]' 'e["queue"]' \
        '"yes" if e["enabled"] else "no"' 'e.get("next_run_at") or "-"' \
        'str(e["last_job_id"]) + " " + (e.get("last_job_status") or "-") if e.get("last_job_id") is not None else "-"')"
CSV=$("$CRONQ" limit list --csv; echo x); CSV=${CSV%x}
cronq limit list --json
eq "limit list --csv: as in --json" "key,max_running,running,rate,started,room,set_by" \
    "$(csv_vs_json "$CSV" "$OUT" 'e["key"]' 'e.get("max_running") if e.get("max_running") is not None else "-"' \
        'e["running"]' '"-"' '"-"' 'str(e["room"]) + (" (full)" if e.get("full") else "")' 'e.get("set_by") or ""')"
OUT=$(COLUMNS=20 "$CRONQ" list --csv)
match "--csv: no clipping, whatever the width" "$Q" "$OUT"

# --- wide characters -------------------------------------------------------------
# A queue named in CJK takes two columns a character: the table measures
# columns, so its rows stay aligned and within the terminal.
W="日本語のキューの名前はとても長いのでセルに収まらない"
"$CRONQ" enqueue noop --queue "$W" --in 1h >/dev/null
OUT=$("$CRONQ" list)
eq "list: a CJK queue name keeps ATTEMPTS aligned" ok "$(aligned ATTEMPTS "$OUT")"
tty list
eq "list, 60 columns: a CJK queue name, no line wider than the terminal" 1 "$(( $(widest <<<"$OUT") <= 60 ))"
eq "list, 60 columns: ATTEMPTS aligned after the CJK name" ok "$(aligned ATT "$OUT")"
tty status
eq "status, 60 columns: a CJK queue name, no line wider than the terminal" 1 "$(( $(widest <<<"$OUT") <= 60 ))"

# --- an author's text a terminal would obey or not show ----------------------------
# A job's error holding ESC sequences (OSC 52, a screen clear), a C1 CSI, a
# right-to-left override, a BOM, a line separator and a tag character
# (helper-78): no output for a person or a pipe carries them raw; --json
# still decodes to the very same text, and --csv shows them escaped.
"$PSQL" -XAtq -c "delete from cronq.jobs" >/dev/null
msg=$(python3 -c 'print("boom \x1b]52;c;eA==\x07\x1b[2J\u009b31m\u202eevil\ufeff\u2028line\U000e0041")')
id=$("$CRONQ" enqueue fail "$(python3 -c 'import json, sys; print(json.dumps({"message": sys.argv[1], "permanent": True}))' "$msg")" --queue hostile)
"$CRONQ" run --queue hostile 2>/dev/null
# raw BYTES: whether stdin holds one of the raw sequences (ESC, BEL, C1, RLO, BOM, LS, tag)
raw() { python3 -c '
import sys
b = sys.stdin.buffer.read()
bad = [s for s in (b"\x1b", b"\x07", b"\xc2\x9b", b"\xe2\x80\xae", b"\xef\xbb\xbf", b"\xe2\x80\xa8", b"\xf3\xa0\x81\x81") if s in b]
print("raw" if bad else "clean")'; }
# same_error JSONPATH: whether the JSON on stdin holds the message at that path, decoded
same_error() { python3 -c "import json, sys; j = json.loads(sys.stdin.read()); print($1 == sys.argv[1])" "$msg"; }
for args in "list --queue hostile --csv" "list --queue hostile" "show $id" "status" "status --csv"; do
    eq "$args: no raw control or invisible character" clean "$("$CRONQ" $args | raw)"
done
OUT=$("$CRONQ" list --queue hostile --json)
eq "list --json: clean, and the same text decoded" "clean|True" "$(raw <<<"$OUT")|$(same_error "j[0]['last_error']" <<<"$OUT")"
OUT=$("$CRONQ" show $id --json)
eq "show --json: clean, and the same text decoded" "clean|True" "$(raw <<<"$OUT")|$(same_error "j['last_error']" <<<"$OUT")"
OUT=$("$CRONQ" status --json)
eq "status --json: clean, and the same text decoded" "clean|True" "$(raw <<<"$OUT")|$(same_error "j['dead']['jobs'][0]['last_error']" <<<"$OUT")"
eq "list --csv: escaped as in the tables" t \
    "$("$CRONQ" list --queue hostile --csv | grep -qF 'boom \x1b]52;c;eA==\x07\x1b[2J\x9b31m\u202eevil\ufeff\u2028line\U000e0041' && echo t || echo f)"
"$PSQL" -XAtq -c "insert into cronq.schedules (name, cron, type, payload, created_by)
    values ('hostile', '0 0 * * *', 'fail', jsonb_build_object('message', \$m\$$msg\$m\$), 'postgres')" >/dev/null
eq "backfill --dry-run: the payload clean" clean \
    "$("$CRONQ" backfill --schedule hostile --from 2026-01-01T00:00:00Z --to 2026-01-01T00:00:00Z --dry-run | raw)"
"$PSQL" -XAtq -c "delete from cronq.schedules where name = 'hostile'; delete from cronq.jobs" >/dev/null

done_testing
