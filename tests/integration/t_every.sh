#!/usr/bin/env bash
# every: interval schedules (@every, --anchor), deterministic spread
# (--spread), `schedule next NAME` with pauses, `schedule show`'s next fire
# times, the SQL side (cronq.schedule, cron_error, the guard's checks),
# host-dependent zones refused, and backfill --schedule of an @every.
. "$(dirname "$0")/lib.sh"

# FNV-1a 64 of the name mod the spread, worked out apart from the C:
# every-spread in 1h: 748 s; sp7 in 5m: 203 s; sql-anch in 10m: 498 s.

# No database needed for an expression.
CRONQ_DATABASE_URL="host=/nonexistent" cronq schedule next '@every 90m' --from 2026-03-07T22:00:00Z --count 3
expect "next @every 90m: epoch multiples across midnight" 0 \
    $'2026-03-07T22:30:00Z\n2026-03-08T00:00:00Z\n2026-03-08T01:30:00Z' ""
cronq schedule next '@every 90m' --anchor 2026-03-01T00:20:00Z --from 2026-03-07T22:00:00Z --count 3
expect "next @every 90m --anchor" 0 $'2026-03-07T22:50:00Z\n2026-03-08T00:20:00Z\n2026-03-08T01:50:00Z' ""
cronq schedule next '@every 7m' --tz America/New_York --from 2026-03-08T06:55:00Z --count 3
expect "next @every 7m across New York's spring forward: instants" 0 \
    $'2026-03-08T06:59:00Z\n2026-03-08T07:06:00Z\n2026-03-08T07:13:00Z' ""
cronq schedule next '@every 30s'
expect "next @every 30s refused" 65 "" 'cronq: error: invalid cron expression "@every 30s": @every: 30s is shorter than 1 minute'
cronq schedule next '@every'
expect "next @every without a duration" 65 "" 'cronq: error: invalid cron expression "@every": @every needs a duration, such as @every 90m'
cronq schedule next '0 * * * *' --anchor 2026-01-01T00:00:00Z
expect "next: an anchor on a cron expression" 65 "" 'cronq: error: an anchor applies only to @every expressions, not to "0 * * * *"'
for z in localtime posixrules Factory posix/Europe/Paris right/UTC; do
    cronq schedule next '@every 1h' --tz "$z"
    expect "next --tz $z refused" 65 "" "cronq: error: time zone \"$z\" depends on the host: use an IANA name such as Europe/Paris"
done

migrate
count() { q "select count(*) from cronq.schedules where name <> 'cronq-purge'"; }

# Refused before anything is written.
cronq schedule add lt '@every 1h' noop --tz localtime
expect "add --tz localtime" 65 "" 'cronq: error: time zone "localtime" depends on the host: use an IANA name such as Europe/Paris'
cronq schedule add sp '@every 1h' noop --spread 25h
expect "add --spread over a day" 65 "" 'cronq: error: invalid spread: must be at most 1 day'
cronq schedule add sp '@every 1h' noop --spread 1500ms
expect "add --spread in part seconds" 65 "" 'cronq: error: invalid spread: must be a whole number of seconds'
cronq schedule add an '0 * * * *' noop --anchor 2026-01-01T00:00:00Z
expect "add --anchor on a cron expression" 65 "" 'cronq: error: an anchor applies only to @every expressions, not to "0 * * * *"'
cronq schedule add e '@every 59s' noop
expect "add @every 59s" 65 "" 'cronq: error: invalid cron expression "@every 59s": @every: 59s is shorter than 1 minute'
eq "nothing written by the refused adds" 0 "$(count)"
out=$("$PSQL" -XAtq -c "insert into cronq.schedules (name, cron, timezone, type) values ('z', '@every 1h', 'posix/Europe/Paris', 'noop')" 2>&1)
match "the database refuses posix/ zones too" 'schedule "z": time zone "posix/Europe/Paris" depends on the host' "$out"
out=$("$PSQL" -XAtq -c "insert into cronq.schedules (name, cron, timezone, type) values ('z', '@every 1h', 'localtime', 'noop')" 2>&1)
match "and localtime" 'schedule "z": time zone "localtime" depends on the host' "$out"

# An anchored @every: next_run_at on its grid.
cronq schedule add an '@every 90m' noop --anchor 2026-01-01T00:10:00Z
expect "add @every 90m --anchor" 0 "" ""
eq "anchor stored, next_run_at on the anchor's grid, in the future" "2026-01-01T00:10:00Z|0|t" \
    "$(q "select to_char(anchor at time zone 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), extract(epoch from next_run_at - anchor)::bigint % 5400, next_run_at > now() from cronq.schedules where name = 'an'")"
# --anchor reads a TIME as every command does: PostgreSQL's forms, no zone is UTC.
cronq schedule add an-pg '@every 90m' noop --anchor 'Jan 1 2026 00:10'
expect "add --anchor in a PostgreSQL form" 0 "" ""
eq "that anchor stored as UTC" "2026-01-01T00:10:00Z|0" \
    "$(q "select to_char(anchor at time zone 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), extract(epoch from next_run_at - anchor)::bigint % 5400 from cronq.schedules where name = 'an-pg'")"
cronq schedule add an-bad '@every 1h' noop --anchor 'soonish'
expect "add: a bad --anchor" 65 "" 'cronq: error: invalid value "soonish" for --anchor: invalid input syntax for type timestamp with time zone: "soonish"'
cronq schedule remove an-pg
expect "remove an-pg" 0 "" ""

# Spread: next_run_at carries the name's offset; a second process agrees.
cronq schedule add every-spread '@every 1h' noop --spread 1h --tz Europe/Paris --catchup all
expect "add --spread 1h" 0 "" ""
eq "next_run_at is the spread instant (748 s past the hour)" "748|01:00:00" \
    "$(q "select extract(epoch from next_run_at)::bigint % 3600, spread from cronq.schedules where name = 'every-spread'")"
cronq schedule next every-spread --count 3
first=$(q "select to_char(next_run_at at time zone 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') from cronq.schedules where name = 'every-spread'")
eq "schedule next NAME: the stored next run first" "$first" "$(printf '%s\n' "$OUT" | head -n 1)"
match "schedule next NAME: three times at :12:28" '^([0-9-]+T[0-9]{2}:12:28Z'$'\n''?){3}$' "$OUT"
eq "schedule next NAME: exit 0, quiet" "0|" "$RC|$ERR"
cronq schedule next every-spread --tz UTC
expect "schedule next NAME --tz" 64 "" 'cronq: error: --tz, --anchor and --from apply to an expression, not to schedule "every-spread"'
cronq schedule next no-such-schedule
expect "schedule next of a missing schedule" 65 "" 'cronq: error: schedule "no-such-schedule" does not exist'

# show: the next three in UTC and on the zone's clock.
cronq schedule show every-spread
eq "show: three next fire times" 3 "$(printf '%s\n' "$OUT" | grep -c '^next_fire_time ')"
match "show: UTC and Paris time" 'next_fire_time +[0-9-]+T[0-9]{2}:12:28Z +[0-9-]+T[0-9]{2}:12:28\+0[12]:00' "$OUT"
cronq schedule show every-spread --json
eq "show --json: next_fire_times" "3|$first" \
    "$(q "select json_array_length(j->'next_fire_times') || '|' || (j->'next_fire_times'->0->>'utc') from (select '$OUT'::json j) x")"

# A pause: the fire times inside it are left out; for good, none.
until=$(q "select to_char((next_run_at + interval '90 minutes') at time zone 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') from cronq.schedules where name = 'every-spread'")
"$CRONQ" pause schedule:every-spread --until "$until" >/dev/null
cronq schedule next every-spread --count 2
eq "schedule next NAME skips the pause" \
    "$(q "select string_agg(to_char((next_run_at + i * interval '1 hour') at time zone 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), E'\n' order by i) from cronq.schedules, generate_series(2, 3) i where name = 'every-spread'")" "$OUT"
"$CRONQ" pause schedule:every-spread >/dev/null
cronq schedule next every-spread
expect "paused for good: no fire times" 0 "" ""
cronq schedule next every-spread -v
expect "paused for good, -v: why there are none" 0 "" \
    "cronq: info: schedule \"every-spread\" is paused until resumed: it has no fire time until then"
"$CRONQ" resume schedule:every-spread >/dev/null
# Disabled: it will not fire, so no fire times either (and, to a person, why).
"$CRONQ" schedule disable every-spread >/dev/null
cronq schedule next every-spread
expect "disabled: no fire times" 0 "" ""
cronq schedule next every-spread -v
expect "disabled, -v: why there are none" 0 "" \
    "cronq: info: schedule \"every-spread\" is disabled: it has no fire time until it is enabled"
cronq schedule show every-spread --json
eq "show --json of a disabled schedule: no next_fire_times" 0 \
    "$(q "select json_array_length(j->'next_fire_times') from (select '$OUT'::json j) x")"
"$CRONQ" schedule enable every-spread >/dev/null

# Catch-up under 4 runners: @every 7m (catchup all) and the spread schedule,
# both down for about an hour; every occurrence once, with its key.
# clear_of_every SECONDS: once no occurrence of e7 (multiples of 7 minutes)
# or sp7 (203 s past them) is due within SECONDS, so that the expected
# occurrences counted up to now are those the runners saw.
clear_of_every() {
    poll 440 is_true "select s not between 420 - $1 and 419 and s not between 203 - $1 and 202
                      from (select floor(extract(epoch from clock_timestamp()))::bigint % 420 as s) x" \
        || fail "the clock never left the end of a 7-minute period"
}
cronq schedule add e7 '@every 7m' noop --catchup all
cronq schedule add sp7 '@every 7m' noop --catchup all --spread 5m
clear_of_every 40
start=$(q "select to_timestamp((floor(extract(epoch from now()))::bigint / 420 - 9) * 420)")
q "update cronq.schedules set next_run_at = '$start' where name = 'e7'"
q "update cronq.schedules set next_run_at = '$start'::timestamptz + interval '203 seconds' - interval '7 minutes' where name = 'sp7'"
q "update cronq.schedules set next_run_at = now() - interval '3 hours' where name = 'every-spread'"
for i in $(seq 1 4); do "$CRONQ" run --queue none-such >"$T_DIR/r$i.out" 2>&1 & done
wait
eq "4 runners: quiet" "" "$(cat "$T_DIR"/r*.out)"
keys() {
    q "select string_agg(idempotency_key, ',' order by scheduled_for) from cronq.jobs where schedule = '$1'"
}
want=$(q "select string_agg('schedule:e7:' || to_char(t at time zone 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), ',' order by t)
          from generate_series('$start'::timestamptz, now(), interval '7 minutes') t")
eq "@every 7m: exactly the missed occurrences, each once, with their keys" "$want" "$(keys e7)"
eq "@every 7m: 10 of them" 10 "$(q "select count(*) from cronq.jobs where schedule = 'e7'")"
want=$(q "select string_agg('schedule:sp7:' || to_char(t at time zone 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), ',' order by t)
          from generate_series('$start'::timestamptz + interval '203 seconds' - interval '7 minutes', now(), interval '7 minutes') t")
eq "@every 7m --spread 5m: its occurrences at +203 s, keys and all" "$want" "$(keys sp7)"
eq "spread jobs: scheduled_for and run_at are the key's time" 0 \
    "$(q "select count(*) from cronq.jobs where schedule in ('sp7', 'every-spread') and (run_at <> scheduled_for or idempotency_key <> 'schedule:' || schedule || ':' || to_char(scheduled_for at time zone 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'))")"
eq "every-spread: its 3 missed hours, each 748 s past the hour" "3|748|748" \
    "$(q "select count(*) || '|' || min(m) || '|' || max(m) from (select extract(epoch from scheduled_for)::bigint % 3600 m from cronq.jobs where schedule = 'every-spread') x")"
eq "all moved on to their next spread instant" "0|203|748" \
    "$(q "select count(*) filter (where next_run_at <= now()), max(extract(epoch from next_run_at)::bigint % 420) filter (where name = 'sp7'), max(extract(epoch from next_run_at)::bigint % 3600) filter (where name = 'every-spread') from cronq.schedules where name in ('e7', 'sp7', 'every-spread')")"
"$CRONQ" run --queue none-such
eq "a second wave adds nothing" 13 "$(q "select count(*) from cronq.jobs where schedule in ('e7', 'every-spread')")"

# SQL: cronq.schedule with @every, an anchor and a spread; the rules hold.
eq "cronq.schedule('x', '@every 90m', ...)" sql-every "$(q "select cronq.schedule('sql-every', '@every 90m', 'noop')")"
eq "cronq.schedule with anchor and spread" sql-anch \
    "$(q "select cronq.schedule('sql-anch', '@every 90m', 'noop', anchor => '2026-01-01T00:10:00Z', spread => '10 minutes')")"
"$CRONQ" run --queue none-such
eq "planned by a wake: on the anchor's grid plus 498 s" "498|t" \
    "$(q "select extract(epoch from next_run_at - anchor)::bigint % 5400, next_run_at > now() from cronq.schedules where name = 'sql-anch'")"
eq "planned by a wake: @every 90m from the epoch" 0 \
    "$(q "select extract(epoch from next_run_at)::bigint % 5400 from cronq.schedules where name = 'sql-every'")"
out=$("$PSQL" -XAtq -c "select cronq.schedule('sql-30s', '@every 30s', 'noop')" 2>&1)
match "cronq.schedule refuses @every 30s" 'schedule "sql-30s": @every: 30s is shorter than 1 minute' "$out"
out=$("$PSQL" -XAtq -c "select cronq.schedule('sql-sp', '@every 1h', 'noop', spread => '2 days')" 2>&1)
match "cronq.schedule refuses a spread over a day" 'schedules_spread_check' "$out"
out=$("$PSQL" -XAtq -c "select cronq.schedule('sql-an', '0 * * * *', 'noop', anchor => now())" 2>&1)
match "cronq.schedule refuses an anchor on a cron expression" 'an anchor applies only to @every expressions' "$out"
eq "none of the refused was stored" 0 "$(q "select count(*) from cronq.schedules where name in ('sql-30s', 'sql-sp', 'sql-an')")"
q "select cronq.schedule('sql-anch', '0 * * * *', 'noop')" >/dev/null
eq "an @every turned cron expression drops its anchor, keeps its spread" "|00:10:00" \
    "$(q "select anchor, spread from cronq.schedules where name = 'sql-anch'")"
q "update cronq.schedules set next_run_at = timestamptz '2030-01-01 00:00:00+00' + make_interval(secs => cronq.fire_offset(name, spread)) where name = 'sql-every'"
q "update cronq.schedules set spread = '5 minutes' where name = 'sql-every'"
eq "a changed spread moves next_run_at to the same fire time's new offset" t \
    "$(q "select next_run_at = timestamptz '2030-01-01 00:00:00+00' + make_interval(secs => cronq.fire_offset('sql-every', '5 minutes')) from cronq.schedules where name = 'sql-every'")"
q "update cronq.schedules set cron = '@every 2h' where name = 'sql-every'"
eq "a changed expression is planned again (next_run_at null)" t "$(q "select next_run_at is null from cronq.schedules where name = 'sql-every'")"

# backfill --schedule: the anchored and the spread schedule's own instants.
q "delete from cronq.jobs"
cronq backfill --schedule an --from 2026-01-01T00:00:00Z --to 2026-01-01T06:00:00Z
eq "backfill of an anchored @every" "0|schedule:an:2026-01-01T00:10:00Z,schedule:an:2026-01-01T01:40:00Z,schedule:an:2026-01-01T03:10:00Z,schedule:an:2026-01-01T04:40:00Z" \
    "$RC|$(keys an)"
cronq backfill --schedule every-spread --from 2026-01-01T00:00:00Z --to 2026-01-01T03:00:00Z
eq "backfill of a spread @every" "0|schedule:every-spread:2026-01-01T00:12:28Z,schedule:every-spread:2026-01-01T01:12:28Z,schedule:every-spread:2026-01-01T02:12:28Z" \
    "$RC|$(keys every-spread)"

# Decimals and unit words (issue 23): the binary and the database accept and
# refuse the same "@every" texts, and the two sides read the same period.
for e in '@every 1.5h' '@every 1 hour 30 minutes' '@every 5mins' '@every 0.5d' '@every 90' \
         '@every 1.5 weeks' $'@every  2 Hours\t30\tmins ' '@every 1h 30m' \
         '@every 0.5 minutes' '@every 1.0005h' '@every 1h 30m x' '@every 1h1h' '@every 200 years' \
         '@every 1.5' '@every .5h' '@every 1.h' '@every 5 m s'; do
    CRONQ_DATABASE_URL="host=/nonexistent" cronq schedule next "$e" --count 1 --from 2026-01-01T00:00:00Z
    c=$([ "$RC" = 0 ] && echo ok || echo refused)
    s=$(q "select case when cronq.cron_error(\$e\$$e\$e\$) is null then 'ok' else 'refused' end")
    eq "\"$e\": the binary and cron_error agree" "$c" "$s"
done
eq "cronq.schedule('dec', '@every 1.5 hours', ...)" dec "$(q "select cronq.schedule('dec', '@every 1.5 hours', 'noop')")"
"$CRONQ" run --queue none-such
eq "planned by a wake: @every 1.5 hours from the epoch" 0 \
    "$(q "select extract(epoch from next_run_at)::bigint % 5400 from cronq.schedules where name = 'dec'")"

# cronq.fire_offset() (the database's, for a change of spread) is the C's
# offset: the worked-out values above, and other names, read back from
# `schedule next` (@every 1d from an anchor: the fire times are the
# anchor's, the offset what the instant adds).
eq "fire_offset in SQL: the worked-out values" "748|203|498|0|0" \
    "$(q "select cronq.fire_offset('every-spread', '1 hour') || '|' || cronq.fire_offset('sp7', '5 minutes') || '|' || cronq.fire_offset('sql-anch', '10 minutes') || '|' || cronq.fire_offset('sp7', null) || '|' || cronq.fire_offset('sp7', '0')")"
for name in Nightly_Report.v2 a:b@c-d Z; do
    cronq schedule add "$name" '@every 1d' noop --spread 1d --anchor 2020-01-01T00:00:00Z --catchup skip
    cronq schedule next "$name" --count 1
    c_off=$(( $(date -u -d "$OUT" +%s) % 86400 ))
    eq "fire_offset in SQL agrees with the C: $name" "$c_off" "$(q "select cronq.fire_offset('$name', '1 day')")"
done

# Changing the spread moves the next occurrence; it does not make one.
# An @every 1d whose fire time a minute ago was enqueued: given a spread of
# a day (its offset is more than a minute), that fire time must not be due
# again at its new offset (planned from now, it was, under another key),
# and the next one is the next day's at the new offset. Back to no spread,
# the same fire time again.
anchor=$(date -u -d '-1 min' +%Y-%m-%dT%H:%M:00Z)
cronq schedule add respread '@every 1d' noop --anchor "$anchor" --overlap allow --catchup latest
expect "add respread" 0 "" ""
q "update cronq.schedules set next_run_at = '$anchor' where name = 'respread'"
"$CRONQ" run --queue none-such 2>/dev/null
eq "respread: its fire time a minute ago enqueued" "1" "$(q "select count(*) from cronq.jobs where schedule = 'respread'")"
off=$(q "select cronq.fire_offset('respread', '1 day')")
check "respread: its offset under a spread of a day is over two minutes ($off s)" [ "$off" -gt 120 ]
q "update cronq.schedules set spread = '1 day' where name = 'respread'"
eq "respread: the spread changed, next_run_at is the next fire time at the new offset" "t" \
    "$(q "select next_run_at = timestamptz '$anchor' + interval '1 day' + make_interval(secs => $off) from cronq.schedules where name = 'respread'")"
"$CRONQ" run --queue none-such 2>/dev/null
eq "respread: a wake after the change enqueues nothing, decides nothing" "1|1" \
    "$(q "select (select count(*) from cronq.jobs where schedule = 'respread') || '|' || (select count(*) from cronq.occurrences where schedule = 'respread')")"
cronq schedule add respread '@every 1d' noop --anchor "$anchor" --overlap allow --catchup latest --spread 0 --replace
expect "respread: --replace without the spread" 0 "" ""
eq "respread: back to no spread, the same next fire time" "t" \
    "$(q "select next_run_at = timestamptz '$anchor' + interval '1 day' from cronq.schedules where name = 'respread'")"
cronq schedule add respread '@every 12h' noop --anchor "$anchor" --overlap allow --catchup latest --replace
eq "respread: a new expression is planned from now" "t" \
    "$(q "select next_run_at = timestamptz '$anchor' + interval '12 hours' from cronq.schedules where name = 'respread'")"

# A spread changed together with the expression (one UPDATE, or --replace):
# the schedule is planned from the change, but after the fire time already
# decided. Planned from the change alone, the fire time a minute ago was
# due again at its new offset ($off s on), under another key (helper-80).
eq "respread: the fire time decided is kept on the schedule, without its offset" "t" \
    "$(q "select decided_through = timestamptz '$anchor' from cronq.schedules where name = 'respread'")"
q "update cronq.schedules set cron = '@every 1d', spread = '1 day' where name = 'respread'"
"$CRONQ" run --queue none-such 2>/dev/null
eq "respread: expression and spread changed together, the next day's fire time at the new offset" "true|1|1" \
    "$(q "select (next_run_at = timestamptz '$anchor' + interval '1 day' + make_interval(secs => $off)) || '|' || (select count(*) from cronq.jobs where schedule = 'respread') || '|' || (select count(*) from cronq.occurrences where schedule = 'respread') from cronq.schedules where name = 'respread'")"
# What is decided already is neither listed nor explained as to come.
cronq schedule next respread --count 1
eq "respread: schedule next lists the next day's fire time, not the one decided" \
    "$(q "select to_char((timestamptz '$anchor' + interval '1 day' + make_interval(secs => $off)) at time zone 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')")" "$OUT"
cronq why respread --at "$(q "select to_char((timestamptz '$anchor' + make_interval(secs => $off)) at time zone 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')")" --json
eq "respread: why the decided fire time's new instant will not run" "decided_before" \
    "$(python3 -c 'import json, sys; print(json.loads(sys.argv[1])["decision"])' "$OUT")"
cronq schedule add respread '@every 1d' noop --anchor "$anchor" --overlap allow --catchup latest --replace
cronq schedule add respread '@every 24h' noop --anchor "$anchor" --overlap allow --catchup latest --spread 1d --replace
expect "respread: --replace with another expression and a spread" 0 "" ""
eq "respread: planned from now, that is the fire time decided at its new offset: left to the wake" "t" \
    "$(q "select next_run_at is null from cronq.schedules where name = 'respread'")"
"$CRONQ" run --queue none-such 2>/dev/null
eq "respread: after --replace too, the next day's fire time at the new offset" "true|1|1" \
    "$(q "select (next_run_at = timestamptz '$anchor' + interval '1 day' + make_interval(secs => $off)) || '|' || (select count(*) from cronq.jobs where schedule = 'respread') || '|' || (select count(*) from cronq.occurrences where schedule = 'respread')  from cronq.schedules where name = 'respread'")"
# A next run moved back over fire times decided decides none of them again
# (the last one was decided again, "already enqueued", and the one before
# skipped by catch-up).
cronq schedule add respread '@every 24h' noop --anchor "$anchor" --overlap allow --catchup latest --replace
q "update cronq.schedules set next_run_at = timestamptz '$anchor' - interval '1 day' where name = 'respread'"
"$CRONQ" run --queue none-such 2>/dev/null
eq "respread: a next run moved back over the fire times decided: nothing decided again" "true|1|1" \
    "$(q "select (next_run_at = timestamptz '$anchor' + interval '1 day') || '|' || (select count(*) from cronq.jobs where schedule = 'respread') || '|' || (select count(*) from cronq.occurrences where schedule = 'respread')  from cronq.schedules where name = 'respread'")"

# What the wake keeps is the fire time, not its instant: an every-minute
# schedule with an offset of more than a minute, its latest instant
# decided, then its expression rewritten, runs again at the next minute's
# instant (with the instant kept, not for an offset's worth of minutes).
cronq schedule add sp-minute '* * * * *' noop --spread 1h
o=$(q "select cronq.fire_offset('sp-minute', '1 hour')")
check "sp-minute: its offset is over two minutes ($o s)" [ "$o" -gt 120 ]
q "update cronq.schedules set next_run_at = date_trunc('minute', now() - make_interval(secs => $o)) + make_interval(secs => $o) where name = 'sp-minute'"
fire=$(q "select next_run_at - make_interval(secs => $o) from cronq.schedules where name = 'sp-minute'")
"$CRONQ" run --queue none-such 2>/dev/null
eq "sp-minute: its instant decided, decided_through is its fire time" "1|true" \
    "$(q "select (select count(*) from cronq.jobs where schedule = 'sp-minute') || '|' || (decided_through = '$fire') from cronq.schedules where name = 'sp-minute'")"
q "update cronq.schedules set cron = '*/1 * * * *' where name = 'sp-minute'"
"$CRONQ" run --queue none-such 2>/dev/null
eq "sp-minute: rewritten, planned at the next minute's instant" "true|1" \
    "$(q "select (next_run_at <= now() + interval '61 seconds') || '|' || (select count(*) from cronq.jobs where schedule = 'sp-minute') from cronq.schedules where name = 'sp-minute'")"

# A next run moved back on an overdue schedule: the fire times after the
# newest decided are decided (catch-up all), none before it (helper-81: it
# was left unplanned, then planned from the write, and those were lost).
# The wake of three minutes ago is made by hand: the minutes since undone.
clear_of_minute_end 15
cronq schedule add ov '* * * * *' noop --catchup all --overlap allow
q "update cronq.schedules set next_run_at = date_trunc('minute', now()) - interval '5 minutes' where name = 'ov'"
"$CRONQ" run --queue none-such 2>/dev/null
q "delete from cronq.jobs where schedule = 'ov' and scheduled_for > date_trunc('minute', now()) - interval '3 minutes';
   delete from cronq.occurrences where schedule = 'ov' and fire_at > date_trunc('minute', now()) - interval '3 minutes';
   update cronq.schedules set decided_through = date_trunc('minute', now()) - interval '3 minutes',
       next_run_at = date_trunc('minute', now()) - interval '2 minutes' where name = 'ov'" >/dev/null
before=$(q "select count(*) from cronq.occurrences where schedule = 'ov'")
q "update cronq.schedules set next_run_at = date_trunc('minute', now()) - interval '10 minutes' where name = 'ov'"
"$CRONQ" run --queue none-such 2>/dev/null
eq "ov: moved back, the three minutes since the last decided are decided, none before twice" "$((before + 3))|$((before + 3))|3" \
    "$(q "select count(*) || '|' || count(distinct fire_at) || '|' || (select count(*) from cronq.jobs where schedule = 'ov' and scheduled_for > date_trunc('minute', now()) - interval '3 minutes') from cronq.occurrences where schedule = 'ov'")"

# A next run moved back, then the spread changed: the next run, shifted
# but still due, is left to the wake, which decides the fire times after
# the newest decided (helper-82: it was left unplanned, planned from the
# write, and those were lost). The wake of three minutes ago made by hand.
clear_of_minute_end 15
cronq schedule add ov2 '* * * * *' noop --catchup all --overlap allow --spread 1m
q "update cronq.schedules set next_run_at = date_trunc('minute', now()) - interval '5 minutes' + make_interval(secs => cronq.fire_offset(name, spread)) where name = 'ov2'"
"$CRONQ" run --queue none-such 2>/dev/null
q "delete from cronq.jobs where schedule = 'ov2' and scheduled_for - make_interval(secs => cronq.fire_offset('ov2', '1 minute')) > date_trunc('minute', now()) - interval '3 minutes';
   delete from cronq.occurrences where schedule = 'ov2' and fire_at - make_interval(secs => cronq.fire_offset('ov2', '1 minute')) > date_trunc('minute', now()) - interval '3 minutes';
   update cronq.schedules set decided_through = date_trunc('minute', now()) - interval '3 minutes',
       next_run_at = now() - interval '1 hour' where name = 'ov2'" >/dev/null
before=$(q "select count(*) from cronq.occurrences where schedule = 'ov2'")
last=$(q "select max(id) from cronq.jobs")
q "update cronq.schedules set spread = null where name = 'ov2'"
eq "ov2: moved back, then the spread changed: still planned" f "$(q "select next_run_at is null from cronq.schedules where name = 'ov2'")"
"$CRONQ" run --queue none-such 2>/dev/null
eq "ov2: the three fire times since the last decided are decided, at the new offset" "$((before + 3))|$((before + 3))|3" \
    "$(q "select count(*) || '|' || count(distinct fire_at) || '|' || (select count(*) from cronq.jobs where schedule = 'ov2' and id > $last) from cronq.occurrences where schedule = 'ov2'")"

# A rename changes the offset (the name is hashed): the next run moves to
# the same fire time at the new name's offset, as for the spread changed
# alone; the fire times whose new instant has passed are due (catch-up
# all). ren-from's offset in an hour is 2,293 s, ren-to's 4 s.
cronq schedule add ren-from '* * * * *' noop --spread 1h --catchup all --overlap allow
q "update cronq.schedules set next_run_at = date_trunc('minute', now() - interval '2293 seconds') + interval '2293 seconds' where name = 'ren-from'"
"$CRONQ" run --queue none-such 2>/dev/null
next=$(q "select next_run_at from cronq.schedules where name = 'ren-from'")
q "update cronq.schedules set name = 'ren-to' where name = 'ren-from'"
eq "rename: the next run moves to the same fire time's new offset" t \
    "$(q "select next_run_at = timestamptz '$next' - interval '2293 seconds' + interval '4 seconds' from cronq.schedules where name = 'ren-to'")"
"$CRONQ" run --queue none-such 2>/dev/null
eq "rename: the fire times come due at their new instants are decided (not passed over)" t \
    "$(q "select count(*) >= 30 and count(*) = count(distinct scheduled_for) from cronq.jobs where schedule = 'ren-to'")"

# A rename's move of the next run stays within the years 1 to 9999.
cronq schedule add far '0 0 * * *' noop --spread 1d
q "update cronq.schedules set next_run_at = '9999-12-31 23:00:00+00' where name = 'far'"
out=$("$PSQL" -XAtq -c "update cronq.schedules set name = 'far1' where name = 'far'" 2>&1)
eq "rename: a next run moved past year 9999 is refused" "1|far" \
    "$(grep -c 'not a time of years 1 to 9999' <<<"$out")|$(q "select name from cronq.schedules where name like 'far%'")"
q "delete from cronq.schedules where name = 'far'"

# decided_through is an instant of years 1 to 9999 (the wake makes it an
# epoch second: 'infinity' stopped every runner's wake).
out=$("$PSQL" -XAtq -c "update cronq.schedules set decided_through = 'infinity' where name = 'ov'" 2>&1)
match "decided_through: infinity refused" 'schedules_decided_through_check' "$out"

# The migration's first value is the next run or now, whichever is
# earlier (less the offset): a next run in the future, even one postponed
# by hand, holds back nothing after now (helper-81).
q "update cronq.schedules set decided_through = null, next_run_at = now() + interval '200 days' where name = 'ov'"
"$PSQL" -XAtq -v ON_ERROR_STOP=1 -f "$(dirname "$0")/../../sql/0041_decided_through.sql" >/dev/null 2>&1
eq "migration 41 again: decided_through of a postponed schedule is before now" t \
    "$(q "select decided_through < now() and decided_through > now() - interval '1 minute' from cronq.schedules where name = 'ov'")"
q "update cronq.schedules set next_run_at = date_trunc('minute', now()) + interval '1 minute' where name = 'ov'"
eq "and its next run brought back to the next minute stays there" t \
    "$(q "select next_run_at = date_trunc('minute', now()) + interval '1 minute' from cronq.schedules where name = 'ov'")"

# A schedule replaced with the same times keeps its plan, even an overdue
# one (planned from now, the fire time due was passed over).
q "update cronq.schedules set next_run_at = date_trunc('second', now()) - interval '10 minutes', decided_through = null where name = 'respread'"
planned=$(q "select next_run_at from cronq.schedules where name = 'respread'")
cronq schedule add respread '@every 24h' noop --anchor "$anchor" --overlap allow --catchup latest --queue other --replace
eq "respread: --replace of the same times keeps the next run, overdue as it is" "0|t|other" \
    "$RC|$(q "select next_run_at = '$planned' from cronq.schedules where name = 'respread'")|$(q "select queue from cronq.schedules where name = 'respread'")"

# why names a spread instant to the second on the zone's clock too.
cronq why every-spread --json
match "why: a spread instant's local time keeps its seconds" '"fire_local":"[0-9-]+ [0-9]{2}:12:28 Europe/Paris"' "$OUT"

done_testing
