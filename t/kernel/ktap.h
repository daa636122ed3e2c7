/* ktap.h - a minimal TAP producer for the guest kernel tests (header-only). */
#ifndef KTAP_H
#define KTAP_H

#include <stdarg.h>
#include <stdio.h>

static int ktap_planned, ktap_run, ktap_failed;

static void plan(int n)
{
	ktap_planned = n;
	printf("1..%d\n", n);
	fflush(stdout);
}

static void diag(const char *fmt, ...) __attribute__((format(printf, 1, 2), unused));
static void diag(const char *fmt, ...)
{
	va_list ap;

	fputs("# ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
	fflush(stdout);
}

static int ok(int cond, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int ok(int cond, const char *fmt, ...)
{
	va_list ap;

	ktap_run++;
	if (!cond)
		ktap_failed++;
	printf("%sok %d - ", cond ? "" : "not ", ktap_run);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
	fflush(stdout);
	return cond;
}

static void skip(int n, const char *why) __attribute__((unused));
static void skip(int n, const char *why)
{
	while (n-- > 0) {
		ktap_run++;
		printf("ok %d # SKIP %s\n", ktap_run, why);
	}
	fflush(stdout);
}

static int exit_status(void)
{
	if (ktap_run != ktap_planned) {
		printf("# planned %d tests, ran %d\n", ktap_planned, ktap_run);
		return 1;
	}
	return ktap_failed ? 1 : 0;
}

#endif /* KTAP_H */
