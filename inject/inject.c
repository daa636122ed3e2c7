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

static __thread struct {
	uint32_t n;
	struct {
		uint64_t	id;
		const void	*key;
	} e[INJECT_DEPTH];
} stack;

static int level(const void *key, uint32_t below)
{
	int l = 0;
	uint32_t i;

	for (i = 0; i < below && i < INJECT_DEPTH; i++)
		l += stack.e[i].key == key;
	return l;
}

int _uevent_inject_push(const void *key, const char *name, uint64_t *id)
{
	uint32_t n = stack.n;

	*id = 0;
	if (n < INJECT_DEPTH) {
		if (name && UEVENT_ENABLED())
			*id = uevent_range_begin(name);
		stack.e[n].id = *id;
		stack.e[n].key = key;
	}
	stack.n = n + 1;
	return level(key, n);
}

int _uevent_inject_pop(const void *key)
{
	uint32_t n = stack.n, i;
	uint64_t id;
	int l;

	if (n == 0)
		return -1;
	if (n > INJECT_DEPTH) {
		stack.n = n - 1;
		return level(key, INJECT_DEPTH);
	}
	for (i = n; i-- > 0;)
		if (stack.e[i].key == key)
			break;
	if (i == (uint32_t)-1)
		return -1;	/* nothing of this key open on this thread */
	id = stack.e[i].id;
	l = level(key, i);
	memmove(&stack.e[i], &stack.e[i + 1], (n - i - 1) * sizeof(stack.e[0]));
	stack.n = n - 1;
	if (id)
		uevent_range_end(id);
	return l;
}
