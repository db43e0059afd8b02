-- 0033_standard_strings.sql — the PL/pgSQL functions whose string
-- literals hold a backslash read them as written under any
-- standard_conforming_strings.
--
-- A PL/pgSQL body's statements are parsed when a session first runs
-- them, with that session's settings: where standard_conforming_strings
-- is off (a legacy database's or role's default, or a SET), '\*' in
-- cron_error's pattern was read as '*', and every schedule written there
-- failed with "invalid regular expression: quantifier operand invalid";
-- every_error's '\.' became '.', so "@every 1x5m" failed on a cast
-- instead of being refused by name. hook_text's '\{' happens to mean the
-- same both ways; pinned alike. (Functions with SQL-standard bodies were
-- parsed once, by migrate, whose sessions now start with
-- standard_conforming_strings on.)
--
-- Binaries read nothing new.
-- compatible-from: 25
--
-- Every statement may run again.

alter function cronq.cron_error(text) set standard_conforming_strings = on;
alter function cronq.every_error(text[]) set standard_conforming_strings = on;
alter function cronq.hook_text(text, text[], boolean) set standard_conforming_strings = on;
