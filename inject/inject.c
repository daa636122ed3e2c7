/* inject.c - helpers of the injection libraries: wide strings, side records. */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "uevent.h"
#include "inject.h"

char *_uevent_inject_utf8(const wchar_t *ws, char *buf, size_t cap)
{
	size_t n = 0;

	for (; ws && *ws; ws++) {
		uint32_t c = (uint32_t)*ws;
		size_t len = c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;

		if (c > 0x10ffff || (c >= 0xd800 && c < 0xe000))
			c = 0xfffd, len = 3;	/* not a code point: U+FFFD */
		if (n + len >= cap)
			break;
		if (len == 1) {
			buf[n++] = (char)c;
			continue;
		}
		buf[n++] = (char)(len == 2 ? 0xc0 | c >> 6 : len == 3 ? 0xe0 | c >> 12 : 0xf0 | c >> 18);
		if (len == 4)
			buf[n++] = (char)(0x80 | ((c >> 12) & 0x3f));
		if (len >= 3)
			buf[n++] = (char)(0x80 | ((c >> 6) & 0x3f));
		buf[n++] = (char)(0x80 | (c & 0x3f));
	}
	if (cap)
		buf[n] = 0;
	return buf;
}

void _uevent_inject_meta(const char *fmt, ...)
{
	char buf[INJECT_NAME_MAX + 256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(buf))
		n = sizeof(buf) - 1;
	uevent_emit(INJECT_META_TYPE, buf, (size_t)n + 1);
}

struct stack {
	uint32_t n;
	struct {
		uint64_t	id;
		const void	*key;
		int		level;	/* among key's entries below it */
	} e[INJECT_DEPTH];
};

static __thread struct stack stack;

/* The level a push of key takes on s: one above key's nearest entry. */
static int level(const struct stack *s, const void *key, uint32_t below)
{
	uint32_t i;

	for (i = below < INJECT_DEPTH ? below : INJECT_DEPTH; i-- > 0;)
		if (s->e[i].key == key)
			return s->e[i].level + 1;
	return 0;
}

int _uevent_inject_push(const void *key, const char *name, uint64_t *id)
{
	struct stack *s = &stack;
	uint32_t n = s->n;
	int l = level(s, key, n);

	*id = 0;
	if (n < INJECT_DEPTH) {
		if (name && UEVENT_ENABLED())
			*id = uevent_range_begin(name);
		s->e[n].id = *id;
		s->e[n].key = key;
		s->e[n].level = l;
	}
	s->n = n + 1;
	return l;
}

int _uevent_inject_pop(const void *key)
{
	struct stack *s = &stack;
	uint32_t n = s->n, i;
	uint64_t id;
	int l;

	if (n == 0)
		return -1;
	if (n > INJECT_DEPTH) {
		s->n = n - 1;
		return level(s, key, INJECT_DEPTH);
	}
	for (i = n; i-- > 0;)
		if (s->e[i].key == key)
			break;
	if (i == (uint32_t)-1)
		return -1;	/* nothing of this key open on this thread */
	id = s->e[i].id;
	l = s->e[i].level;
	if (i != n - 1)		/* another key's entries above it: they stay */
		memmove(&s->e[i], &s->e[i + 1], (n - i - 1) * sizeof(s->e[0]));
	s->n = n - 1;
	if (id)
		uevent_range_end(id);
	return l;
}
