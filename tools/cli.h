/* cli.h - what the uevent CLI's command files share (tools/uevent.c defines these). */
#ifndef UEVENT_CLI_H
#define UEVENT_CLI_H

#include <stdio.h>

extern const char *const cli_prog;

/* "-" as a file: standard input made rewindable (a pipe copied to a memfd); -errno. */
int cli_stdin_rewindable(void);
int cli_is_perf_data(const char *path);
/* Why path could not be opened, for a message (a static buffer). */
const char *cli_open_error(const char *path, int err, int perf);
/* An output path opened as export and record open theirs ("-": stdout), emptied; NULL
 * after saying why. */
FILE *cli_open_output_file(const char *cmd, const char *path, int *created);

/* s as a JSON string, at most max bytes of it (SIZE_MAX: whole). */
void cli_json_str(FILE *f, const char *s, size_t max);

/* tools/report.c */
int cli_cmd_report(int argc, char **argv);
int cli_export_folded(const char *out, const char *in, int ranges, const char *debug_dir);
int cli_export_pprof(const char *out, const char *in, const char *debug_dir);
long cli_chrome_extras(FILE *f, const char *in, int first);
void cli_chrome_frames(FILE *f);

#endif
