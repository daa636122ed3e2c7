/* chain-count.h - the counting test libraries write "NAME COUNT" lines to $CHAIN_COUNTS. */
#ifndef UEVENT_CHAIN_COUNT_H
#define UEVENT_CHAIN_COUNT_H

#include <stdio.h>
#include <stdlib.h>

static void chain_report(const char *const *names, const unsigned long *count, int n)
{
	const char *path = getenv("CHAIN_COUNTS");
	FILE *f = path ? fopen(path, "w") : NULL;
	int i;

	if (!f)
		return;
	for (i = 0; i < n; i++)
		fprintf(f, "%s %lu\n", names[i], count[i]);
	fclose(f);
}

#endif
