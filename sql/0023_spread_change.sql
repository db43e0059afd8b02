-- 0023_spread_change.sql — changing a schedule's spread moves its
-- occurrences, it does not make new ones; refused schedules are found.
--
-- A schedule's occurrence is due at its fire time plus the offset its
-- spread gives (0015). A change of the expression, zone, anchor or spread
-- cleared next_run_at, and the next wake planned the schedule from now:
-- with the spread changed, the fire time just decided (run at its old
-- offset) could be due again at its new one, after now: one occurrence
-- enqueued twice (under a key naming the new instant); a smaller spread
-- could skip one, never decided. Now a change of the spread alone moves
-- next_run_at by the difference of the two offsets: the next occurrence
-- not yet decided keeps its fire time, and is due at its new offset (at
-- once, if that has passed). A change of anything else in when it fires
-- plans it from now, as before.
--
-- A schedule whose jobs are refused (its author lost the right to their
-- type, a payload the rules now refuse) never runs, and nothing said so
-- but the ledger: status and check now count the enabled schedules whose
-- newest refusal is later than their last job (index occurrences_refused:
-- refusals are rare, so it costs materialisation nothing else).
--
-- cronq.fire_offset(name, spread) is lib/sched/fire.c's fire_offset(),
-- FNV-1a 64 of the name's bytes (UTF-8) modulo the spread in seconds, in
-- numeric arithmetic modulo 2^64 (t_every checks the two agree).
--
-- Nothing a binary reads changes.
-- compatible-from: 10
--
-- As 0006 asks: search_path pinned on PL/pgSQL bodies. Every statement may
-- run again.

create or replace function cronq.fire_offset(p_name text, p_spread interval)
returns bigint
language plpgsql stable parallel safe
set search_path = pg_catalog, pg_temp as $$
declare
    b bytea;
    h numeric := 14695981039346656037;      -- 0xcbf29ce484222325
    s bigint := floor(extract(epoch from p_spread));
    lo integer;
begin
    if p_name is null or s is null or s <= 0 then
        return 0;
    end if;
    b := convert_to(p_name, 'UTF8');
    for i in 0 .. length(b) - 1 loop
        lo := (h % 256)::integer;           -- xor touches the low byte alone
        h := (h - lo + (lo # get_byte(b, i))) * 1099511628211 % 18446744073709551616;
    end loop;
    return (h % s)::bigint;
end
$$;

create index if not exists occurrences_refused on cronq.occurrences (schedule, decided_at)
    where decision = 'refused';

-- Why the schedule p_name's jobs are refused: its newest refusal after
-- p_since (its last job's enqueue; null: ever), or null. What status and
-- check ask of each enabled schedule; the caller sees the ledger rows
-- row-level security lets it see.
create or replace function cronq.schedule_refusal(p_name text, p_since timestamptz)
returns text
language sql stable
begin atomic
    select o.detail from cronq.occurrences o
    where o.schedule = p_name and o.decision = 'refused'
      and o.decided_at > coalesce(p_since, '-infinity'::timestamptz)
    order by o.decided_at desc limit 1;
end;

-- As 0017's, but a change of the spread alone moves next_run_at.
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
        if new.hooks is distinct from old.hooks and old.created_by <> current_user::text then
            raise exception 'schedule "%": only its author, %, may change its hooks', old.name,
                old.created_by using errcode = '42501';
        end if;
        -- Whoever changes what a schedule's jobs do becomes its author;
        -- changing when they run (an admin fixing a zone) does not make
        -- the author's SQL run as the editor.
        if (new.type, new.payload) is distinct from (old.type, old.payload)
           and old.created_by <> current_user::text then
            new.created_by := current_user;
            new.hooks := null;
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
            if (new.name, new.cron, new.timezone, new.anchor)
               is not distinct from (old.name, old.cron, old.timezone, old.anchor) then
                -- The spread alone: the next occurrence not yet decided
                -- is the same fire time, due at its new offset.
                new.next_run_at := old.next_run_at
                    - make_interval(secs => cronq.fire_offset(old.name, old.spread))
                    + make_interval(secs => cronq.fire_offset(new.name, new.spread));
            else
                new.next_run_at := null;
            end if;
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

