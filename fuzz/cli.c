/*
 * cli.c - libFuzzer target: the CLI's readers of a perf.data (tools/: report's and the
 * exports' profile builders, dump), run as the commands are, over the input as a file:
 *   uevent report (by comm, dso, sym; or by pid, trace, span with --children; or
 *     inside a range), export --folded --ranges, --pprof and --chrome, dump -a, dump --json
 * Their output and messages go to /dev/null. The symbolizers they make see nothing of
 * this machine (uevent_symbolizer__new is wrapped at link time: no kernel symbols, no
 * perf maps, the paths a recording names looked up under an empty directory), so each
 * input names the same whatever files it names.
 */
#include "fuzz.h"

#include <stdlib.h>
#include <sys/stat.h>

#include "cli.h"

static char dir[64], file[96], root[96];
static FILE *devnull;

struct uevent_symbolizer *__real_uevent_symbolizer__new(const struct uevent_symbolizer_opts *o);
struct uevent_symbolizer *__wrap_uevent_symbolizer__new(const struct uevent_symbolizer_opts *o);

struct uevent_symbolizer *__wrap_uevent_symbolizer__new(const struct uevent_symbolizer_opts *o)
{
	struct uevent_symbolizer_opts so = *o;

	so.flags |= UEVENT_SYMBOLIZER_NO_KERNEL | UEVENT_SYMBOLIZER_NO_PERF_MAP;
	so.flags &= ~(uint64_t)UEVENT_SYMBOLIZER_PROC_MAPS;
	so.root = root;
	so.debug_dir = NULL;
	return __real_uevent_symbolizer__new(&so);
}

static void cleanup(void)
{
	unlink(file);
	rmdir(root);
	rmdir(dir);
}

static int setup(void)
{
	if (dir[0])
		return 0;
	snprintf(dir, sizeof(dir), "/tmp/uevent-fuzz-cli-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	snprintf(file, sizeof(file), "%s/perf.data", dir);
	snprintf(root, sizeof(root), "%s/root", dir);
	if (mkdir(root, 0700) < 0)
		return -1;
	atexit(cleanup);
	devnull = fopen("/dev/null", "w");
	if (!devnull)
		return -1;
	/* the commands' text: libFuzzer's and the sanitizers' go to the fds they hold */
	stdout = devnull;
	stderr = devnull;
	setenv("PAGER", "cat", 1);
	return 0;
}

static int write_file(const uint8_t *data, size_t size)
{
	int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	size_t done = 0;
	ssize_t w;

	if (fd < 0)
		return -1;
	while (done < size && (w = write(fd, data + done, size - done)) > 0)
		done += (size_t)w;
	close(fd);
	return done == size ? 0 : -1;
}

#define RUN(fn, ...) do { \
	char *argv[] = { __VA_ARGS__, NULL }; \
	int r = fn((int)(sizeof(argv) / sizeof(argv[0])) - 1, argv); \
	if (r < 0 || r > 2) \
		__builtin_trap();	/* an exit code */ \
	cli_no_demangle = 0; \
} while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (setup() < 0 || write_file(data, size) < 0)
		return 0;
	switch (size % 3) {
	case 0:
		RUN(cli_cmd_report, "report", "--no-pager", file);
		break;
	case 1:
		RUN(cli_cmd_report, "report", "--no-pager", "--children", "--sort",
		    "pid,trace,span,dso,sym", "--no-demangle", file);
		break;
	default:
		RUN(cli_cmd_report, "report", "--no-pager", "--range", "r", "--time", "0,1000",
		    file);
		break;
	}
	RUN(cli_cmd_export, "export", "--folded", "-", "--ranges", file);
	RUN(cli_cmd_export, "export", "--pprof", "-", file);
	RUN(cli_cmd_export, "export", "--chrome", "-", file);
	RUN(cli_cmd_dump, "dump", size % 2 ? "-a" : "--json", file);
	return 0;
}
