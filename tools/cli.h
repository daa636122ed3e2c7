/* cli.h - what the uevent CLI's command files share (tools/cli.c defines these). */
#ifndef UEVENT_CLI_H
#define UEVENT_CLI_H

#include <stdint.h>
#include <stdio.h>

extern const char *const cli_prog;

/* An option's number, digits only, in [min, max]; -1 after saying why (exit 2). */
int cli_parse_u64(const char *cmd, const char *opt, const char *arg, uint64_t min,
		  uint64_t max, uint64_t *v);
int cli_parse_i64(const char *cmd, const char *opt, const char *arg, int64_t *v);

/* "-" as a file: standard input made rewindable (a pipe copied to a memfd); -errno. */
int cli_stdin_rewindable(void);
int cli_is_perf_data(const char *path);
/* Why path could not be opened, for a message (a static buffer). */
const char *cli_open_error(const char *path, int err, int perf);
/* An export's output ("-": stdout): a new file beside path, renamed over it by
 * cli_close_output_file(o, 1) once whole, removed otherwise; NULL after saying why. */
struct cli_output {
	FILE		*f;
	const char	*cmd, *path;
	char		*tmp;		/* the new file; NULL: stdout */
	int		exists;		/* path was there: left as it was on failure */
};
FILE *cli_open_output_file(const char *cmd, const char *path, struct cli_output *o);
/* ok: the export is whole. 0, or -1 after saying why. */
int cli_close_output_file(struct cli_output *o, int ok);
size_t cli_utf8_seq(const char *s);
char *cli_utf8_clean(const char *s);
/* An output path opened in place, as record writes its capture (growing as it runs),
 * not emptied; -1 after saying why. */
int cli_open_output(const char *cmd, const char *path, int *created);
/* Removes a failed output, only if it is still the file cli_open_output() created. */
void cli_remove_output(const char *path, int fd, int created);

/* s as a JSON string, at most max bytes of it (SIZE_MAX: whole). */
void cli_json_str(FILE *f, const char *s, size_t max);
/* ... the whole of s on stdout */
void cli_json_out(const char *s);

/* `uevent CMD --help`: "Usage:" and the command's usage on f; 0. */
int cli_usage(FILE *f, const char *usage);

/* Which samples or records: --pid, --tid, --comm (comma lists) and --time START,END
 * (seconds on the recording's clock, as dump prints them; either side may be empty). */
struct cli_filter {
	const char	*pids, *tids, *comms;
	uint64_t	t0, t1;		/* [t0, t1]; t1 UINT64_MAX: no end */
};
#define CLI_FILTER_LONGOPTS \
	{ "pid", required_argument, NULL, 0x100 }, \
	{ "tid", required_argument, NULL, 0x101 }, \
	{ "comm", required_argument, NULL, 0x102 }, \
	{ "time", required_argument, NULL, 0x103 }
#define CLI_FILTER_USAGE \
	"      --pid PIDS, --tid TIDS     only these processes, threads (comma lists)\n" \
	"      --comm NAMES               only threads of these command names\n" \
	"      --time START,END           only between these times (seconds, as dump\n" \
	"                                 prints them; either may be left out)\n"
void cli_filter_init(struct cli_filter *f);
/* 1 if c was a filter option (taken), 0 if not one, -1 after saying why arg is bad. */
int cli_filter_opt(struct cli_filter *f, const char *cmd, int c, const char *arg);
int cli_filter_match(const struct cli_filter *f, uint32_t pid, uint32_t tid, const char *comm,
		     uint64_t time);

/* tools/probe.c */
int cli_cmd_probe(int argc, char **argv);
extern const char cli_probe_usage[];

/* tools/emit.c */
int cli_cmd_emit(int argc, char **argv);
extern const char cli_emit_usage[];

/* tools/dump.c */
int cli_cmd_dump(int argc, char **argv);
extern const char cli_dump_usage[];

/* tools/export.c */
int cli_cmd_export(int argc, char **argv);
extern const char cli_export_usage[];

/* tools/record.c */
int cli_cmd_record(int argc, char **argv);
extern const char cli_record_usage[];

/* tools/probe-lib.c: probe --perf-event's library (arg: LIB, a PID whose mapped copy is
 * taken, or NULL for the CLI's own), as a real path in lib; -errno after saying why. */
int cli_perf_event_lib(const char *arg, char *lib, size_t cap);
/* Warns of running programs that map another libuevent than lib. */
void cli_perf_event_others(const char *lib);

/* tools/profile.c: --no-demangle (report, dump, export): names as the binary has them */
extern int cli_no_demangle;

/* tools/report.c */
int cli_cmd_report(int argc, char **argv);
int cli_export_folded(const char *out, const char *in, int ranges, const char *debug_dir);
int cli_export_pprof(const char *out, const char *in, const char *debug_dir);
long cli_chrome_extras(FILE *f, const char *in, int first);
void cli_chrome_frames(FILE *f);

#endif
