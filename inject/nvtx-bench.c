/* nvtx-bench.c - ns per NVTX call through libuevent-nvtx.so against the libuevent call it
 * becomes, nobody recording (transport none: one load each) and recording (file). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <nvtx3/nvToolsExt.h>

#include "uevent.h"
#include "bench.h"

#define N 2000000

static void row(const char *what, double nvtx, const char *base, double ours)
{
	printf("%-28s %8.2f ns   %-34s %8.2f ns   ratio %.2f\n", what, nvtx, base, ours, nvtx / ours);
}

static void rows(const char *state, long n)
{
	double a, b;
	char what[64];

	snprintf(what, sizeof(what), "nvtxMarkA, %s", state);
	MEASURE2(n, a, b, nvtxMarkA("m"), uevent_mark("m"));
	row(what, a, "uevent_mark", b);
	snprintf(what, sizeof(what), "nvtxRangePushA+Pop, %s", state);
	MEASURE2(n, a, b, (nvtxRangePushA("r"), nvtxRangePop()),
		 uevent_range_end(uevent_range_begin("r")));
	row(what, a, "uevent_range_begin+end", b);
	snprintf(what, sizeof(what), "nvtxRangeStartA+End, %s", state);
	MEASURE2(n, a, b, nvtxRangeEnd(nvtxRangeStartA("a")), uevent_async_end(uevent_async_begin("a")));
	row(what, a, "uevent_async_begin+end", b);
}

int main(int argc, char **argv)
{
	const char *lib = argc > 1 ? argv[1] : "inject/.libs/libuevent-nvtx.so";
	char path[] = "/tmp/nvtx-bench-XXXXXX";
	UEVENT_OPTS(off, .transport = UEVENT_TRANSPORT_NONE, .flags = UEVENT_OPEN_IGNORE_ENV);
	UEVENT_OPTS(on, .transport = UEVENT_TRANSPORT_FILE, .path = path,
		    .flags = UEVENT_OPEN_IGNORE_ENV);
	int fd;

	if (access(lib, R_OK) < 0) {
		printf("nvtx-bench: skipped: no %s (configure --with-nvtx-include=DIR)\n", lib);
		return 0;
	}
	setenv("NVTX_INJECTION64_PATH", lib, 1);
	unsetenv("UEVENT_NVTX_CHAIN");
	nvtxInitialize(NULL);
	if (uevent_open(&off) < 0)
		return 1;
	rows("nobody records", N);
	fd = mkstemp(path);
	if (fd < 0 || uevent_open(&on) < 0)
		return 1;
	close(fd);
	rows("recording (file)", N / 200);
	unlink(path);
	return 0;
}
