/* reason.c - the one reason channel: why the calling thread's last call did what it did. */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>

#include "internal.h"

static __thread char reason[512];

void _uevent_reason(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
}

UEVENT_EXPORT const char *uevent_reason(void)
{
	return reason;
}
