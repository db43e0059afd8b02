#!/usr/bin/env bash
# Never print a password: a connection string that holds one, in each form
# libpq takes (a URI's user:password@, percent-encoded or not, a password=
# parameter, a password= keyword quoted or not), whether it fails to parse
# (exit 64, check: 3) or to connect (69, check: 3), from --db or from
# CRONQ_DATABASE_URL, leaves no trace of the password on stdout or stderr
# of check, status, enqueue and run.
. "$(dirname "$0")/lib.sh"
migrate

# forms: CODE|SECRET|CONNINFO — CODE is the exit when it does not parse (64)
# or does not connect (69); SECRET, what must never be printed.
nohost="host=$T_DIR/none"
forms=(
    "64|S3cretPw|postgresql://u:S3cretPw@[bad"
    "64|S3cretPw|postgresql://u:S3cretPw@[]/db"
    "64|S3cretPw|postgresql://u:S3cretPw@localhost/db?sslmode"
    "64|S3cr%zzPw|postgresql://u:S3cr%zzPw@localhost/db"
    "64|S3cr%65tPw|postgresql://u:S3cr%65tPw@[bad"
    "64|S3cretPw|postgresql://u:S3cr%65tPw@[bad"
    "64|S3cretPw|postgresql://u@localhost/db?password=S3cretPw&bogus=1"
    "64|S3cr%zzPw|postgresql://u@localhost/db?password=S3cr%zzPw"
    "64|S3cret Pw|$nohost password='S3cret Pw' bogus=1"
    "64|S3cretPw|$nohost password='S3cretPw"
    "64|S3cretPw|password=S3cretPw junk"
    "69|S3cret Pw|$nohost password='S3cret Pw'"
    "69|S3cretPw|$nohost password=S3cretPw"
    "64|S3cretPw|$nohost password=S3cretPw port=abc"
    "69|S3cretPw|postgresql://u:S3cretPw@127.0.0.1:1/db"
    "69|S3cretPw|postgresql://u:S3cr%65tPw@127.0.0.1:1/db"
    "69|S3c|postgresql://u:S3c@retPw@127.0.0.1:1/db"
    "69|retPw|postgresql://u:S3c@retPw@127.0.0.1:1/db"
)
# leaks SECRET: whether the last command printed SECRET (raw or decoded).
leaks() {
    local s=$1 d
    d=$(printf '%b' "${s//%/\\x}")
    [[ "$OUT$ERR" == *"$s"* || "$OUT$ERR" == *"$d"* ]]
}
for form in "${forms[@]}"; do
    code=${form%%|*}; rest=${form#*|}; secret=${rest%%|*}; conninfo=${rest#*|}
    for cmd in check status "enqueue noop" run; do
        cronq $cmd --db "$conninfo"
        if leaks "$secret"; then fail "$cmd --db '$conninfo' printed [$secret]: out=[$OUT] err=[$ERR]"; else pass; fi
        if [ "$cmd" = check ]; then
            match "$cmd --db '$conninfo': one UNKNOWN line" '^CRONQ UNKNOWN - [^
]+$' "$OUT"
            eq "$cmd --db '$conninfo': exit 3" 3 "$RC"
        else
            expect_rc_err "$cmd --db '$conninfo'" "$code" '^cronq: error: (invalid connection string in --db|could not connect to database): '
        fi
    done
    CRONQ_DATABASE_URL=$conninfo cronq status
    if leaks "$secret"; then fail "status with CRONQ_DATABASE_URL='$conninfo' printed [$secret]: [$ERR]"; else pass; fi
    eq "status with CRONQ_DATABASE_URL='$conninfo': exit" "$code" "$RC"
done

# What is shown instead: the string with its password replaced, so the
# fault stays findable.
cronq status --db 'postgresql://u:S3cretPw@[bad'
expect "a URI that does not parse is shown without its password" 64 "" \
    'cronq: error: invalid connection string in --db: end of string reached when looking for matching "]" in IPv6 host address in URI: "postgresql://u:****@[bad"'
cronq check --db 'postgresql://u:S3cr%zzPw@localhost/db'
expect "check: the token libpq quotes is the password" 3 \
    'CRONQ UNKNOWN - invalid connection string in --db: invalid percent-encoded token: "****"' ""
cronq status --db 'postgresql://u@localhost/db?password=x&bogus=1'
expect "a query parameter libpq refuses is named" 64 "" \
    'cronq: error: invalid connection string in --db: invalid URI query parameter: "bogus"'

# A database name is not a connection string: libpq takes it whole.
cronq status --db "no_such_db_$T_NAME"
expect_rc_err "a database name is not parsed" 69 "database \"no_such_db_$T_NAME\" does not exist"

done_testing
