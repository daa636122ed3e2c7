/* files.h - what the C tests that check written files share: a file read whole, and
 * little-endian fields read at any alignment. */
#ifndef UEVENT_T_FILES_H
#define UEVENT_T_FILES_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The file, NUL-terminated (not counted in *len): sscanf may read it as a string. */
static inline unsigned char *slurp(const char *path, size_t *len)
{
	unsigned char *buf = NULL, *nb;
	size_t cap = 0, n;
	FILE *f = fopen(path, "rb");

	*len = 0;
	if (!f)
		return NULL;
	do {
		if (*len + 1 >= cap) {
			if (!(nb = realloc(buf, cap = cap ? cap * 2 : 65536))) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
		}
		n = fread(buf + *len, 1, cap - 1 - *len, f);
		*len += n;
	} while (n > 0);
	fclose(f);
	if (buf)
		buf[*len] = 0;
	return buf;
}

/*
 * A tracefs list (uprobe_events) as slurp() reads it, once two reads in a row agree: the
 * kernel gives it a page at a time, and a line another process removes before the page
 * being read moves the lines after it back, so one read can miss lines that are there
 * all along (tests run side by side add and remove uprobe events).
 */
static inline unsigned char *slurp_settled(const char *path, size_t *len)
{
	unsigned char *a = slurp(path, len), *b;
	size_t n;
	int i;

	for (i = 0; a && i < 50; i++) {
		if (!(b = slurp(path, &n)))
			break;
		if (n == *len && !memcmp(a, b, n)) {
			free(b);
			break;
		}
		free(a);
		a = b;
		*len = n;
	}
	return a;
}

/* Lines of a list (slurp_settled()) that start with prefix (or hold it: anywhere). */
static inline int lines_with(const unsigned char *text, const char *prefix, int anywhere)
{
	const char *l = (const char *)text;
	size_t k = strlen(prefix);
	int n = 0;

	for (; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		const char *nl = strchr(l, '\n'), *hit = anywhere ? strstr(l, prefix) : l;

		n += hit && (!nl || hit < nl) && !strncmp(hit, prefix, k);
	}
	return n;
}

static inline uint32_t u32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static inline uint64_t u64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

#endif
