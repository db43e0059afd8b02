-- 0020_names_every.sql — printable queue names; "@every" reads every duration.
--
-- Queue names are printable text (SPEC 9): a name with a control character
-- (a newline, an escape, a C1 code) would split a table row or a log line
-- or drive the operator's terminal. Schedule names and limit and pause keys
-- were already checked; hooks' queues too (0017). A trigger, not a CHECK:
-- a CHECK would have to scan the jobs table, and an old row holding such a
-- name would then fail every update of it (its claim, its outcome), which
-- would lose the job. The trigger looks only at a name being written: each
-- new row, and an update that changes the queue. Its WHEN is evaluated by
-- the executor; the function is called only to refuse.
--
-- "@every D" takes what every other duration takes (lib/util/duration.c,
-- cronq.is_duration in 0019): decimals and unit words, "@every 1.5h",
-- "@every 1 hour 30 minutes" (the rest of the expression, whitespace runs
-- read as one space). lib/time/cron.c reads the same grammar.
--
-- A binary before this schema refuses the new "@every" forms on its side,
-- and writes names the trigger refuses only where it let them through:
-- compatible-from: 10
--
-- Every statement may run again.

create or replace function cronq.queue_refused() returns trigger
language plpgsql set search_path = pg_catalog, pg_temp as $$
begin
    raise exception 'queue name must be printable text without control characters'
        using errcode = 'check_violation';
end
$$;

create or replace trigger jobs_queue_name before insert on cronq.jobs
    for each row when (new.queue ~ '[[:cntrl:]]') execute function cronq.queue_refused();
create or replace trigger jobs_queue_rename before update of queue on cronq.jobs
    for each row when (new.queue is distinct from old.queue and new.queue ~ '[[:cntrl:]]')
    execute function cronq.queue_refused();
create or replace trigger schedules_queue_name before insert on cronq.schedules
    for each row when (new.queue ~ '[[:cntrl:]]') execute function cronq.queue_refused();
create or replace trigger schedules_queue_rename before update of queue on cronq.schedules
    for each row when (new.queue is distinct from old.queue and new.queue ~ '[[:cntrl:]]')
    execute function cronq.queue_refused();

-- The error of "@every" followed by the fields d (split on whitespace), as
-- lib/time/cron.c words it; null when they make a period of whole seconds,
-- 1 minute to 100 years. The C names the fault more precisely where the
-- duration cannot be read; here it is "invalid duration".
create or replace function cronq.every_error(d text[]) returns text
language plpgsql immutable set search_path = pg_catalog, pg_temp as $$
declare
    num constant text := '([0-9]+(?:\.[0-9]+)?)';
    t text := array_to_string(d, ' ');
    m text[];
    ms numeric;
begin
    if t is null or t = '' then
        return '@every needs a duration, such as @every 90m';
    end if;
    if length(t) >= 64 then
        return format('@every: invalid duration "%s"', left(t, 32));
    end if;
    m := regexp_match(t, '^(?:' || num || '|(?:' || num || ' ?(?:weeks|week|w))?'
                      || '(?: ?' || num || ' ?(?:days|day|d))?'
                      || '(?: ?' || num || ' ?(?:hours|hour|hrs|hr|h))?'
                      || '(?: ?' || num || ' ?(?:minutes|minute|mins|min|m))?'
                      || '(?: ?' || num || ' ?(?:seconds|second|secs|sec|s))?'
                      || '(?: ?' || num || ' ?(?:milliseconds|millisecond|msecs|msec|ms))?)$', 'i');
    if m is null then
        return format('@every: invalid duration "%s"', left(t, 32));
    end if;
    ms := coalesce(m[1]::numeric, 0) * 1000 + coalesce(m[2]::numeric, 0) * 604800000
        + coalesce(m[3]::numeric, 0) * 86400000 + coalesce(m[4]::numeric, 0) * 3600000
        + coalesce(m[5]::numeric, 0) * 60000 + coalesce(m[6]::numeric, 0) * 1000
        + coalesce(m[7]::numeric, 0);
    if ms > 100::numeric * 366 * 86400000 then
        return format('@every: duration "%s" is too long', left(t, 32));
    elsif ms % 1000 <> 0 then
        return format('@every: %s is not a whole number of seconds', left(t, 32));
    elsif ms < 60000 then
        return format('@every: %s is shorter than 1 minute', left(t, 32));
    end if;
    return null;
end
$$;

-- As 0015's, the duration of "@every" read by cronq.every_error.
create or replace function cronq.cron_error(expr text) returns text
language plpgsql immutable set search_path = pg_catalog, pg_temp as $$
declare
    names constant text[] := array['minute', 'hour', 'day of month', 'month', 'day of week'];
    lows constant int[] := array[0, 0, 1, 1, 0];
    highs constant int[] := array[59, 23, 31, 12, 7];
    months constant text[] := array['jan', 'feb', 'mar', 'apr', 'may', 'jun',
                                    'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
    wdays constant text[] := array['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];
    max_days constant int[] := array[31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    f text[];
    item text;
    m text[];
    lo int;
    hi int;
    step int;
    v text;
    bits bool[];
    mdays bool[] := array_fill(false, array[32]);
    mons bool[] := array_fill(false, array[13]);
    n int;
    ms numeric;
begin
    if expr is null then
        return 'empty expression';
    end if;
    -- Not E'\v': a string escape PostgreSQL lacks, read as "v" (0008 split
    -- "nov" and "@every" there). The regular expression's own \v is right.
    f := regexp_split_to_array(btrim(expr, E' \t\n\r\f' || chr(11)), '[ \t\n\r\v\f]+');
    if f = array[''] then
        return 'empty expression';
    end if;
    if left(f[1], 1) = '@' then
        if lower(f[1]) = '@every' then
            return cronq.every_error(f[2:]);
        end if;
        if lower(f[1]) in ('@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly') then
            return case when cardinality(f) > 1 then format('unexpected text after %s', lower(f[1])) end;
        end if;
        return case when lower(f[1]) = '@reboot' then '@reboot is not supported'
                    else format('unrecognized macro "%s"', left(f[1], 32)) end;
    end if;
    if cardinality(f) <> 5 then
        return format('expected 5 fields, got %s', cardinality(f));
    end if;
    for i in 1 .. 5 loop
        bits := array_fill(false, array[60]);
        if f[i] ~ '(^|,)(,|$)' then
            return format('%s: empty item in list', names[i]);
        end if;
        foreach item in array string_to_array(f[i], ',') loop
            m := regexp_match(item, '^(?:(\*)|([0-9A-Za-z]+)(?:-([0-9A-Za-z]+))?)(?:/([0-9]+))?$');
            if m is null then
                return format('%s: "%s" is not supported', names[i], left(item, 32));
            end if;
            if m[1] is not null then
                lo := lows[i];
                hi := highs[i];
            else
                lo := null;
                hi := null;
                foreach v in array array[m[2], m[3]] loop
                    continue when v is null;
                    if v ~ '^[0-9]+$' then
                        v := coalesce(nullif(ltrim(v, '0'), ''), '0');
                        n := case when length(v) > 4 then 10000 else v::int end;
                        if n < lows[i] or n > highs[i] then
                            return format('%s: %s is out of range %s-%s', names[i], left(v, 32), lows[i], highs[i]);
                        end if;
                    elsif i = 4 and lower(v) = any (months) then
                        n := array_position(months, lower(v));
                    elsif i = 5 and lower(v) = any (wdays) then
                        n := array_position(wdays, lower(v)) - 1;
                    else
                        return format('%s: "%s" is not a %s', names[i], left(v, 32),
                                      case when i in (4, 5) then 'valid name' else 'number' end);
                    end if;
                    if lo is null then lo := n; else hi := n; end if;
                end loop;
                if hi is null then
                    hi := case when m[4] is not null then highs[i] else lo end;
                elsif lo > hi then
                    return format('%s: range %s-%s is reversed', names[i], m[2], m[3]);
                end if;
            end if;
            step := 1;
            if m[4] is not null then
                v := coalesce(nullif(ltrim(m[4], '0'), ''), '0');
                step := case when length(v) > 4 then 10000 else v::int end;
                if step < 1 or step > highs[i] - lows[i] + 1 then
                    return format('%s: step %s is out of range 1-%s', names[i], left(m[4], 32),
                                  highs[i] - lows[i] + 1);
                end if;
            end if;
            for k in 0 .. (hi - lo) / step loop
                bits[lo + k * step + 1] := true;
            end loop;
        end loop;
        if i = 3 then mdays := bits[1:32]; end if;
        if i = 4 then mons := bits[1:13]; end if;
    end loop;
    -- Both day fields restricted: either matches, so some day always comes.
    if left(f[3], 1) = '*' or left(f[5], 1) = '*' then
        if not exists (select 1 from generate_series(1, 12) mo, generate_series(1, 31) d
                       where mons[mo + 1] and mdays[d + 1] and d <= max_days[mo]) then
            return format('cron expression "%s" never fires', left(expr, 64));
        end if;
    end if;
    return null;
end
$$;
