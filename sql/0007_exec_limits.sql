-- 0007_exec_limits.sql — what an exec payload may not do: set a variable
-- that changes how its program is loaded or interpreted, or be more than
-- the kernel passes to a program. The rules of lib/tasks/exec.c
-- (exec_env_denied[], EXEC_PAYLOAD_MAX, EXEC_ARGS_MAX), applied by the
-- jobs_guard and schedules_guard triggers to every insert and update. A job
-- stored before this migration is checked again by the runner, which makes
-- a refused one dead (bad_payload) without running it.
--
-- As in 0006, SQL-standard bodies: every name and operator is bound when
-- migrate creates them (with search_path pinned to pg_catalog), whatever
-- the caller's search_path later, and the planner still inlines them into
-- the trigger's expression. Functions and types are written qualified all
-- the same. Every statement may run again (create or replace).

-- Whether a payload's env may not set this variable. One pattern, matched
-- without regard to case in the "C" collation (ASCII case, whatever the
-- database's locale): a name, or a prefix followed by ".*". The same list,
-- entry for entry and in the same order, as exec_env_denied[] in
-- lib/tasks/exec.c; tests/unit/test_payload.c reads this function's text
-- from the binary and fails when the two differ.
create or replace function cronq.exec_env_denied(name text) returns boolean
language sql immutable parallel safe
return (name collate pg_catalog."C") ~* ('^('
    'LD_.*|DYLD_.*|_RLD.*|LDR_.*|LIBPATH|SHLIB_PATH|GCONV_PATH|GETCONF_DIR|'
    'GLIBC_TUNABLES|MALLOC_.*|HOSTALIASES|LOCALDOMAIN|RES_OPTIONS|RESOLV_HOST_CONF|'
    'NIS_PATH|LOCPATH|NLSPATH|PATH_LOCALE|TZDIR|AUTHSTATE|VAR_ACE|USR_ACE|'
    'DLC_ACE|'
    'PATH|IFS|CDPATH|ENV|BASH.*|SHELLOPTS|PS4|GLOBIGNORE|PROMPT_COMMAND|'
    'FPATH|NULLCMD|READNULLCMD|ZDOTDIR|TMPPREFIX|SHELL|HOME|XDG_.*|'
    'TERMINFO|TERMINFO_DIRS|TERMPATH|TERMCAP|'
    'PERL.*|PYTHON.*|RUBY.*|GEM_.*|BUNDLE_.*|NODE_.*|NPM_CONFIG_.*|JAVA_.*|_JAVA_.*|'
    'JDK_.*|CLASSPATH|DOTNET_.*|CORECLR_.*|COMPLUS_.*|LUA_.*|PHPRC|PHP_INI_SCAN_DIR|'
    'TCLLIBPATH|TCL_LIBRARY|TK_LIBRARY|AWKPATH|AWKLIBPATH|PIP_.*|GOFLAGS|'
    'GOTOOLCHAIN|'
    'EDITOR|VISUAL|PAGER|MANPAGER|LESSOPEN|LESSCLOSE|GIT_.*|SSH_ASKPASS.*|'
    'SUDO_ASKPASS|MAKEFLAGS|MAKEFILES|MFLAGS|'
    'PG.*|KRB5.*|OPENSSL_.*|SSL_CERT_.*|CURL_CA_BUNDLE|REQUESTS_CA_BUNDLE|'
    'TAR_OPTIONS|ZIPOPT|ZIP|UNZIP|UNZIPOPT|ZIPINFO|GZIP|BZIP|BZIP2|XZ_OPT|'
    'XZ_DEFAULTS|LESS|LESSKEY.*|MORE|VIMINIT|EXINIT|MYVIMRC|VIMRUNTIME|GREP_OPTIONS|'
    'RSYNC_RSH|RSYNC_CONNECT_PROG|CVS_RSH|BROWSER|SUDO_EDITOR|SYSTEMD_.*|WGETRC|'
    'CURL_HOME|GNUPGHOME|SSLKEYLOGFILE|R_PROFILE.*|R_ENVIRON.*|R_LIBS.*|JULIA_.*|GUILE_.*|'
    'ERL_.*|CC|CXX|CPP|CGO_.*|GOENV|GOPROXY|GONOSUMDB|GONOPROXY|GOINSECURE|'
    'GOPRIVATE|GOSUMDB|GOPATH|GOROOT|'
    'HTTPS_CA_FILE|HTTPS_CA_DIR|HTTP_PROXY|HTTPS_PROXY|FTP_PROXY|ALL_PROXY|NO_PROXY'
    ')$');

-- Whether env may not give this variable (case as written) this value: the
-- locale and terminal variables are names, never paths or formats
-- (LANGUAGE=../x makes gettext load a catalog from anywhere, and catalogs
-- hold printf formats); TZ may name a zone but no file outside the zone
-- database. exec_env_value_refused() in lib/tasks/exec.c, as sudo's
-- env_check.
create or replace function cronq.exec_env_value_refused(name text, value text) returns boolean
language sql immutable parallel safe
return case
    when name in ('LANG', 'LANGUAGE', 'LINGUAS', 'TERM', 'COLORTERM') or name like 'LC\_%'
        then pg_catalog.strpos(value, '/') > 0 or pg_catalog.strpos(value, '%') > 0
    when name = 'TZ'
        then pg_catalog.strpos(value, '..') > 0 or pg_catalog.strpos(value, '%') > 0
             or value like '/%' or value like ':/%'
    else false
end;

-- The payload's share of what execve() copies for the program (the
-- kernel's count, fs/exec.c): every string of argv (the command, then
-- args) and of the environment (K=V for each of env, and
-- CRONQ_PAYLOAD=<the payload's text>), each with its NUL and an 8-byte
-- pointer. It is never more than 4 × the payload's text: every string is
-- in that text too, inside at least 4 bytes of quotes and separators per
-- pointer (exec.c, exec_args_bytes()).
create or replace function cronq.exec_args_bytes(p jsonb) returns bigint
language sql immutable parallel safe
return pg_catalog.octet_length(p ->> 'command') + 9
    + coalesce((select pg_catalog.sum(pg_catalog.octet_length(a) + 9)
                from pg_catalog.jsonb_array_elements_text(p -> 'args') a), 0)
    + coalesce((select pg_catalog.sum(pg_catalog.octet_length(e.key) + pg_catalog.octet_length(e.value) + 10)
                from pg_catalog.jsonb_each_text(p -> 'env') e), 0)
    + pg_catalog.octet_length('CRONQ_PAYLOAD=') + pg_catalog.octet_length(p::pg_catalog.text) + 9;

-- The rules of 0003, then: no denied variable (the first by length, then
-- bytes, is named), at most 131057 bytes of text (CRONQ_PAYLOAD= and the
-- text and its NUL fit in the kernel's 131072 for one string), and at most
-- 393216 bytes of arguments and environment. A payload of 98304 bytes of
-- text or less is spared both (4 × its text cannot exceed 393216): most
-- pay for one conversion to text.
create or replace function cronq.payload_rules_exec(p jsonb) returns text
language sql stable parallel safe
return case
    when cronq.unknown_key(p, '{command,args,env}') is not null
        then pg_catalog.format('unknown key "%s"', cronq.unknown_key(p, '{command,args,env}'))
    when not p ? 'command' then '"command" is required'
    when pg_catalog.jsonb_typeof(p -> 'command') <> 'string'
         or (p ->> 'command') !~ '^[A-Za-z0-9_][A-Za-z0-9_.+-]{0,254}$'
        then '"command" must be a program name in the exec directory: letters, digits and _.+- with no "/"'
    when p ? 'args' and (pg_catalog.jsonb_typeof(p -> 'args') <> 'array'
         or exists (select from pg_catalog.jsonb_array_elements(p -> 'args') a
                    where pg_catalog.jsonb_typeof(a) <> 'string'))
        then '"args" must be an array of strings'
    when p ? 'env' and (pg_catalog.jsonb_typeof(p -> 'env') <> 'object'
         or exists (select from pg_catalog.jsonb_each(p -> 'env') e
                    where pg_catalog.jsonb_typeof(e.value) <> 'string'
                       or e.key !~ '^[A-Za-z_][A-Za-z0-9_]*$' or e.key like 'CRONQ\_%'))
        then '"env" must map variable names (not CRONQ_*) to strings'
    when p ? 'env' and exists (select from pg_catalog.jsonb_object_keys(p -> 'env') k
                               where cronq.exec_env_denied(k))
        then pg_catalog.format('"env" may not set "%s": it changes how a program is loaded or interpreted',
             (select k from pg_catalog.jsonb_object_keys(p -> 'env') k where cronq.exec_env_denied(k)
              order by pg_catalog.octet_length(k), k collate pg_catalog."C" limit 1))
    when p ? 'env' and exists (select from pg_catalog.jsonb_each_text(p -> 'env') e
                               where cronq.exec_env_value_refused(e.key, e.value))
        then pg_catalog.format('"env" may not set "%s" to a path or a format ("/", ".." or "%%")',
             (select e.key from pg_catalog.jsonb_each_text(p -> 'env') e
              where cronq.exec_env_value_refused(e.key, e.value)
              order by pg_catalog.octet_length(e.key), e.key collate pg_catalog."C" limit 1))
    when pg_catalog.octet_length(p::pg_catalog.text) > 98304 then
        case
            when pg_catalog.octet_length(p::pg_catalog.text) > 131057
                then 'larger than 131057 bytes as JSON text, too large for the CRONQ_PAYLOAD variable (the kernel passes none over 128 KiB)'
            when cronq.exec_args_bytes(p) > 393216
                then 'arguments and environment larger than 393216 bytes (strings with their NULs and 8-byte pointers, CRONQ_PAYLOAD included)'
        end
end;
