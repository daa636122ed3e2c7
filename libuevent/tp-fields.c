/* tp-fields.c - a tracepoint sample's raw fields by name, from the format files a
 * perf.data's tracing data carries, parsed by libtraceevent (optional at configure). */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"
#include "perf-internal.h"

#ifdef HAVE_LIBTRACEEVENT
#include <event-parse.h>
#include <trace-seq.h>

struct _uevent_tep *_uevent_tep_new(int big_endian, int long_size, int page_size)
{
	struct tep_handle *tep = tep_alloc();

	if (!tep)
		return NULL;
	tep_set_file_bigendian(tep, big_endian ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
	tep_set_local_bigendian(tep, __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ ?
				TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
	if (long_size == 4 || long_size == 8)
		tep_set_long_size(tep, long_size);
	if (page_size > 0)
		tep_set_page_size(tep, page_size);
	return (struct _uevent_tep *)tep;
}

/*
 * Whether libtraceevent may be given a format's fields: text (printable ASCII and white
 * space) whose field lines each end with ';' and a newline. Its parser takes a byte of
 * neither kind, or the end of the text, for a token it then reads as a string (NULL):
 * a file's "char comm[" cut there, or with a byte of 0xcf after the '[', crashes it
 * (1.7 to 1.8). The kernel's format files are always so.
 */
static int format_ok(const char *format, size_t len)
{
	size_t i, line = 0;

	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)format[i];

		if (c >= 0x80 || (!isprint(c) && !isspace(c)))
			return 0;
		if (c == '\n')
			line = i + 1;
		else if (i == line + strspn(format + line, " \t") &&
			 !strncmp(format + i, "field", 5)) {
			const char *nl = memchr(format + i, '\n', len - i);

			if (!nl || nl[-1] != ';')
				return 0;	/* a field's line cut, or not ended */
		}
	}
	return 1;
}

/*
 * Whether libtraceevent may be given a print fmt (from its "print fmt:" to the text's
 * end): a string, then arguments made only of what the kernel's are (names, numbers,
 * strings, characters, the operators but '/' and '%', brackets that pair up). Its
 * parser and its evaluation of a file's text crash on the rest: a token it has no kind
 * for ('$', '@', '#'...) is a NULL, and "x % y" or "x / y" with y 0 (a text's, or a
 * field's that holds 0) a SIGFPE. Of 2323 print fmts of a 6.18 kernel, 16 are refused
 * (11 divide, 5 hold statements); a format without its print fmt still prints every
 * field, by its type.
 */
static int print_fmt_safe(const char *p, const char *end)
{
	char open[64];
	int depth = 0;

	p += 10;		/* "print fmt:" */
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if (p == end || *p++ != '"')
		return 0;
	while (p < end && *p != '"')		/* the format string */
		if (*p++ == '\\' && p++ == end)
			return 0;
	if (p++ == end)
		return 0;
	for (; p < end; p++) {			/* the arguments */
		const char *c;

		if (*p == '"' || *p == '\'') {	/* a string or a character: "|", 'R' */
			char q = *p;

			for (p++; p < end && *p != q; p++)
				if (*p == '\\' && ++p == end)
					return 0;
			if (p == end)
				return 0;
		} else if ((c = strchr("([{", *p)) && *p) {
			if (depth == (int)sizeof(open))
				return 0;
			open[depth++] = *p;
		} else if ((c = strchr(")]}", *p)) && *p) {
			if (!depth || open[--depth] != "([{"[c - ")]}"])
				return 0;
		} else if (!isalnum((unsigned char)*p) && !isspace((unsigned char)*p) &&
			   !strchr("_,.+-*&|^~!<>=?:", *p)) {
			return 0;
		}
	}
	return depth == 0;
}

/*
 * Gives libtraceevent the format's name, ID and fields, and its print fmt only when it is
 * safe to (print_fmt_safe(); else an empty one): the fields are all we ask of it,
 * printed as the print fmt says (0x%08lx...) where it is given, else by their type.
 */
int _uevent_tep_add(struct _uevent_tep *t, const char *sys, const char *format, size_t len)
{
	static const char empty[] = "print fmt: \"\"\n";
	const char *pf = format;
	size_t keep = len;
	char *text;
	int ret;

	while ((pf = memchr(pf, 'p', len - (size_t)(pf - format)))) {
		if ((pf == format || pf[-1] == '\n') && len - (size_t)(pf - format) >= 10 &&
		    !memcmp(pf, "print fmt:", 10)) {
			keep = (size_t)(pf - format);
			break;
		}
		pf++;
	}
	if (!format_ok(format, keep) || (keep && format[keep - 1] != '\n'))
		return -EINVAL;
	if (pf && format_ok(pf, len - keep) && print_fmt_safe(pf, format + len))
		return tep_parse_event((struct tep_handle *)t, format, len, sys) == 0 ? 0 :
			-EINVAL;
	text = malloc(keep + sizeof(empty));
	if (!text)
		return -ENOMEM;
	memcpy(text, format, keep);
	memcpy(text + keep, empty, sizeof(empty));
	ret = tep_parse_event((struct tep_handle *)t, text, keep + sizeof(empty) - 1, sys);
	free(text);
	return ret == 0 ? 0 : -EINVAL;
}

void _uevent_tep_free(struct _uevent_tep *t)
{
	if (t)
		tep_free((struct tep_handle *)t);
}

/* Appends to buf as snprintf would, keeping count of what it needed. */
static void put(char *buf, size_t cap, size_t *at, const char *s, size_t n)
{
	if (*at < cap)
		memcpy(buf + *at, s, *at + n < cap ? n : cap - *at);
	*at += n;
}

static void put_json_str(char *buf, size_t cap, size_t *at, const char *s, size_t n)
{
	size_t i;

	put(buf, cap, at, "\"", 1);
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		char esc[8];

		if (c == '"' || c == '\\') {
			esc[0] = '\\';
			esc[1] = (char)c;
			put(buf, cap, at, esc, 2);
		} else if (c < 0x20 || c >= 0x7f) {
			snprintf(esc, sizeof(esc), "\\u%04x", c);
			put(buf, cap, at, esc, 6);
		} else {
			put(buf, cap, at, (const char *)&c, 1);
		}
	}
	put(buf, cap, at, "\"", 1);
}

/* Where a field's bytes are (a __data_loc field: the bytes it points at): 1 if they lie
 * inside the raw data, else 0. */
static int field_span(const struct tep_format_field *fl, const uint8_t *raw, uint32_t size,
		      int swap, uint32_t *off, uint32_t *len)
{
	uint32_t loc;

	if (fl->offset < 0 || fl->size < 0 || (uint32_t)fl->offset + (uint32_t)fl->size > size)
		return 0;
	*off = (uint32_t)fl->offset;
	*len = (uint32_t)fl->size;
	if (!(fl->flags & TEP_FIELD_IS_DYNAMIC))
		return 1;
	if (fl->size != 4)
		return 0;
	memcpy(&loc, raw + fl->offset, 4);
	if (swap)
		loc = __builtin_bswap32(loc);
	*off = loc & 0xffff;
	*len = loc >> 16;
	if (fl->flags & TEP_FIELD_IS_RELATIVE)
		*off += (uint32_t)fl->offset + 4;
	return *off <= size && *len <= size - *off;
}

/*
 * An array field as libtraceevent prints one: a string (up to its NUL) if it is one of
 * printable characters, else its bytes, "ARRAY[01, 02]". But only the field's own bytes:
 * libtraceevent prints a string with "%s", past a field that holds no NUL, and so past
 * the end of the raw data.
 */
static void print_array(struct trace_seq *s, const struct tep_format_field *fl,
			const uint8_t *p, uint32_t len)
{
	uint32_t i, n = 0;

	if (fl->flags & TEP_FIELD_IS_STRING) {
		while (n < len && p[n] && (isprint(p[n]) || isspace(p[n])))
			n++;
		if (n == len || !p[n]) {
			trace_seq_printf(s, "%.*s", (int)n, (const char *)p);
			return;
		}
	}
	trace_seq_puts(s, "ARRAY[");
	for (i = 0; i < len; i++)
		trace_seq_printf(s, "%s%02x", i ? ", " : "", p[i]);
	trace_seq_putc(s, ']');
}

int _uevent_tep_fields(struct _uevent_tep *t, uint64_t id, const void *raw, uint32_t size,
		       unsigned int flags, char *buf, size_t cap)
{
	struct tep_handle *tep = (struct tep_handle *)t;
	struct tep_event *ev = tep_find_event(tep, (int)id);
	struct tep_format_field **fields, *fl;
	int json = !!(flags & UEVENT_FIELDS_JSON), i, swap;
	size_t at = 0;

	if (!ev)
		return _uevent_err(ENOENT);
	fields = tep_event_fields(ev);
	if (!fields)
		return _uevent_err(ENOMEM);
	swap = tep_is_file_bigendian(tep) != tep_is_local_bigendian(tep);
	if (json)
		put(buf, cap, &at, "{", 1);
	for (i = 0; (fl = fields[i]); i++) {
		struct trace_seq s;
		unsigned long long v;
		uint32_t off, len;

		if (!field_span(fl, raw, size, swap, &off, &len))
			continue;
		if (at > (size_t)json)
			put(buf, cap, &at, json ? ", " : " ", json ? 2 : 1);
		if (json) {
			put_json_str(buf, cap, &at, fl->name, strlen(fl->name));
			put(buf, cap, &at, ": ", 2);
		} else {
			put(buf, cap, &at, fl->name, strlen(fl->name));
			put(buf, cap, &at, "=", 1);
		}
		/* numbers as numbers; strings, arrays and pointers as perf prints them */
		if (json && !(fl->flags & (TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_STRING |
					   TEP_FIELD_IS_DYNAMIC | TEP_FIELD_IS_POINTER)) &&
		    tep_read_number_field(fl, raw, &v) == 0) {
			char num[32];

			if ((fl->flags & TEP_FIELD_IS_SIGNED) && fl->size < 8 &&
			    (v >> (fl->size * 8 - 1)) & 1)
				v |= ~0ull << (fl->size * 8);
			snprintf(num, sizeof(num), (fl->flags & TEP_FIELD_IS_SIGNED) ? "%lld" : "%llu",
				 v);
			put(buf, cap, &at, num, strlen(num));
			continue;
		}
		trace_seq_init(&s);
		if (fl->flags & TEP_FIELD_IS_ARRAY)
			print_array(&s, fl, (const uint8_t *)raw + off, len);
		else
			tep_print_field_content(&s, (void *)raw, (int)size, fl);
		trace_seq_terminate(&s);
		if (json)
			put_json_str(buf, cap, &at, s.buffer, s.len);
		else
			put(buf, cap, &at, s.buffer, s.len);
		trace_seq_destroy(&s);
	}
	free(fields);
	if (json)
		put(buf, cap, &at, "}", 1);
	if (cap)
		buf[at < cap ? at : cap - 1] = 0;
	return at > INT32_MAX ? _uevent_err(E2BIG) : (int)at;
}

#else /* built without libtraceevent: the fields stay raw bytes */

struct _uevent_tep *_uevent_tep_new(int big_endian, int long_size, int page_size)
{
	errno = EOPNOTSUPP;
	return NULL;
}

int _uevent_tep_add(struct _uevent_tep *t, const char *sys, const char *format, size_t len)
{
	return _uevent_err(EOPNOTSUPP);
}

void _uevent_tep_free(struct _uevent_tep *t)
{
}

int _uevent_tep_fields(struct _uevent_tep *t, uint64_t id, const void *raw, uint32_t size,
		       unsigned int flags, char *buf, size_t cap)
{
	return _uevent_err(EOPNOTSUPP);
}
#endif
