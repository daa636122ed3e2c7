/*
 * fake-abi.c - an LD_PRELOAD prctl() that answers PR_PERF_UEVENT_QUERY as a patched
 * kernel would, with the numbers from the environment (t/kernel-abi.test):
 * FAKE_RECORD_TYPE, FAKE_UEVENTS_BIT, FAKE_TLS_BIT, FAKE_FEATURES (default: ours). An emit returns 0
 * (nobody listens); every other prctl goes to libc's.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <linux/perf_uevent.h>

static unsigned int env_or(const char *name, unsigned int dflt)
{
	const char *v = getenv(name);

	return v && *v ? (unsigned int)strtoul(v, NULL, 0) : dflt;
}

int prctl(int option, ...)
{
	unsigned long a2, a3, a4, a5;
	int (*real)(int, ...);
	va_list ap;

	va_start(ap, option);
	a2 = va_arg(ap, unsigned long);
	a3 = va_arg(ap, unsigned long);
	a4 = va_arg(ap, unsigned long);
	a5 = va_arg(ap, unsigned long);
	va_end(ap);
	if (option == PR_TASK_PERF_UEVENT) {
		if (a5 & PR_PERF_UEVENT_QUERY) {
			struct perf_uevent_abi abi = {
				.size = sizeof(abi),
				.format = PERF_UEVENT_FORMAT_CURRENT,
				.record_type = env_or("FAKE_RECORD_TYPE", PERF_RECORD_UEVENT),
				.max_payload = PERF_UEVENT_MAX_PAYLOAD,
				.attr_uevents_bit = env_or("FAKE_UEVENTS_BIT", PERF_ATTR_UEVENTS_BIT),
				.sample_tls_user_bit = env_or("FAKE_TLS_BIT", PERF_SAMPLE_TLS_USER_BIT),
				.features = env_or("FAKE_FEATURES", PERF_UEVENT_FEAT_TLS_AREA),
			};

			memcpy((void *)a4, &abi, a3 < sizeof(abi) ? a3 : sizeof(abi));
			return 0;
		}
		return 0;
	}
	real = (int (*)(int, ...))dlsym(RTLD_NEXT, "prctl");
	return real(option, a2, a3, a4, a5);
}
