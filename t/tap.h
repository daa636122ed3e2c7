/* tap.h - a small TAP producer for the C tests (plan, ok, skip, diag, exit_status). */
#ifndef UEVENT_TAP_H
#define UEVENT_TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static int tap_n, tap_failed, tap_planned;

static inline void plan(int n)
{
	tap_planned = n;
	printf("1..%d\n", n);
	fflush(stdout);
}

static inline void plan_skip_all(const char *why)
{
	printf("1..0 # SKIP %s\n", why);
	fflush(stdout);
	exit(0);
}

__attribute__((format(printf, 2, 3)))
static inline int ok(int cond, const char *fmt, ...)
{
	va_list ap;

	printf("%s %d - ", cond ? "ok" : "not ok", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	if (!cond)
		tap_failed++;
	return cond;
}

static inline void skip(int n, const char *why)
{
	while (n-- > 0)
		printf("ok %d # SKIP %s\n", ++tap_n, why);
	fflush(stdout);
}

__attribute__((format(printf, 1, 2)))
static inline void diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

static inline int exit_status(void)
{
	if (tap_planned && tap_n != tap_planned)
		diag("planned %d tests, ran %d", tap_planned, tap_n);
	return (tap_failed || (tap_planned && tap_n != tap_planned)) ? 1 : 0;
}

#endif
