#!/usr/bin/env bash
# status --html: a demo database (jobs in several states and queues, one
# named like markup; schedules with skipped fire times in the ledger; a
# two-hour gap in the wakes), its page written with --output, then loaded
# in a real headless browser (Debian's chromium, installed by
# scripts/deps-html.sh when missing): the rendered DOM has every section,
# one timeline per queue and schedule per window with its buckets and the
# counts this database implies, names as text and no script at all; a
# screenshot is a real PNG. The write is atomic: mode 0644, no temporary
# file left, the old page kept whole when generation fails, and a reader
# never sees a partial page while cron rewrites it.
. "$(dirname "$0")/lib.sh"

DOM="$T_ROOT/tests/integration/html_dom.py"
WEB="$T_DIR/www"
rm -rf "$WEB" && mkdir -p "$WEB"

cronq status --help
match "status --help lists --html" $'\n      --html  ' "$OUT"
cronq status --html --json
expect "status: --html with --json" 64 "" $'cronq: error: --json and --html cannot be used together\nTry "cronq status --help" for more information.'
cronq status --prometheus --html
expect "status: --html with --prometheus" 64 "" $'cronq: error: --prometheus and --html cannot be used together\nTry "cronq status --help" for more information.'

# ---- the demo database ----
migrate
Q=$'<script>alert("q")</script> & \'x\''
for i in 1 2 3; do "$CRONQ" enqueue noop >/dev/null; done
"$CRONQ" enqueue noop --queue "$Q" >/dev/null
"$CRONQ" enqueue fail '{"message":"</td><script>alert(1)</script> & \"bad\""}' --queue mail --max-attempts 1 >/dev/null
"$CRONQ" enqueue fail --queue mail --max-attempts 3 >/dev/null
"$CRONQ" schedule add every-minute '* * * * *' noop --queue "$Q" >/dev/null
"$CRONQ" schedule add hourly '0 * * * *' noop --queue mail >/dev/null
"$CRONQ" schedule run every-minute >/dev/null
# no fire time of the test's own minutes: the ledger and jobs are the test's
q "update cronq.schedules set next_run_at = now() + interval '1 day' where name in ('every-minute', 'hourly')"
"$CRONQ" run >/dev/null 2>&1
eq "demo: every job ran" "1|1|5" "$(q "select count(*) filter (where status = 'dead'), count(*) filter (where status = 'failed'),
    count(*) filter (where status = 'succeeded') from cronq.jobs")"

# History: default's jobs finished now, 5 hours and 3 days ago; skips in
# the ledger 5 hours, 30 hours and 2 days ago; the schedules three days
# old; a wake 8 days ago, then every minute from 26 hours to 3 hours ago
# and in the last hour (gaps: missed fire times, since the schedules exist).
q "create table base as select date_trunc('second', now()) as t" >/dev/null
q "create table moved as select id, (array[interval '5 hours', interval '3 days'])[row_number() over (order by id)] as ago
   from cronq.jobs where queue = 'default' order by id limit 2" >/dev/null
q "update cronq.jobs j set finished_at = b.t - m.ago from base b, moved m where j.id = m.id" >/dev/null
q "update cronq.job_runs r set finished_at = j.finished_at from cronq.jobs j, moved m
   where j.id = r.job_id and j.id = m.id" >/dev/null
q "update cronq.schedules set created_at = (select t from base) - interval '3 days' where name in ('every-minute', 'hourly')" >/dev/null
q "insert into cronq.occurrences (schedule, fire_at, decision)
   select s, b.t - ago, d from base b, (values ('every-minute', interval '5 hours', 'overlap'),
     ('every-minute', interval '30 hours', 'paused'), ('hourly', interval '2 days', 'catchup'),
     ('hourly', interval '10 minutes', 'enqueued')) x(s, ago, d)" >/dev/null
q "delete from cronq.wakes" >/dev/null
q "insert into cronq.wakes (worker, host, started_at, finished_at, exit_status)
   select 'demo', 'demo', b.t - interval '8 days', b.t - interval '8 days', 0 from base b
   union all
   select 'demo', 'demo', g, g, 0 from base b,
     generate_series(b.t - interval '26 hours', b.t - interval '3 hours', interval '1 minute') g
   union all
   select 'demo', 'demo', g, g, 0 from base b,
     generate_series(b.t - interval '1 hour', b.t, interval '1 minute') g" >/dev/null
# missed UNIT FROM TO: the fire times of an every-UNIT schedule after FROM
# ago and over two minutes before TO ago (the wake that ends the gap).
missed() {
    q "select count(*) from base b, generate_series(date_trunc('$1', b.t - interval '$2'),
         b.t, interval '1 $1') f
       where f > b.t - interval '$2' and f < b.t - interval '$3' - interval '2 minutes'"
}
# the last day's: from the wake at -3h to the one at -1h; the week's also
# from the schedules' creation (-3d; the gap began at -8d) to -26h
M=$(missed minute '3 hours' '1 hour')
H=$(missed hour '3 hours' '1 hour')
M7=$((M + $(missed minute '3 days' '26 hours')))
H7=$((H + $(missed hour '3 days' '26 hours')))
check "demo: the gaps miss fire times ($M, $H; $M7, $H7)" test "$M" -ge 117 -a "$H" -ge 1 \
    -a "$M7" -ge $((M + 2757)) -a "$H7" -ge $((H + 45))

# ---- the page, atomically ----
cronq status --html --output "$WEB/index.html"
expect "status --html --output" 0 "" ""
eq "the page's mode" 644 "$(stat -c %a "$WEB/index.html")"
eq "no temporary file left" "index.html" "$(ls -A "$WEB")"
cronq status --html
eq "without --output, the page on stdout" "<!DOCTYPE html>" "$(head -n 1 <<<"$OUT")"
eq "and the whole page" "</html>" "$(tail -n 1 <<<"$OUT")"

# Failures leave the old page whole and nothing beside it.
before=$(md5sum <"$WEB/index.html")
cronq status --html --output "$WEB/index.html" --db "host=$T_DIR/nosuchdir connect_timeout=2"
check "a database that cannot be reached: exit 69 (got $RC)" [ "$RC" = 69 ]
eq "the old page is kept whole" "$before" "$(md5sum <"$WEB/index.html")"
cronq status --html --output "$T_DIR/no/such/dir/index.html"
expect_rc_err "a directory that does not exist" 73 \
    "^cronq: error: could not create a temporary file for \"$T_DIR/no/such/dir/index.html\": No such file or directory$"
mkdir -p "$WEB/sub"
cronq status --html --output "$WEB/sub"
expect_rc_err "a directory in the way" 74 "^cronq: error: could not rename file \"$WEB/sub.tmp.[A-Za-z0-9]{6}\" to \"$WEB/sub\": Is a directory$"
eq "still no temporary file left" "index.html sub" "$(ls -A "$WEB" | tr '\n' ' ' | sed 's/ $//')"
rmdir "$WEB/sub"

# cron rewriting the page while a web server reads it: every read whole.
(for i in $(seq 1 25); do "$CRONQ" status --html --output "$WEB/index.html" || echo "write $i failed"; done) \
    >"$T_DIR/writer.out" 2>&1 &
writer=$!
partial=0 reads=0
while kill -0 "$writer" 2>/dev/null; do
    page=$(cat "$WEB/index.html")
    reads=$((reads + 1))
    [[ "$page" == "<!DOCTYPE html>"*"</html>" ]] || partial=$((partial + 1))
done
wait "$writer"
eq "the writer wrote every time" "" "$(cat "$T_DIR/writer.out")"
eq "no reader saw a partial page ($reads reads)" 0 "$partial"
eq "and no temporary file is left" "index.html" "$(ls -A "$WEB")"

# ---- in a real browser ----
if ! "$T_ROOT/scripts/deps-html.sh" >"$T_DIR/deps.out" 2>&1; then
    echo "  t_html: skipped the browser checks: chromium cannot be installed here: $(tail -n 1 "$T_DIR/deps.out")"
    done_testing; exit
fi
browse() {
    timeout 60 chromium --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
        --no-first-run --user-data-dir="$T_DIR/chromium" "$@" 2>>"$T_DIR/chromium.err"
}
browse --dump-dom "file://$WEB/index.html" >"$T_DIR/dom.html"
check "chromium rendered the page" [ -s "$T_DIR/dom.html" ]
python3 "$DOM" "$T_DIR/dom.html" >"$T_DIR/dom.txt" || fail "html_dom.py could not read the DOM"
eq "every section, in order" "summary queues queue-timelines jobs schedules schedule-timelines dead expired-leases paused limits" \
    "$(awk -F'\t' '$1 == "section" { printf "%s%s", sep, $2; sep = " " }' "$T_DIR/dom.txt")"
eq "no script, link, image, frame, object, embed or base element" "0 0 0 0 0 0 0" \
    "$(awk -F'\t' '$1 == "element" { printf "%s%s", sep, $3; sep = " " }' "$T_DIR/dom.txt")"
eq "nothing loaded from elsewhere" 0 "$(awk -F'\t' '$1 == "external" { print $2 }' "$T_DIR/dom.txt")"
eq "the queue's name is text, whole" "$Q|default|mail" \
    "$(awk -F'\t' '$1 == "rowname" && $2 == "queue" { printf "%s%s", sep, $3; sep = "|" }' "$T_DIR/dom.txt")"
eq "the dead job's error is text" 1 \
    "$(grep -cF '&lt;/td&gt;&lt;script&gt;alert(1)&lt;/script&gt; &amp; "bad"' "$T_DIR/dom.html")"

# timeline KIND NAME WINDOW: buckets, marks per kind and the label's totals.
timeline() {
    awk -F'\t' -v k="$1" -v n="$2" -v w="$3" '$1 == "timeline" && $2 == k && $3 == n && $4 == w {
        l = $10; sub(/^.*: /, "", l); print $5, $6, $7, $8, $9, "|", l }' "$T_DIR/dom.txt"
}
eq "one timeline per queue and schedule per window" 12 "$(grep -c '^timeline' "$T_DIR/dom.txt")"
# default: jobs finished now and 5 hours ago (24h: 2 buckets), and 3 days ago (7d)
eq "default, 24 hours" "24 2 0 0 0 | 2 ran, 0 failed, 0 skipped, 0 missed" "$(timeline queue default 24h)"
eq "default, 7 days" "28 2 0 0 0 | 3 ran, 0 failed, 0 skipped, 0 missed" "$(timeline queue default 7d)"
# mail: a dead job and a failed one (one attempt each); hourly's catch-up skip 2 days ago
mail24=$(timeline queue mail 24h)
eq "mail, 24 hours" "| 0 ran, 2 failed, 0 skipped, $H missed" "${mail24#* * * * * }"
match "mail, 24 hours: buckets and marks" "^24 0 1 0 [1-3] " "$mail24"
mail7=$(timeline queue mail 7d)
eq "mail, 7 days" "| 0 ran, 2 failed, 1 skipped, $H7 missed" "${mail7#* * * * * }"
# the markup queue: its own job and every-minute's run; overlap 5 hours ago, paused 30 hours ago
q24=$(timeline queue "$Q" 24h)
eq "$Q, 24 hours" "| 2 ran, 0 failed, 1 skipped, $M missed" "${q24#* * * * * }"
match "$Q, 24 hours: buckets and marks" "^24 1 0 1 [2-4] " "$q24"
q7=$(timeline queue "$Q" 7d)
eq "$Q, 7 days" "| 2 ran, 0 failed, 2 skipped, $M7 missed" "${q7#* * * * * }"
match "$Q, 7 days: buckets and marks (missed: -3d to -26h, -3h to -1h)" "^28 1 0 2 (9|10|11) " "$q7"
s24=$(timeline schedule every-minute 24h)
eq "every-minute, 24 hours" "| 1 ran, 0 failed, 1 skipped, $M missed" "${s24#* * * * * }"
s7=$(timeline schedule every-minute 7d)
eq "every-minute, 7 days" "| 1 ran, 0 failed, 2 skipped, $M7 missed" "${s7#* * * * * }"
h7=$(timeline schedule hourly 7d)
eq "hourly, 7 days" "| 0 ran, 0 failed, 1 skipped, $H7 missed" "${h7#* * * * * }"
eq "cronq-purge, 7 days" "28 0 0 0 0 | 0 ran, 0 failed, 0 skipped, 0 missed" "$(timeline schedule cronq-purge 7d)"

browse --window-size=1280,2400 --hide-scrollbars --screenshot="$T_DIR/page.png" "file://$WEB/index.html" >/dev/null
eq "the screenshot is a PNG" "89504e470d0a1a0a" "$(head -c 8 "$T_DIR/page.png" 2>/dev/null | od -An -tx1 | tr -d ' \n')"
size=$(stat -c %s "$T_DIR/page.png" 2>/dev/null || echo 0)
check "the screenshot is not blank ($size bytes)" [ "$size" -gt 20000 ]
eq "the screenshot is 1280 wide" 1280 "$(od -An -tu1 -j16 -N4 "$T_DIR/page.png" | awk '{ print $1 * 16777216 + $2 * 65536 + $3 * 256 + $4 }')"

done_testing
