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
