/* uevent.c - the libuevent command line: its commands (one file each), their usage, main. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "uevent.h"
#include "jit-clean.h"
#include "cli.h"

static int command_help(const char *name, FILE *f);

/* All commands' usage: `uevent --help`. */
static void usage(FILE *f)
{
	fprintf(f, "Usage: %s COMMAND [OPTIONS]   (%s COMMAND --help: that command only)\n"
		"\nCommands:\n", cli_prog, cli_prog);
	command_help(NULL, f);
	fprintf(f, "  help [COMMAND], --help         this text, or COMMAND's\n"
		"  version, --version             library version\n"
		"\n"
		"Environment: UEVENT_TRANSPORT (transport name or comma list), UEVENT_FILE.\n"
		"Exit status: 0 success, 1 failure, 2 usage error.\n");
}

/*
 * The commands: name, function, usage. `uevent --help` prints every usage, `uevent CMD
 * --help` (or `uevent help CMD`) its own. A new command is one entry here.
 */
static int cmd_jit_clean(int argc, char **argv)
{
	return uevent_cmd_jit_clean(cli_prog, argc, argv);
}

static const struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *usage;
} commands[] = {
	{ "probe", cli_cmd_probe, cli_probe_usage },
	{ "emit", cli_cmd_emit, cli_emit_usage },
	{ "dump", cli_cmd_dump, cli_dump_usage },
	{ "record", cli_cmd_record, cli_record_usage },
	{ "export", cli_cmd_export, cli_export_usage },
	{ "report", cli_cmd_report,
	  "  report [OPTIONS] FILE          a perf.data's samples by symbol, as perf report\n"
	  "                                 --stdio, and the samples under each uevent range\n"
	  "      -s, --sort KEYS            comm,pid,trace,span,dso,sym (default comm,dso,sym);\n"
	  "                                 trace, span: the sampled thread's OpenTelemetry ids\n"
	  "      -c, --children             with callchains: time in each symbol's callees\n"
	  "      -r, --range NAME           only samples inside uevent range NAME\n"
	  "      -t, --trace ID             only samples in that trace (its first hex digits)\n"
	  "      -d, --debug-dir DIR        also look in DIR for separate debug files\n"
	  CLI_FILTER_USAGE
	  "          --no-demangle          C++ and Rust names as the binary has them (default:\n"
	  "                                 demangled, as perf prints them)\n"
	  "          --no-pager             on a terminal the report goes through $PAGER\n"
	  "                                 (default less; PAGER= or cat: none), as perf's\n" },
	{ "jit-clean", cmd_jit_clean, UEVENT_JIT_CLEAN_USAGE },
};

static const struct command *command_find(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

/* name's usage (NULL: every command's) on f; 0, or 2 for a command that is not one. */
static int command_help(const char *name, FILE *f)
{
	const struct command *c = name ? command_find(name) : NULL;
	size_t i;

	if (name && !c) {
		fprintf(stderr, "%s: unknown command '%s' (try '%s --help')\n", cli_prog, name, cli_prog);
		return 2;
	}
	if (c) {
		return cli_usage(f, c->usage);
	}
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fputs(commands[i].usage, f);
	return 0;
}

int main(int argc, char **argv)
{
	const struct command *c;
	const char *cmd;
	int i;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	cmd = argv[1];
	if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
		if (argc > 2)
			return command_help(argv[2], stdout);
		usage(stdout);
		return 0;
	}
	if (!strcmp(cmd, "version") || !strcmp(cmd, "--version") || !strcmp(cmd, "-V")) {
		printf("uevent %s (library %s)\n", PACKAGE_VERSION, uevent_version());
		return 0;
	}
	c = command_find(cmd);
	if (!c) {
		fprintf(stderr, "%s: unknown command '%s' (try '%s --help')\n", cli_prog, cmd, cli_prog);
		return 2;
	}
	/* CMD --help, before `--` (after it are record's command's arguments) */
	for (i = 2; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			return command_help(cmd, stdout);
	return c->fn(argc - 1, argv + 1);
}
