#!/usr/bin/env bash
# A statement refused for want of a privilege names the missing grant in a
# hint, for every command: "GRANT cronq_user TO <login>", cronq_admin for
# purge, and for what only the schema's owner may do (run, migrate)
# that it is the owner's. A refusal cronq's own functions raise
# (exec without cronq_exec) keeps its own words and gets no such hint.
. "$(dirname "$0")/lib.sh"
migrate
# Roles are cluster-wide: names of this file's own. t_grants_none is in no
# cronq role at all.
mkrole t_grants_none t_grants_member "t_grants Odd"
q "grant cronq_user to t_grants_member"

as_none="user=t_grants_none"
denied='cronq: error: permission denied for schema cronq'
hint_user='cronq: hint: GRANT cronq_user TO t_grants_none'
hint_owner='cronq: hint: Log in as the owner of schema cronq (the role that ran the first "cronq migrate", which needs CREATE on the database), not as t_grants_none.'

for args in "status" "status --json" "status --prometheus" "list" "show 1" "enqueue noop" "enqueue --jsonl" \
            "cancel 1" "retry 1" "schedule list" "schedule add t_grants '* * * * *' noop" \
            "backfill noop --from 2026-01-01 --to 2026-01-02" \
            "backfill --schedule cronq-purge --from 2026-01-01 --to 2026-01-02"; do
    eval "set -- $args"
    cronq_in '{"type":"noop"}' "$@" --db "$as_none"
    expect "$args: the grant cronq_user needs" 78 "" "$denied
$hint_user"
done
cronq purge --db "$as_none"
expect "purge: cronq_admin" 78 "" "$denied
cronq: hint: GRANT cronq_admin TO t_grants_none"
for args in "run" "migrate"; do
    eval "set -- $args"
    cronq "$@" --db "$as_none"
    expect "$args: only the schema's owner" 78 "" "$denied
$hint_owner"
done
cronq check --db "$as_none"
expect "check: the hint on the UNKNOWN line" 3 "CRONQ UNKNOWN - permission denied for schema cronq; hint: GRANT cronq_user TO t_grants_none" ""
cronq status --db "$as_none" --log-format json
match "json logs carry the hint" '"hint":"GRANT cronq_user TO t_grants_none"' "$ERR"

# A login that SQL must quote is quoted, so the hint can be pasted.
cronq list --db "user='t_grants Odd'"
expect "a login that needs quoting" 78 "" "$denied
cronq: hint: GRANT cronq_user TO \"t_grants Odd\""
q "do \$\$ begin if not exists (select from pg_roles where rolname = 't_grants \"q') then create role \"t_grants \"\"q\" login; end if; end \$\$"
cronq list --db "user='t_grants \"q'"
expect "a login holding a double quote" 78 "" "$denied
cronq: hint: GRANT cronq_user TO \"t_grants \"\"q\""

# Past the schema: a member of cronq_user refused a table (purge) gets the
# role that command needs; another role's schedule it does not even see.
cronq purge --db user=t_grants_member
expect "purge by a cronq_user: cronq_admin" 78 "" "cronq: error: permission denied for table jobs
cronq: hint: GRANT cronq_admin TO t_grants_member"
cronq backfill --schedule cronq-purge --from 2026-01-01 --to 2026-01-02 --db user=t_grants_member
expect_rc_err "backfill --schedule of the owner's schedule by a cronq_user: not found" 65 \
    '^cronq: error: schedule "cronq-purge" does not exist$'

# cronq's own refusal (SQLSTATE 42501 too) says why itself: no grant hint.
cronq enqueue exec '{"command": "true"}' --db user=t_grants_member
expect "exec without cronq_exec: the database's own message, alone" 78 "" \
    'cronq: error: role "t_grants_member" may not enqueue exec jobs: it is not a member of cronq_exec'

# Granted, the same commands work: the hint was the fix.
q "grant cronq_user to t_grants_none"
cronq status --db "$as_none"
eq "status once granted" 0 "$RC"
cronq enqueue noop --db "$as_none"
eq "enqueue once granted" 0 "$RC"
q "revoke cronq_user from t_grants_none"

# No function that runs as the owner is anyone's to call but the cronq
# roles' (trigger functions cannot be called at all).
eq "no SECURITY DEFINER function executable by PUBLIC" "" \
    "$(q "select string_agg(p.oid::regprocedure::text, ', ') from pg_proc p join pg_namespace n on n.oid = p.pronamespace
          where n.nspname = 'cronq' and p.prosecdef and p.prorettype <> 'trigger'::regtype
            and has_function_privilege('public', p.oid, 'execute')")"

done_testing
