/* commands — one function per subcommand, each in its own cmd_<name>.c. */
#ifndef CRONQ_COMMANDS_H
#define CRONQ_COMMANDS_H

#define CRONQ_VERSION "0.1.0"

int cmd_migrate(int argc, char **argv);
int cmd_enqueue(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_schedule(int argc, char **argv);
int cmd_cancel(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_retry(int argc, char **argv);
int cmd_purge(int argc, char **argv);
int cmd_backfill(int argc, char **argv);
int cmd_pause(int argc, char **argv);
int cmd_limit(int argc, char **argv);
int cmd_resume(int argc, char **argv);
int cmd_why(int argc, char **argv);
int cmd_wait(int argc, char **argv);

#endif
