/* jit.c - µs per uevent_jit__code_load for each output, and the LuaJIT hook's overhead. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "uevent.h"
#include "bench.h"


static char tmp[256];
static unsigned char code[256];

/* Best of 5 sessions of n loads (fresh directory each), in µs per load. */
/* with_debug: 1 = debug_info then code_load, 2 = code_load_line (one call),
 * 3 = code_load_func (one call, as the LuaJIT hook makes it) */
static double per_load(const char *what, unsigned int flags, int n, int with_debug)
{
	struct uevent_jit_debug_entry e = { 0, 1, 0, "bench.lua", 0 };
	double best = 1e30, t;
	char dir[512], map[512], name[64];
	int r, i;

	for (r = 0; r < 5; r++) {
		snprintf(dir, sizeof(dir), "%s/%s-%d", tmp, what, r);
		snprintf(map, sizeof(map), "%s/%s-%d.map", tmp, what, r);
		UEVENT_JIT_OPTS(o, .dir = dir, .perf_map_path = map, .flags = flags);
		struct uevent_jit *j = uevent_jit__open(&o);

		if (!j) {
			perror("uevent_jit__open");
			exit(1);
		}
		t = now();
		for (i = 0; i < n; i++) {
			uint64_t addr = 0x100000 + (uint64_t)i * 256;

			snprintf(name, sizeof(name), "TRACE_%d bench.lua:%d", i, i);
			if (with_debug == 2) {
				snprintf(name, sizeof(name), "TRACE_%d", i);
				uevent_jit__code_load_line(j, name, addr, 200, code, "bench.lua", i);
				continue;
			}
			if (with_debug == 3) {
				snprintf(name, sizeof(name), "TRACE_%d", i);
				uevent_jit__code_load_func(j, name, "mix", addr, 200, code, "bench.lua",
							   (uint32_t)i);
				continue;
			}
			if (with_debug) {
				e.addr = addr;
				uevent_jit__debug_info(j, addr, &e, 1);
			}
			uevent_jit__code_load(j, name, addr, 200, code);
		}
		t = (now() - t) / n / 1e3;
		uevent_jit__close(j);
		if (t < best)
			best = t;
	}
	return best;
}

int main(void)
{
	const char *luajit = getenv("LUAJIT");
	int n = 20000;
	char cmd[2048];

	snprintf(tmp, sizeof(tmp), "%s/uevent-bench-jit-XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tmp)) {
		perror("mkdtemp");
		return 1;
	}
	printf("# libuevent %s JIT hooks benchmark (best of 5; transport %s)\n", uevent_version(),
	       uevent_transport_name(uevent_transport()));
	printf("%-40s %7.2f us\n", "code_load: jitdump + perf map + uevent",
	       per_load("all", 0, n, 0));
	printf("%-40s %7.2f us\n", "code_load + debug_info (1 line)", per_load("dbg", 0, n, 1));
	printf("%-40s %7.2f us\n", "code_load_line, perf map batched",
	       per_load("line", UEVENT_JIT_BUFFER_PERF_MAP, n, 2));
	printf("%-40s %7.2f us\n", "code_load_func, both batched (hook)",
	       per_load("func", UEVENT_JIT_BUFFER_PERF_MAP | UEVENT_JIT_BUFFER_JITDUMP, n, 3));
	printf("%-40s %7.2f us\n", "code_load: jitdump only",
	       per_load("dump", UEVENT_JIT_NO_PERF_MAP | UEVENT_JIT_NO_UEVENT, n, 0));
	printf("%-40s %7.2f us\n", "code_load: perf map only",
	       per_load("map", UEVENT_JIT_NO_JITDUMP | UEVENT_JIT_NO_UEVENT, n, 0));
	printf("%-40s %7.2f us\n", "code_load: perf map batched only",
	       per_load("mapb", UEVENT_JIT_NO_JITDUMP | UEVENT_JIT_NO_UEVENT |
			UEVENT_JIT_BUFFER_PERF_MAP, n, 0));
	printf("%-40s %7.2f us\n", "code_load: uevent only",
	       per_load("uev", UEVENT_JIT_NO_JITDUMP | UEVENT_JIT_NO_PERF_MAP, n, 0));
	fflush(stdout);
#ifdef BENCH_LUAJIT
	if (!luajit || !*luajit)
		luajit = BENCH_LUAJIT;
#endif
	if (luajit && *luajit && access(luajit, X_OK) == 0) {
		snprintf(cmd, sizeof(cmd),
			 "LUA_PATH='%s/bindings/lua/?.lua;%s/bindings/lua/?.lua;;' "
			 "LUA_CPATH='%s/bindings/lua/?.so;;' "
			 "UEVENT_LIB='%s/libuevent/.libs/libuevent.so' '%s' '%s/bench/jit-luajit.lua' '%s'",
			 BENCH_SRCDIR, BENCH_BUILDDIR, BENCH_BUILDDIR, BENCH_BUILDDIR, luajit,
			 BENCH_SRCDIR, tmp);
		if (system(cmd) != 0)
			printf("luajit hook benchmark failed\n");
	} else {
		printf("luajit hook                              skipped: no luajit\n");
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	return system(cmd) != 0;
}
