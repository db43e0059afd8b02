--
-- PostgreSQL database dump
--

--
-- Name: cronq; Type: SCHEMA; Schema: -; Owner: postgres
--

CREATE SCHEMA cronq;

ALTER SCHEMA cronq OWNER TO postgres;

--
-- Name: jobs; Type: TABLE; Schema: cronq; Owner: postgres
--

CREATE TABLE cronq.jobs (
    id bigint NOT NULL,
    queue text NOT NULL,
    type text NOT NULL,
    payload jsonb NOT NULL,
    priority integer NOT NULL,
    run_at timestamp with time zone NOT NULL,
    status text DEFAULT 'queued'::text NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    max_attempts integer NOT NULL,
    timeout interval,
    idempotency_key text,
    locked_by text,
    locked_until timestamp with time zone,
    last_error text,
    error_code text,
    enqueued_by text NOT NULL,
    schedule text,
    scheduled_for timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    started_at timestamp with time zone,
    finished_at timestamp with time zone,
    cancel_requested boolean DEFAULT false NOT NULL,
    limit_key text,
    expires_at timestamp with time zone,
    unique_key text,
    history text DEFAULT 'all'::text NOT NULL,
    hooks jsonb,
    depends_on bigint[],
    dependants bigint[],
    waiting_for integer,
    result jsonb,
    hook_of bigint,
    earlier_attempts bigint,
    occurrence_checked boolean,
    CONSTRAINT jobs_attempts_check CHECK ((attempts >= 0)),
    CONSTRAINT jobs_earlier_attempts_check CHECK (((earlier_attempts >= 0) AND (earlier_attempts <= '1000000000000'::bigint))),
    CONSTRAINT jobs_history_check CHECK ((history = ANY (ARRAY['all'::text, 'errors'::text]))),
    CONSTRAINT jobs_idempotency_key_check CHECK (((idempotency_key <> ''::text) AND (length(idempotency_key) <= 1000))),
    CONSTRAINT jobs_max_attempts_check CHECK (((max_attempts >= 1) AND (max_attempts <= 1000))),
    CONSTRAINT jobs_queue_check CHECK (((queue <> ''::text) AND (length(queue) <= 200))),
    CONSTRAINT jobs_status_check CHECK ((status = ANY (ARRAY['queued'::text, 'running'::text, 'succeeded'::text, 'failed'::text, 'dead'::text, 'cancelled'::text, 'blocked'::text]))),
    CONSTRAINT jobs_timeout_check CHECK ((timeout > '00:00:00'::interval)),
    CONSTRAINT jobs_unique_key_check CHECK (((unique_key <> ''::text) AND (length(unique_key) <= 1000) AND (unique_key !~ '[[:cntrl:]]'::text)))
);

ALTER TABLE cronq.jobs OWNER TO postgres;

--
-- Name: TABLE jobs; Type: COMMENT; Schema: cronq; Owner: postgres
--

COMMENT ON TABLE cronq.jobs IS 'cronq jobs: one row per job; see cronq(1)';

--
-- Name: COLUMN jobs.enqueued_by; Type: COMMENT; Schema: cronq; Owner: postgres
--

COMMENT ON COLUMN cronq.jobs.enqueued_by IS 'role that enqueued the job, set by the database (only a superuser or the table owner may set it)';

--
-- Name: COLUMN jobs.expires_at; Type: COMMENT; Schema: cronq; Owner: postgres
--

COMMENT ON COLUMN cronq.jobs.expires_at IS 'start deadline: a job not started by then ends cancelled with error_code expired';

--
-- Name: COLUMN jobs.unique_key; Type: COMMENT; Schema: cronq; Owner: postgres
--

COMMENT ON COLUMN cronq.jobs.unique_key IS 'at most one job with this key is queued, failed or running at a time';

--
-- Name: COLUMN jobs.history; Type: COMMENT; Schema: cronq; Owner: postgres
--

COMMENT ON COLUMN cronq.jobs.history IS 'all: every attempt leaves a job_runs row; errors: a succeeded attempt with no output leaves none';

--
-- Name: COLUMN jobs.result; Type: COMMENT; Schema: cronq; Owner: postgres
--

COMMENT ON COLUMN cronq.jobs.result IS 'the result of the latest recorded attempt (see cronq.job_runs.result)';

--
-- Name: COLUMN jobs.hook_of; Type: COMMENT; Schema: cronq; Owner: postgres
--

COMMENT ON COLUMN cronq.jobs.hook_of IS 'the job whose outcome fired this hook''s job (cronq.fire_hooks); null for any other job';

--
-- Name: cancel_jobs(bigint[]); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.cancel_jobs(ids bigint[]) RETURNS TABLE(id bigint, status text, changed boolean)
    LANGUAGE sql
    BEGIN ATOMIC
 WITH req AS (
          SELECT DISTINCT r.id
            FROM unnest(cancel_jobs.ids) r(id)
         ), upd AS (
          UPDATE cronq.jobs j_1 SET status =
                 CASE
                     WHEN (j_1.status = 'running'::text) THEN j_1.status
                     ELSE 'cancelled'::text
                 END, cancel_requested = (j_1.status = 'running'::text), finished_at =
                 CASE
                     WHEN (j_1.status = 'running'::text) THEN j_1.finished_at
                     ELSE now()
                 END, last_error =
                 CASE
                     WHEN (j_1.status = 'running'::text) THEN j_1.last_error
                     ELSE 'cancelled by an operator'::text
                 END, error_code =
                 CASE
                     WHEN (j_1.status = 'running'::text) THEN j_1.error_code
                     ELSE 'cancelled'::text
                 END, updated_at = now()
            FROM req req_1
           WHERE ((j_1.id = req_1.id) AND (j_1.status = ANY (ARRAY['queued'::text, 'failed'::text, 'running'::text, 'blocked'::text])))
           RETURNING j_1.id,
             j_1.status
         )
  SELECT req.id,
     COALESCE(upd.status, j.status) AS "coalesce",
     (upd.id IS NOT NULL)
    FROM ((req
      LEFT JOIN upd ON ((upd.id = req.id)))
      LEFT JOIN cronq.jobs j ON ((j.id = req.id)));
END;

ALTER FUNCTION cronq.cancel_jobs(ids bigint[]) OWNER TO postgres;

--
-- Name: job_changed(bigint, text, boolean); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.job_changed(id bigint, status text, changed boolean) RETURNS boolean
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
    if status is null then
        raise exception 'job % does not exist', id using errcode = 'P0002',
            hint = 'A role sees only the jobs it enqueued, unless it is a member of cronq_admin.';
    end if;
    return changed;
end
$$;

ALTER FUNCTION cronq.job_changed(id bigint, status text, changed boolean) OWNER TO postgres;

--
-- Name: cancel(bigint); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.cancel(id bigint) RETURNS boolean
    LANGUAGE sql
    BEGIN ATOMIC
 SELECT cronq.job_changed(c.id, c.status, c.changed) AS job_changed
    FROM cronq.cancel_jobs(ARRAY[cancel.id]) c(id, status, changed);
END;

ALTER FUNCTION cronq.cancel(id bigint) OWNER TO postgres;

--
-- Name: check_task(text, jsonb, text); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.check_task(p_type text, p_payload jsonb, p_role text) RETURNS void
    LANGUAGE plpgsql STABLE
    AS $$
declare
    msg pg_catalog.text;
begin
    msg := cronq.payload_error(p_type, p_payload);
    if msg is not null then
        raise exception '%', msg using errcode = '22023';
    end if;
    msg := cronq.task_permission_error(p_type, p_role);
    if msg is not null then
        raise exception '%', msg using errcode = '42501';
    end if;
end
$$;

ALTER FUNCTION cronq.check_task(p_type text, p_payload jsonb, p_role text) OWNER TO postgres;

--
-- Name: clear_limit(text); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.clear_limit(key text) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
    perform cronq.limit_check(key);
    delete from cronq.limits l where l.key = clear_limit.key;
    return found;
end
$$;

ALTER FUNCTION cronq.clear_limit(key text) OWNER TO postgres;

--
-- Name: cron_error(text); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.cron_error(expr text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET standard_conforming_strings TO 'on'
    AS $_$
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
$_$;

ALTER FUNCTION cronq.cron_error(expr text) OWNER TO postgres;

--
-- Name: enqueue_job(text, jsonb, timestamp with time zone, text, integer, integer, interval, text, text, timestamp with time zone, text, boolean, text, jsonb, bigint[]); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.enqueue_job(type text, payload jsonb DEFAULT '{}'::jsonb, run_at timestamp with time zone DEFAULT NULL::timestamp with time zone, queue text DEFAULT NULL::text, priority integer DEFAULT NULL::integer, max_attempts integer DEFAULT NULL::integer, timeout interval DEFAULT NULL::interval, key text DEFAULT NULL::text, limit_key text DEFAULT NULL::text, expires_at timestamp with time zone DEFAULT NULL::timestamp with time zone, unique_key text DEFAULT NULL::text, replace boolean DEFAULT false, history text DEFAULT NULL::text, hooks jsonb DEFAULT NULL::jsonb, depends_on bigint[] DEFAULT NULL::bigint[], OUT id bigint, OUT created boolean, OUT note text) RETURNS record
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
#variable_conflict use_variable
declare
    held text;
    held_type text;
    why text := cronq.limit_key_error(limit_key);
begin
    if limit_key is not null and why is not null then
        raise exception 'limit key: %', why using errcode = '22023';
    end if;
    why := cronq.history_error(history);
    if why is not null then
        raise exception '%', why using errcode = '22023';
    end if;
    created := false;
    for attempt in 1..10 loop
        if unique_key is null then
            insert into cronq.jobs as j (type, payload, run_at, queue, priority,
                                         max_attempts, timeout, idempotency_key, limit_key,
                                         expires_at, history, hooks, depends_on)
            values (type, payload, run_at, queue, priority, max_attempts, timeout, key, limit_key,
                    expires_at, coalesce(history, 'all'), hooks, depends_on)
            on conflict (idempotency_key) where idempotency_key is not null do nothing
            returning j.id into id;
        else
            begin
                insert into cronq.jobs as j (type, payload, run_at, queue, priority, max_attempts,
                                             timeout, idempotency_key, limit_key, expires_at,
                                             unique_key, history, hooks, depends_on)
                values (type, payload, run_at, queue, priority, max_attempts, timeout, key,
                        limit_key, expires_at, unique_key, coalesce(history, 'all'), hooks,
                        depends_on)
                on conflict (idempotency_key) where idempotency_key is not null do nothing
                returning j.id into id;
            exception when unique_violation then
                -- jobs_unique_active: a holder committed while we inserted.
                -- Anything else is no business of ours.
                get stacked diagnostics held = constraint_name;
                if held is distinct from 'jobs_unique_active' then
                    raise;
                end if;
                continue;
            end;
        end if;
        if id is not null then
            created := true;
            return;
        end if;
        -- A new statement, a new snapshot: sees a conflicting row committed
        -- by another session while our insert waited for it.
        if key is not null then
            select j.id into id from cronq.jobs j where j.idempotency_key = key;
            if id is not null then
                note := 'key';
                return;
            end if;
        end if;
        if unique_key is not null then
            select j.id, j.status, j.type into id, held, held_type from cronq.jobs j
            where j.unique_key = unique_key and j.status in ('queued', 'failed', 'running');
            if id is not null and replace and held in ('queued', 'failed') then
                if held_type <> type then
                    raise exception 'cannot replace job % of type "%" with a job of type "%"',
                        id, held_type, type using errcode = '22023',
                        hint = 'A replace changes a job''s payload, run time and deadline, not its type.';
                end if;
                update cronq.jobs j
                set payload = coalesce(enqueue_job.payload, '{}'),
                    run_at = coalesce(enqueue_job.run_at, now()),
                    expires_at = enqueue_job.expires_at, status = 'queued', updated_at = now()
                where j.id = id and j.status in ('queued', 'failed');
                if found then
                    note := 'replaced';
                    return;
                end if;
                continue;   -- claimed or cancelled meanwhile: look again
            end if;
            if id is not null then
                note := held;
                return;
            end if;
            continue;   -- finished meanwhile: the key is free
        end if;
        raise exception 'idempotency key "%" is held by another role''s job', left(key, 200)
            using errcode = '23505',
                  hint = 'Idempotency keys are shared by every role: choose one that names your application.';
    end loop;
    raise exception 'could not enqueue with unique key "%": its jobs kept changing', left(unique_key, 200)
        using errcode = '40001', hint = 'Try again.';
end
$$;

ALTER FUNCTION cronq.enqueue_job(type text, payload jsonb, run_at timestamp with time zone, queue text, priority integer, max_attempts integer, timeout interval, key text, limit_key text, expires_at timestamp with time zone, unique_key text, replace boolean, history text, hooks jsonb, depends_on bigint[], OUT id bigint, OUT created boolean, OUT note text) OWNER TO postgres;

--
-- Name: enqueue(text, jsonb, timestamp with time zone, text, integer, integer, interval, text, text, timestamp with time zone, text, boolean, text, jsonb, bigint[]); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.enqueue(type text, payload jsonb DEFAULT '{}'::jsonb, run_at timestamp with time zone DEFAULT NULL::timestamp with time zone, queue text DEFAULT NULL::text, priority integer DEFAULT NULL::integer, max_attempts integer DEFAULT NULL::integer, timeout interval DEFAULT NULL::interval, key text DEFAULT NULL::text, limit_key text DEFAULT NULL::text, expires_at timestamp with time zone DEFAULT NULL::timestamp with time zone, unique_key text DEFAULT NULL::text, replace boolean DEFAULT false, history text DEFAULT NULL::text, hooks jsonb DEFAULT NULL::jsonb, depends_on bigint[] DEFAULT NULL::bigint[]) RETURNS bigint
    LANGUAGE sql
    BEGIN ATOMIC
 SELECT e.id
    FROM cronq.enqueue_job(enqueue.type, enqueue.payload, enqueue.run_at, enqueue.queue, enqueue.priority, enqueue.max_attempts, enqueue.timeout, enqueue.key, enqueue.limit_key, enqueue.expires_at, enqueue.unique_key, enqueue.replace, enqueue.history, enqueue.hooks, enqueue.depends_on) e(id, created, note);
END;

ALTER FUNCTION cronq.enqueue(type text, payload jsonb, run_at timestamp with time zone, queue text, priority integer, max_attempts integer, timeout interval, key text, limit_key text, expires_at timestamp with time zone, unique_key text, replace boolean, history text, hooks jsonb, depends_on bigint[]) OWNER TO postgres;

--
-- Name: enqueue_occurrences(text[], timestamp with time zone[], boolean); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.enqueue_occurrences(p_names text[], p_fires timestamp with time zone[], p_deadline boolean) RETURNS TABLE(schedule text, job_id bigint, fire_at timestamp with time zone)
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
    trusted boolean := cronq.may_act_for_others('cronq.jobs'::regclass);
    bad record;
begin
    if trusted then
        -- The check and the insert are two statements, each with its
        -- snapshot: the schedules they read are held first, so that none
        -- changes (an admin's rename swapping an exec schedule in under a
        -- checked name, helper-85) between the two. The wake and a backfill
        -- hold them already (a stronger lock of the same transaction: no
        -- wait, nothing written).
        perform from cronq.schedules s where s.name = any(p_names) for share;
        -- what jobs_guard would refuse first, in the order of the insert
        select s.name, cronq.payload_error(s.type, s.payload) as payload_msg,
               cronq.task_permission_error(s.type, s.created_by) as right_msg
        into bad
        from unnest(p_names, p_fires) as f(name, fire)
        join cronq.schedules s on s.name = f.name
        where cronq.payload_error(s.type, s.payload) is not null
           or cronq.task_permission_error(s.type, s.created_by) is not null
        order by f.fire
        limit 1;
        if found then
            if bad.payload_msg is not null then
                raise exception '%', bad.payload_msg using errcode = '22023';
            end if;
            raise exception '%', bad.right_msg using errcode = '42501';
        end if;
    end if;
    return query
    insert into cronq.jobs as j (type, payload, queue, priority, max_attempts, timeout,
                                 idempotency_key, schedule, scheduled_for, run_at, enqueued_by,
                                 expires_at, history, hooks, occurrence_checked)
    select s.type, coalesce(s.payload, '{}'), coalesce(s.queue, 'default'),
           coalesce(s.priority, 0), coalesce(s.max_attempts, 10),
           coalesce(s.timeout, interval '1 hour'),
           'schedule:' || s.name || ':'
               || to_char(f.fire at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
           s.name, f.fire, f.fire, s.created_by,
           case when p_deadline then f.fire + s.start_deadline end,
           s.history, s.hooks, case when trusted then true end
    from unnest(p_names, p_fires) as f(name, fire)
    join cronq.schedules s on s.name = f.name
    order by f.fire
    -- a key a job already has: "already enqueued", no row (for a writer
    -- the guard checks, it skipped its own jobs' keys first and says
    -- another role's aloud)
    on conflict (idempotency_key) where idempotency_key is not null do nothing
    returning j.schedule, j.id, j.scheduled_for;
end
$$;

ALTER FUNCTION cronq.enqueue_occurrences(p_names text[], p_fires timestamp with time zone[], p_deadline boolean) OWNER TO postgres;

--
-- Name: enqueue_occurrences(text[], timestamp with time zone[]); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.enqueue_occurrences(p_names text[], p_fires timestamp with time zone[]) RETURNS TABLE(schedule text, job_id bigint)
    LANGUAGE sql
    BEGIN ATOMIC
 SELECT o.schedule,
     o.job_id
    FROM cronq.enqueue_occurrences(enqueue_occurrences.p_names, enqueue_occurrences.p_fires, true) o(schedule, job_id, fire_at);
END;

ALTER FUNCTION cronq.enqueue_occurrences(p_names text[], p_fires timestamp with time zone[]) OWNER TO postgres;

--
-- Name: every_error(text[]); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.every_error(d text[]) RETURNS text
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET standard_conforming_strings TO 'on'
    AS $_$
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
$_$;

ALTER FUNCTION cronq.every_error(d text[]) OWNER TO postgres;

--
-- Name: exec_args_bytes(jsonb); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.exec_args_bytes(p jsonb) RETURNS bigint
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN ((((((octet_length((p ->> 'command'::text)) + 9) + COALESCE((SELECT sum((octet_length(a.value) + 9)) AS sum FROM jsonb_array_elements_text((exec_args_bytes.p -> 'args'::text)) a(value)), (0)::bigint)) + COALESCE((SELECT sum(((octet_length(e.key) + octet_length(e.value)) + 10)) AS sum FROM jsonb_each_text((exec_args_bytes.p -> 'env'::text)) e(key, value)), (0)::bigint)) + octet_length('CRONQ_PAYLOAD='::text)) + octet_length((p)::text)) + 9);

ALTER FUNCTION cronq.exec_args_bytes(p jsonb) OWNER TO postgres;

--
-- Name: exec_env_denied(text); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.exec_env_denied(name text) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN ((name COLLATE "C") ~* '^(LD_.*|DYLD_.*|_RLD.*|LDR_.*|LIBPATH|SHLIB_PATH|GCONV_PATH|GETCONF_DIR|GLIBC_TUNABLES|MALLOC_.*|HOSTALIASES|LOCALDOMAIN|RES_OPTIONS|RESOLV_HOST_CONF|NIS_PATH|LOCPATH|NLSPATH|PATH_LOCALE|TZDIR|AUTHSTATE|VAR_ACE|USR_ACE|DLC_ACE|PATH|IFS|CDPATH|ENV|BASH.*|SHELLOPTS|PS4|GLOBIGNORE|PROMPT_COMMAND|FPATH|NULLCMD|READNULLCMD|ZDOTDIR|TMPPREFIX|SHELL|HOME|XDG_.*|TERMINFO|TERMINFO_DIRS|TERMPATH|TERMCAP|PERL.*|PYTHON.*|RUBY.*|GEM_.*|BUNDLE_.*|NODE_.*|NPM_CONFIG_.*|JAVA_.*|_JAVA_.*|JDK_.*|CLASSPATH|DOTNET_.*|CORECLR_.*|COMPLUS_.*|LUA_.*|PHPRC|PHP_INI_SCAN_DIR|TCLLIBPATH|TCL_LIBRARY|TK_LIBRARY|AWKPATH|AWKLIBPATH|PIP_.*|GOFLAGS|GOTOOLCHAIN|EDITOR|VISUAL|PAGER|MANPAGER|LESSOPEN|LESSCLOSE|GIT_.*|SSH_ASKPASS.*|SUDO_ASKPASS|MAKEFLAGS|MAKEFILES|MFLAGS|PG.*|KRB5.*|OPENSSL_.*|SSL_CERT_.*|CURL_CA_BUNDLE|REQUESTS_CA_BUNDLE|TAR_OPTIONS|ZIPOPT|ZIP|UNZIP|UNZIPOPT|ZIPINFO|GZIP|BZIP|BZIP2|XZ_OPT|XZ_DEFAULTS|LESS|LESSKEY.*|MORE|VIMINIT|EXINIT|MYVIMRC|VIMRUNTIME|GREP_OPTIONS|RSYNC_RSH|RSYNC_CONNECT_PROG|CVS_RSH|BROWSER|SUDO_EDITOR|SYSTEMD_.*|WGETRC|CURL_HOME|GNUPGHOME|SSLKEYLOGFILE|R_PROFILE.*|R_ENVIRON.*|R_LIBS.*|JULIA_.*|GUILE_.*|ERL_.*|CC|CXX|CPP|CGO_.*|GOENV|GOPROXY|GONOSUMDB|GONOPROXY|GOINSECURE|GOPRIVATE|GOSUMDB|GOPATH|GOROOT|HTTPS_CA_FILE|HTTPS_CA_DIR|HTTP_PROXY|HTTPS_PROXY|FTP_PROXY|ALL_PROXY|NO_PROXY)$'::text);

ALTER FUNCTION cronq.exec_env_denied(name text) OWNER TO postgres;

--
-- Name: exec_env_value_refused(text, text); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.exec_env_value_refused(name text, value text) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN CASE WHEN ((name = ANY (ARRAY['LANG'::text, 'LANGUAGE'::text, 'LINGUAS'::text, 'TERM'::text, 'COLORTERM'::text])) OR (name ~~ 'LC\_%'::text)) THEN ((strpos(value, '/'::text) > 0) OR (strpos(value, '%'::text) > 0)) WHEN (name = 'TZ'::text) THEN ((strpos(value, '..'::text) > 0) OR (strpos(value, '%'::text) > 0) OR (value ~~ '/%'::text) OR (value ~~ ':/%'::text)) ELSE false END;

ALTER FUNCTION cronq.exec_env_value_refused(name text, value text) OWNER TO postgres;

--
-- Name: expire_holder(text); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.expire_holder(p_key text) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET enable_seqscan TO 'off'
    AS $$
declare
    h bigint;
    locked boolean := false;
    grant_token text;
    outer_left text := current_setting('cronq.settle_left', true);
begin
    select j.id into h from cronq.jobs j
    where j.unique_key = p_key and j.status in ('queued', 'failed', 'running')
      and j.status <> 'running' and j.expires_at <= now();
    if h is null then
        return;
    end if;
    for i in 1..40 loop
        locked := exists (select 1 from cronq.jobs j where j.id = h for no key update skip locked);
        exit when locked;
        perform pg_catalog.pg_sleep(0.05);
    end loop;
    if locked then
        grant_token := pg_catalog.gen_random_uuid()::text;
        insert into cronq.settle_grants (token) values (grant_token);
        perform pg_catalog.set_config('cronq.settle_grant', grant_token, true);
        -- the window's budget, whatever the session set (above)
        perform pg_catalog.set_config('cronq.settle_left', '10000', true);
        perform cronq.expire_jobs('enqueue', array[h]);
        perform pg_catalog.set_config('cronq.settle_left', coalesce(outer_left, ''), true);
        perform pg_catalog.set_config('cronq.settle_grant', '', true);
        delete from cronq.settle_grants g where g.token = grant_token;
    end if;
end
$$;

ALTER FUNCTION cronq.expire_holder(p_key text) OWNER TO postgres;

--
-- Name: job_runs; Type: TABLE; Schema: cronq; Owner: postgres
--

CREATE TABLE cronq.job_runs (
    id bigint NOT NULL,
    job_id bigint NOT NULL,
    attempt integer NOT NULL,
    worker text,
    started_at timestamp with time zone,
    finished_at timestamp with time zone DEFAULT now() NOT NULL,
    outcome text NOT NULL,
    error_code text,
    error text,
    output text,
    duration interval,
    stderr text,
    result jsonb,
    CONSTRAINT job_runs_outcome_check CHECK ((outcome = ANY (ARRAY['succeeded'::text, 'failed'::text, 'timeout'::text, 'lease_expired'::text, 'cancelled'::text, 'given_back'::text, 'lease_lost'::text])))
);

ALTER TABLE cronq.job_runs OWNER TO postgres;

--
-- Name: COLUMN job_runs.stderr; Type: COMMENT; Schema: cronq; Owner: postgres
--

COMMENT ON COLUMN cronq.job_runs.stderr IS 'an exec program''s standard error (its last 64 KiB); output holds its standard output';

--
-- Name: COLUMN job_runs.result; Type: COMMENT; Schema: cronq; Owner: postgres
--

COMMENT ON COLUMN cronq.job_runs.result IS 'the attempt''s result: a sql job''s {"tag", "row"}, an exec program''s JSON from descriptor 3; null: none';

--
-- Name: occurrences; Type: TABLE; Schema: cronq; Owner: postgres
--

CREATE TABLE cronq.occurrences (
    schedule text NOT NULL,
    fire_at timestamp with time zone NOT NULL,
    decision text NOT NULL,
    job_id bigint,
    detail text,
    decided_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT occurrences_decision_check CHECK ((decision = ANY (ARRAY['enqueued'::text, 'overlap'::text, 'catchup'::text, 'paused'::text, 'disabled'::text, 'expired'::text, 'refused'::text])))
);

ALTER TABLE cronq.occurrences OWNER TO postgres;

--
-- Name: TABLE occurrences; Type: COMMENT; Schema: cronq; Owner: postgres
--

COMMENT ON TABLE cronq.occurrences IS 'cronq occurrence ledger: what the runners decided for each fire time of a schedule; see cronq(1) why';

--
-- Name: expire_jobs(text, bigint[]); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.expire_jobs(p_worker text, p_ids bigint[]) RETURNS bigint
    LANGUAGE sql
    BEGIN ATOMIC
 WITH upd AS (
          UPDATE cronq.jobs j SET status = 'cancelled'::text, error_code = 'expired'::text, last_error = ('not started by its deadline, '::text || to_char((j.expires_at AT TIME ZONE 'UTC'::text), 'YYYY-MM-DD"T"HH24:MI:SS"Z"'::text)), locked_by = NULL::text, locked_until = NULL::timestamp with time zone, finished_at = now(), updated_at = now()
           WHERE ((j.id = ANY (expire_jobs.p_ids)) AND (j.status = ANY (ARRAY['queued'::text, 'failed'::text])) AND (j.expires_at <= now()))
           RETURNING j.id,
             j.attempts,
             j.last_error,
             j.schedule,
             j.scheduled_for
         ), runs AS (
          INSERT INTO cronq.job_runs (job_id, attempt, worker, finished_at, outcome, error_code, error)  SELECT upd_1.id,
                     (upd_1.attempts + 1),
                     expire_jobs.p_worker AS p_worker,
                     now() AS now,
                     'cancelled',
                     'expired',
                     upd_1.last_error
                    FROM upd upd_1
         ), ledger AS (
          UPDATE cronq.occurrences o SET decision = 'expired'::text
            FROM upd upd_1
           WHERE ((upd_1.schedule IS NOT NULL) AND (o.schedule = upd_1.schedule) AND (o.fire_at = upd_1.scheduled_for) AND (o.job_id = upd_1.id))
         )
  SELECT count(*) AS count
    FROM upd;
END;

ALTER FUNCTION cronq.expire_jobs(p_worker text, p_ids bigint[]) OWNER TO postgres;

--
-- Name: hook_json(jsonb, text[]); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.hook_json(v jsonb, vals text[]) RETURNS jsonb
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
    return case jsonb_typeof(v)
        when 'string' then to_jsonb(cronq.hook_text(v #>> '{}', vals, false))
        when 'object' then (select coalesce(jsonb_object_agg(e.key, cronq.hook_json(e.value, vals)), '{}')
                            from jsonb_each(v) e)
        when 'array' then (select coalesce(jsonb_agg(cronq.hook_json(e.value, vals) order by e.n), '[]')
                           from jsonb_array_elements(v) with ordinality e(value, n))
        else v end;
end
$$;

ALTER FUNCTION cronq.hook_json(v jsonb, vals text[]) OWNER TO postgres;

--
-- Name: hook_payload(jsonb, text[]); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.hook_payload(spec jsonb, vals text[]) RETURNS jsonb
    LANGUAGE sql IMMUTABLE
    BEGIN ATOMIC
 SELECT
         CASE
             WHEN (COALESCE(((spec -> 'payload'::text))::text, ''::text) !~ '\{(job_id|type|schedule|status|error)\}'::text) THEN COALESCE((spec -> 'payload'::text), '{}'::jsonb)
             WHEN (((spec ->> 'type'::text) = 'sql'::text) AND (jsonb_typeof(((spec -> 'payload'::text) -> 'sql'::text)) = 'string'::text)) THEN jsonb_set(cronq.hook_json((spec -> 'payload'::text), vals), '{sql}'::text[], to_jsonb(
             CASE
                 WHEN (((spec -> 'payload'::text) ->> 'sql'::text) !~ '\{(job_id|type|schedule|status|error)\}'::text) THEN ((spec -> 'payload'::text) ->> 'sql'::text)
                 ELSE (((((((((((((((('select pg_catalog.set_config(''cronq.hook_job_id'', '::text || quote_literal(COALESCE((vals)[1], ''::text))) || ', false), '::text) || 'pg_catalog.set_config(''cronq.hook_type'', '::text) || quote_literal(COALESCE((vals)[2], ''::text))) || ', false), '::text) || 'pg_catalog.set_config(''cronq.hook_schedule'', '::text) || quote_literal(COALESCE((vals)[3], ''::text))) || ', false), '::text) || 'pg_catalog.set_config(''cronq.hook_status'', '::text) || quote_literal(COALESCE((vals)[4], ''::text))) || ', false), '::text) || 'pg_catalog.set_config(''cronq.hook_error'', '::text) || quote_literal(COALESCE((vals)[5], ''::text))) || ', false);'::text) || '
'::text) || regexp_replace(((spec -> 'payload'::text) ->> 'sql'::text), '\{(job_id|type|schedule|status|error)\}'::text, 'nullif(pg_catalog.current_setting(''cronq.hook_\1'', true), '''')'::text, 'g'::text))
             END))
             WHEN (((spec ->> 'type'::text) = 'exec'::text) AND ((spec -> 'payload'::text) ? 'command'::text)) THEN jsonb_set(cronq.hook_json((spec -> 'payload'::text), vals), '{command}'::text[], ((spec -> 'payload'::text) -> 'command'::text))
             ELSE cronq.hook_json((spec -> 'payload'::text), vals)
         END AS hook_json;
END;

ALTER FUNCTION cronq.hook_payload(spec jsonb, vals text[]) OWNER TO postgres;

--
-- Name: payload_error(text, jsonb); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.payload_error(p_type text, p_payload jsonb) RETURNS text
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
    AS $$
declare
    t pg_catalog.text;
    msg pg_catalog.text;
begin
    if p_type is null or p_type operator(pg_catalog.=) '' then
        return 'task type must not be empty';
    end if;
    if not cronq.known_task(p_type) then
        return pg_catalog.format('unrecognized task type "%s"', p_type);
    end if;
    if p_payload is null or pg_catalog.jsonb_typeof(p_payload) operator(pg_catalog.<>) 'object' then
        return pg_catalog.format('invalid payload: must be a JSON object, not %s',
                                 coalesce(pg_catalog.jsonb_typeof(p_payload), 'null'));
    end if;
    if pg_catalog.pg_column_size(p_payload) operator(pg_catalog.>) 524288
       and pg_catalog.octet_length(p_payload::pg_catalog.text) operator(pg_catalog.>) 1048576 then
        return 'invalid payload: larger than 1 MiB';
    end if;
    -- Only a payload with many brackets can be deep; skip the walk otherwise.
    t := p_payload::pg_catalog.text;
    if pg_catalog.length(t) operator(pg_catalog.-) pg_catalog.length(pg_catalog.translate(t, '{[', ''))
           operator(pg_catalog.>) 64
       and cronq.json_depth(p_payload) operator(pg_catalog.>) 64 then
        return 'invalid payload: nested deeper than 64 levels';
    end if;
    msg := cronq.task_rules(p_type, p_payload);
    if msg is not null then
        return pg_catalog.format('invalid payload for task "%s": %s', p_type, msg);
    end if;
    return null;
end
$$;

ALTER FUNCTION cronq.payload_error(p_type text, p_payload jsonb) OWNER TO postgres;

--
-- Name: task_permission_error(text, text); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.task_permission_error(p_type text, p_role text) RETURNS text
    LANGUAGE plpgsql STABLE
    AS $$
begin
    if p_type operator(pg_catalog.=) 'exec' then
        if not (exists (select 1 from pg_catalog.pg_roles
                        where rolname operator(pg_catalog.=) 'cronq_exec')
                and exists (select 1 from pg_catalog.pg_roles
                            where rolname operator(pg_catalog.=) p_role)
                and pg_catalog.pg_has_role(p_role, 'cronq_exec', 'MEMBER')) then
            return pg_catalog.format('role "%s" may not enqueue exec jobs: it is not a member of cronq_exec', p_role);
        end if;
    elsif p_type operator(pg_catalog.=) 'purge' then
        if not (exists (select 1 from pg_catalog.pg_roles r
                        where r.rolname operator(pg_catalog.=) p_role and r.rolsuper)
                or exists (select 1 from pg_catalog.pg_class c
                           join pg_catalog.pg_roles r on r.oid operator(pg_catalog.=) c.relowner
                           where c.oid operator(pg_catalog.=) 'cronq.jobs'::pg_catalog.regclass
                             and r.rolname operator(pg_catalog.=) p_role)
                or (exists (select 1 from pg_catalog.pg_roles
                            where rolname operator(pg_catalog.=) 'cronq_admin')
                    and exists (select 1 from pg_catalog.pg_roles
                                where rolname operator(pg_catalog.=) p_role)
                    and pg_catalog.pg_has_role(p_role, 'cronq_admin', 'MEMBER'))) then
            return pg_catalog.format('role "%s" may not enqueue purge jobs: only the owner of cronq.jobs or a member of cronq_admin may', p_role);
        end if;
    end if;
    return null;
end
$$;

ALTER FUNCTION cronq.task_permission_error(p_type text, p_role text) OWNER TO postgres;

--
-- Name: fire_hooks(bigint[], text[], integer[], text[]); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.fire_hooks(p_ids bigint[], p_statuses text[], p_attempts integer[], p_errors text[]) RETURNS bigint
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    BEGIN ATOMIC
 WITH o AS (
          SELECT o.id,
             o.status,
             o.attempt,
             o.error,
             ev.event
            FROM (UNNEST(fire_hooks.p_ids, fire_hooks.p_statuses, fire_hooks.p_attempts, fire_hooks.p_errors) o(id, status, attempt, error)
              CROSS JOIN LATERAL unnest(
                 CASE o.status
                     WHEN 'succeeded'::text THEN ARRAY['success'::text, 'recover'::text]
                     WHEN 'failed'::text THEN ARRAY['failure'::text]
                     WHEN 'dead'::text THEN ARRAY['failure'::text, 'dead'::text]
                     ELSE NULL::text[]
                 END) ev(event))
           WHERE (o.attempt >= 1)
         ), e AS (
          SELECT o.id,
             o.status,
             o.attempt,
             o.error,
             o.event,
             (j.hooks -> ('on_'::text || o.event)) AS spec,
             j.type,
             j.schedule,
             j.queue,
             j.enqueued_by,
             j.earlier_attempts
            FROM (o
              JOIN cronq.jobs j ON (((j.id = o.id) AND (j.id = ANY (fire_hooks.p_ids)))))
           WHERE ((j.hooks ? ('on_'::text || o.event)) AND ((o.event <> 'recover'::text) OR (o.attempt > 1) OR ((j.schedule IS NOT NULL) AND (COALESCE(j.earlier_attempts, (0)::bigint) = 0) AND (( SELECT p.status
                    FROM cronq.jobs p
                   WHERE ((p.schedule = j.schedule) AND (p.id < j.id) AND (p.enqueued_by = j.enqueued_by) AND (p.status = ANY (ARRAY['succeeded'::text, 'failed'::text, 'dead'::text])))
                   ORDER BY p.schedule DESC, p.enqueued_by DESC, p.id DESC
                  LIMIT 1) = ANY (ARRAY['failed'::text, 'dead'::text])))))
         ), p AS MATERIALIZED (
          SELECT e.id,
             e.status,
             e.attempt,
             e.error,
             e.event,
             e.spec,
             e.type,
             e.schedule,
             e.queue,
             e.enqueued_by,
             e.earlier_attempts,
                 CASE
                     WHEN ((octet_length(COALESCE(((e.spec -> 'payload'::text))::text, ''::text)) + (regexp_count(COALESCE(((e.spec -> 'payload'::text))::text, ''::text), '\{(job_id|type|schedule|status|error)\}'::text) * (COALESCE(octet_length("left"(e.error, 2000)), 0) + 256))) <= 1048576) THEN
                     CASE
                         WHEN (COALESCE(((e.spec -> 'payload'::text))::text, ''::text) !~ '\{(job_id|type|schedule|status|error)\}'::text) THEN COALESCE((e.spec -> 'payload'::text), '{}'::jsonb)
                         ELSE cronq.hook_payload(e.spec, ARRAY[(e.id)::text, e.type, e.schedule, e.status, "left"(e.error, 2000)])
                     END
                     ELSE NULL::jsonb
                 END AS payload
            FROM e
         ), v AS MATERIALIZED (
          SELECT p.id,
             p.status,
             p.attempt,
             p.error,
             p.event,
             p.spec,
             p.type,
             p.schedule,
             p.queue,
             p.enqueued_by,
             p.earlier_attempts,
             p.payload,
                 CASE
                     WHEN (p.payload IS NULL) THEN 'its payload would pass 1 MiB once its placeholders are replaced'::text
                     ELSE COALESCE(cronq.payload_error((p.spec ->> 'type'::text), p.payload), cronq.task_permission_error((p.spec ->> 'type'::text), p.enqueued_by))
                 END AS why
            FROM p
         ), ins AS (
          INSERT INTO cronq.jobs (type, payload, queue, priority, max_attempts, timeout, idempotency_key, enqueued_by, run_at, hook_of)  SELECT
                         CASE
                             WHEN (v.why IS NULL) THEN (v.spec ->> 'type'::text)
                             ELSE 'fail'::text
                         END AS "case",
                         CASE
                             WHEN (v.why IS NULL) THEN v.payload
                             ELSE jsonb_build_object('message', format('hook on_%s of job %s could not be enqueued: %s'::text, v.event, v.id, "left"(v.why, 500)), 'code', 'hook_refused', 'permanent', true)
                         END AS jsonb_build_object,
                         CASE
                             WHEN (v.why IS NULL) THEN COALESCE((v.spec ->> 'queue'::text), v.queue)
                             ELSE v.queue
                         END AS queue,
                     COALESCE(
                         CASE
                             WHEN (v.why IS NULL) THEN ((v.spec ->> 'priority'::text))::integer
                             ELSE NULL::integer
                         END, 0) AS "coalesce",
                     COALESCE(
                         CASE
                             WHEN (v.why IS NULL) THEN ((v.spec ->> 'max_attempts'::text))::integer
                             ELSE NULL::integer
                         END, 10) AS "coalesce",
                     COALESCE(
                         CASE
                             WHEN (v.why IS NULL) THEN ((((v.spec ->> 'timeout'::text))::bigint)::double precision * '00:00:01'::interval)
                             ELSE NULL::interval
                         END, '01:00:00'::interval) AS "coalesce",
                     ((((('notify:'::text || v.id) || ':'::text) || (COALESCE(v.earlier_attempts, (0)::bigint) + v.attempt)) || ':'::text) || v.event),
                     v.enqueued_by,
                     now() AS now,
                     v.id
                    FROM v
                   ORDER BY v.id, v.event ON CONFLICT(idempotency_key)
           WHERE (idempotency_key IS NOT NULL) DO NOTHING
           RETURNING 1 AS "?column?"
         )
  SELECT count(*) AS count
    FROM ins;
END;

ALTER FUNCTION cronq.fire_hooks(p_ids bigint[], p_statuses text[], p_attempts integer[], p_errors text[]) OWNER TO postgres;

--
-- Name: fire_offset(text, interval); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.fire_offset(p_name text, p_spread interval) RETURNS bigint
    LANGUAGE plpgsql STABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

ALTER FUNCTION cronq.fire_offset(p_name text, p_spread interval) OWNER TO postgres;

--
-- Name: flow_check(text, text); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.flow_check(key text, verb text) RETURNS void
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
    why text := cronq.flow_key_error(key);
begin
    if why is not null then
        raise exception '%', why using errcode = '22023';
    end if;
    if key not like 'schedule:%' and not cronq.manages_flow() then
        raise exception 'only members of cronq_admin % %', verb, key using errcode = '42501',
            hint = format('A member of cronq_user %ss only its own schedules (schedule:NAME).', verb);
    end if;
end
$$;

ALTER FUNCTION cronq.flow_check(key text, verb text) OWNER TO postgres;

--
-- Name: flow_key_error(text); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.flow_key_error(k text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN CASE WHEN ((k IS NULL) OR (k = ''::text)) THEN 'a key is required'::text WHEN (k !~ '^[A-Za-z0-9_.-]+:'::text) THEN format('%s is not a key: keys are queue:NAME, type:NAME, schedule:NAME or a limit key PREFIX:NAME (such as tenant:42)'::text, k) WHEN (k ~ '^[A-Za-z0-9_.-]+:$'::text) THEN format('%s names nothing: keys are queue:NAME, type:NAME, schedule:NAME or a limit key PREFIX:NAME (such as tenant:42)'::text, k) WHEN (length(k) > 255) THEN 'a key is at most 255 characters'::text WHEN (k ~ '[[:cntrl:]]'::text) THEN 'a key may not contain control characters'::text ELSE NULL::text END;

ALTER FUNCTION cronq.flow_key_error(k text) OWNER TO postgres;

--
-- Name: limit_room(text[], boolean); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.limit_room(keys text[], lock boolean) RETURNS TABLE(key text, room bigint, running bigint, started bigint)
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
    if lock then
        perform from cronq.limits l where keys is null or l.key = any(keys)
            order by l.key for no key update of l;
    end if;
    return query
    with lim as (
        select l.key, l.max_running, l.rate, l.per, l.starts from cronq.limits l
        where keys is null or l.key = any(keys)
    ), running as (
        select k.key, count(*) as n
        from cronq.jobs j
        cross join lateral unnest(cronq.job_keys(j.queue, j.type, j.schedule, j.limit_key)) k(key)
        join lim on lim.key = k.key
        where j.status = 'running' and lim.max_running is not null
        group by k.key
    ), started as (
        select lim.key, (select count(*) from unnest(lim.starts) s where s > now() - lim.per) as n
        from lim where lim.rate is not null
    )
    select lim.key, least(lim.max_running - coalesce(running.n, 0), lim.rate - started.n),
        coalesce(running.n, 0), started.n
    from lim left join running on running.key = lim.key left join started on started.key = lim.key;
end
$$;

ALTER FUNCTION cronq.limit_room(keys text[], lock boolean) OWNER TO postgres;

--
-- Name: limits; Type: TABLE; Schema: cronq; Owner: postgres
--

CREATE TABLE cronq.limits (
    key text NOT NULL,
    max_running integer,
    rate integer,
    per interval,
    set_by text DEFAULT CURRENT_USER NOT NULL,
    set_at timestamp with time zone DEFAULT now() NOT NULL,
    starts timestamp with time zone[] DEFAULT '{}'::timestamp with time zone[] NOT NULL,
    CONSTRAINT limits_check CHECK (((max_running IS NOT NULL) OR (rate IS NOT NULL))),
    CONSTRAINT limits_check1 CHECK (((rate IS NULL) = (per IS NULL))),
    CONSTRAINT limits_key_check CHECK ((cronq.flow_key_error(key) IS NULL)),
    CONSTRAINT limits_max_running_check CHECK (((max_running >= 1) AND (max_running <= 1000000))),
    CONSTRAINT limits_per_check CHECK (((per >= '00:00:01'::interval) AND (per <= '1 day'::interval))),
    CONSTRAINT limits_per_whole_seconds CHECK ((per = date_trunc('second'::text, per))),
    CONSTRAINT limits_rate_check CHECK (((rate >= 1) AND (rate <= 10000)))
);

ALTER TABLE cronq.limits OWNER TO postgres;

--
-- Name: TABLE limits; Type: COMMENT; Schema: cronq; Owner: postgres
--

COMMENT ON TABLE cronq.limits IS 'cronq limits: at most max_running jobs of a key at once, at most rate starts per window; see cronq(1)';

--
-- Name: full_keys(); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.full_keys() RETURNS text[]
    LANGUAGE sql STABLE
    RETURN CASE WHEN (EXISTS (SELECT 1 FROM cronq.limits)) THEN (SELECT COALESCE(array_agg(r.key), '{}'::text[]) AS "coalesce" FROM cronq.limit_room(NULL::text[], false) r(key, room, running, started) WHERE (r.room <= 0)) ELSE '{}'::text[] END;

ALTER FUNCTION cronq.full_keys() OWNER TO postgres;

--
-- Name: held(text[], text, text); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.held(ks text[], p_queue text, p_type text) RETURNS boolean
    LANGUAGE sql IMMUTABLE
    RETURN (ks && ARRAY[('queue:'::text || p_queue), ('type:'::text || p_type)]);

ALTER FUNCTION cronq.held(ks text[], p_queue text, p_type text) OWNER TO postgres;

--
-- Name: held(text[], text, text, text); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.held(ks text[], p_queue text, p_type text, p_limit_key text) RETURNS boolean
    LANGUAGE sql IMMUTABLE
    RETURN (ks && ARRAY[('queue:'::text || p_queue), ('type:'::text || p_type), p_limit_key]);

ALTER FUNCTION cronq.held(ks text[], p_queue text, p_type text, p_limit_key text) OWNER TO postgres;

--
-- Name: history_error(text); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.history_error(p text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN CASE WHEN ((p IS NOT NULL) AND (p <> ALL (ARRAY['all'::text, 'errors'::text]))) THEN format('invalid history policy "%s": must be all or errors'::text, p) ELSE NULL::text END;

ALTER FUNCTION cronq.history_error(p text) OWNER TO postgres;

--
-- Name: hook_text(text, text[], boolean); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.hook_text(s text, vals text[], quoted boolean) RETURNS text
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET standard_conforming_strings TO 'on'
    AS $$
declare
    pattern constant text := '\{(job_id|type|schedule|status|error)\}';
    names constant text[] := array['job_id', 'type', 'schedule', 'status', 'error'];
    reps text[];
    parts text[];
    found text[];
    total bigint;
begin
    if s is null or strpos(s, '{') = 0 then
        return s;
    end if;
    found := array(select m[1] from regexp_matches(s, pattern, 'g') m);
    if coalesce(cardinality(found), 0) = 0 then
        return s;
    end if;
    reps := array(select case when quoted then coalesce(quote_literal(vals[i]), 'NULL')
                              else coalesce(vals[i], '') end
                  from generate_series(1, 5) i order by i);
    total := octet_length(s) + (select sum(octet_length(reps[array_position(names, f)]))
                                from unnest(found) f);
    if total > 1048576 then
        raise exception 'its text would be % bytes once its placeholders are replaced (at most 1 MiB)',
            total using errcode = '54000';
    end if;
    parts := regexp_split_to_array(s, pattern);
    return (select string_agg(p.part || coalesce(reps[array_position(names, found[p.n])], ''), ''
                              order by p.n)
            from unnest(parts) with ordinality p(part, n));
end
$$;

ALTER FUNCTION cronq.hook_text(s text, vals text[], quoted boolean) OWNER TO postgres;

--
-- Name: hooks_error(jsonb); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.hooks_error(p_hooks jsonb) RETURNS text
    LANGUAGE sql STABLE
    BEGIN ATOMIC
 SELECT
         CASE
             WHEN (jsonb_typeof(p_hooks) IS DISTINCT FROM 'object'::text) THEN 'hooks must be a JSON object'::text
             ELSE ( SELECT x.msg
                FROM ( SELECT e.key,
                             CASE
                                 WHEN (e.key <> ALL (ARRAY['on_success'::text, 'on_failure'::text, 'on_dead'::text, 'on_recover'::text])) THEN format('unknown hook "%s": must be on_success, on_failure, on_dead or on_recover'::text, "left"(e.key, 100))
                                 WHEN (jsonb_typeof(e.value) <> 'object'::text) THEN format('%s: a hook is a job spec, a JSON object such as {"type": "noop"}'::text, e.key)
                                 WHEN (EXISTS ( SELECT 1
                                    FROM jsonb_object_keys(e.value) k(k)
                                   WHERE (k.k <> ALL (ARRAY['type'::text, 'payload'::text, 'queue'::text, 'priority'::text, 'max_attempts'::text, 'timeout'::text])))) THEN format('%s: unrecognized field "%s" (a hook has type, payload, queue, priority, max_attempts, timeout)'::text, e.key, ( SELECT "left"(min(k.k), 100) AS "left"
                                    FROM jsonb_object_keys(e.value) k(k)
                                   WHERE (k.k <> ALL (ARRAY['type'::text, 'payload'::text, 'queue'::text, 'priority'::text, 'max_attempts'::text, 'timeout'::text]))))
                                 WHEN (jsonb_typeof((e.value -> 'type'::text)) IS DISTINCT FROM 'string'::text) THEN format('%s: "type" is required and must be a string'::text, e.key)
                                 WHEN ((e.value ? 'payload'::text) AND (jsonb_typeof((e.value -> 'payload'::text)) <> 'object'::text)) THEN format('%s: "payload" must be a JSON object'::text, e.key)
                                 WHEN ((e.value ? 'queue'::text) AND ((jsonb_typeof((e.value -> 'queue'::text)) <> 'string'::text) OR ((e.value ->> 'queue'::text) = ''::text) OR (length((e.value ->> 'queue'::text)) > 200) OR ((e.value ->> 'queue'::text) ~ '[[:cntrl:]]'::text))) THEN format('%s: "queue" must be printable text of 1 to 200 bytes'::text, e.key)
                                 WHEN ((e.value ? 'priority'::text) AND
                                 CASE
                                     WHEN ((jsonb_typeof((e.value -> 'priority'::text)) <> 'number'::text) OR ((e.value ->> 'priority'::text) !~ '^-?[0-9]{1,9}$'::text)) THEN true
                                     ELSE ((((e.value ->> 'priority'::text))::integer < '-1000000'::integer) OR (((e.value ->> 'priority'::text))::integer > 1000000))
                                 END) THEN format('%s: "priority" must be an integer from -1000000 to 1000000'::text, e.key)
                                 WHEN ((e.value ? 'max_attempts'::text) AND
                                 CASE
                                     WHEN ((jsonb_typeof((e.value -> 'max_attempts'::text)) <> 'number'::text) OR ((e.value ->> 'max_attempts'::text) !~ '^[0-9]{1,9}$'::text)) THEN true
                                     ELSE ((((e.value ->> 'max_attempts'::text))::integer < 1) OR (((e.value ->> 'max_attempts'::text))::integer > 1000))
                                 END) THEN format('%s: "max_attempts" must be an integer from 1 to 1000'::text, e.key)
                                 WHEN ((e.value ? 'timeout'::text) AND
                                 CASE
                                     WHEN ((jsonb_typeof((e.value -> 'timeout'::text)) <> 'number'::text) OR ((e.value ->> 'timeout'::text) !~ '^[0-9]{1,9}$'::text)) THEN true
                                     ELSE ((((e.value ->> 'timeout'::text))::integer < 1) OR (((e.value ->> 'timeout'::text))::integer > 31536000))
                                 END) THEN format('%s: "timeout" must be a whole number of seconds from 1 to 31536000'::text, e.key)
                                 WHEN (((e.value ->> 'type'::text) = 'sql'::text) AND (((e.value -> 'payload'::text) -> 'transaction'::text) = 'false'::jsonb) AND (((e.value -> 'payload'::text) ->> 'sql'::text) ~ '\{(job_id|type|schedule|status|error)\}'::text)) THEN format('%s: an sql hook with placeholders must run in a transaction: its values are set by a statement before the SQL, and "transaction": false runs one statement'::text, e.key)
                                 ELSE ((e.key || ': '::text) || cronq.payload_error((e.value ->> 'type'::text), COALESCE((e.value -> 'payload'::text), '{}'::jsonb)))
                             END AS msg
                        FROM jsonb_each(hooks_error.p_hooks) e(key, value)) x
               WHERE (x.msg IS NOT NULL)
               ORDER BY x.key
              LIMIT 1)
         END AS msg;
END;

ALTER FUNCTION cronq.hooks_error(p_hooks jsonb) OWNER TO postgres;

--
-- Name: hooks_permission_error(jsonb, text); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.hooks_permission_error(p_hooks jsonb, p_role text) RETURNS text
    LANGUAGE sql STABLE
    BEGIN ATOMIC
 SELECT format('%s: %s'::text, e.key, cronq.task_permission_error((e.value ->> 'type'::text), hooks_permission_error.p_role)) AS format
    FROM jsonb_each(hooks_permission_error.p_hooks) e(key, value)
   WHERE (cronq.task_permission_error((e.value ->> 'type'::text), hooks_permission_error.p_role) IS NOT NULL)
   ORDER BY e.key
  LIMIT 1;
END;

ALTER FUNCTION cronq.hooks_permission_error(p_hooks jsonb, p_role text) OWNER TO postgres;

--
-- Name: is_admin(); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.is_admin() RETURNS boolean
    LANGUAGE sql STABLE
    RETURN CASE WHEN (EXISTS (SELECT 1 FROM pg_roles WHERE (pg_roles.rolname = 'cronq_admin'::name))) THEN pg_has_role(CURRENT_USER, 'cronq_admin'::name, 'MEMBER'::text) ELSE false END;

ALTER FUNCTION cronq.is_admin() OWNER TO postgres;

--
-- Name: is_duration(text); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.is_duration(t text) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN ((t <> ''::text) AND (t !~ '^[ \t]'::text) AND (t !~ '[ \t]$'::text) AND (t ~* (((((('^([0-9]+(\.[0-9]+)?'::text || '|([0-9]+(\.[0-9]+)?[ \t]*(weeks|week|w))?'::text) || '([ \t]*[0-9]+(\.[0-9]+)?[ \t]*(days|day|d))?'::text) || '([ \t]*[0-9]+(\.[0-9]+)?[ \t]*(hours|hour|hrs|hr|h))?'::text) || '([ \t]*[0-9]+(\.[0-9]+)?[ \t]*(minutes|minute|mins|min|m))?'::text) || '([ \t]*[0-9]+(\.[0-9]+)?[ \t]*(seconds|second|secs|sec|s))?'::text) || '([ \t]*[0-9]+(\.[0-9]+)?[ \t]*(milliseconds|millisecond|msecs|msec|ms))?)$'::text)));

ALTER FUNCTION cronq.is_duration(t text) OWNER TO postgres;

--
-- Name: is_every(text); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.is_every(expr text) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN (expr ~* '^[[:space:]]*@every([[:space:]]|$)'::text);

ALTER FUNCTION cronq.is_every(expr text) OWNER TO postgres;

--
-- Name: job_keys(text, text, text, text); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.job_keys(p_queue text, p_type text, p_schedule text, p_limit_key text) RETURNS text[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN ARRAY[('queue:'::text || p_queue), ('type:'::text || p_type), ('schedule:'::text || p_schedule), p_limit_key];

ALTER FUNCTION cronq.job_keys(p_queue text, p_type text, p_schedule text, p_limit_key text) OWNER TO postgres;

--
-- Name: jobs_admit(); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.jobs_admit() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET enable_seqscan TO 'off'
    AS $$
declare
    h bigint;
begin
    if new.expires_at is not null and new.schedule is null
       and new.expires_at <= greatest(now(), coalesce(new.run_at, now())) then
        raise exception 'expires_at % is not later than the job''s run time', new.expires_at
            using errcode = '22023',
                  hint = 'A deadline is a time after the job is due (its run time, now by default).';
    end if;
    -- The common case, a key nobody holds: one probe of jobs_unique_active.
    if new.unique_key is not null and cronq.unique_key_in_use(new.unique_key) then
        perform cronq.expire_holder(new.unique_key);
        select j.id into h from cronq.jobs j
        where j.unique_key = new.unique_key and j.status in ('queued', 'failed', 'running')
          and j.status <> 'running' and j.expires_at <= now();
        if h is not null then
            raise exception 'unique key "%" is held by job %, past its deadline and locked by another transaction',
                left(new.unique_key, 200), h
                using errcode = '55P03',
                      hint = 'The job cannot run any more; enqueue again once that transaction ends.';
        end if;
        if exists (select 1 from cronq.jobs j where j.unique_key = new.unique_key
                   and j.status in ('queued', 'failed', 'running')) then
            return null;
        end if;
        if row_security_active('cronq.jobs'::regclass)
           and cronq.unique_key_in_use(new.unique_key) then
            raise exception 'unique key "%" is held by another role''s job', left(new.unique_key, 200)
                using errcode = '23505',
                      hint = 'Unique keys are shared by every role: choose one that names your application.';
        end if;
    end if;
    return new;
end
$$;

ALTER FUNCTION cronq.jobs_admit() OWNER TO postgres;

--
-- Name: jobs_author(); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.jobs_author() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
    if old.enqueued_by <> current_user::text and not cronq.may_act_for_others(tg_relid) then
        raise exception 'job %: only its author, %, may change what it runs', old.id, old.enqueued_by
            using errcode = '42501';
    end if;
    return new;
end
$$;

ALTER FUNCTION cronq.jobs_author() OWNER TO postgres;

--
-- Name: jobs_fixed(); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.jobs_fixed() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
    raise exception 'job %: its hooks and dependencies are fixed when it is enqueued', old.id
        using errcode = '42501';
end
$$;

ALTER FUNCTION cronq.jobs_fixed() OWNER TO postgres;

--
-- Name: jobs_guard(); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.jobs_guard() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
declare
    privileged pg_catalog.bool;
    msg pg_catalog.text;
begin
    if tg_op operator(pg_catalog.=) 'INSERT' then
        -- The trigger's WHEN lets a row with hook_of through only from
        -- the owner or a superuser (fire_hooks): from anyone else it is a
        -- forgery of the mark that skips these checks.
        if new.hook_of is not null then
            raise exception 'hook_of is written by cronq alone (the jobs hooks enqueue)'
                using errcode = '42501';
        end if;
        new.queue := coalesce(new.queue, 'default');
        new.payload := coalesce(new.payload, '{}');
        new.priority := coalesce(new.priority, 0);
        new.run_at := coalesce(new.run_at, pg_catalog.now());
        new.max_attempts := coalesce(new.max_attempts, 10);
        new.timeout := coalesce(new.timeout, '1 hour'::pg_catalog.interval);
        if new.enqueued_by is null
           or (new.enqueued_by operator(pg_catalog.<>) current_user::pg_catalog.text
               and not cronq.may_act_for_others(tg_relid)) then
            new.enqueued_by := current_user;
        end if;
    elsif (new.enqueued_by operator(pg_catalog.=) old.enqueued_by) is not true
          and not cronq.may_act_for_others(tg_relid) then
        raise exception 'only a superuser may change enqueued_by'
            using errcode = '42501';
    end if;
    if tg_op operator(pg_catalog.=) 'INSERT'
       or (new.type operator(pg_catalog.=) old.type) is not true
       or (new.payload operator(pg_catalog.=) old.payload) is not true then
        perform cronq.check_task(new.type, new.payload, new.enqueued_by);
    end if;
    if tg_op operator(pg_catalog.<>) 'INSERT' then
        return new;
    end if;
    -- Reserved keys and schedules bind the roles under row-level security;
    -- those it does not apply to (the owner, whose materialisation writes
    -- every schedule's occurrences, superusers, BYPASSRLS) see every row
    -- anyway. row_security_active() reads the catalog caches: no query
    -- per materialised row.
    privileged := not pg_catalog.row_security_active(tg_relid);
    if not privileged
       and (new.schedule is not null
            or pg_catalog.starts_with(new.idempotency_key, 'schedule:')
            or pg_catalog.starts_with(new.idempotency_key, 'notify:')) then
        msg := cronq.reserved_key_error(new.idempotency_key, new.schedule, new.scheduled_for,
                                        new.enqueued_by);
        if msg is not null then
            raise exception '%', msg using errcode = '42501';
        end if;
    end if;
    -- A key this role's job holds means "already enqueued": the row is
    -- skipped, whatever the path (COPY of many lines included). Another
    -- role's job holding it is said aloud, never a silent skip.
    if new.idempotency_key is not null then
        if cronq.key_taken(new.idempotency_key) then
            return null;
        end if;
        if not privileged and cronq.key_in_use(new.idempotency_key) then
            raise exception 'idempotency key "%" is held by another role''s job',
                pg_catalog.left(new.idempotency_key, 200)
                using errcode = '23505',
                      hint = 'Idempotency keys are shared by every role: choose one that names your application.';
        end if;
    end if;
    return new;
end
$$;

ALTER FUNCTION cronq.jobs_guard() OWNER TO postgres;

--
-- Name: jobs_hooks(); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.jobs_hooks() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
declare
    msg pg_catalog.text;
begin
    if pg_catalog.starts_with(new.idempotency_key, 'notify:') then
        new.hooks := null;
        return new;
    end if;
    msg := cronq.hooks_error(new.hooks);
    if msg is not null then
        raise exception '%', msg using errcode = '22023';
    end if;
    msg := cronq.hooks_permission_error(new.hooks, new.enqueued_by);
    if msg is not null then
        raise exception '%', msg using errcode = '42501';
    end if;
    if new.hooks operator(pg_catalog.=) '{}'::pg_catalog.jsonb then
        new.hooks := null;
    end if;
    return new;
end
$$;

ALTER FUNCTION cronq.jobs_hooks() OWNER TO postgres;

--
-- Name: jobs_link(); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.jobs_link() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
    insert into cronq.link_commits default values on conflict do nothing;
    perform pg_catalog.set_config('cronq.links_left', '', true);
    return null;
end
$$;

ALTER FUNCTION cronq.jobs_link() OWNER TO postgres;

--
-- Name: jobs_link_commit(); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.jobs_link_commit() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET enable_seqscan TO 'off'
    SET enable_nestloop TO 'off'
    SET jit TO 'off'
    AS $_$
declare
    taken text := pg_catalog.current_setting('cronq.links_taken', true);
    last bigint;
    kids bigint[];
begin
    delete from cronq.link_commits c where c.xid = pg_catalog.pg_current_xact_id();
    with l as (
        delete from cronq.plan_links l
        where l.xid = pg_catalog.pg_current_xact_id_if_assigned()
          and l.seq > case when taken ~ '^[0-9]{1,18}$' then taken::bigint else 0 end
        returning l.seq, l.child
    ), e as (
        select p.parent, pg_catalog.array_agg(l.child order by l.child) as kids
        from l cross join lateral
            pg_catalog.unnest((select c.depends_on from cronq.jobs c where c.id = l.child)) as p(parent)
        group by p.parent
    ), u as (
        update cronq.jobs j set dependants = coalesce(j.dependants, '{}') || e.kids
        from e
        where j.id = any(array(select e.parent from e)) and j.id = e.parent
        returning j.id, j.status, pg_catalog.cardinality(j.dependants) - pg_catalog.cardinality(e.kids) as before,
                  e.kids
    ), n as (
        insert into cronq.settle_parents (job_id, after_pos)
        select u.id, u.before from u
        where u.status in ('dead', 'cancelled')
          and exists (select 1 from cronq.jobs c where c.id = any(u.kids) and c.status = 'blocked')
        order by u.id
    )
    select max(l.seq), pg_catalog.array_agg(l.child) into last, kids from l;
    if last is not null then
        perform pg_catalog.set_config('cronq.links_taken', last::text, true);
        -- jobs_plan's count, taken again: each probe of a parent by its
        -- key (a subquery on its own, as in jobs_link)
        with r as (
            select k.id, k.waiting_for as had,
                   (select count(*) from cronq.jobs p
                    where p.id = any(k.depends_on) and p.status <> 'succeeded') as n
            from cronq.jobs k
            where k.id = any(kids) and k.status = 'blocked'
        )
        update cronq.jobs c
        set waiting_for = r.n, status = case when r.n = 0 then 'queued' else 'blocked' end, updated_at = now()
        from r
        where c.id = any(array(select r.id from r where r.n is distinct from r.had)) and c.id = r.id;
    end if;
    perform pg_catalog.set_config('cronq.links_left', '', true);
    return null;
end
$_$;

ALTER FUNCTION cronq.jobs_link_commit() OWNER TO postgres;

--
-- Name: jobs_lives(); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.jobs_lives() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
    new.earlier_attempts := coalesce(old.earlier_attempts, 0) + (old.attempts - new.attempts);
    return new;
end
$$;

ALTER FUNCTION cronq.jobs_lives() OWNER TO postgres;

--
-- Name: jobs_plan(); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.jobs_plan() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET enable_seqscan TO 'off'
    SET jit TO 'off'
    AS $$
declare
    wanted bigint[];
    found_ids bigint[];
    waiting integer;
    failed_id bigint;
    failed_status text;
begin
    new.dependants := null;
    new.waiting_for := null;
    if new.depends_on is null then
        return new;
    end if;
    wanted := array(select distinct d from unnest(new.depends_on) d order by d);
    if cardinality(wanted) = 0 then
        new.depends_on := null;
        return new;
    end if;
    -- Unblocking makes a job queued, where a unique key is held: two
    -- blocked jobs of one key would make the parent's outcome fail.
    if new.unique_key is not null then
        raise exception 'a job with a unique key cannot depend on other jobs' using errcode = '22023';
    end if;
    if cardinality(wanted) > 100000 then
        raise exception 'a job may depend on at most 100000 jobs' using errcode = '22023';
    end if;
    if wanted[1] is null then
        raise exception 'depends_on holds a null' using errcode = '22023';
    end if;
    -- Locked as jobs_link's update will lock them, so that no parent's
    -- status changes before this job is among its dependants: a runner
    -- recording an outcome waits for this transaction. Locking a row this
    -- transaction already holds writes nothing.
    select array_agg(p.id), count(*) filter (where p.status <> 'succeeded'),
           min(p.id) filter (where p.status in ('dead', 'cancelled'))
    into found_ids, waiting, failed_id
    from (select p.id, p.status from cronq.jobs p
          where p.id = any(wanted) and p.enqueued_by = new.enqueued_by
          for no key update of p) p;
    if coalesce(cardinality(found_ids), 0) < cardinality(wanted) then
        raise exception 'job % does not exist or belongs to another role: a job depends only on its author''s jobs',
            (select min(w) from unnest(wanted) w where w <> all(coalesce(found_ids, '{}')))
            using errcode = '22023';
    end if;
    if wanted[cardinality(wanted)] >= new.id then
        raise exception 'job % cannot depend on job %: a job depends only on jobs enqueued before it (no cycles)',
            new.id, wanted[cardinality(wanted)] using errcode = '22023';
    end if;
    new.depends_on := wanted;
    insert into cronq.plan_links (child) values (new.id);
    perform pg_catalog.set_config('cronq.links_left', 'on', true);
    if failed_id is not null then
        select j.status into failed_status from cronq.jobs j where j.id = failed_id;
        new.status := 'cancelled';
        new.error_code := 'dependency_failed';
        new.last_error := format('job %s, which it depends on, ended %s', failed_id, failed_status);
        new.finished_at := now();
    elsif waiting > 0 then
        new.status := 'blocked';
        new.waiting_for := waiting;
    end if;
    return new;
end
$$;

ALTER FUNCTION cronq.jobs_plan() OWNER TO postgres;

--
-- Name: jobs_settle(); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.jobs_settle() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET enable_seqscan TO 'off'
    SET jit TO 'off'
    AS $_$
declare
    wanted bigint[];
    held bigint[];
    budget integer;
    spent bigint := 0;
    over boolean := false;
    frontier bigint[] := '{}';
    walked bigint[];
    walked_read bigint[];
    walked_card integer[];
    covered text;
    named jsonb;
begin
    -- Cancelled by a walk that covered it (below): the walk read all its
    -- dependants, or noted it for the next wake. Known by a token only
    -- that walk's transaction holds, in a table no role may read or write
    -- (as 0026's grant): a session that names a token finds no row.
    if coalesce(current_setting('cronq.settle_covered', true), '') <> ''
       and exists (select 1 from cronq.settle_grants g
                   where g.token = current_setting('cronq.settle_covered', true)) then
        return null;
    end if;
    -- The budget left to a runner's transaction (0025), or to an
    -- enqueue or retry ending a late holder (expire_holder, 0026, sets it
    -- to 10,000): cronq.settle_left once set (by its first jobs_settle,
    -- or on a runner's session), else 10,000. It counts the entries of
    -- dependants arrays read, each a look-up, not the jobs settled: a
    -- job's dependants keep those already ended, and a walk that counted
    -- jobs read every one of them (helper-55: 140,000 ended entries under
    -- 21 blocked jobs, ~0.3 s of a runner's statement each time their
    -- parent ended). Any other transaction's is unbounded: it settles its
    -- own graph inline.
    if (coalesce(current_setting('cronq.settling', true), '') = 'on'
        and (pg_has_role(session_user, (select c.relowner from pg_class c
                                        where c.oid = 'cronq.jobs'::regclass), 'MEMBER')
             or (exists (select 1 from pg_roles r where r.rolname = 'cronq_admin')
                 and pg_has_role(session_user, 'cronq_admin', 'MEMBER'))))
       or (coalesce(current_setting('cronq.settle_grant', true), '') <> ''
           and exists (select 1 from cronq.settle_grants g
                       where g.token = current_setting('cronq.settle_grant', true))) then
        budget := case when coalesce(current_setting('cronq.settle_left', true), '') ~ '^[0-9]{1,6}$'
                       then current_setting('cronq.settle_left', true)::integer else 10000 end;
    else
        budget := 2147483646;
    end if;
    if new.status in ('dead', 'cancelled') and budget < 2147483646 then
        -- Every blocked job down the chain in one statement, as below, but
        -- a row for each entry read (blocked or not), and no more rows
        -- than the budget and one: a recursive query runs only as far as
        -- it is read, so past the budget nothing more is looked up. Not
        -- deduplicated (a union would drop an entry read again from
        -- another parent without counting it, and many parents could
        -- share the same ended dependants): a job reached from several
        -- parents is walked from each, which costs the budget, not more.
        -- In the order it reaches them, each job comes after a parent it
        -- was reached from, so the blocked jobs of the first budget rows
        -- are all below this one.
        with recursive d(id, blocked, parent, card) as (
            select e.id, exists (select 1 from cronq.jobs c where c.id = e.id and c.status = 'blocked'), new.id,
                   cardinality(new.dependants)
            from unnest(new.dependants[1:budget + 1]) e(id)
            union all
            select e.id, exists (select 1 from cronq.jobs c where c.id = e.id and c.status = 'blocked'), d.id,
                   p.card
            from d cross join lateral (select p.dependants, cardinality(p.dependants) as card
                                       from cronq.jobs p where p.id = d.id offset 0) p
            cross join lateral unnest(p.dependants[1:budget + 1]) e(id)
            where d.blocked
        ), r as materialized (
            select d.id, d.blocked, d.parent, d.card, row_number() over () as n
            from (select * from d limit budget + 1) d
        ), k as (
            select r.parent, count(*) as k, max(r.card) as card from r where r.n <= budget group by r.parent
        )
        -- What each job walked had in its dependants then, and how many of
        -- them were read (the frontier, below, is told from them).
        select (select count(*) from r),
               coalesce((select array_agg(distinct r.id) from r where r.blocked and r.n <= budget), '{}'),
               coalesce((select array_agg(k.parent order by k.parent) from k), '{}'),
               coalesce((select array_agg(k.k order by k.parent) from k), '{}'),
               coalesce((select array_agg(k.card order by k.parent) from k), '{}'),
               -- each blocked job walked, to the least parent it was
               -- reached from (the cancel's last_error, below)
               coalesce((select pg_catalog.jsonb_object_agg(m.id::text, m.parent)
                         from (select r.id, min(r.parent) as parent from r
                               where r.blocked and r.n <= budget group by r.id) m), '{}')
        into spent, wanted, walked, walked_read, walked_card, named;
        over := spent > budget;
    elsif new.status in ('dead', 'cancelled') then
        -- Unbounded (the author's own transaction): every blocked job down
        -- the chain in one statement: a trigger per level nested as deep as
        -- the chain, and a chain of a few hundred jobs exhausted the stack
        -- (stack depth limit exceeded). Each job once (a union of ids: a
        -- job of many parents is not walked again from each), so the work
        -- is the graph's edges; the dependants' own jobs_settle find
        -- nothing blocked below them and return.
        wanted := array(
            with recursive d(id) as (
                select c.id from cronq.jobs c
                where c.id = any(new.dependants) and c.status = 'blocked'
                union
                select c.id
                from d cross join lateral (select p.dependants from cronq.jobs p where p.id = d.id offset 0) p
                cross join lateral (select c.id from cronq.jobs c
                                    where c.id = any(p.dependants) and c.status = 'blocked' offset 0) c
            )
            select d.id from d order by d.id);
    elsif cardinality(new.dependants) > budget then
        -- a count down taken only in part could not be told from one not
        -- taken: past the budget, none is, and the notes settle them all;
        -- nothing is read
        over := true;
        wanted := '{}';
    else
        spent := cardinality(new.dependants);
        wanted := array(select c.id from cronq.jobs c
                        where c.id = any(new.dependants) and c.status = 'blocked'
                        order by c.id);
    end if;
    -- The budget is spent before the update below, whose cancelled jobs'
    -- own jobs_settle see what is left (an unbounded one has nothing to
    -- keep).
    if budget < 2147483646 then
        perform pg_catalog.set_config('cronq.settle_left', greatest(budget - spent, 0)::text, true);
    end if;
    -- A note not yet begun covers a second change of its parent (each
    -- dependant is recounted when its page runs): one is enough, however
    -- often the parent changes before a wake. Not one a page is taking
    -- now (locked: its recount may have read the parent as it was), and
    -- the note found is held (key share) until this commits, so that no
    -- page takes it before this change is seen.
    if over and not exists (select 1 from cronq.settle_parents n where n.job_id = new.id and n.after_pos = 0
                            for key share skip locked) then
        insert into cronq.settle_parents (job_id) values (new.id);
    end if;
    -- Nothing blocked below it (within the budget), nothing to do.
    if cardinality(wanted) = 0 then
        return null;
    end if;
    -- Dependants are a role's own rows, which it may hold locked (select
    -- ... for update, an open cancel): the statement recording an
    -- outcome, and the rescue, must never wait for them (a role kept
    -- every runner from recording and rescuing anything). Those held
    -- are left in cronq.settle_later: each wake settles them again from
    -- their parents.
    -- Except a count up (a parent retried after its success: only an
    -- author's or an admin's transaction, unbounded, makes one): it waits
    -- for the rows, as that transaction is the author's own. A count up
    -- left to a note was lost when another parent's success counted the
    -- job down inline first (helper-57): it was queued, a parent waiting.
    if old.status = 'succeeded' and new.status <> 'succeeded' and budget = 2147483646 then
        held := array(select c.id from cronq.jobs c where c.id = any(wanted) and c.status = 'blocked'
                      order by c.id for no key update);
    else
        held := array(select c.id from cronq.jobs c where c.id = any(wanted) and c.status = 'blocked'
                      order by c.id for no key update skip locked);
    end if;
    if cardinality(held) < cardinality(wanted) then
        -- In id order: two runners noting the same jobs never deadlock. A
        -- job already noted is not noted again (an author holding its
        -- dependants locked while it ends their parent over and over made
        -- the table grow without bound, and every wake read it whole).
        -- A note another transaction is deleting (a page settling the
        -- job, whose recount may not see this change) does not count; the
        -- one found is held until this commits, and a page deletes only
        -- notes it can lock.
        insert into cronq.settle_later (job_id)
        select l.w from (select unnest(wanted) except select unnest(held)) l(w)
        where not exists (select 1 from cronq.settle_later s where s.job_id = l.w for key share skip locked)
        order by l.w;
    end if;
    -- The frontier of a budgeted walk: the jobs it cancels now whose
    -- dependants it did not all read (past the budget: only the last one
    -- walked can be part read, rows coming in order), or whose dependants
    -- grew since it read them (a job enqueued meanwhile, its parent one of
    -- these: helper-58; read after the lock, which holds back any more).
    -- Noted, as a parent past the budget is (above); their own settling,
    -- nested in the update below, returns at once.
    if walked is not null and cardinality(held) > 0 then
        frontier := array(
            select h.id from unnest(held) h(id)
            cross join lateral (select cardinality(j.dependants) as now from cronq.jobs j where j.id = h.id) c
            left join unnest(walked, walked_read, walked_card) w(id, k, card) on w.id = h.id
            where c.now > 0 and (w.id is null or w.k < w.card or c.now > w.card)
            order by h.id);
        insert into cronq.settle_parents (job_id)
        select f.id from unnest(frontier) f(id)
        where not exists (select 1 from cronq.settle_parents n where n.job_id = f.id and n.after_pos = 0
                          for key share skip locked)
        order by f.id;
    end if;
    if new.status = 'succeeded' then
        update cronq.jobs c
        set waiting_for = c.waiting_for - 1,
            status = case when c.waiting_for <= 1 then 'queued' else 'blocked' end,
            updated_at = now()
        where c.id = any(held) and c.status = 'blocked';
    elsif old.status = 'succeeded' then
        -- retried after its success: its blocked dependants wait for it again
        update cronq.jobs c set waiting_for = c.waiting_for + 1, updated_at = now()
        where c.id = any(held) and c.status = 'blocked';
    elsif new.status in ('dead', 'cancelled') then
        -- Each names the first of its parents that ended: this job, or
        -- one the walk cancels (a lookup in a hash of the walk's jobs, not
        -- a search of the whole array for each parent). No join: the
        -- planner's count of rows, low in a table not yet analysed, made a
        -- join of 10,000 jobs compare every pair (seconds). After a
        -- budgeted walk their own jobs_settle, nested in this update, find
        -- its token and return (above): all below them was walked, or
        -- noted. After an unbounded one (an author's own) each looks again
        -- below itself, as before: what was enqueued since is seen there.
        if walked is not null then
            covered := pg_catalog.gen_random_uuid()::text;
            insert into cronq.settle_grants (token) values (covered);
            perform pg_catalog.set_config('cronq.settle_covered', covered, true);
        end if;
        update cronq.jobs c
        set status = 'cancelled', error_code = 'dependency_failed',
            -- after a budgeted walk, the least parent it reached the job
            -- from, in its map (0030: the job's depends_on, which the
            -- budget does not count, is then not read); else the least of
            -- its parents that ended
            last_error = (select format('job %s, which it depends on, ended %s', f.parent,
                                        case when f.parent = new.id then new.status else 'cancelled' end)
                          from (select coalesce((named ->> c.id::text)::bigint,
                                                (select min(x.parent) from unnest(c.depends_on) x(parent)
                                                 where x.parent = new.id or x.parent in (select unnest(wanted))))
                                       as parent) f),
            finished_at = now(), updated_at = now()
        where c.id = any(held) and c.status = 'blocked';
        if walked is not null then
            perform pg_catalog.set_config('cronq.settle_covered', '', true);
            delete from cronq.settle_grants g where g.token = covered;
        end if;
    end if;
    return null;
end
$_$;

ALTER FUNCTION cronq.jobs_settle() OWNER TO postgres;

--
-- Name: jobs_times_refused(); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.jobs_times_refused() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
    bad_run_at boolean := (tg_op = 'INSERT' or new.run_at is distinct from old.run_at)
        and not (new.run_at >= timestamptz '0001-01-01 00:00:00+00'
                 and new.run_at < timestamptz '10000-01-01 00:00:00+00');
    bad_expires_at boolean := not bad_run_at
        and not (new.expires_at >= timestamptz '0001-01-01 00:00:00+00'
                 and new.expires_at < timestamptz '10000-01-01 00:00:00+00');
    col text := case when bad_run_at then 'run_at' when bad_expires_at then 'expires_at' else 'scheduled_for' end;
    val timestamptz := case when bad_run_at then new.run_at when bad_expires_at then new.expires_at
                            else new.scheduled_for end;
begin
    raise exception 'invalid %: "%" is not a time of years 1 to 9999', col, val using errcode = '22008';
end
$$;

ALTER FUNCTION cronq.jobs_times_refused() OWNER TO postgres;

--
-- Name: jobs_transition_guard(); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.jobs_transition_guard() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
    -- An admin is trusted with every job (and may run cronq run itself).
    if cronq.is_admin() then
        return new;
    end if;
    if not (case
        -- retry
        when old.status in ('dead', 'failed', 'succeeded', 'cancelled') and new.status = 'queued'
             and new.attempts = 0 and new.locked_by is null and new.locked_until is null
             and not new.cancel_requested and new.started_at is null and new.finished_at is null
            then true
        -- the rest leave the attempt and its lease as they are
        when (new.attempts, new.locked_by, new.locked_until, new.started_at)
             is distinct from (old.attempts, old.locked_by, old.locked_until, old.started_at)
            then false
        -- cancel
        when old.status in ('queued', 'failed', 'blocked') and new.status = 'cancelled'
             and not new.cancel_requested and new.finished_at is not null
            then true
        -- a running job's cancellation, carried out by its worker
        when old.status = 'running' and new.status = 'running' and new.cancel_requested
             and new.finished_at is not distinct from old.finished_at
            then true
        -- a waiting job with a unique key replaced
        when old.status in ('queued', 'failed') and new.status = 'queued'
             and old.unique_key is not null and new.unique_key = old.unique_key
             and not new.cancel_requested and new.finished_at is null
             and (new.type, new.queue, new.priority, new.max_attempts, new.timeout,
                  new.idempotency_key, new.enqueued_by)
                 is not distinct from (old.type, old.queue, old.priority, old.max_attempts,
                                       old.timeout, old.idempotency_key, old.enqueued_by)
            then true
        else false
    end) then
        raise exception 'job %: a job is changed only by cancelling or retrying it', old.id
            using errcode = '42501', hint = 'Use cronq.cancel(id), cronq.retry(id) or the CLI.';
    end if;
    if new.status = 'cancelled' then
        new.finished_at := now();
    end if;
    new.updated_at := now();
    return new;
end
$$;

ALTER FUNCTION cronq.jobs_transition_guard() OWNER TO postgres;

--
-- Name: jobs_wait(); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.jobs_wait() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
    new.waiting_for := (select count(*) filter (where p.status <> 'succeeded')
                        from (select p.status from cronq.jobs p
                              where p.id = any(new.depends_on)
                              for no key update of p) p);
    if new.waiting_for > 0 then
        new.status := 'blocked';
    end if;
    return new;
end
$$;

ALTER FUNCTION cronq.jobs_wait() OWNER TO postgres;

--
-- Name: json_depth(jsonb); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.json_depth(v jsonb) RETURNS integer
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN CASE jsonb_typeof(v) WHEN 'object'::text THEN (1 + COALESCE((SELECT max(cronq.json_depth(e.value)) AS max FROM jsonb_each(json_depth.v) e(key, value)), 0)) WHEN 'array'::text THEN (1 + COALESCE((SELECT max(cronq.json_depth(e.value)) AS max FROM jsonb_array_elements(json_depth.v) e(value)), 0)) ELSE 0 END;

ALTER FUNCTION cronq.json_depth(v jsonb) OWNER TO postgres;

--
-- Name: key_in_use(text); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.key_in_use(p_key text) RETURNS boolean
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET enable_seqscan TO 'off'
    AS $$
    select exists (select 1 from cronq.jobs j where j.idempotency_key = p_key)
$$;

ALTER FUNCTION cronq.key_in_use(p_key text) OWNER TO postgres;

--
-- Name: key_taken(text); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.key_taken(p_key text) RETURNS boolean
    LANGUAGE sql STABLE
    SET enable_seqscan TO 'off'
    RETURN (EXISTS (SELECT 1 FROM cronq.jobs WHERE (jobs.idempotency_key = key_taken.p_key)));

ALTER FUNCTION cronq.key_taken(p_key text) OWNER TO postgres;

--
-- Name: known_task(text); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.known_task(p_type text) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN (p_type = ANY (ARRAY['noop'::text, 'sleep'::text, 'fail'::text, 'sql'::text, 'exec'::text, 'purge'::text]));

ALTER FUNCTION cronq.known_task(p_type text) OWNER TO postgres;

--
-- Name: limit_check(text); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.limit_check(key text) RETURNS void
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
    why text := cronq.flow_key_error(key);
begin
    if why is not null then
        raise exception '%', why using errcode = '22023';
    end if;
    if not cronq.manages_flow() then
        raise exception 'only members of cronq_admin limit %', key using errcode = '42501';
    end if;
end
$$;

ALTER FUNCTION cronq.limit_check(key text) OWNER TO postgres;

--
-- Name: limit_key_error(text); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.limit_key_error(k text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN COALESCE(cronq.flow_key_error(k), CASE WHEN (k ~ '^(queue|type|schedule):'::text) THEN format('%s cannot be a limit key: a job has its queue:, type: and schedule: keys by itself'::text, k) ELSE NULL::text END);

ALTER FUNCTION cronq.limit_key_error(k text) OWNER TO postgres;

--
-- Name: limited(); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.limited() RETURNS boolean
    LANGUAGE sql STABLE
    RETURN (EXISTS (SELECT 1 FROM cronq.limits));

ALTER FUNCTION cronq.limited() OWNER TO postgres;

--
-- Name: limits_serialise(); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.limits_serialise() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
    lock table cronq.limits in exclusive mode;
    return null;
end
$$;

ALTER FUNCTION cronq.limits_serialise() OWNER TO postgres;

--
-- Name: limits_stamp(); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.limits_stamp() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
    new.set_by := current_user;
    new.set_at := now();
    return new;
end
$$;

ALTER FUNCTION cronq.limits_stamp() OWNER TO postgres;

--
-- Name: pauses; Type: TABLE; Schema: cronq; Owner: postgres
--

CREATE TABLE cronq.pauses (
    key text NOT NULL,
    until timestamp with time zone,
    paused_by text DEFAULT CURRENT_USER NOT NULL,
    paused_at timestamp with time zone DEFAULT now() NOT NULL,
    schedule text,
    removed boolean DEFAULT false NOT NULL,
    CONSTRAINT pauses_check CHECK (((key ~~ 'schedule:%'::text) = (schedule IS NOT NULL))),
    CONSTRAINT pauses_check1 CHECK (((schedule IS NULL) OR (key = ('schedule:'::text || schedule)))),
    CONSTRAINT pauses_key_check CHECK ((cronq.flow_key_error(key) IS NULL))
);

ALTER TABLE cronq.pauses OWNER TO postgres;

--
-- Name: COLUMN pauses.removed; Type: COMMENT; Schema: cronq; Owner: postgres
--

COMMENT ON COLUMN cronq.pauses.removed IS 'set true to end the pause (a trigger deletes the row): how a member of cronq_user resumes its schedule';

--
-- Name: manages_flow(); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.manages_flow() RETURNS boolean
    LANGUAGE sql STABLE
    RETURN ((SELECT cronq.is_admin() AS is_admin) OR pg_has_role((SELECT c.relowner FROM pg_class c WHERE (c.oid = ('cronq.pauses'::regclass)::oid)), 'MEMBER'::text));

ALTER FUNCTION cronq.manages_flow() OWNER TO postgres;

--
-- Name: materialise(text[], timestamp with time zone[], text[], timestamp with time zone[]); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.materialise(p_names text[], p_fires timestamp with time zone[], p_sched text[], p_next timestamp with time zone[]) RETURNS TABLE(schedule text, job_id bigint)
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    select m.schedule, m.job_id
    from cronq.materialise(p_names, p_fires, p_sched, p_next, '{}', '{}', '{}', '{}') m
$$;

ALTER FUNCTION cronq.materialise(p_names text[], p_fires timestamp with time zone[], p_sched text[], p_next timestamp with time zone[]) OWNER TO postgres;

--
-- Name: materialise(text[], timestamp with time zone[], text[], timestamp with time zone[], text[], timestamp with time zone[], text[], text[]); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.materialise(p_names text[], p_fires timestamp with time zone[], p_sched text[], p_next timestamp with time zone[], p_skip_names text[], p_skip_fires timestamp with time zone[], p_skip_why text[], p_skip_detail text[]) RETURNS TABLE(schedule text, job_id bigint)
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    select m.schedule, m.job_id
    from cronq.materialise(p_names, p_fires, p_sched, p_next, p_skip_names, p_skip_fires,
                           p_skip_why, p_skip_detail, '{}'::timestamptz[]) m
$$;

ALTER FUNCTION cronq.materialise(p_names text[], p_fires timestamp with time zone[], p_sched text[], p_next timestamp with time zone[], p_skip_names text[], p_skip_fires timestamp with time zone[], p_skip_why text[], p_skip_detail text[]) OWNER TO postgres;

--
-- Name: materialise(text[], timestamp with time zone[], text[], timestamp with time zone[], text[], timestamp with time zone[], text[], text[], timestamp with time zone[]); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.materialise(p_names text[], p_fires timestamp with time zone[], p_sched text[], p_next timestamp with time zone[], p_skip_names text[], p_skip_fires timestamp with time zone[], p_skip_why text[], p_skip_detail text[], p_through timestamp with time zone[]) RETURNS TABLE(schedule text, job_id bigint)
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET lock_timeout TO '1s'
    AS $$
    with ins as (
        select o.schedule, o.job_id, o.fire_at from cronq.enqueue_occurrences(p_names, p_fires, true) o
    ), newest as (
        select ins.schedule, max(ins.job_id) as id from ins group by ins.schedule
    ), upd as (
        update cronq.schedules s
        set next_run_at = n.next,
            last_enqueued_at = case when newest.id is not null then now() else s.last_enqueued_at end,
            last_job_id = coalesce(newest.id, s.last_job_id),
            decided_through = greatest(s.decided_through, n.through)
        from unnest(p_sched, p_next, p_through) as n(name, next, through)
        left join newest on newest.schedule = n.name
        where s.name = n.name
        returning s.name
    ), held as materialized (
        -- the occurrences no job was written for: their key was held (rare;
        -- looked up alone, not with every occurrence)
        select f.name, f.fire from unnest(p_names, p_fires) as f(name, fire)
        where not exists (select 1 from ins where ins.schedule = f.name and ins.fire_at = f.fire)
    ), ledger as (
        insert into cronq.occurrences (schedule, fire_at, decision, job_id, detail)
        select ins.schedule, ins.fire_at, 'enqueued', ins.job_id, null from ins
        union all
        -- an occurrence whose key a job already held: the schedule's own job
        -- (a backfill's), or, held by another role's job (one written for a
        -- schedule of that name before), refused
        select f.name, f.fire, case when h.id is null then 'refused' else 'enqueued' end, h.id,
               case when h.id is null then 'its key is held by a job that is not this schedule''s'
                    else 'already enqueued' end
        from held f
        join cronq.schedules s on s.name = f.name
        left join cronq.jobs h
          on h.idempotency_key = 'schedule:' || f.name || ':'
                 || to_char(f.fire at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
         and h.schedule = f.name and h.enqueued_by = s.created_by
        union all
        select k.name, k.fire, k.why,
               case when k.why = 'overlap'
                    then (select s.last_job_id from cronq.schedules s where s.name = k.name) end,
               k.detail
        from unnest(p_skip_names, p_skip_fires, p_skip_why, p_skip_detail) as k(name, fire, why, detail)
    )
    select ins.schedule, ins.job_id from ins
$$;

ALTER FUNCTION cronq.materialise(p_names text[], p_fires timestamp with time zone[], p_sched text[], p_next timestamp with time zone[], p_skip_names text[], p_skip_fires timestamp with time zone[], p_skip_why text[], p_skip_detail text[], p_through timestamp with time zone[]) OWNER TO postgres;

--
-- Name: may_act_for_others(oid); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.may_act_for_others(tbl oid) RETURNS boolean
    LANGUAGE sql STABLE
    RETURN (EXISTS (SELECT 1 FROM pg_roles r WHERE ((r.rolname = CURRENT_USER) AND (r.rolsuper OR (r.oid = (SELECT c.relowner FROM pg_class c WHERE (c.oid = may_act_for_others.tbl)))))));

ALTER FUNCTION cronq.may_act_for_others(tbl oid) OWNER TO postgres;

--
-- Name: occurrence_lock(); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.occurrence_lock() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
    perform from cronq.schedules s where s.name = new.schedule for no key update;
    return new;
end
$$;

ALTER FUNCTION cronq.occurrence_lock() OWNER TO postgres;

--
-- Name: pause(text, timestamp with time zone); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.pause(key text, until timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
    was boolean;
begin
    perform cronq.flow_check(key, 'pause');
    if until is not null and until <= now() then
        raise exception 'until % is not in the future', until using errcode = '22023';
    end if;
    if key like 'schedule:%' and not exists
            (select 1 from cronq.schedules s where 'schedule:' || s.name = key) then
        raise exception 'schedule "%" does not exist', substr(key, 10) using errcode = 'P0002',
            hint = 'A role sees only the schedules it created, unless it is a member of cronq_admin.';
    end if;
    if cronq.manages_flow() then
        delete from cronq.pauses p where p.until <= now() and p.schedule is null;   -- ended by themselves
    end if;
    select p.until is null or p.until > now() into was from cronq.pauses p where p.key = pause.key;
    insert into cronq.pauses as p (key, until, schedule)
        values (pause.key, pause.until, case when key like 'schedule:%' then substr(key, 10) end)
        on conflict on constraint pauses_pkey do update set until = excluded.until;
    return not coalesce(was, false);
end
$$;

ALTER FUNCTION cronq.pause(key text, until timestamp with time zone) OWNER TO postgres;

--
-- Name: paused_keys(); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.paused_keys() RETURNS text[]
    LANGUAGE sql STABLE
    RETURN (SELECT COALESCE(array_agg(p.key), '{}'::text[]) AS "coalesce" FROM cronq.pauses p WHERE ((p.key !~~ 'schedule:%'::text) AND ((p.until IS NULL) OR (p.until > now()))));

ALTER FUNCTION cronq.paused_keys() OWNER TO postgres;

--
-- Name: pauses_forever(); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.pauses_forever() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
    new.until := null;
    return new;
end
$$;

ALTER FUNCTION cronq.pauses_forever() OWNER TO postgres;

--
-- Name: pauses_stamp(); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.pauses_stamp() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
    new.paused_by := current_user;
    new.paused_at := now();
    return new;
end
$$;

ALTER FUNCTION cronq.pauses_stamp() OWNER TO postgres;

--
-- Name: unknown_key(jsonb, text[]); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.unknown_key(p jsonb, allowed text[]) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN (SELECT k.k FROM jsonb_object_keys(unknown_key.p) k(k) WHERE (k.k <> ALL (unknown_key.allowed)) ORDER BY (k.k COLLATE "C") LIMIT 1);

ALTER FUNCTION cronq.unknown_key(p jsonb, allowed text[]) OWNER TO postgres;

--
-- Name: payload_rules_exec(jsonb); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.payload_rules_exec(p jsonb) RETURNS text
    LANGUAGE sql STABLE PARALLEL SAFE
    RETURN CASE WHEN (cronq.unknown_key(p, '{command,args,env}'::text[]) IS NOT NULL) THEN format('unknown key "%s"'::text, cronq.unknown_key(p, '{command,args,env}'::text[])) WHEN (NOT (p ? 'command'::text)) THEN '"command" is required'::text WHEN ((jsonb_typeof((p -> 'command'::text)) <> 'string'::text) OR ((p ->> 'command'::text) !~ '^[A-Za-z0-9_][A-Za-z0-9_.+-]{0,254}$'::text)) THEN '"command" must be a program name in the exec directory: letters, digits and _.+- with no "/"'::text WHEN ((p ? 'args'::text) AND ((jsonb_typeof((p -> 'args'::text)) <> 'array'::text) OR (EXISTS (SELECT FROM jsonb_array_elements((payload_rules_exec.p -> 'args'::text)) a(value) WHERE (jsonb_typeof(a.value) <> 'string'::text))))) THEN '"args" must be an array of strings'::text WHEN ((p ? 'env'::text) AND ((jsonb_typeof((p -> 'env'::text)) <> 'object'::text) OR (EXISTS (SELECT FROM jsonb_each((payload_rules_exec.p -> 'env'::text)) e(key, value) WHERE ((jsonb_typeof(e.value) <> 'string'::text) OR (e.key !~ '^[A-Za-z_][A-Za-z0-9_]*$'::text) OR (e.key ~~ 'CRONQ\_%'::text)))))) THEN '"env" must map variable names (not CRONQ_*) to strings'::text WHEN ((p ? 'env'::text) AND (EXISTS (SELECT FROM jsonb_object_keys((payload_rules_exec.p -> 'env'::text)) k(k) WHERE cronq.exec_env_denied(k.k)))) THEN format('"env" may not set "%s": it changes how a program is loaded or interpreted'::text, (SELECT k.k FROM jsonb_object_keys((payload_rules_exec.p -> 'env'::text)) k(k) WHERE cronq.exec_env_denied(k.k) ORDER BY (octet_length(k.k)), (k.k COLLATE "C") LIMIT 1)) WHEN ((p ? 'env'::text) AND (EXISTS (SELECT FROM jsonb_each_text((payload_rules_exec.p -> 'env'::text)) e(key, value) WHERE cronq.exec_env_value_refused(e.key, e.value)))) THEN format('"env" may not set "%s" to a path or a format ("/", ".." or "%%")'::text, (SELECT e.key FROM jsonb_each_text((payload_rules_exec.p -> 'env'::text)) e(key, value) WHERE cronq.exec_env_value_refused(e.key, e.value) ORDER BY (octet_length(e.key)), (e.key COLLATE "C") LIMIT 1)) WHEN (octet_length((p)::text) > 98304) THEN CASE WHEN (octet_length((p)::text) > 131057) THEN 'larger than 131057 bytes as JSON text, too large for the CRONQ_PAYLOAD variable (the kernel passes none over 128 KiB)'::text WHEN (cronq.exec_args_bytes(p) > 393216) THEN 'arguments and environment larger than 393216 bytes (strings with their NULs and 8-byte pointers, CRONQ_PAYLOAD included)'::text ELSE NULL::text END ELSE NULL::text END;

ALTER FUNCTION cronq.payload_rules_exec(p jsonb) OWNER TO postgres;

--
-- Name: payload_rules_fail(jsonb); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.payload_rules_fail(p jsonb) RETURNS text
    LANGUAGE sql STABLE PARALLEL SAFE
    RETURN CASE WHEN (cronq.unknown_key(p, '{message,code,permanent}'::text[]) IS NOT NULL) THEN format('unknown key "%s"'::text, cronq.unknown_key(p, '{message,code,permanent}'::text[])) WHEN ((p ? 'message'::text) AND (jsonb_typeof((p -> 'message'::text)) <> 'string'::text)) THEN '"message" must be a string'::text WHEN ((p ? 'code'::text) AND ((jsonb_typeof((p -> 'code'::text)) <> 'string'::text) OR ((p ->> 'code'::text) !~ '^[a-z0-9_]{1,64}$'::text))) THEN '"code" must be 1 to 64 characters of a-z, 0-9 and _'::text WHEN ((p ? 'permanent'::text) AND (jsonb_typeof((p -> 'permanent'::text)) <> 'boolean'::text)) THEN '"permanent" must be true or false'::text ELSE NULL::text END;

ALTER FUNCTION cronq.payload_rules_fail(p jsonb) OWNER TO postgres;

--
-- Name: payload_rules_noop(jsonb); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.payload_rules_noop(p jsonb) RETURNS text
    LANGUAGE sql STABLE PARALLEL SAFE
    RETURN CASE WHEN (p <> '{}'::jsonb) THEN format('unknown key "%s"'::text, cronq.unknown_key(p, '{}'::text[])) ELSE NULL::text END;

ALTER FUNCTION cronq.payload_rules_noop(p jsonb) OWNER TO postgres;

--
-- Name: payload_rules_purge(jsonb); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.payload_rules_purge(p jsonb) RETURNS text
    LANGUAGE sql STABLE PARALLEL SAFE
    RETURN CASE WHEN (cronq.unknown_key(p, '{older_than,statuses}'::text[]) IS NOT NULL) THEN format('unknown key "%s"'::text, cronq.unknown_key(p, '{older_than,statuses}'::text[])) WHEN (jsonb_typeof((p -> 'older_than'::text)) = 'string'::text) THEN CASE WHEN (NOT cronq.is_duration((p ->> 'older_than'::text))) THEN '"older_than" must be a duration such as "30d" or "12h"'::text WHEN ((p ? 'statuses'::text) AND ((jsonb_typeof((p -> 'statuses'::text)) <> 'array'::text) OR (jsonb_array_length((p -> 'statuses'::text)) = 0) OR (EXISTS (SELECT 1 FROM jsonb_array_elements((payload_rules_purge.p -> 'statuses'::text)) s(value) WHERE (s.value <> ALL (ARRAY['"succeeded"'::jsonb, '"dead"'::jsonb, '"cancelled"'::jsonb])))))) THEN '"statuses" must be a non-empty list of succeeded, dead and cancelled'::text ELSE NULL::text END WHEN (jsonb_typeof((p -> 'older_than'::text)) = 'object'::text) THEN CASE WHEN (p ? 'statuses'::text) THEN '"statuses" goes with a single "older_than" duration'::text WHEN (((SELECT count(*) AS count FROM jsonb_object_keys((payload_rules_purge.p -> 'older_than'::text)) jsonb_object_keys(jsonb_object_keys)) = 0) OR (EXISTS (SELECT 1 FROM jsonb_each((payload_rules_purge.p -> 'older_than'::text)) e(key, value) WHERE ((e.key <> ALL (ARRAY['succeeded'::text, 'dead'::text, 'cancelled'::text])) OR (jsonb_typeof(e.value) <> 'string'::text) OR (NOT cronq.is_duration((e.value #>> '{}'::text[]))))))) THEN '"older_than" must map succeeded, dead or cancelled to durations'::text ELSE NULL::text END ELSE '"older_than" is required: a duration, or durations by status'::text END;

ALTER FUNCTION cronq.payload_rules_purge(p jsonb) OWNER TO postgres;

--
-- Name: payload_rules_sleep(jsonb); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.payload_rules_sleep(p jsonb) RETURNS text
    LANGUAGE sql STABLE PARALLEL SAFE
    RETURN CASE WHEN (cronq.unknown_key(p, '{seconds}'::text[]) IS NOT NULL) THEN format('unknown key "%s"'::text, cronq.unknown_key(p, '{seconds}'::text[])) WHEN (NOT (p ? 'seconds'::text)) THEN '"seconds" is required'::text WHEN (jsonb_typeof((p -> 'seconds'::text)) <> 'number'::text) THEN '"seconds" must be a number'::text WHEN ((((p ->> 'seconds'::text))::numeric < (0)::numeric) OR (((p ->> 'seconds'::text))::numeric > (86400)::numeric)) THEN '"seconds" must be between 0 and 86400'::text ELSE NULL::text END;

ALTER FUNCTION cronq.payload_rules_sleep(p jsonb) OWNER TO postgres;

--
-- Name: payload_rules_sql(jsonb); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.payload_rules_sql(p jsonb) RETURNS text
    LANGUAGE sql STABLE PARALLEL SAFE
    RETURN CASE WHEN (cronq.unknown_key(p, '{sql,transaction}'::text[]) IS NOT NULL) THEN format('unknown key "%s"'::text, cronq.unknown_key(p, '{sql,transaction}'::text[])) WHEN (NOT (p ? 'sql'::text)) THEN '"sql" is required'::text WHEN ((jsonb_typeof((p -> 'sql'::text)) <> 'string'::text) OR (btrim((p ->> 'sql'::text), ' 	
'::text) = ''::text)) THEN '"sql" must be a non-empty string'::text WHEN ((p ? 'transaction'::text) AND (jsonb_typeof((p -> 'transaction'::text)) <> 'boolean'::text)) THEN '"transaction" must be true or false'::text ELSE NULL::text END;

ALTER FUNCTION cronq.payload_rules_sql(p jsonb) OWNER TO postgres;

--
-- Name: queue_refused(); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.queue_refused() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
    raise exception 'queue name must be printable text without control characters'
        using errcode = 'check_violation';
end
$$;

ALTER FUNCTION cronq.queue_refused() OWNER TO postgres;

--
-- Name: remove_row(); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.remove_row() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
    if tg_table_name = 'schedules' then
        delete from cronq.schedules where name = new.name;
    else
        delete from cronq.pauses where key = new.key;
    end if;
    return null;
end
$$;

ALTER FUNCTION cronq.remove_row() OWNER TO postgres;

--
-- Name: requeue_jobs(bigint[]); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.requeue_jobs(p_ids bigint[]) RETURNS bigint[]
    LANGUAGE sql
    BEGIN ATOMIC
 WITH upd AS (
          UPDATE cronq.jobs j SET status = 'queued'::text, run_at = now(), attempts = 0, locked_by = NULL::text, locked_until = NULL::timestamp with time zone, cancel_requested = false, started_at = NULL::timestamp with time zone, finished_at = NULL::timestamp with time zone, last_error = NULL::text, error_code = NULL::text, expires_at = NULL::timestamp with time zone, updated_at = now()
           WHERE ((j.id = ANY (requeue_jobs.p_ids)) AND (j.status = ANY (ARRAY['dead'::text, 'failed'::text, 'succeeded'::text, 'cancelled'::text])))
           RETURNING j.id
         )
  SELECT COALESCE(array_agg(upd.id), '{}'::bigint[]) AS "coalesce"
    FROM upd;
END;

ALTER FUNCTION cronq.requeue_jobs(p_ids bigint[]) OWNER TO postgres;

--
-- Name: schedules; Type: TABLE; Schema: cronq; Owner: postgres
--

CREATE TABLE cronq.schedules (
    name text NOT NULL,
    cron text NOT NULL,
    timezone text DEFAULT 'UTC'::text NOT NULL,
    type text NOT NULL,
    payload jsonb DEFAULT '{}'::jsonb NOT NULL,
    queue text DEFAULT 'default'::text NOT NULL,
    priority integer DEFAULT 0 NOT NULL,
    max_attempts integer DEFAULT 10 NOT NULL,
    timeout interval,
    enabled boolean DEFAULT true NOT NULL,
    catchup text DEFAULT 'latest'::text NOT NULL,
    overlap text DEFAULT 'skip'::text NOT NULL,
    next_run_at timestamp with time zone,
    last_enqueued_at timestamp with time zone,
    last_job_id bigint,
    created_by text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    start_deadline interval,
    history text DEFAULT 'all'::text NOT NULL,
    keep integer,
    anchor timestamp with time zone,
    spread interval,
    disabled_from timestamp with time zone,
    disabled_until timestamp with time zone,
    hooks jsonb,
    removed boolean DEFAULT false NOT NULL,
    run_now text,
    decided_through timestamp with time zone,
    CONSTRAINT schedules_anchor_check CHECK (((anchor >= '0001-01-01 00:00:00+00'::timestamp with time zone) AND (anchor <= '9999-12-31 23:59:59+00'::timestamp with time zone))),
    CONSTRAINT schedules_catchup_check CHECK ((catchup = ANY (ARRAY['latest'::text, 'all'::text, 'skip'::text]))),
    CONSTRAINT schedules_cron_check CHECK (((cron <> ''::text) AND (length(cron) <= 1000))),
    CONSTRAINT schedules_decided_through_check CHECK (((decided_through >= '0001-01-01 00:00:00+00'::timestamp with time zone) AND (decided_through < '10000-01-01 00:00:00+00'::timestamp with time zone))),
    CONSTRAINT schedules_history_check CHECK ((history = ANY (ARRAY['all'::text, 'errors'::text]))),
    CONSTRAINT schedules_keep_check CHECK (((keep >= 1) AND (keep <= 10000))),
    CONSTRAINT schedules_max_attempts_check CHECK (((max_attempts >= 1) AND (max_attempts <= 1000))),
    CONSTRAINT schedules_name_check CHECK (((name ~ '^[A-Za-z0-9_.:@-]+$'::text) AND (length(name) <= 200))),
    CONSTRAINT schedules_overlap_check CHECK ((overlap = ANY (ARRAY['skip'::text, 'allow'::text]))),
    CONSTRAINT schedules_queue_check CHECK (((queue <> ''::text) AND (length(queue) <= 200))),
    CONSTRAINT schedules_run_now_check CHECK ((run_now IS NULL)),
    CONSTRAINT schedules_spread_check CHECK ((((spread >= '00:00:00'::interval) AND (spread <= '1 day'::interval)) AND (EXTRACT(epoch FROM spread) = floor(EXTRACT(epoch FROM spread))))),
    CONSTRAINT schedules_start_deadline_check CHECK ((start_deadline > '00:00:00'::interval)),
    CONSTRAINT schedules_timeout_check CHECK ((timeout > '00:00:00'::interval))
);

ALTER TABLE cronq.schedules OWNER TO postgres;

--
-- Name: TABLE schedules; Type: COMMENT; Schema: cronq; Owner: postgres
--

COMMENT ON TABLE cronq.schedules IS 'cronq schedules: named cron definitions; see cronq(1)';

--
-- Name: COLUMN schedules.history; Type: COMMENT; Schema: cronq; Owner: postgres
--

COMMENT ON COLUMN cronq.schedules.history IS 'the history policy of the schedule''s jobs';

--
-- Name: COLUMN schedules.keep; Type: COMMENT; Schema: cronq; Owner: postgres
--

COMMENT ON COLUMN cronq.schedules.keep IS 'purge keeps the newest keep finished jobs of the schedule whatever their age, and deletes the rest whatever their age; null: the age rules';

--
-- Name: COLUMN schedules.disabled_from; Type: COMMENT; Schema: cronq; Owner: postgres
--

COMMENT ON COLUMN cronq.schedules.disabled_from IS 'when the schedule was last disabled (its fire times from then on are skipped, "disabled")';

--
-- Name: COLUMN schedules.disabled_until; Type: COMMENT; Schema: cronq; Owner: postgres
--

COMMENT ON COLUMN cronq.schedules.disabled_until IS 'when it was enabled again after disabled_from (NULL while disabled)';

--
-- Name: COLUMN schedules.removed; Type: COMMENT; Schema: cronq; Owner: postgres
--

COMMENT ON COLUMN cronq.schedules.removed IS 'set true to remove the schedule (a trigger deletes the row): how a member of cronq_user removes one';

--
-- Name: COLUMN schedules.decided_through; Type: COMMENT; Schema: cronq; Owner: postgres
--

COMMENT ON COLUMN cronq.schedules.decided_through IS 'the newest fire time a wake decided (enqueued, skipped or refused), without the spread''s offset: no fire time up to it is decided again';

--
-- Name: reserved_key_error(text, text, timestamp with time zone, text); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.reserved_key_error(p_key text, p_schedule text, p_fire timestamp with time zone, p_role text) RETURNS text
    LANGUAGE sql STABLE
    BEGIN ATOMIC
 SELECT
         CASE
             WHEN ((p_schedule IS NOT NULL) AND (NOT (EXISTS ( SELECT 1
                FROM cronq.schedules s
               WHERE ((s.name = reserved_key_error.p_schedule) AND (s.created_by = reserved_key_error.p_role)))))) THEN format('role "%s" may not enqueue jobs of schedule "%s": it is not its author'::text, p_role, p_schedule)
             WHEN (starts_with(p_key, 'schedule:'::text) AND (p_key IS DISTINCT FROM ((('schedule:'::text || p_schedule) || ':'::text) || to_char((p_fire AT TIME ZONE 'UTC'::text), 'YYYY-MM-DD"T"HH24:MI:SS"Z"'::text))) AND (p_key IS DISTINCT FROM ((('schedule:'::text || p_schedule) || ':manual:'::text) || to_char((p_fire AT TIME ZONE 'UTC'::text), 'YYYY-MM-DD"T"HH24:MI:SS"Z"'::text)))) THEN format('idempotency key "%s" is reserved: keys starting with "schedule:" belong to the schedule and fire time they name'::text, "left"(p_key, 200))
             WHEN (starts_with(p_key, 'schedule:'::text) AND (NOT ((p_fire >= '0001-01-01 00:00:00+00'::timestamp with time zone) AND (p_fire <= now())))) THEN format('idempotency key "%s" names a fire time not due yet (or before year 1): a schedule enqueues its occurrences itself once they are due'::text, "left"(p_key, 200))
             WHEN starts_with(p_key, 'notify:'::text) THEN format('idempotency key "%s" is reserved: keys starting with "notify:" belong to hooks'::text, "left"(p_key, 200))
             ELSE NULL::text
         END AS "case";
END;

ALTER FUNCTION cronq.reserved_key_error(p_key text, p_schedule text, p_fire timestamp with time zone, p_role text) OWNER TO postgres;

--
-- Name: resume(text); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.resume(key text) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
    was boolean;
    ended timestamptz;
    began timestamptz;
begin
    perform cronq.flow_check(key, 'resume');
    if cronq.manages_flow() then
        delete from cronq.pauses p where p.until <= now() and p.schedule is null;   -- ended by themselves
    end if;
    update cronq.pauses p set removed = true where p.key = resume.key
        returning p.until, p.paused_at into ended, began;
    was := found and (ended is null or ended > now());
    -- A schedule resumes from its next fire time: the ones that came while
    -- it was paused stay skipped, catchup all or not. Paused still, from
    -- the second after the resume; ended by its until (and no wake came
    -- since), from that time.
    if found and key like 'schedule:%' then
        update cronq.schedules s
        set next_run_at = case when was
                               then greatest(s.next_run_at, date_trunc('second', clock_timestamp()) + interval '1 second')
                               else ended end
        where s.name = substr(key, 10)
          and (was or (s.next_run_at >= began and s.next_run_at < ended));
    end if;
    return was;
end
$$;

ALTER FUNCTION cronq.resume(key text) OWNER TO postgres;

--
-- Name: retry_jobs(bigint[]); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.retry_jobs(ids bigint[]) RETURNS TABLE(id bigint, status text, changed boolean)
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
#variable_conflict use_column
declare
    done bigint[];
    r record;
    what text;
begin
    done := cronq.requeue_jobs(array(select j.id from cronq.jobs j
                                     where j.id = any(ids) and j.unique_key is null));
    for r in select j.id, j.unique_key from cronq.jobs j
             where j.id = any(ids) and j.unique_key is not null
               and j.status in ('dead', 'failed', 'succeeded', 'cancelled')
             order by j.unique_key, j.id loop
        if cronq.unique_key_in_use(r.unique_key) then
            perform cronq.expire_holder(r.unique_key);
        end if;
        begin
            done := done || cronq.requeue_jobs(array[r.id]);
        exception when unique_violation then
            get stacked diagnostics what = constraint_name;
            if what is distinct from 'jobs_unique_active' then
                raise;
            end if;
        end;
    end loop;
    return query
        select req.id, case when req.id = any(done) then 'queued' else j.status end,
               req.id = any(done)
        from (select distinct u.id from unnest(ids) as u(id)) req
        left join cronq.jobs j on j.id = req.id;
end
$$;

ALTER FUNCTION cronq.retry_jobs(ids bigint[]) OWNER TO postgres;

--
-- Name: retry(bigint); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.retry(id bigint) RETURNS boolean
    LANGUAGE sql
    BEGIN ATOMIC
 SELECT cronq.job_changed(r.id, r.status, r.changed) AS job_changed
    FROM cronq.retry_jobs(ARRAY[retry.id]) r(id, status, changed);
END;

ALTER FUNCTION cronq.retry(id bigint) OWNER TO postgres;

--
-- Name: run_schedule(text, boolean); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.run_schedule(name text, force boolean DEFAULT false) RETURNS bigint
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
#variable_conflict use_variable
declare
    t timestamptz := date_trunc('second', now());
    id bigint;
begin
    -- Row-level security lets the caller (current_user, wherever this is
    -- called from) update only a schedule it may manage: its own, or any
    -- for a member of cronq_admin; schedules_run_now writes the job.
    update cronq.schedules x set run_now = case when coalesce(force, false) then 'force' else 'run' end
    where x.name = name;
    if not found then
        raise exception 'schedule "%" does not exist', name using errcode = 'P0002',
            hint = 'A role sees only the schedules it created, unless it is a member of cronq_admin.';
    end if;
    select j.id into id from cronq.jobs j
    where j.idempotency_key = 'schedule:' || name || ':manual:'
                              || to_char(t at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
      and j.schedule = name;
    return id;
end
$$;

ALTER FUNCTION cronq.run_schedule(name text, force boolean) OWNER TO postgres;

--
-- Name: schedule(text, text, text, jsonb, text, text, integer, integer, interval, boolean, text, text, interval, text, integer, timestamp with time zone, interval, jsonb); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.schedule(name text, cron text, type text, payload jsonb DEFAULT '{}'::jsonb, timezone text DEFAULT NULL::text, queue text DEFAULT NULL::text, priority integer DEFAULT NULL::integer, max_attempts integer DEFAULT NULL::integer, timeout interval DEFAULT NULL::interval, enabled boolean DEFAULT NULL::boolean, catchup text DEFAULT NULL::text, overlap text DEFAULT NULL::text, start_deadline interval DEFAULT NULL::interval, history text DEFAULT NULL::text, keep integer DEFAULT NULL::integer, anchor timestamp with time zone DEFAULT NULL::timestamp with time zone, spread interval DEFAULT NULL::interval, hooks jsonb DEFAULT NULL::jsonb) RETURNS text
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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
                catchup, overlap, start_deadline::text, history, keep::text, hooks::text) is not null then
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
            keep = coalesce(schedule.keep, s.keep),
            hooks = case when schedule.hooks = '{}' then null
                         else coalesce(schedule.hooks, s.hooks) end
        where s.name = schedule.name;
    end if;
    return name;
end
$$;

ALTER FUNCTION cronq.schedule(name text, cron text, type text, payload jsonb, timezone text, queue text, priority integer, max_attempts integer, timeout interval, enabled boolean, catchup text, overlap text, start_deadline interval, history text, keep integer, anchor timestamp with time zone, spread interval, hooks jsonb) OWNER TO postgres;

--
-- Name: schedule_name_in_use(text); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.schedule_name_in_use(p_name text) RETURNS boolean
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    select exists (select 1 from cronq.schedules s where s.name = p_name)
$$;

ALTER FUNCTION cronq.schedule_name_in_use(p_name text) OWNER TO postgres;

--
-- Name: schedule_refusal(text, timestamp with time zone); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.schedule_refusal(p_name text, p_since timestamp with time zone) RETURNS text
    LANGUAGE sql STABLE
    BEGIN ATOMIC
 SELECT o.detail
    FROM cronq.occurrences o
   WHERE ((o.schedule = schedule_refusal.p_name) AND (o.decision = 'refused'::text) AND (o.decided_at > COALESCE(schedule_refusal.p_since, '-infinity'::timestamp with time zone)))
   ORDER BY o.decided_at DESC
  LIMIT 1;
END;

ALTER FUNCTION cronq.schedule_refusal(p_name text, p_since timestamp with time zone) OWNER TO postgres;

--
-- Name: schedules_guard(); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.schedules_guard() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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
    if tg_op = 'INSERT' or (new.cron, new.timezone, new.anchor, new.spread, new.name)
                            is distinct from (old.cron, old.timezone, old.anchor, old.spread, old.name) then
        msg := coalesce(cronq.cron_error(new.cron), cronq.zone_error(new.timezone));
        if msg is null and new.anchor is not null and not cronq.is_every(new.cron) then
            msg := format('an anchor applies only to @every expressions, not to "%s"', left(new.cron, 64));
        end if;
        if msg is not null then
            raise exception 'schedule "%": %', new.name, msg using errcode = '22023';
        end if;
        if tg_op = 'UPDATE' and new.next_run_at is not distinct from old.next_run_at then
            if (new.cron, new.timezone, new.anchor)
               is not distinct from (old.cron, old.timezone, old.anchor) then
                -- The spread or the name: the next occurrence not yet
                -- decided is the same fire time, due at its new offset.
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

ALTER FUNCTION cronq.schedules_guard() OWNER TO postgres;

--
-- Name: schedules_hooks(); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.schedules_hooks() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
declare
    msg pg_catalog.text := cronq.hooks_error(new.hooks);
begin
    if msg is not null then
        raise exception '%', msg using errcode = '22023';
    end if;
    msg := cronq.hooks_permission_error(new.hooks, new.created_by);
    if msg is not null then
        raise exception '%', msg using errcode = '42501';
    end if;
    if new.hooks operator(pg_catalog.=) '{}'::pg_catalog.jsonb then
        new.hooks := null;
    end if;
    return new;
end
$$;

ALTER FUNCTION cronq.schedules_hooks() OWNER TO postgres;

--
-- Name: schedules_ledger(); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.schedules_ledger() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
    if tg_op = 'DELETE' then
        delete from cronq.occurrences where schedule = old.name;
    else
        update cronq.occurrences set schedule = new.name where schedule = old.name;
    end if;
    return null;
end
$$;

ALTER FUNCTION cronq.schedules_ledger() OWNER TO postgres;

--
-- Name: schedules_name_check(); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.schedules_name_check() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
    if cronq.schedule_name_in_use(new.name)
       and not cronq.may_act_for_others(tg_relid)
       and not exists (select 1 from cronq.schedules s where s.name = new.name) then
        raise exception 'schedule "%" belongs to another role', new.name
            using errcode = '23505',
                  hint = 'Schedule names are shared by every role: choose another name.';
    end if;
    return new;
end
$$;

ALTER FUNCTION cronq.schedules_name_check() OWNER TO postgres;

--
-- Name: schedules_run_now(); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.schedules_run_now() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
    busy bigint;
    t timestamptz := date_trunc('second', now());
    k text;
    id bigint;
begin
    if new.run_now not in ('run', 'force') then
        raise exception 'schedule "%": run_now must be run or force, not "%"', new.name, left(new.run_now, 64)
            using errcode = '22023';
    end if;
    if new.run_now = 'run' and new.overlap = 'skip' then
        select j.id into busy from cronq.jobs j
        where j.id = new.last_job_id
          and (j.status = 'running'
               or j.status in ('queued', 'failed') and (j.expires_at is null or j.expires_at > now()));
        if busy is not null then
            raise exception 'schedule "%": its job % is still unfinished (overlap skip)', new.name, busy
                using errcode = '55006', hint = 'Use --force to run it anyway.';
        end if;
    end if;
    k := 'schedule:' || new.name || ':manual:' || to_char(t at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"');
    insert into cronq.jobs as j (type, payload, queue, priority, max_attempts, timeout,
                                 idempotency_key, schedule, scheduled_for, run_at, enqueued_by,
                                 expires_at, history, hooks)
    values (new.type, new.payload, new.queue, new.priority, new.max_attempts, new.timeout, k, new.name, t,
            now(), new.created_by, t + new.start_deadline, new.history, new.hooks)
    returning j.id into id;
    if id is null then
        -- The key is held: by this schedule's run of this second, or not at all.
        select j.id into id from cronq.jobs j
        where j.idempotency_key = k and j.schedule = new.name and j.enqueued_by = new.created_by;
        if id is null then
            raise exception 'schedule "%": key % is held by another job', new.name, k using errcode = '23505';
        end if;
    end if;
    if new.last_job_id is null or new.last_job_id < id then
        new.last_job_id := id;
    end if;
    new.run_now := null;
    return new;
end
$$;

ALTER FUNCTION cronq.schedules_run_now() OWNER TO postgres;

--
-- Name: schedules_spell(); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.schedules_spell() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
    if tg_op = 'INSERT' then
        new.disabled_from := case when new.enabled then null else now() end;
        new.disabled_until := null;
    elsif new.enabled is distinct from old.enabled then
        if new.enabled then
            new.disabled_until := now();
        elsif old.disabled_until is not null and old.next_run_at <= old.disabled_until then
            -- Disabled again before a wake used the last spell: one spell,
            -- from its start (the fire times between are skipped too).
            new.disabled_until := null;
        else
            new.disabled_from := now();
            new.disabled_until := null;
        end if;
    else
        new.disabled_from := old.disabled_from;
        new.disabled_until := old.disabled_until;
    end if;
    return new;
end
$$;

ALTER FUNCTION cronq.schedules_spell() OWNER TO postgres;

--
-- Name: schedules_times_past(); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.schedules_times_past() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
    if tg_op = 'UPDATE' and new.next_run_at >= old.next_run_at then
        return new;
    end if;
    if tg_op = 'UPDATE'
       and new.next_run_at - make_interval(secs => cronq.fire_offset(new.name, new.spread))
           >= old.next_run_at - make_interval(secs => cronq.fire_offset(old.name, old.spread)) then
        return new;
    end if;
    if cronq.may_act_for_others(tg_relid) or (select cronq.is_admin()) then
        return new;
    end if;
    raise exception 'schedule "%": next_run_at % is in the past', new.name,
        to_char(new.next_run_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
        using errcode = '22023',
              hint = 'A role plans its schedule from now; cronq backfill --schedule writes past fire times.';
end
$$;

ALTER FUNCTION cronq.schedules_times_past() OWNER TO postgres;

--
-- Name: schedules_undecided(); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.schedules_undecided() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
    if new.next_run_at - make_interval(secs => cronq.fire_offset(new.name, new.spread))
       <= new.decided_through then
        new.next_run_at := null;
    end if;
    return new;
end
$$;

ALTER FUNCTION cronq.schedules_undecided() OWNER TO postgres;

--
-- Name: schedules_unplanned(); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.schedules_unplanned() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
    -- A row already unplanned that no change of the schedule touches (a
    -- run by hand's run_now, a wake's own update) keeps its moment: a run
    -- by hand restamped it, and the fire time before it was lost.
    if tg_op = 'UPDATE' and old.next_run_at is null
       and new.updated_at is not distinct from old.updated_at then
        return new;
    end if;
    new.updated_at := clock_timestamp();
    return new;
end
$$;

ALTER FUNCTION cronq.schedules_unplanned() OWNER TO postgres;

--
-- Name: schema_compatible_from(); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.schema_compatible_from() RETURNS integer
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN 25;

ALTER FUNCTION cronq.schema_compatible_from() OWNER TO postgres;

--
-- Name: schema_version(); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.schema_version() RETURNS integer
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN 43;

ALTER FUNCTION cronq.schema_version() OWNER TO postgres;

--
-- Name: set_limit(text, integer, integer, interval); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.set_limit(key text, max_running integer DEFAULT NULL::integer, rate integer DEFAULT NULL::integer, per interval DEFAULT NULL::interval) RETURNS cronq.limits
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
    r cronq.limits;
begin
    perform cronq.limit_check(key);
    if (rate is null) <> (per is null) then
        raise exception 'a rate is a number of starts per window: give both' using errcode = '22023';
    end if;
    insert into cronq.limits as l (key, max_running, rate, per)
        values (set_limit.key, set_limit.max_running, set_limit.rate, set_limit.per)
        on conflict on constraint limits_pkey do update
        set max_running = coalesce(excluded.max_running, l.max_running),
            rate = coalesce(excluded.rate, l.rate), per = coalesce(excluded.per, l.per)
        returning * into r;
    return r;
end
$$;

ALTER FUNCTION cronq.set_limit(key text, max_running integer, rate integer, per interval) OWNER TO postgres;

--
-- Name: settle_step(); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.settle_step(OUT more boolean, OUT settled integer) RETURNS record
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET enable_seqscan TO 'off'
    SET jit TO 'off'
    AS $$
declare
    note record;
    page bigint[] := '{}';
    slice bigint[];
    room integer := 500;
    notes integer := 0;
    locked bigint[];
    rest bigint[] := '{}';
    kept bigint[] := '{}';
    parents bigint := 0;
    b record;
begin
    more := false;
    settled := 0;
    perform pg_catalog.set_config('cronq.settling', 'on', true);
    for note in select l.seq, l.job_id, l.after_pos from cronq.settle_parents l
                order by l.seq for update skip locked loop
        notes := notes + 1;
        select j.dependants[note.after_pos + 1 : note.after_pos + room] into slice
        from cronq.jobs j where j.id = note.job_id;
        slice := coalesce(slice, '{}');
        if cardinality(slice) < room then
            delete from cronq.settle_parents l where l.seq = note.seq;
        else
            update cronq.settle_parents l set after_pos = note.after_pos + room where l.seq = note.seq;
        end if;
        page := page || slice;
        room := room - cardinality(slice);
        exit when room = 0 or notes >= 500;
    end loop;
    if notes > 0 then
        more := true;
        locked := array(select c.id from cronq.jobs c where c.id = any(page) and c.status = 'blocked'
                        order by c.id for no key update skip locked);
        insert into cronq.settle_later (job_id)
        select c.id from cronq.jobs c
        where c.id = any(page) and c.id <> all(locked) and c.status = 'blocked'
          and not exists (select 1 from cronq.settle_later s where s.job_id = c.id for key share skip locked)
        order by c.id;
    else
        -- Up to 500 noted blocked jobs whose note and row this page can
        -- both lock: a note another transaction holds (a change counting
        -- on it) is left for a later page and costs this one nothing. A
        -- page that took the first 500 jobs whatever held their notes met
        -- the same ones again at once, for the whole wake, while one
        -- author kept a transaction open (helper-57).
        -- The jobs of fewest parents first: an author's noted jobs of many
        -- parents, re-noted at each of its cycles, do not keep other
        -- roles' notes waiting behind them (in id order they did: its
        -- jobs were the oldest). Told by the size their parents take on
        -- disk, which is read from the row without fetching the array
        -- (its cardinality fetched every noted job's parents, each page:
        -- 2,000 held notes of 50,000 parents cost a page 0.8 s; 0030).
        locked := array(select j.id from cronq.settle_later l join cronq.jobs j on j.id = l.job_id
                        where j.status = 'blocked'
                        order by coalesce(pg_catalog.pg_column_size(j.depends_on), 0), j.id limit 500
                        for update of l skip locked for no key update of j skip locked);
        more := cardinality(locked) = 500;
    end if;
    -- The recount below reads every parent of each job it takes (a job may
    -- have 100,000): the jobs are taken, fewest parents first, while their
    -- parents number 10,000 at most, and the first whatever its count. 500
    -- jobs of 40,000 parents each made one page a statement of minutes,
    -- past the runner's answer limit: every wake failed before its claim,
    -- for every role, and an author could note the same jobs again for
    -- ~20 ms a cycle (helper-59). The rest are left noted for the next page.
    -- In the order of the size their parents take on disk, each counted
    -- as it is taken (its parents are read by the recount anyway), none
    -- past the first that does not fit (counting all 500 fetched each
    -- one's parents: with the notes' order, a page over 2,000 notes of
    -- 50,000 parents took 1.04 s, now 82 ms; 0030).
    for b in select c.id from cronq.jobs c where c.id = any(locked)
             order by coalesce(pg_catalog.pg_column_size(c.depends_on), 0), c.id loop
        if cardinality(rest) = 0 then
            parents := parents + coalesce((select cardinality(c.depends_on) from cronq.jobs c where c.id = b.id), 0);
        end if;
        if cardinality(kept) = 0 or (cardinality(rest) = 0 and parents <= 10000) then
            kept := kept || b.id;
        else
            rest := rest || b.id;
        end if;
    end loop;
    locked := kept;
    if cardinality(rest) > 0 then
        more := true;
        -- a page of parents' dependants notes them (it holds their rows,
        -- so no other page takes them before this commits); a page of
        -- notes leaves theirs
        if notes > 0 then
            insert into cronq.settle_later (job_id)
            select r.id from unnest(rest) r(id)
            where not exists (select 1 from cronq.settle_later s where s.job_id = r.id for key share skip locked)
            order by r.id;
        end if;
    end if;
    if notes = 0 then
        -- the notes of the jobs settled, and those of jobs no longer
        -- blocked; not one another transaction holds (it counted on it
        -- for a change this page's recount may not see: the next page's)
        delete from cronq.settle_later l
        where l.ctid in (select s.ctid from cronq.settle_later s
                         where s.job_id = any(locked)
                            or not exists (select 1 from cronq.jobs j where j.id = s.job_id and j.status = 'blocked')
                         for update skip locked);
    end if;
    if cardinality(locked) = 0 then
        return;
    end if;
    -- A statement after the lock, so a later snapshot: a parent's outcome
    -- committed before the lock was taken is seen (its own settle skipped
    -- the dependant this page held, or found it settled). Each job's
    -- parents are read by its own subqueries, by index: no join; a parent
    -- at a time, by its key, in a scalar subquery that the planner does not
    -- turn into a join (as p.id = any(depends_on), or an exists, a table whose
    -- statistics said few jobs had ended was read through jobs_finished,
    -- every ended job for each dependant: 0.7 ms each with 5,000 ended,
    -- 2,000 dependants past a wake's 5 s). Only a job whose status or
    -- count changes is written.
    with n as materialized (
        select s.id, s.waiting_for,
            (select count(*)::integer from (select distinct unnest(s.depends_on)) x(id)
             where (select p.status from cronq.jobs p where p.id = x.id) <> 'succeeded') as waiting,
            (select min(x.id) from unnest(s.depends_on) x(id)
             where (select p.status from cronq.jobs p where p.id = x.id) in ('dead', 'cancelled')) as failed_id
        from cronq.jobs s
        where s.id = any(locked) and s.status = 'blocked'
    ), ch as materialized (
        select n.id, n.waiting, n.failed_id from n
        where n.failed_id is not null or n.waiting = 0 or n.waiting is distinct from n.waiting_for
    )
    update cronq.jobs c set
        (status, waiting_for, error_code, last_error, finished_at, updated_at) = (
            select case when x.failed_id is not null then 'cancelled'
                        when x.waiting = 0 then 'queued' else 'blocked' end,
                   x.waiting,
                   case when x.failed_id is not null then 'dependency_failed' else c.error_code end,
                   case when x.failed_id is not null
                        then format('job %s, which it depends on, ended %s', x.failed_id,
                                    (select p.status from cronq.jobs p where p.id = x.failed_id))
                        else c.last_error end,
                   case when x.failed_id is not null then now() else c.finished_at end,
                   now()
            from ch x where x.id = c.id)
    where c.id = any(array(select ch.id from ch)) and c.status = 'blocked';
    get diagnostics settled = row_count;
end
$$;

ALTER FUNCTION cronq.settle_step(OUT more boolean, OUT settled integer) OWNER TO postgres;

--
-- Name: link_commits; Type: TABLE; Schema: cronq; Owner: postgres
--

CREATE UNLOGGED TABLE cronq.link_commits (
    xid xid8 DEFAULT pg_current_xact_id() NOT NULL
);

ALTER TABLE cronq.link_commits OWNER TO postgres;

--
-- Name: plan_links; Type: TABLE; Schema: cronq; Owner: postgres
--

CREATE UNLOGGED TABLE cronq.plan_links (
    xid xid8 DEFAULT pg_current_xact_id() NOT NULL,
    seq bigint NOT NULL,
    child bigint NOT NULL
);

ALTER TABLE cronq.plan_links OWNER TO postgres;

--
-- Name: sweep_links(); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.sweep_links() RETURNS bigint
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    BEGIN ATOMIC
 WITH c AS (
          DELETE FROM cronq.link_commits
           RETURNING 1 AS "?column?"
         ), d AS (
          DELETE FROM cronq.plan_links l
           RETURNING 1 AS "?column?"
         )
  SELECT count(*) AS count
    FROM d;
END;

ALTER FUNCTION cronq.sweep_links() OWNER TO postgres;

--
-- Name: task_rules(text, jsonb); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.task_rules(p_type text, p jsonb) RETURNS text
    LANGUAGE sql STABLE PARALLEL SAFE
    RETURN CASE p_type WHEN 'noop'::text THEN cronq.payload_rules_noop(p) WHEN 'sleep'::text THEN cronq.payload_rules_sleep(p) WHEN 'fail'::text THEN cronq.payload_rules_fail(p) WHEN 'sql'::text THEN cronq.payload_rules_sql(p) WHEN 'exec'::text THEN cronq.payload_rules_exec(p) WHEN 'purge'::text THEN cronq.payload_rules_purge(p) ELSE format('unrecognized task type "%s"'::text, p_type) END;

ALTER FUNCTION cronq.task_rules(p_type text, p jsonb) OWNER TO postgres;

--
-- Name: time_refused(); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.time_refused() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
    raise exception 'invalid %: "%" is not a time of years 1 to 9999', tg_argv[0],
        to_jsonb(new) ->> tg_argv[0] using errcode = '22008';
end
$$;

ALTER FUNCTION cronq.time_refused() OWNER TO postgres;

--
-- Name: unique_key_in_use(text); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.unique_key_in_use(p_key text) RETURNS boolean
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET enable_seqscan TO 'off'
    AS $$
    select exists (select 1 from cronq.jobs j
                   where j.unique_key = p_key and j.status in ('queued', 'failed', 'running'))
$$;

ALTER FUNCTION cronq.unique_key_in_use(p_key text) OWNER TO postgres;

--
-- Name: unschedule(text); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.unschedule(name text) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
#variable_conflict use_variable
begin
    update cronq.schedules s set removed = true where s.name = name;
    if not found then
        raise exception 'schedule "%" does not exist', name using errcode = 'P0002',
            hint = 'A role sees only the schedules it created, unless it is a member of cronq_admin.';
    end if;
    return true;
end
$$;

ALTER FUNCTION cronq.unschedule(name text) OWNER TO postgres;

--
-- Name: zone_error(text); Type: FUNCTION; Schema: cronq; Owner: postgres
--

CREATE FUNCTION cronq.zone_error(zone text) RETURNS text
    LANGUAGE sql STABLE
    BEGIN ATOMIC
 SELECT
         CASE
             WHEN (zone = 'UTC'::text) THEN NULL::text
             WHEN ((zone = ANY (ARRAY['localtime'::text, 'posixrules'::text, 'Factory'::text])) OR (zone ~~ 'posix/%'::text) OR (zone ~~ 'right/%'::text)) THEN format('time zone "%s" depends on the host: use an IANA name such as Europe/Paris'::text, "left"(zone, 64))
             WHEN ((zone IS NULL) OR (zone !~ '^[A-Za-z0-9_+][A-Za-z0-9._+-]*(/[A-Za-z0-9_+][A-Za-z0-9._+-]*)*$'::text) OR (NOT (EXISTS ( SELECT 1
                FROM pg_timezone_names t
               WHERE (t.name = zone_error.zone))))) THEN format('unrecognized time zone "%s"'::text, "left"(zone, 64))
             ELSE NULL::text
         END AS "case";
END;

ALTER FUNCTION cronq.zone_error(zone text) OWNER TO postgres;

--
-- Name: job_runs_id_seq; Type: SEQUENCE; Schema: cronq; Owner: postgres
--

ALTER TABLE cronq.job_runs ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME cronq.job_runs_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: jobs_id_seq; Type: SEQUENCE; Schema: cronq; Owner: postgres
--

ALTER TABLE cronq.jobs ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME cronq.jobs_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: limits_now; Type: VIEW; Schema: cronq; Owner: postgres
--

CREATE VIEW cronq.limits_now WITH (security_invoker='true') AS
 SELECT l.key,
    l.max_running,
    l.rate,
    (EXTRACT(epoch FROM l.per))::bigint AS per_seconds,
    r.running,
    r.started,
    GREATEST(r.room, (0)::bigint) AS room,
    (r.room <= 0) AS "full",
    l.set_by,
    l.set_at
   FROM (cronq.limits l
     JOIN cronq.limit_room(NULL::text[], false) r(key, room, running, started) ON ((r.key = l.key)));

ALTER TABLE cronq.limits_now OWNER TO postgres;

--
-- Name: plan_links_seq_seq; Type: SEQUENCE; Schema: cronq; Owner: postgres
--

ALTER TABLE cronq.plan_links ALTER COLUMN seq ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME cronq.plan_links_seq_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: schema_migrations; Type: TABLE; Schema: cronq; Owner: postgres
--

CREATE TABLE cronq.schema_migrations (
    version integer NOT NULL,
    name text NOT NULL,
    applied_at timestamp with time zone DEFAULT now() NOT NULL
);

ALTER TABLE cronq.schema_migrations OWNER TO postgres;

--
-- Name: settle_grants; Type: TABLE; Schema: cronq; Owner: postgres
--

CREATE TABLE cronq.settle_grants (
    token text NOT NULL
);

ALTER TABLE cronq.settle_grants OWNER TO postgres;

--
-- Name: settle_later; Type: TABLE; Schema: cronq; Owner: postgres
--

CREATE TABLE cronq.settle_later (
    job_id bigint NOT NULL
);

ALTER TABLE cronq.settle_later OWNER TO postgres;

--
-- Name: settle_parents; Type: TABLE; Schema: cronq; Owner: postgres
--

CREATE TABLE cronq.settle_parents (
    seq bigint NOT NULL,
    job_id bigint NOT NULL,
    after_pos integer DEFAULT 0 NOT NULL
);

ALTER TABLE cronq.settle_parents OWNER TO postgres;

--
-- Name: settle_parents_seq_seq; Type: SEQUENCE; Schema: cronq; Owner: postgres
--

ALTER TABLE cronq.settle_parents ALTER COLUMN seq ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME cronq.settle_parents_seq_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: wakes; Type: TABLE; Schema: cronq; Owner: postgres
--

CREATE TABLE cronq.wakes (
    id bigint NOT NULL,
    worker text NOT NULL,
    host text NOT NULL,
    pid integer,
    started_at timestamp with time zone DEFAULT now() NOT NULL,
    finished_at timestamp with time zone,
    jobs_run integer DEFAULT 0 NOT NULL,
    jobs_failed integer DEFAULT 0 NOT NULL,
    exit_status integer
);

ALTER TABLE cronq.wakes OWNER TO postgres;

--
-- Name: wakes_id_seq; Type: SEQUENCE; Schema: cronq; Owner: postgres
--

ALTER TABLE cronq.wakes ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME cronq.wakes_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: job_runs job_runs_pkey; Type: CONSTRAINT; Schema: cronq; Owner: postgres
--

ALTER TABLE ONLY cronq.job_runs
    ADD CONSTRAINT job_runs_pkey PRIMARY KEY (job_id, id);

--
-- Name: jobs jobs_limit_key_check; Type: CHECK CONSTRAINT; Schema: cronq; Owner: postgres
--

ALTER TABLE cronq.jobs
    ADD CONSTRAINT jobs_limit_key_check CHECK (((limit_key IS NULL) OR (cronq.limit_key_error(limit_key) IS NULL))) NOT VALID;

--
-- Name: jobs jobs_pkey; Type: CONSTRAINT; Schema: cronq; Owner: postgres
--

ALTER TABLE ONLY cronq.jobs
    ADD CONSTRAINT jobs_pkey PRIMARY KEY (id);

--
-- Name: limits limits_pkey; Type: CONSTRAINT; Schema: cronq; Owner: postgres
--

ALTER TABLE ONLY cronq.limits
    ADD CONSTRAINT limits_pkey PRIMARY KEY (key);

--
-- Name: link_commits link_commits_pkey; Type: CONSTRAINT; Schema: cronq; Owner: postgres
--

ALTER TABLE ONLY cronq.link_commits
    ADD CONSTRAINT link_commits_pkey PRIMARY KEY (xid);

--
-- Name: pauses pauses_pkey; Type: CONSTRAINT; Schema: cronq; Owner: postgres
--

ALTER TABLE ONLY cronq.pauses
    ADD CONSTRAINT pauses_pkey PRIMARY KEY (key);

--
-- Name: schedules schedules_name_manual_check; Type: CHECK CONSTRAINT; Schema: cronq; Owner: postgres
--

ALTER TABLE cronq.schedules
    ADD CONSTRAINT schedules_name_manual_check CHECK ((name !~ ':manual$'::text)) NOT VALID;

--
-- Name: schedules schedules_pkey; Type: CONSTRAINT; Schema: cronq; Owner: postgres
--

ALTER TABLE ONLY cronq.schedules
    ADD CONSTRAINT schedules_pkey PRIMARY KEY (name);

--
-- Name: schema_migrations schema_migrations_pkey; Type: CONSTRAINT; Schema: cronq; Owner: postgres
--

ALTER TABLE ONLY cronq.schema_migrations
    ADD CONSTRAINT schema_migrations_pkey PRIMARY KEY (version);

--
-- Name: settle_grants settle_grants_pkey; Type: CONSTRAINT; Schema: cronq; Owner: postgres
--

ALTER TABLE ONLY cronq.settle_grants
    ADD CONSTRAINT settle_grants_pkey PRIMARY KEY (token);

--
-- Name: settle_parents settle_parents_pkey; Type: CONSTRAINT; Schema: cronq; Owner: postgres
--

ALTER TABLE ONLY cronq.settle_parents
    ADD CONSTRAINT settle_parents_pkey PRIMARY KEY (seq);

--
-- Name: wakes wakes_pkey; Type: CONSTRAINT; Schema: cronq; Owner: postgres
--

ALTER TABLE ONLY cronq.wakes
    ADD CONSTRAINT wakes_pkey PRIMARY KEY (id);

--
-- Name: jobs_dead; Type: INDEX; Schema: cronq; Owner: postgres
--

CREATE INDEX jobs_dead ON cronq.jobs USING btree (finished_at) WHERE (status = 'dead'::text);

--
-- Name: jobs_due; Type: INDEX; Schema: cronq; Owner: postgres
--

CREATE INDEX jobs_due ON cronq.jobs USING btree (priority, run_at, id) WHERE (status = ANY (ARRAY['queued'::text, 'failed'::text]));

--
-- Name: jobs_expiring; Type: INDEX; Schema: cronq; Owner: postgres
--

CREATE INDEX jobs_expiring ON cronq.jobs USING btree (expires_at) WHERE ((status = ANY (ARRAY['queued'::text, 'failed'::text])) AND (expires_at IS NOT NULL));

--
-- Name: jobs_finished; Type: INDEX; Schema: cronq; Owner: postgres
--

CREATE INDEX jobs_finished ON cronq.jobs USING btree (finished_at) WHERE (status = ANY (ARRAY['succeeded'::text, 'dead'::text, 'cancelled'::text]));

--
-- Name: jobs_idempotency_key; Type: INDEX; Schema: cronq; Owner: postgres
--

CREATE UNIQUE INDEX jobs_idempotency_key ON cronq.jobs USING btree (idempotency_key) WHERE (idempotency_key IS NOT NULL);

--
-- Name: jobs_leases; Type: INDEX; Schema: cronq; Owner: postgres
--

CREATE INDEX jobs_leases ON cronq.jobs USING btree (locked_until) WHERE (status = 'running'::text);

--
-- Name: jobs_schedule_ended; Type: INDEX; Schema: cronq; Owner: postgres
--

CREATE INDEX jobs_schedule_ended ON cronq.jobs USING btree (schedule, enqueued_by, id) WHERE ((schedule IS NOT NULL) AND (status = ANY (ARRAY['succeeded'::text, 'failed'::text, 'dead'::text])));

--
-- Name: jobs_schedule_finished; Type: INDEX; Schema: cronq; Owner: postgres
--

CREATE INDEX jobs_schedule_finished ON cronq.jobs USING btree (schedule, finished_at, id) WHERE ((schedule IS NOT NULL) AND (status = ANY (ARRAY['succeeded'::text, 'dead'::text, 'cancelled'::text])));

--
-- Name: jobs_unique_active; Type: INDEX; Schema: cronq; Owner: postgres
--

CREATE UNIQUE INDEX jobs_unique_active ON cronq.jobs USING btree (unique_key) WHERE ((unique_key IS NOT NULL) AND (status = ANY (ARRAY['queued'::text, 'failed'::text, 'running'::text])));

--
-- Name: occurrences_fire; Type: INDEX; Schema: cronq; Owner: postgres
--

CREATE INDEX occurrences_fire ON cronq.occurrences USING btree (fire_at, schedule);

--
-- Name: occurrences_refused; Type: INDEX; Schema: cronq; Owner: postgres
--

CREATE INDEX occurrences_refused ON cronq.occurrences USING btree (schedule, decided_at) WHERE (decision = 'refused'::text);

--
-- Name: plan_links_xid; Type: INDEX; Schema: cronq; Owner: postgres
--

CREATE INDEX plan_links_xid ON cronq.plan_links USING btree (xid, seq);

--
-- Name: schedules_due; Type: INDEX; Schema: cronq; Owner: postgres
--

CREATE INDEX schedules_due ON cronq.schedules USING btree (next_run_at) WHERE enabled;

--
-- Name: schedules_keep; Type: INDEX; Schema: cronq; Owner: postgres
--

CREATE INDEX schedules_keep ON cronq.schedules USING btree (name) WHERE (keep IS NOT NULL);

--
-- Name: settle_later_job; Type: INDEX; Schema: cronq; Owner: postgres
--

CREATE INDEX settle_later_job ON cronq.settle_later USING btree (job_id);

--
-- Name: settle_parents_job; Type: INDEX; Schema: cronq; Owner: postgres
--

CREATE INDEX settle_parents_job ON cronq.settle_parents USING btree (job_id);

--
-- Name: jobs jobs_admit; Type: TRIGGER; Schema: cronq; Owner: postgres
--

CREATE TRIGGER jobs_admit BEFORE INSERT ON cronq.jobs FOR EACH ROW WHEN (((new.expires_at IS NOT NULL) OR (new.unique_key IS NOT NULL))) EXECUTE FUNCTION cronq.jobs_admit();

--
-- Name: jobs jobs_author; Type: TRIGGER; Schema: cronq; Owner: postgres
--

CREATE TRIGGER jobs_author BEFORE UPDATE OF type, payload ON cronq.jobs FOR EACH ROW WHEN (((old.type IS DISTINCT FROM new.type) OR (old.payload IS DISTINCT FROM new.payload))) EXECUTE FUNCTION cronq.jobs_author();

--
-- Name: jobs jobs_fixed; Type: TRIGGER; Schema: cronq; Owner: postgres
--

CREATE TRIGGER jobs_fixed BEFORE UPDATE OF hooks, depends_on, dependants, waiting_for ON cronq.jobs FOR EACH ROW WHEN ((row_security_active(('cronq.jobs'::regclass)::oid) AND ((((old.hooks IS DISTINCT FROM new.hooks) OR (old.depends_on IS DISTINCT FROM new.depends_on)) OR (old.dependants IS DISTINCT FROM new.dependants)) OR (old.waiting_for IS DISTINCT FROM new.waiting_for)))) EXECUTE FUNCTION cronq.jobs_fixed();

--
-- Name: jobs jobs_guard; Type: TRIGGER; Schema: cronq; Owner: postgres
--

CREATE TRIGGER jobs_guard BEFORE INSERT ON cronq.jobs FOR EACH ROW WHEN ((((new.hook_of IS NULL) AND (new.occurrence_checked IS NOT TRUE)) OR (NOT cronq.may_act_for_others(('cronq.jobs'::regclass)::oid)))) EXECUTE FUNCTION cronq.jobs_guard();

--
-- Name: jobs jobs_guard_update; Type: TRIGGER; Schema: cronq; Owner: postgres
--

CREATE TRIGGER jobs_guard_update BEFORE UPDATE OF type, payload, enqueued_by ON cronq.jobs FOR EACH ROW EXECUTE FUNCTION cronq.jobs_guard();

--
-- Name: jobs jobs_hooks; Type: TRIGGER; Schema: cronq; Owner: postgres
--

CREATE TRIGGER jobs_hooks BEFORE INSERT ON cronq.jobs FOR EACH ROW WHEN ((new.hooks IS NOT NULL)) EXECUTE FUNCTION cronq.jobs_hooks();

--
-- Name: jobs jobs_link; Type: TRIGGER; Schema: cronq; Owner: postgres
--

CREATE TRIGGER jobs_link AFTER INSERT ON cronq.jobs FOR EACH STATEMENT WHEN ((current_setting('cronq.links_left'::text, true) = 'on'::text)) EXECUTE FUNCTION cronq.jobs_link();

--
-- Name: jobs jobs_lives; Type: TRIGGER; Schema: cronq; Owner: postgres
--

CREATE TRIGGER jobs_lives BEFORE UPDATE OF attempts ON cronq.jobs FOR EACH ROW WHEN (((new.attempts < old.attempts) AND (NOT ((old.status = 'running'::text) AND (new.attempts = (old.attempts - 1)))))) EXECUTE FUNCTION cronq.jobs_lives();

--
-- Name: jobs jobs_occurrence_lock; Type: TRIGGER; Schema: cronq; Owner: postgres
--

CREATE TRIGGER jobs_occurrence_lock BEFORE INSERT ON cronq.jobs FOR EACH ROW WHEN (((new.schedule IS NOT NULL) AND row_security_active(('cronq.jobs'::regclass)::oid))) EXECUTE FUNCTION cronq.occurrence_lock();

--
-- Name: jobs jobs_plan; Type: TRIGGER; Schema: cronq; Owner: postgres
--

CREATE TRIGGER jobs_plan BEFORE INSERT ON cronq.jobs FOR EACH ROW WHEN (((new.depends_on IS NOT NULL) OR (new.dependants IS NOT NULL) OR (new.waiting_for IS NOT NULL))) EXECUTE FUNCTION cronq.jobs_plan();

--
-- Name: jobs jobs_queue_name; Type: TRIGGER; Schema: cronq; Owner: postgres
--

CREATE TRIGGER jobs_queue_name BEFORE INSERT ON cronq.jobs FOR EACH ROW WHEN ((new.queue ~ '[[:cntrl:]]'::text)) EXECUTE FUNCTION cronq.queue_refused();

--
-- Name: jobs jobs_queue_rename; Type: TRIGGER; Schema: cronq; Owner: postgres
--

CREATE TRIGGER jobs_queue_rename BEFORE UPDATE OF queue ON cronq.jobs FOR EACH ROW WHEN (((new.queue IS DISTINCT FROM old.queue) AND (new.queue ~ '[[:cntrl:]]'::text))) EXECUTE FUNCTION cronq.queue_refused();

--
-- Name: jobs jobs_settle; Type: TRIGGER; Schema: cronq; Owner: postgres
--

CREATE TRIGGER jobs_settle AFTER UPDATE OF status ON cronq.jobs FOR EACH ROW WHEN (((old.status IS DISTINCT FROM new.status) AND (new.dependants IS NOT NULL) AND ((new.status = ANY (ARRAY['succeeded'::text, 'dead'::text, 'cancelled'::text])) OR (old.status = 'succeeded'::text)))) EXECUTE FUNCTION cronq.jobs_settle();

--
-- Name: jobs jobs_times; Type: TRIGGER; Schema: cronq; Owner: postgres
--

CREATE TRIGGER jobs_times BEFORE INSERT ON cronq.jobs FOR EACH ROW WHEN (((NOT ((new.run_at >= '0001-01-01 00:00:00+00'::timestamp with time zone) AND (new.run_at < '10000-01-01 00:00:00+00'::timestamp with time zone))) OR (NOT ((new.expires_at >= '0001-01-01 00:00:00+00'::timestamp with time zone) AND (new.expires_at < '10000-01-01 00:00:00+00'::timestamp with time zone))) OR (NOT ((new.scheduled_for >= '0001-01-01 00:00:00+00'::timestamp with time zone) AND (new.scheduled_for < '10000-01-01 00:00:00+00'::timestamp with time zone))))) EXECUTE FUNCTION cronq.jobs_times_refused();

--
-- Name: jobs jobs_times_update; Type: TRIGGER; Schema: cronq; Owner: postgres
--

CREATE TRIGGER jobs_times_update BEFORE UPDATE OF run_at, expires_at ON cronq.jobs FOR EACH ROW WHEN ((((new.run_at IS DISTINCT FROM old.run_at) AND (NOT ((new.run_at >= '0001-01-01 00:00:00+00'::timestamp with time zone) AND (new.run_at < '10000-01-01 00:00:00+00'::timestamp with time zone)))) OR ((new.expires_at IS DISTINCT FROM old.expires_at) AND (NOT ((new.expires_at >= '0001-01-01 00:00:00+00'::timestamp with time zone) AND (new.expires_at < '10000-01-01 00:00:00+00'::timestamp with time zone)))))) EXECUTE FUNCTION cronq.jobs_times_refused();

--
-- Name: jobs jobs_transition_guard; Type: TRIGGER; Schema: cronq; Owner: postgres
--

CREATE TRIGGER jobs_transition_guard BEFORE UPDATE ON cronq.jobs FOR EACH ROW WHEN (row_security_active(('cronq.jobs'::regclass)::oid)) EXECUTE FUNCTION cronq.jobs_transition_guard();

--
-- Name: jobs jobs_wait; Type: TRIGGER; Schema: cronq; Owner: postgres
--

CREATE TRIGGER jobs_wait BEFORE UPDATE OF status ON cronq.jobs FOR EACH ROW WHEN (((new.status = 'queued'::text) AND (old.status = ANY (ARRAY['succeeded'::text, 'failed'::text, 'dead'::text, 'cancelled'::text])) AND (new.depends_on IS NOT NULL))) EXECUTE FUNCTION cronq.jobs_wait();

--
-- Name: limits limits_serialise; Type: TRIGGER; Schema: cronq; Owner: postgres
--

CREATE TRIGGER limits_serialise BEFORE INSERT OR DELETE ON cronq.limits FOR EACH STATEMENT EXECUTE FUNCTION cronq.limits_serialise();

--
-- Name: limits limits_stamp; Type: TRIGGER; Schema: cronq; Owner: postgres
--

CREATE TRIGGER limits_stamp BEFORE INSERT OR UPDATE ON cronq.limits FOR EACH ROW EXECUTE FUNCTION cronq.limits_stamp();

--
-- Name: link_commits link_commits_apply; Type: TRIGGER; Schema: cronq; Owner: postgres
--

CREATE CONSTRAINT TRIGGER link_commits_apply AFTER INSERT ON cronq.link_commits DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION cronq.jobs_link_commit();

--
-- Name: pauses pauses_forever; Type: TRIGGER; Schema: cronq; Owner: postgres
--

CREATE TRIGGER pauses_forever BEFORE INSERT OR UPDATE OF until ON cronq.pauses FOR EACH ROW WHEN ((new.until = 'infinity'::timestamp with time zone)) EXECUTE FUNCTION cronq.pauses_forever();

--
-- Name: pauses pauses_remove; Type: TRIGGER; Schema: cronq; Owner: postgres
--

CREATE TRIGGER pauses_remove AFTER INSERT OR UPDATE OF removed ON cronq.pauses FOR EACH ROW WHEN (new.removed) EXECUTE FUNCTION cronq.remove_row();

--
-- Name: pauses pauses_stamp; Type: TRIGGER; Schema: cronq; Owner: postgres
--

CREATE TRIGGER pauses_stamp BEFORE INSERT OR UPDATE ON cronq.pauses FOR EACH ROW WHEN ((NOT new.removed)) EXECUTE FUNCTION cronq.pauses_stamp();

--
-- Name: pauses pauses_until; Type: TRIGGER; Schema: cronq; Owner: postgres
--

CREATE TRIGGER pauses_until BEFORE INSERT OR UPDATE OF until ON cronq.pauses FOR EACH ROW WHEN ((NOT ((new.until >= '0001-01-01 00:00:00+00'::timestamp with time zone) AND (new.until < '10000-01-01 00:00:00+00'::timestamp with time zone)))) EXECUTE FUNCTION cronq.time_refused('until');

--
-- Name: schedules schedules_guard; Type: TRIGGER; Schema: cronq; Owner: postgres
--

CREATE TRIGGER schedules_guard BEFORE INSERT OR UPDATE OF name, cron, timezone, type, payload, queue, priority, max_attempts, timeout, enabled, catchup, overlap, created_by, created_at, updated_at, anchor, spread, hooks ON cronq.schedules FOR EACH ROW EXECUTE FUNCTION cronq.schedules_guard();

--
-- Name: schedules schedules_hooks; Type: TRIGGER; Schema: cronq; Owner: postgres
--

CREATE TRIGGER schedules_hooks BEFORE INSERT OR UPDATE OF hooks, type, created_by ON cronq.schedules FOR EACH ROW WHEN ((new.hooks IS NOT NULL)) EXECUTE FUNCTION cronq.schedules_hooks();

--
-- Name: schedules schedules_ledger_delete; Type: TRIGGER; Schema: cronq; Owner: postgres
--

CREATE TRIGGER schedules_ledger_delete AFTER DELETE ON cronq.schedules FOR EACH ROW EXECUTE FUNCTION cronq.schedules_ledger();

--
-- Name: schedules schedules_ledger_rename; Type: TRIGGER; Schema: cronq; Owner: postgres
--

CREATE TRIGGER schedules_ledger_rename AFTER UPDATE OF name ON cronq.schedules FOR EACH ROW WHEN ((old.name IS DISTINCT FROM new.name)) EXECUTE FUNCTION cronq.schedules_ledger();

--
-- Name: schedules schedules_name_check; Type: TRIGGER; Schema: cronq; Owner: postgres
--

CREATE TRIGGER schedules_name_check BEFORE INSERT ON cronq.schedules FOR EACH ROW EXECUTE FUNCTION cronq.schedules_name_check();

--
-- Name: schedules schedules_queue_name; Type: TRIGGER; Schema: cronq; Owner: postgres
--

CREATE TRIGGER schedules_queue_name BEFORE INSERT ON cronq.schedules FOR EACH ROW WHEN ((new.queue ~ '[[:cntrl:]]'::text)) EXECUTE FUNCTION cronq.queue_refused();

--
-- Name: schedules schedules_queue_rename; Type: TRIGGER; Schema: cronq; Owner: postgres
--

CREATE TRIGGER schedules_queue_rename BEFORE UPDATE OF queue ON cronq.schedules FOR EACH ROW WHEN (((new.queue IS DISTINCT FROM old.queue) AND (new.queue ~ '[[:cntrl:]]'::text))) EXECUTE FUNCTION cronq.queue_refused();

--
-- Name: schedules schedules_remove; Type: TRIGGER; Schema: cronq; Owner: postgres
--

CREATE TRIGGER schedules_remove AFTER INSERT OR UPDATE OF removed ON cronq.schedules FOR EACH ROW WHEN (new.removed) EXECUTE FUNCTION cronq.remove_row();

--
-- Name: schedules schedules_run_now; Type: TRIGGER; Schema: cronq; Owner: postgres
--

CREATE TRIGGER schedules_run_now BEFORE UPDATE OF run_now ON cronq.schedules FOR EACH ROW WHEN ((new.run_now IS NOT NULL)) EXECUTE FUNCTION cronq.schedules_run_now();

--
-- Name: schedules schedules_spell; Type: TRIGGER; Schema: cronq; Owner: postgres
--

CREATE TRIGGER schedules_spell BEFORE INSERT OR UPDATE OF enabled, disabled_from, disabled_until ON cronq.schedules FOR EACH ROW EXECUTE FUNCTION cronq.schedules_spell();

--
-- Name: schedules schedules_times; Type: TRIGGER; Schema: cronq; Owner: postgres
--

CREATE TRIGGER schedules_times BEFORE INSERT OR UPDATE OF next_run_at, spread, name ON cronq.schedules FOR EACH ROW WHEN ((NOT ((new.next_run_at >= '0001-01-01 00:00:00+00'::timestamp with time zone) AND (new.next_run_at < '10000-01-01 00:00:00+00'::timestamp with time zone)))) EXECUTE FUNCTION cronq.time_refused('next_run_at');

--
-- Name: schedules schedules_times_past; Type: TRIGGER; Schema: cronq; Owner: postgres
--

CREATE TRIGGER schedules_times_past BEFORE INSERT OR UPDATE OF next_run_at ON cronq.schedules FOR EACH ROW WHEN ((new.next_run_at < (clock_timestamp() - '00:01:00'::interval))) EXECUTE FUNCTION cronq.schedules_times_past();

--
-- Name: schedules schedules_undecided; Type: TRIGGER; Schema: cronq; Owner: postgres
--

CREATE TRIGGER schedules_undecided BEFORE UPDATE OF cron, timezone, anchor, spread, name ON cronq.schedules FOR EACH ROW WHEN (((new.next_run_at > now()) AND (new.decided_through IS NOT NULL) AND (((((new.cron IS DISTINCT FROM old.cron) OR (new.timezone IS DISTINCT FROM old.timezone)) OR (new.anchor IS DISTINCT FROM old.anchor)) OR (new.spread IS DISTINCT FROM old.spread)) OR (new.name IS DISTINCT FROM old.name)))) EXECUTE FUNCTION cronq.schedules_undecided();

--
-- Name: schedules schedules_unplanned; Type: TRIGGER; Schema: cronq; Owner: postgres
--

CREATE TRIGGER schedules_unplanned BEFORE INSERT OR UPDATE ON cronq.schedules FOR EACH ROW WHEN ((new.next_run_at IS NULL)) EXECUTE FUNCTION cronq.schedules_unplanned();

--
-- Name: pauses pauses_schedule_fkey; Type: FK CONSTRAINT; Schema: cronq; Owner: postgres
--

ALTER TABLE ONLY cronq.pauses
    ADD CONSTRAINT pauses_schedule_fkey FOREIGN KEY (schedule) REFERENCES cronq.schedules(name) ON DELETE CASCADE;

--
-- Name: job_runs; Type: ROW SECURITY; Schema: cronq; Owner: postgres
--

ALTER TABLE cronq.job_runs ENABLE ROW LEVEL SECURITY;

--
-- Name: job_runs job_runs_own; Type: POLICY; Schema: cronq; Owner: postgres
--

CREATE POLICY job_runs_own ON cronq.job_runs USING ((( SELECT cronq.is_admin() AS is_admin) OR (EXISTS ( SELECT 1
   FROM cronq.jobs j
  WHERE (j.id = job_runs.job_id)))));

--
-- Name: jobs; Type: ROW SECURITY; Schema: cronq; Owner: postgres
--

ALTER TABLE cronq.jobs ENABLE ROW LEVEL SECURITY;

--
-- Name: jobs jobs_own; Type: POLICY; Schema: cronq; Owner: postgres
--

CREATE POLICY jobs_own ON cronq.jobs USING ((( SELECT cronq.is_admin() AS is_admin) OR (enqueued_by = (CURRENT_USER)::text))) WITH CHECK ((( SELECT cronq.is_admin() AS is_admin) OR ((enqueued_by = (CURRENT_USER)::text) AND ((status = ANY (ARRAY['queued'::text, 'cancelled'::text, 'blocked'::text])) OR ((status = 'running'::text) AND cancel_requested)))));

--
-- Name: limits; Type: ROW SECURITY; Schema: cronq; Owner: postgres
--

ALTER TABLE cronq.limits ENABLE ROW LEVEL SECURITY;

--
-- Name: limits limits_manage; Type: POLICY; Schema: cronq; Owner: postgres
--

CREATE POLICY limits_manage ON cronq.limits USING (( SELECT cronq.manages_flow() AS manages_flow)) WITH CHECK (( SELECT cronq.manages_flow() AS manages_flow));

--
-- Name: limits limits_read; Type: POLICY; Schema: cronq; Owner: postgres
--

CREATE POLICY limits_read ON cronq.limits FOR SELECT USING (true);

--
-- Name: occurrences; Type: ROW SECURITY; Schema: cronq; Owner: postgres
--

ALTER TABLE cronq.occurrences ENABLE ROW LEVEL SECURITY;

--
-- Name: occurrences occurrences_own; Type: POLICY; Schema: cronq; Owner: postgres
--

CREATE POLICY occurrences_own ON cronq.occurrences FOR SELECT USING ((( SELECT cronq.is_admin() AS is_admin) OR (schedule IN ( SELECT s.name
   FROM cronq.schedules s))));

--
-- Name: occurrences occurrences_purge; Type: POLICY; Schema: cronq; Owner: postgres
--

CREATE POLICY occurrences_purge ON cronq.occurrences FOR DELETE USING (( SELECT cronq.is_admin() AS is_admin));

--
-- Name: pauses; Type: ROW SECURITY; Schema: cronq; Owner: postgres
--

ALTER TABLE cronq.pauses ENABLE ROW LEVEL SECURITY;

--
-- Name: pauses pauses_manage; Type: POLICY; Schema: cronq; Owner: postgres
--

CREATE POLICY pauses_manage ON cronq.pauses USING ((( SELECT cronq.is_admin() AS is_admin) OR ((key ~~ 'schedule:%'::text) AND (EXISTS ( SELECT 1
   FROM cronq.schedules s
  WHERE (('schedule:'::text || s.name) = pauses.key)))))) WITH CHECK ((( SELECT cronq.is_admin() AS is_admin) OR ((key ~~ 'schedule:%'::text) AND (EXISTS ( SELECT 1
   FROM cronq.schedules s
  WHERE (('schedule:'::text || s.name) = pauses.key))))));

--
-- Name: pauses pauses_read; Type: POLICY; Schema: cronq; Owner: postgres
--

CREATE POLICY pauses_read ON cronq.pauses FOR SELECT USING ((key !~~ 'schedule:%'::text));

--
-- Name: schedules; Type: ROW SECURITY; Schema: cronq; Owner: postgres
--

ALTER TABLE cronq.schedules ENABLE ROW LEVEL SECURITY;

--
-- Name: schedules schedules_own; Type: POLICY; Schema: cronq; Owner: postgres
--

CREATE POLICY schedules_own ON cronq.schedules USING ((( SELECT cronq.is_admin() AS is_admin) OR (created_by = (CURRENT_USER)::text))) WITH CHECK ((( SELECT cronq.is_admin() AS is_admin) OR (created_by = (CURRENT_USER)::text)));

--
-- Name: SCHEMA cronq; Type: ACL; Schema: -; Owner: postgres
--

GRANT USAGE ON SCHEMA cronq TO cronq_user;
GRANT USAGE ON SCHEMA cronq TO cronq_admin;

--
-- Name: TABLE jobs; Type: ACL; Schema: cronq; Owner: postgres
--

GRANT SELECT ON TABLE cronq.jobs TO cronq_user;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE cronq.jobs TO cronq_admin;

--
-- Name: COLUMN jobs.queue; Type: ACL; Schema: cronq; Owner: postgres
--

GRANT INSERT(queue) ON TABLE cronq.jobs TO cronq_user;

--
-- Name: COLUMN jobs.type; Type: ACL; Schema: cronq; Owner: postgres
--

GRANT INSERT(type) ON TABLE cronq.jobs TO cronq_user;

--
-- Name: COLUMN jobs.payload; Type: ACL; Schema: cronq; Owner: postgres
--

GRANT INSERT(payload),UPDATE(payload) ON TABLE cronq.jobs TO cronq_user;

--
-- Name: COLUMN jobs.priority; Type: ACL; Schema: cronq; Owner: postgres
--

GRANT INSERT(priority) ON TABLE cronq.jobs TO cronq_user;

--
-- Name: COLUMN jobs.run_at; Type: ACL; Schema: cronq; Owner: postgres
--

GRANT INSERT(run_at),UPDATE(run_at) ON TABLE cronq.jobs TO cronq_user;

--
-- Name: COLUMN jobs.status; Type: ACL; Schema: cronq; Owner: postgres
--

GRANT UPDATE(status) ON TABLE cronq.jobs TO cronq_user;

--
-- Name: COLUMN jobs.attempts; Type: ACL; Schema: cronq; Owner: postgres
--

GRANT UPDATE(attempts) ON TABLE cronq.jobs TO cronq_user;

--
-- Name: COLUMN jobs.max_attempts; Type: ACL; Schema: cronq; Owner: postgres
--

GRANT INSERT(max_attempts) ON TABLE cronq.jobs TO cronq_user;

--
-- Name: COLUMN jobs.timeout; Type: ACL; Schema: cronq; Owner: postgres
--

GRANT INSERT(timeout) ON TABLE cronq.jobs TO cronq_user;

--
-- Name: COLUMN jobs.idempotency_key; Type: ACL; Schema: cronq; Owner: postgres
--

GRANT INSERT(idempotency_key) ON TABLE cronq.jobs TO cronq_user;

--
-- Name: COLUMN jobs.locked_by; Type: ACL; Schema: cronq; Owner: postgres
--

GRANT UPDATE(locked_by) ON TABLE cronq.jobs TO cronq_user;

--
-- Name: COLUMN jobs.locked_until; Type: ACL; Schema: cronq; Owner: postgres
--

GRANT UPDATE(locked_until) ON TABLE cronq.jobs TO cronq_user;

--
-- Name: COLUMN jobs.last_error; Type: ACL; Schema: cronq; Owner: postgres
--

GRANT UPDATE(last_error) ON TABLE cronq.jobs TO cronq_user;

--
-- Name: COLUMN jobs.error_code; Type: ACL; Schema: cronq; Owner: postgres
--

GRANT UPDATE(error_code) ON TABLE cronq.jobs TO cronq_user;

--
-- Name: COLUMN jobs.enqueued_by; Type: ACL; Schema: cronq; Owner: postgres
--

GRANT INSERT(enqueued_by) ON TABLE cronq.jobs TO cronq_user;

--
-- Name: COLUMN jobs.schedule; Type: ACL; Schema: cronq; Owner: postgres
--

GRANT INSERT(schedule) ON TABLE cronq.jobs TO cronq_user;

--
-- Name: COLUMN jobs.scheduled_for; Type: ACL; Schema: cronq; Owner: postgres
--

GRANT INSERT(scheduled_for) ON TABLE cronq.jobs TO cronq_user;

--
-- Name: COLUMN jobs.updated_at; Type: ACL; Schema: cronq; Owner: postgres
--

GRANT UPDATE(updated_at) ON TABLE cronq.jobs TO cronq_user;

--
-- Name: COLUMN jobs.started_at; Type: ACL; Schema: cronq; Owner: postgres
--

GRANT UPDATE(started_at) ON TABLE cronq.jobs TO cronq_user;

--
-- Name: COLUMN jobs.finished_at; Type: ACL; Schema: cronq; Owner: postgres
--

GRANT UPDATE(finished_at) ON TABLE cronq.jobs TO cronq_user;

--
-- Name: COLUMN jobs.cancel_requested; Type: ACL; Schema: cronq; Owner: postgres
--

GRANT UPDATE(cancel_requested) ON TABLE cronq.jobs TO cronq_user;

--
-- Name: COLUMN jobs.limit_key; Type: ACL; Schema: cronq; Owner: postgres
--

GRANT INSERT(limit_key) ON TABLE cronq.jobs TO cronq_user;

--
-- Name: COLUMN jobs.expires_at; Type: ACL; Schema: cronq; Owner: postgres
--

GRANT INSERT(expires_at),UPDATE(expires_at) ON TABLE cronq.jobs TO cronq_user;

--
-- Name: COLUMN jobs.unique_key; Type: ACL; Schema: cronq; Owner: postgres
--

GRANT INSERT(unique_key) ON TABLE cronq.jobs TO cronq_user;

--
-- Name: COLUMN jobs.history; Type: ACL; Schema: cronq; Owner: postgres
--

GRANT INSERT(history) ON TABLE cronq.jobs TO cronq_user;

--
-- Name: COLUMN jobs.hooks; Type: ACL; Schema: cronq; Owner: postgres
--

GRANT INSERT(hooks) ON TABLE cronq.jobs TO cronq_user;

--
-- Name: COLUMN jobs.depends_on; Type: ACL; Schema: cronq; Owner: postgres
--

GRANT INSERT(depends_on) ON TABLE cronq.jobs TO cronq_user;

--
-- Name: COLUMN jobs.occurrence_checked; Type: ACL; Schema: cronq; Owner: postgres
--

GRANT INSERT(occurrence_checked) ON TABLE cronq.jobs TO cronq_user;

--
-- Name: FUNCTION cancel_jobs(ids bigint[]); Type: ACL; Schema: cronq; Owner: postgres
--

GRANT ALL ON FUNCTION cronq.cancel_jobs(ids bigint[]) TO cronq_user;
GRANT ALL ON FUNCTION cronq.cancel_jobs(ids bigint[]) TO cronq_admin;

--
-- Name: FUNCTION cancel(id bigint); Type: ACL; Schema: cronq; Owner: postgres
--

GRANT ALL ON FUNCTION cronq.cancel(id bigint) TO cronq_user;
GRANT ALL ON FUNCTION cronq.cancel(id bigint) TO cronq_admin;

--
-- Name: FUNCTION clear_limit(key text); Type: ACL; Schema: cronq; Owner: postgres
--

GRANT ALL ON FUNCTION cronq.clear_limit(key text) TO cronq_user;
GRANT ALL ON FUNCTION cronq.clear_limit(key text) TO cronq_admin;

--
-- Name: FUNCTION enqueue_job(type text, payload jsonb, run_at timestamp with time zone, queue text, priority integer, max_attempts integer, timeout interval, key text, limit_key text, expires_at timestamp with time zone, unique_key text, replace boolean, history text, hooks jsonb, depends_on bigint[], OUT id bigint, OUT created boolean, OUT note text); Type: ACL; Schema: cronq; Owner: postgres
--

GRANT ALL ON FUNCTION cronq.enqueue_job(type text, payload jsonb, run_at timestamp with time zone, queue text, priority integer, max_attempts integer, timeout interval, key text, limit_key text, expires_at timestamp with time zone, unique_key text, replace boolean, history text, hooks jsonb, depends_on bigint[], OUT id bigint, OUT created boolean, OUT note text) TO cronq_user;
GRANT ALL ON FUNCTION cronq.enqueue_job(type text, payload jsonb, run_at timestamp with time zone, queue text, priority integer, max_attempts integer, timeout interval, key text, limit_key text, expires_at timestamp with time zone, unique_key text, replace boolean, history text, hooks jsonb, depends_on bigint[], OUT id bigint, OUT created boolean, OUT note text) TO cronq_admin;

--
-- Name: FUNCTION enqueue(type text, payload jsonb, run_at timestamp with time zone, queue text, priority integer, max_attempts integer, timeout interval, key text, limit_key text, expires_at timestamp with time zone, unique_key text, replace boolean, history text, hooks jsonb, depends_on bigint[]); Type: ACL; Schema: cronq; Owner: postgres
--

GRANT ALL ON FUNCTION cronq.enqueue(type text, payload jsonb, run_at timestamp with time zone, queue text, priority integer, max_attempts integer, timeout interval, key text, limit_key text, expires_at timestamp with time zone, unique_key text, replace boolean, history text, hooks jsonb, depends_on bigint[]) TO cronq_user;
GRANT ALL ON FUNCTION cronq.enqueue(type text, payload jsonb, run_at timestamp with time zone, queue text, priority integer, max_attempts integer, timeout interval, key text, limit_key text, expires_at timestamp with time zone, unique_key text, replace boolean, history text, hooks jsonb, depends_on bigint[]) TO cronq_admin;

--
-- Name: FUNCTION enqueue_occurrences(p_names text[], p_fires timestamp with time zone[], p_deadline boolean); Type: ACL; Schema: cronq; Owner: postgres
--

GRANT ALL ON FUNCTION cronq.enqueue_occurrences(p_names text[], p_fires timestamp with time zone[], p_deadline boolean) TO cronq_user;
GRANT ALL ON FUNCTION cronq.enqueue_occurrences(p_names text[], p_fires timestamp with time zone[], p_deadline boolean) TO cronq_admin;

--
-- Name: FUNCTION enqueue_occurrences(p_names text[], p_fires timestamp with time zone[]); Type: ACL; Schema: cronq; Owner: postgres
--

GRANT ALL ON FUNCTION cronq.enqueue_occurrences(p_names text[], p_fires timestamp with time zone[]) TO cronq_user;
GRANT ALL ON FUNCTION cronq.enqueue_occurrences(p_names text[], p_fires timestamp with time zone[]) TO cronq_admin;

--
-- Name: FUNCTION expire_holder(p_key text); Type: ACL; Schema: cronq; Owner: postgres
--

REVOKE ALL ON FUNCTION cronq.expire_holder(p_key text) FROM PUBLIC;
GRANT ALL ON FUNCTION cronq.expire_holder(p_key text) TO cronq_user;
GRANT ALL ON FUNCTION cronq.expire_holder(p_key text) TO cronq_admin;

--
-- Name: TABLE job_runs; Type: ACL; Schema: cronq; Owner: postgres
--

GRANT SELECT ON TABLE cronq.job_runs TO cronq_user;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE cronq.job_runs TO cronq_admin;

--
-- Name: TABLE occurrences; Type: ACL; Schema: cronq; Owner: postgres
--

GRANT SELECT ON TABLE cronq.occurrences TO cronq_user;
GRANT SELECT,DELETE ON TABLE cronq.occurrences TO cronq_admin;

--
-- Name: FUNCTION expire_jobs(p_worker text, p_ids bigint[]); Type: ACL; Schema: cronq; Owner: postgres
--

REVOKE ALL ON FUNCTION cronq.expire_jobs(p_worker text, p_ids bigint[]) FROM PUBLIC;

--
-- Name: FUNCTION fire_hooks(p_ids bigint[], p_statuses text[], p_attempts integer[], p_errors text[]); Type: ACL; Schema: cronq; Owner: postgres
--

REVOKE ALL ON FUNCTION cronq.fire_hooks(p_ids bigint[], p_statuses text[], p_attempts integer[], p_errors text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION cronq.fire_hooks(p_ids bigint[], p_statuses text[], p_attempts integer[], p_errors text[]) TO cronq_admin;

--
-- Name: TABLE limits; Type: ACL; Schema: cronq; Owner: postgres
--

GRANT SELECT ON TABLE cronq.limits TO cronq_user;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE cronq.limits TO cronq_admin;

--
-- Name: FUNCTION full_keys(); Type: ACL; Schema: cronq; Owner: postgres
--

GRANT ALL ON FUNCTION cronq.full_keys() TO cronq_user;
GRANT ALL ON FUNCTION cronq.full_keys() TO cronq_admin;

--
-- Name: FUNCTION held(ks text[], p_queue text, p_type text); Type: ACL; Schema: cronq; Owner: postgres
--

GRANT ALL ON FUNCTION cronq.held(ks text[], p_queue text, p_type text) TO cronq_user;
GRANT ALL ON FUNCTION cronq.held(ks text[], p_queue text, p_type text) TO cronq_admin;

--
-- Name: FUNCTION held(ks text[], p_queue text, p_type text, p_limit_key text); Type: ACL; Schema: cronq; Owner: postgres
--

GRANT ALL ON FUNCTION cronq.held(ks text[], p_queue text, p_type text, p_limit_key text) TO cronq_user;
GRANT ALL ON FUNCTION cronq.held(ks text[], p_queue text, p_type text, p_limit_key text) TO cronq_admin;

--
-- Name: FUNCTION history_error(p text); Type: ACL; Schema: cronq; Owner: postgres
--

GRANT ALL ON FUNCTION cronq.history_error(p text) TO cronq_user;
GRANT ALL ON FUNCTION cronq.history_error(p text) TO cronq_admin;

--
-- Name: FUNCTION job_keys(p_queue text, p_type text, p_schedule text, p_limit_key text); Type: ACL; Schema: cronq; Owner: postgres
--

GRANT ALL ON FUNCTION cronq.job_keys(p_queue text, p_type text, p_schedule text, p_limit_key text) TO cronq_user;
GRANT ALL ON FUNCTION cronq.job_keys(p_queue text, p_type text, p_schedule text, p_limit_key text) TO cronq_admin;

--
-- Name: FUNCTION jobs_link(); Type: ACL; Schema: cronq; Owner: postgres
--

REVOKE ALL ON FUNCTION cronq.jobs_link() FROM PUBLIC;

--
-- Name: FUNCTION jobs_link_commit(); Type: ACL; Schema: cronq; Owner: postgres
--

REVOKE ALL ON FUNCTION cronq.jobs_link_commit() FROM PUBLIC;

--
-- Name: FUNCTION key_in_use(p_key text); Type: ACL; Schema: cronq; Owner: postgres
--

REVOKE ALL ON FUNCTION cronq.key_in_use(p_key text) FROM PUBLIC;
GRANT ALL ON FUNCTION cronq.key_in_use(p_key text) TO cronq_user;
GRANT ALL ON FUNCTION cronq.key_in_use(p_key text) TO cronq_admin;

--
-- Name: FUNCTION limit_key_error(k text); Type: ACL; Schema: cronq; Owner: postgres
--

GRANT ALL ON FUNCTION cronq.limit_key_error(k text) TO cronq_user;
GRANT ALL ON FUNCTION cronq.limit_key_error(k text) TO cronq_admin;

--
-- Name: FUNCTION limited(); Type: ACL; Schema: cronq; Owner: postgres
--

GRANT ALL ON FUNCTION cronq.limited() TO cronq_user;
GRANT ALL ON FUNCTION cronq.limited() TO cronq_admin;

--
-- Name: TABLE pauses; Type: ACL; Schema: cronq; Owner: postgres
--

GRANT SELECT ON TABLE cronq.pauses TO cronq_user;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE cronq.pauses TO cronq_admin;

--
-- Name: COLUMN pauses.key; Type: ACL; Schema: cronq; Owner: postgres
--

GRANT INSERT(key) ON TABLE cronq.pauses TO cronq_user;

--
-- Name: COLUMN pauses.until; Type: ACL; Schema: cronq; Owner: postgres
--

GRANT INSERT(until),UPDATE(until) ON TABLE cronq.pauses TO cronq_user;

--
-- Name: COLUMN pauses.schedule; Type: ACL; Schema: cronq; Owner: postgres
--

GRANT INSERT(schedule) ON TABLE cronq.pauses TO cronq_user;

--
-- Name: COLUMN pauses.removed; Type: ACL; Schema: cronq; Owner: postgres
--

GRANT UPDATE(removed) ON TABLE cronq.pauses TO cronq_user;

--
-- Name: FUNCTION materialise(p_names text[], p_fires timestamp with time zone[], p_sched text[], p_next timestamp with time zone[]); Type: ACL; Schema: cronq; Owner: postgres
--

REVOKE ALL ON FUNCTION cronq.materialise(p_names text[], p_fires timestamp with time zone[], p_sched text[], p_next timestamp with time zone[]) FROM PUBLIC;

--
-- Name: FUNCTION materialise(p_names text[], p_fires timestamp with time zone[], p_sched text[], p_next timestamp with time zone[], p_skip_names text[], p_skip_fires timestamp with time zone[], p_skip_why text[], p_skip_detail text[]); Type: ACL; Schema: cronq; Owner: postgres
--

REVOKE ALL ON FUNCTION cronq.materialise(p_names text[], p_fires timestamp with time zone[], p_sched text[], p_next timestamp with time zone[], p_skip_names text[], p_skip_fires timestamp with time zone[], p_skip_why text[], p_skip_detail text[]) FROM PUBLIC;

--
-- Name: FUNCTION materialise(p_names text[], p_fires timestamp with time zone[], p_sched text[], p_next timestamp with time zone[], p_skip_names text[], p_skip_fires timestamp with time zone[], p_skip_why text[], p_skip_detail text[], p_through timestamp with time zone[]); Type: ACL; Schema: cronq; Owner: postgres
--

REVOKE ALL ON FUNCTION cronq.materialise(p_names text[], p_fires timestamp with time zone[], p_sched text[], p_next timestamp with time zone[], p_skip_names text[], p_skip_fires timestamp with time zone[], p_skip_why text[], p_skip_detail text[], p_through timestamp with time zone[]) FROM PUBLIC;

--
-- Name: FUNCTION pause(key text, until timestamp with time zone); Type: ACL; Schema: cronq; Owner: postgres
--

GRANT ALL ON FUNCTION cronq.pause(key text, until timestamp with time zone) TO cronq_user;
GRANT ALL ON FUNCTION cronq.pause(key text, until timestamp with time zone) TO cronq_admin;

--
-- Name: FUNCTION paused_keys(); Type: ACL; Schema: cronq; Owner: postgres
--

GRANT ALL ON FUNCTION cronq.paused_keys() TO cronq_user;
GRANT ALL ON FUNCTION cronq.paused_keys() TO cronq_admin;

--
-- Name: FUNCTION remove_row(); Type: ACL; Schema: cronq; Owner: postgres
--

REVOKE ALL ON FUNCTION cronq.remove_row() FROM PUBLIC;

--
-- Name: TABLE schedules; Type: ACL; Schema: cronq; Owner: postgres
--

GRANT SELECT ON TABLE cronq.schedules TO cronq_user;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE cronq.schedules TO cronq_admin;

--
-- Name: COLUMN schedules.name; Type: ACL; Schema: cronq; Owner: postgres
--

GRANT INSERT(name) ON TABLE cronq.schedules TO cronq_user;

--
-- Name: COLUMN schedules.cron; Type: ACL; Schema: cronq; Owner: postgres
--

GRANT INSERT(cron),UPDATE(cron) ON TABLE cronq.schedules TO cronq_user;

--
-- Name: COLUMN schedules.timezone; Type: ACL; Schema: cronq; Owner: postgres
--

GRANT INSERT(timezone),UPDATE(timezone) ON TABLE cronq.schedules TO cronq_user;

--
-- Name: COLUMN schedules.type; Type: ACL; Schema: cronq; Owner: postgres
--

GRANT INSERT(type),UPDATE(type) ON TABLE cronq.schedules TO cronq_user;

--
-- Name: COLUMN schedules.payload; Type: ACL; Schema: cronq; Owner: postgres
--

GRANT INSERT(payload),UPDATE(payload) ON TABLE cronq.schedules TO cronq_user;

--
-- Name: COLUMN schedules.queue; Type: ACL; Schema: cronq; Owner: postgres
--

GRANT INSERT(queue),UPDATE(queue) ON TABLE cronq.schedules TO cronq_user;

--
-- Name: COLUMN schedules.priority; Type: ACL; Schema: cronq; Owner: postgres
--

GRANT INSERT(priority),UPDATE(priority) ON TABLE cronq.schedules TO cronq_user;

--
-- Name: COLUMN schedules.max_attempts; Type: ACL; Schema: cronq; Owner: postgres
--

GRANT INSERT(max_attempts),UPDATE(max_attempts) ON TABLE cronq.schedules TO cronq_user;

--
-- Name: COLUMN schedules.timeout; Type: ACL; Schema: cronq; Owner: postgres
--

GRANT INSERT(timeout),UPDATE(timeout) ON TABLE cronq.schedules TO cronq_user;

--
-- Name: COLUMN schedules.enabled; Type: ACL; Schema: cronq; Owner: postgres
--

GRANT INSERT(enabled),UPDATE(enabled) ON TABLE cronq.schedules TO cronq_user;

--
-- Name: COLUMN schedules.catchup; Type: ACL; Schema: cronq; Owner: postgres
--

GRANT INSERT(catchup),UPDATE(catchup) ON TABLE cronq.schedules TO cronq_user;

--
-- Name: COLUMN schedules.overlap; Type: ACL; Schema: cronq; Owner: postgres
--

GRANT INSERT(overlap),UPDATE(overlap) ON TABLE cronq.schedules TO cronq_user;

--
-- Name: COLUMN schedules.next_run_at; Type: ACL; Schema: cronq; Owner: postgres
--

GRANT INSERT(next_run_at),UPDATE(next_run_at) ON TABLE cronq.schedules TO cronq_user;

--
-- Name: COLUMN schedules.start_deadline; Type: ACL; Schema: cronq; Owner: postgres
--

GRANT INSERT(start_deadline),UPDATE(start_deadline) ON TABLE cronq.schedules TO cronq_user;

--
-- Name: COLUMN schedules.history; Type: ACL; Schema: cronq; Owner: postgres
--

GRANT INSERT(history),UPDATE(history) ON TABLE cronq.schedules TO cronq_user;

--
-- Name: COLUMN schedules.keep; Type: ACL; Schema: cronq; Owner: postgres
--

GRANT INSERT(keep),UPDATE(keep) ON TABLE cronq.schedules TO cronq_user;

--
-- Name: COLUMN schedules.anchor; Type: ACL; Schema: cronq; Owner: postgres
--

GRANT INSERT(anchor),UPDATE(anchor) ON TABLE cronq.schedules TO cronq_user;

--
-- Name: COLUMN schedules.spread; Type: ACL; Schema: cronq; Owner: postgres
--

GRANT INSERT(spread),UPDATE(spread) ON TABLE cronq.schedules TO cronq_user;

--
-- Name: COLUMN schedules.hooks; Type: ACL; Schema: cronq; Owner: postgres
--

GRANT INSERT(hooks),UPDATE(hooks) ON TABLE cronq.schedules TO cronq_user;

--
-- Name: COLUMN schedules.removed; Type: ACL; Schema: cronq; Owner: postgres
--

GRANT UPDATE(removed) ON TABLE cronq.schedules TO cronq_user;

--
-- Name: COLUMN schedules.run_now; Type: ACL; Schema: cronq; Owner: postgres
--

GRANT UPDATE(run_now) ON TABLE cronq.schedules TO cronq_user;

--
-- Name: FUNCTION resume(key text); Type: ACL; Schema: cronq; Owner: postgres
--

GRANT ALL ON FUNCTION cronq.resume(key text) TO cronq_user;
GRANT ALL ON FUNCTION cronq.resume(key text) TO cronq_admin;

--
-- Name: FUNCTION retry_jobs(ids bigint[]); Type: ACL; Schema: cronq; Owner: postgres
--

GRANT ALL ON FUNCTION cronq.retry_jobs(ids bigint[]) TO cronq_user;
GRANT ALL ON FUNCTION cronq.retry_jobs(ids bigint[]) TO cronq_admin;

--
-- Name: FUNCTION retry(id bigint); Type: ACL; Schema: cronq; Owner: postgres
--

GRANT ALL ON FUNCTION cronq.retry(id bigint) TO cronq_user;
GRANT ALL ON FUNCTION cronq.retry(id bigint) TO cronq_admin;

--
-- Name: FUNCTION run_schedule(name text, force boolean); Type: ACL; Schema: cronq; Owner: postgres
--

REVOKE ALL ON FUNCTION cronq.run_schedule(name text, force boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION cronq.run_schedule(name text, force boolean) TO cronq_user;
GRANT ALL ON FUNCTION cronq.run_schedule(name text, force boolean) TO cronq_admin;

--
-- Name: FUNCTION schedule(name text, cron text, type text, payload jsonb, timezone text, queue text, priority integer, max_attempts integer, timeout interval, enabled boolean, catchup text, overlap text, start_deadline interval, history text, keep integer, anchor timestamp with time zone, spread interval, hooks jsonb); Type: ACL; Schema: cronq; Owner: postgres
--

GRANT ALL ON FUNCTION cronq.schedule(name text, cron text, type text, payload jsonb, timezone text, queue text, priority integer, max_attempts integer, timeout interval, enabled boolean, catchup text, overlap text, start_deadline interval, history text, keep integer, anchor timestamp with time zone, spread interval, hooks jsonb) TO cronq_user;
GRANT ALL ON FUNCTION cronq.schedule(name text, cron text, type text, payload jsonb, timezone text, queue text, priority integer, max_attempts integer, timeout interval, enabled boolean, catchup text, overlap text, start_deadline interval, history text, keep integer, anchor timestamp with time zone, spread interval, hooks jsonb) TO cronq_admin;

--
-- Name: FUNCTION schedule_name_in_use(p_name text); Type: ACL; Schema: cronq; Owner: postgres
--

REVOKE ALL ON FUNCTION cronq.schedule_name_in_use(p_name text) FROM PUBLIC;
GRANT ALL ON FUNCTION cronq.schedule_name_in_use(p_name text) TO cronq_user;
GRANT ALL ON FUNCTION cronq.schedule_name_in_use(p_name text) TO cronq_admin;

--
-- Name: FUNCTION schedules_run_now(); Type: ACL; Schema: cronq; Owner: postgres
--

REVOKE ALL ON FUNCTION cronq.schedules_run_now() FROM PUBLIC;

--
-- Name: FUNCTION set_limit(key text, max_running integer, rate integer, per interval); Type: ACL; Schema: cronq; Owner: postgres
--

GRANT ALL ON FUNCTION cronq.set_limit(key text, max_running integer, rate integer, per interval) TO cronq_user;
GRANT ALL ON FUNCTION cronq.set_limit(key text, max_running integer, rate integer, per interval) TO cronq_admin;

--
-- Name: FUNCTION settle_step(OUT more boolean, OUT settled integer); Type: ACL; Schema: cronq; Owner: postgres
--

REVOKE ALL ON FUNCTION cronq.settle_step(OUT more boolean, OUT settled integer) FROM PUBLIC;
GRANT ALL ON FUNCTION cronq.settle_step(OUT more boolean, OUT settled integer) TO cronq_admin;

--
-- Name: FUNCTION sweep_links(); Type: ACL; Schema: cronq; Owner: postgres
--

REVOKE ALL ON FUNCTION cronq.sweep_links() FROM PUBLIC;
GRANT ALL ON FUNCTION cronq.sweep_links() TO cronq_admin;

--
-- Name: FUNCTION unique_key_in_use(p_key text); Type: ACL; Schema: cronq; Owner: postgres
--

REVOKE ALL ON FUNCTION cronq.unique_key_in_use(p_key text) FROM PUBLIC;
GRANT ALL ON FUNCTION cronq.unique_key_in_use(p_key text) TO cronq_user;
GRANT ALL ON FUNCTION cronq.unique_key_in_use(p_key text) TO cronq_admin;

--
-- Name: FUNCTION unschedule(name text); Type: ACL; Schema: cronq; Owner: postgres
--

GRANT ALL ON FUNCTION cronq.unschedule(name text) TO cronq_user;
GRANT ALL ON FUNCTION cronq.unschedule(name text) TO cronq_admin;

--
-- Name: TABLE limits_now; Type: ACL; Schema: cronq; Owner: postgres
--

GRANT SELECT ON TABLE cronq.limits_now TO cronq_user;
GRANT SELECT ON TABLE cronq.limits_now TO cronq_admin;

--
-- Name: TABLE schema_migrations; Type: ACL; Schema: cronq; Owner: postgres
--

GRANT SELECT ON TABLE cronq.schema_migrations TO cronq_user;
GRANT SELECT ON TABLE cronq.schema_migrations TO cronq_admin;

--
-- Name: TABLE settle_later; Type: ACL; Schema: cronq; Owner: postgres
--

GRANT SELECT ON TABLE cronq.settle_later TO cronq_admin;

--
-- Name: TABLE settle_parents; Type: ACL; Schema: cronq; Owner: postgres
--

GRANT SELECT ON TABLE cronq.settle_parents TO cronq_admin;

--
-- Name: TABLE wakes; Type: ACL; Schema: cronq; Owner: postgres
--

GRANT SELECT ON TABLE cronq.wakes TO cronq_user;
GRANT SELECT,DELETE ON TABLE cronq.wakes TO cronq_admin;

--
-- PostgreSQL database dump complete
--

