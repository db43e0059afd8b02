-- 0015_every_spread.sql — interval schedules, anchors and spread (issue 21).
--
-- "@every DURATION" (at least 1 minute, whole seconds) fires at the
-- multiples of DURATION counted from the Unix epoch, or from the
-- schedule's anchor (cronq.schedules.anchor; null: the epoch): real
-- instants, whatever the zone. cronq.cron_error() accepts it as
-- lib/time/cron.c does.
--
-- cronq.schedules.spread (null: none): each occurrence is due at its fire
-- time plus a fixed offset in [0, spread), FNV-1a 64 of the name mod the
-- spread in seconds (lib/sched/fire.c), at most a day. That instant is the
-- occurrence's everywhere: next_run_at, the job's run_at and
-- scheduled_for, and its key schedule:NAME:TIME.
--
-- Host-dependent zone names (localtime, posixrules, Factory, posix/...,
-- right/...) are refused, as tz_open refuses them.
--
-- A binary built before this schema reads neither column: it would
-- enqueue a spread schedule's occurrences at their unspread times, under
-- other keys, beside a new runner's (twice), and could not plan an @every.
-- compatible-from: 15
--
-- As 0006 asks: SQL-standard bodies where possible, search_path pinned on
-- the PL/pgSQL ones. Every statement may run again.

alter table cronq.schedules add column if not exists anchor timestamptz;
alter table cronq.schedules add column if not exists spread interval;
alter table cronq.schedules drop constraint if exists schedules_anchor_check;
alter table cronq.schedules add constraint schedules_anchor_check
    check (anchor between timestamptz '0001-01-01 00:00:00+00' and timestamptz '9999-12-31 23:59:59+00');
-- Whole seconds, up to a day (FIRE_SPREAD_MAX): what the runners can apply.
alter table cronq.schedules drop constraint if exists schedules_spread_check;
alter table cronq.schedules add constraint schedules_spread_check
    check (spread between interval '0' and interval '1 day'
           and extract(epoch from spread) = floor(extract(epoch from spread)));

-- Whether expr is an "@every" (well formed or not).
create or replace function cronq.is_every(expr text) returns boolean
language sql immutable parallel safe
return expr ~* '^[[:space:]]*@every([[:space:]]|$)';

-- As 0008's, and "@every DURATION", and split on whitespace alone (0008
-- split on "v" too: '0 0 1 nov *' read as 6 fields).
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
            if cardinality(f) < 2 then
                return '@every needs a duration, such as @every 90m';
            elsif cardinality(f) > 2 then
                return format('unexpected text after @every %s', left(f[2], 32));
            end if;
            -- lib/util/duration: units w d h m s ms, largest first, each once;
            -- a bare number is seconds. The C reads at most 63 characters.
            if length(f[2]) >= 64 then
                return format('@every: invalid duration "%s"', left(f[2], 32));
            elsif f[2] ~ '^[0-9]+$' then
                ms := f[2]::numeric * 1000;
            else
                m := regexp_match(f[2], '^(?:([0-9]+)w)?(?:([0-9]+)d)?(?:([0-9]+)h)?(?:([0-9]+)m)?(?:([0-9]+)s)?(?:([0-9]+)ms)?$');
                if m is null then
                    return format('@every: invalid duration "%s"', left(f[2], 32));
                end if;
                ms := coalesce(m[1]::numeric, 0) * 604800000 + coalesce(m[2]::numeric, 0) * 86400000
                    + coalesce(m[3]::numeric, 0) * 3600000 + coalesce(m[4]::numeric, 0) * 60000
                    + coalesce(m[5]::numeric, 0) * 1000 + coalesce(m[6]::numeric, 0);
            end if;
            if ms > 100::numeric * 366 * 86400000 then
                return format('@every: duration "%s" is too long', left(f[2], 32));
            elsif ms % 1000 <> 0 then
                return format('@every: %s is not a whole number of seconds', left(f[2], 32));
            elsif ms < 60000 then
                return format('@every: %s is shorter than 1 minute', left(f[2], 32));
            end if;
            return null;
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

-- As 0008's, and the names whose meaning is the host's refused by name.
create or replace function cronq.zone_error(zone text) returns text
language sql stable
begin atomic
    select case
        when zone = 'UTC' then null
        when zone in ('localtime', 'posixrules', 'Factory') or zone like 'posix/%' or zone like 'right/%'
            then format('time zone "%s" depends on the host: use an IANA name such as Europe/Paris',
                        left(zone, 64))
        when zone is null or zone !~ '^[A-Za-z0-9_+][A-Za-z0-9._+-]*(/[A-Za-z0-9_+][A-Za-z0-9._+-]*)*$'
             or not exists (select 1 from pg_timezone_names t where t.name = zone)
            then format('unrecognized time zone "%s"', left(zone, 64))
    end;
end;

-- As 0008's: a changed anchor or spread, like a changed expression or
-- zone, is checked and replanned (next_run_at null, unless the update
-- sets it); an anchor only on an @every.
create or replace function cronq.schedules_guard() returns trigger
language plpgsql set search_path = pg_catalog, pg_temp as $$
declare
    msg text;
begin
    if tg_op = 'INSERT' then
        if new.created_by is null or (new.created_by <> current_user::text
                                   and not cronq.may_act_for_others(tg_relid)) then
            new.created_by := current_user;
        end if;
    elsif not cronq.may_act_for_others(tg_relid) then
        if new.created_by is distinct from old.created_by then
            raise exception 'only a superuser may change created_by' using errcode = '42501';
        end if;
        -- Whoever changes what a schedule's jobs do becomes its author;
        -- changing when they run (an admin fixing a zone) does not make
        -- the author's SQL run as the editor.
        if (new.type, new.payload) is distinct from (old.type, old.payload) then
            new.created_by := current_user;
        end if;
    end if;
    if tg_op = 'INSERT' or (new.cron, new.timezone, new.anchor, new.spread)
                            is distinct from (old.cron, old.timezone, old.anchor, old.spread) then
        msg := coalesce(cronq.cron_error(new.cron), cronq.zone_error(new.timezone));
        if msg is null and new.anchor is not null and not cronq.is_every(new.cron) then
            msg := format('an anchor applies only to @every expressions, not to "%s"', left(new.cron, 64));
        end if;
        if msg is not null then
            raise exception 'schedule "%": %', new.name, msg using errcode = '22023';
        end if;
        if tg_op = 'UPDATE' and new.next_run_at is not distinct from old.next_run_at then
            new.next_run_at := null;
        end if;
    end if;
    if tg_op = 'INSERT' or new.type is distinct from old.type
       or new.payload is distinct from old.payload then
        perform cronq.check_task(new.type, new.payload, new.created_by);
    end if;
    new.updated_at := now();
    return new;
end
$$;

-- The guard fires on a change of the anchor or the spread too (0004's list
-- and the two).
drop trigger if exists schedules_guard on cronq.schedules;
create trigger schedules_guard
    before insert or update of name, cron, timezone, type, payload, queue, priority,
        max_attempts, timeout, enabled, catchup, overlap, created_by, created_at, updated_at,
        anchor, spread
    on cronq.schedules for each row execute function cronq.schedules_guard();

-- cronq.schedule gains anchor and spread at the end (after 0014's history
-- and keep).
drop function if exists cronq.schedule(text, text, text, jsonb, text, text, integer, integer,
                                       interval, boolean, text, text, interval);
drop function if exists cronq.schedule(text, text, text, jsonb, text, text, integer, integer,
                                       interval, boolean, text, text, interval, text, integer);

-- Create or replace the caller's schedule NAME, like pg_cron's
-- cron.schedule: as 0014's, and anchor and spread (NULL keeps the
-- schedule's; spread 0 removes it; an anchor is dropped when the
-- expression is no @every).
create or replace function cronq.schedule(
    name text,
    cron text,
    type text,
    payload jsonb default '{}',
    timezone text default null,
    queue text default null,
    priority integer default null,
    max_attempts integer default null,
    timeout interval default null,
    enabled boolean default null,
    catchup text default null,
    overlap text default null,
    start_deadline interval default null,
    history text default null,
    keep integer default null,
    anchor timestamptz default null,
    spread interval default null)
returns text
language plpgsql volatile set search_path = pg_catalog, pg_temp as $$
#variable_conflict use_variable
declare
    why text := cronq.history_error(history);
begin
    if why is not null then
        raise exception '%', why using errcode = '22023';
    end if;
    if keep < 1 or keep > 10000 then
        raise exception 'invalid keep %: must be 1 to 10000', keep using errcode = '22023';
    end if;
    begin
        insert into cronq.schedules as s (name, cron, timezone, type, payload, anchor, spread)
        values (name, cron, coalesce(timezone, 'UTC'), type, coalesce(payload, '{}'), anchor,
                nullif(spread, interval '0'));
    exception when unique_violation then
        -- An anchor belongs to an @every: a schedule that is one no more drops it.
        update cronq.schedules s
        set cron = schedule.cron, timezone = coalesce(schedule.timezone, s.timezone),
            type = schedule.type, payload = coalesce(schedule.payload, '{}'),
            anchor = case when cronq.is_every(schedule.cron)
                          then coalesce(schedule.anchor, s.anchor) end,
            spread = case when schedule.spread = interval '0' then null
                          else coalesce(schedule.spread, s.spread) end
        where s.name = schedule.name;
        if not found then
            raise exception 'schedule "%" belongs to another role', name using errcode = '42501',
                hint = 'Schedule names are shared by every role: choose another name.';
        end if;
    end;
    if coalesce(queue, priority::text, max_attempts::text, timeout::text, enabled::text,
                catchup, overlap, start_deadline::text, history, keep::text) is not null then
        update cronq.schedules s
        set queue = coalesce(schedule.queue, s.queue),
            priority = coalesce(schedule.priority, s.priority),
            max_attempts = coalesce(schedule.max_attempts, s.max_attempts),
            timeout = coalesce(schedule.timeout, s.timeout),
            enabled = coalesce(schedule.enabled, s.enabled),
            catchup = coalesce(schedule.catchup, s.catchup),
            overlap = coalesce(schedule.overlap, s.overlap),
            start_deadline = coalesce(schedule.start_deadline, s.start_deadline),
            history = coalesce(schedule.history, s.history),
            keep = coalesce(schedule.keep, s.keep)
        where s.name = schedule.name;
    end if;
    return name;
end
$$;
