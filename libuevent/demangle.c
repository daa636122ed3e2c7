/* demangle.c - C++ and Rust symbol names as perf, c++filt and rustfilt print them, for
 * uevent_symbolizer (UEVENT_SYMBOLIZER_NO_DEMANGLE: raw). Itanium C++ (_Z), Rust's legacy
 * names (_ZN...17h<hash>E, the hash dropped) and its v0 names (_R) through libiberty's
 * cplus_demangle when configure found it (Debian: libiberty-dev, linked statically); else
 * C++ and legacy Rust through libstdc++'s __cxa_demangle, looked up at run time (the
 * library links no C++ runtime, and a program with C++ names has one), v0 names raw. */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#ifdef HAVE_LIBIBERTY
#undef ARRAY_SIZE	/* libiberty's own, the same */
#include <libiberty/demangle.h>
#endif

/* Rust's legacy escapes, in place: $LT$ <, $GT$ >, $u20$ ' ', .. ::, ... */
static void rust_unescape(char *d)
{
	static const struct { const char *from, *to; } esc[] = {
		{ "$LT$", "<" }, { "$GT$", ">" }, { "$RF$", "&" }, { "$BP$", "*" }, { "$C$", "," },
		{ "$SP$", "@" }, { "$LP$", "(" }, { "$RP$", ")" }, { "$u20$", " " },
		{ "$u27$", "'" }, { "$u5b$", "[" }, { "$u5d$", "]" }, { "$u7b$", "{" },
		{ "$u7d$", "}" }, { "$u7e$", "~" }, { "..", "::" },
	};
	char *w = d, *r = d;
	size_t i;

	while (*r) {
		/* a path segment starting with an escape has a '_' before it */
		if (r[0] == '_' && r[1] == '$' && (w == d || (w - d >= 2 && w[-1] == ':' && w[-2] == ':')))
			r++;
		for (i = 0; i < sizeof(esc) / sizeof(esc[0]); i++) {
			size_t n = strlen(esc[i].from);

			if (!strncmp(r, esc[i].from, n) && strlen(esc[i].to) <= n) {
				memcpy(w, esc[i].to, strlen(esc[i].to));
				w += strlen(esc[i].to);
				r += n;
				break;
			}
		}
		if (i == sizeof(esc) / sizeof(esc[0]))
			*w++ = *r++;
	}
	*w = 0;
}

static char *cxa_demangle(const char *name)
{
	typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);
	static demangle_fn fn;
	static int tried;
	char *d;
	size_t n;
	int st = -1;

	if (name[1] != 'Z')
		return NULL;	/* Rust v0: not Itanium */
	if (!tried) {
		void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);

		if (h)
			*(void **)&fn = dlsym(h, "__cxa_demangle");
		tried = 1;
	}
	d = fn ? fn(name, NULL, NULL, &st) : NULL;
	if (!d || st) {
		free(d);
		return NULL;
	}
	n = strlen(d);
	if (n > 19 && !strncmp(d + n - 19, "::h", 3) &&
	    strspn(d + n - 16, "0123456789abcdef") == 16) {
		d[n - 19] = 0;
		rust_unescape(d);
	}
	return d;
}

char *_uevent_demangle(const char *name)
{
	if (!name || name[0] != '_' || (name[1] != 'Z' && name[1] != 'R'))
		return NULL;
#ifdef HAVE_LIBIBERTY
	{
		char *d = cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO);

		if (d)
			return d;
	}
#endif
	return cxa_demangle(name);
}

/* Names demangled once each: by their text (a JIT's names are freed and reused). */
struct _uevent_demangler {
	struct { char *k, *v; } *e;
	size_t n, cap;			/* open addressing, cap a power of two */
};

static uint64_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

const char *_uevent_demangled(struct _uevent_demangler **dp, const char *name)
{
	struct _uevent_demangler *d = *dp;
	size_t i, mask;
	char *v;

	if (!name || name[0] != '_' || (name[1] != 'Z' && name[1] != 'R'))
		return name;
	if (!d && !(d = *dp = calloc(1, sizeof(*d))))
		return name;
	if ((d->n + 1) * 2 > d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 256, j;
		__typeof__(d->e) e = calloc(cap, sizeof(*e));

		if (!e)
			return name;
		for (j = 0; j < d->cap; j++) {
			if (!d->e[j].k)
				continue;
			for (i = hash(d->e[j].k) & (cap - 1); e[i].k; i = (i + 1) & (cap - 1))
				;
			e[i] = d->e[j];
		}
		free(d->e);
		d->e = e;
		d->cap = cap;
	}
	mask = d->cap - 1;
	for (i = hash(name) & mask; d->e[i].k; i = (i + 1) & mask)
		if (!strcmp(d->e[i].k, name))
			return d->e[i].v ? d->e[i].v : name;
	v = _uevent_demangle(name);
	d->e[i].k = strdup(name);
	if (!d->e[i].k) {
		free(v);
		return name;
	}
	d->e[i].v = v;		/* NULL: not mangled after all (kept as such) */
	d->n++;
	return v ? v : name;
}

void _uevent_demangler_free(struct _uevent_demangler *d)
{
	size_t i;

	if (!d)
		return;
	for (i = 0; i < d->cap; i++) {
		free(d->e[i].k);
		free(d->e[i].v);
	}
	free(d->e);
	free(d);
}

/* ---- Numba's names (numba/core/itanium_mangler.py), for uevent_demangle() ---------- */

/*
 * An Itanium subset: _Z, a nested name N...E of length-prefixed identifiers (B tags
 * skipped, I...E template arguments), then the argument types: builtins, Dh, L<t><v>E
 * literals and names. Identifiers escape each byte outside [A-Za-z0-9_] as _xx.
 * The output grows in out; any error makes the whole name not demangle.
 */
struct nb {
	const char *s, *end;
	char *out;
	size_t n, cap;
	int bad, depth;
};

static void nb_put(struct nb *d, const char *p, size_t n)
{
	if (d->bad)
		return;
	if (d->n + n + 1 > d->cap) {
		size_t cap = d->cap ? d->cap : 128;
		char *o;

		while (d->n + n + 1 > cap)
			cap *= 2;
		if (!(o = realloc(d->out, cap))) {
			d->bad = 1;
			return;
		}
		d->out = o;
		d->cap = cap;
	}
	memcpy(d->out + d->n, p, n);
	d->n += n;
	d->out[d->n] = 0;
}

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static int ident_byte(int c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

/* <length><bytes>, unescaped into the output (or skipped: out 0). */
static void nb_ident(struct nb *d, int out)
{
	size_t n = 0;
	const char *p;

	if (d->s >= d->end || *d->s < '0' || *d->s > '9') {
		d->bad = 1;
		return;
	}
	while (d->s < d->end && *d->s >= '0' && *d->s <= '9') {
		n = n * 10 + (size_t)(*d->s++ - '0');
		if (n > (size_t)(d->end - d->s)) {
			d->bad = 1;
			return;
		}
	}
	if (n > (size_t)(d->end - d->s)) {
		d->bad = 1;
		return;
	}
	for (p = d->s, d->s += n; out && p < d->s; p++) {
		int hi, lo;
		char c;

		/* '_xx' is a byte numba could not keep; a kept '_' never escapes one it could */
		if (*p == '_' && d->s - p >= 3 && (hi = hexval(p[1])) >= 0 &&
		    (lo = hexval(p[2])) >= 0 && !ident_byte(hi << 4 | lo)) {
			c = (char)(hi << 4 | lo);
			p += 2;
		} else {
			c = *p;
		}
		nb_put(d, &c, 1);
	}
}

static char nb_peek(const struct nb *d, size_t k)
{
	return (size_t)(d->end - d->s) > k ? d->s[k] : 0;
}

static void nb_type(struct nb *d);

static void nb_template(struct nb *d)
{
	int first = 1;

	d->s++;				/* I */
	nb_put(d, "<", 1);
	while (!d->bad && nb_peek(d, 0) && nb_peek(d, 0) != 'E') {
		if (!first)
			nb_put(d, ", ", 2);
		first = 0;
		nb_type(d);
	}
	if (d->s < d->end)
		d->s++;			/* E */
	nb_put(d, ">", 1);
}

/* A name: N part... E, each part an identifier or tags or a template on the last. */
static void nb_name(struct nb *d)
{
	int parts = 0;

	if (++d->depth > 64) {
		d->bad = 1;
		return;
	}
	if (nb_peek(d, 0) != 'N') {
		nb_ident(d, 1);
		if (nb_peek(d, 0) == 'I')
			nb_template(d);
		while (!d->bad && nb_peek(d, 0) == 'B') {
			d->s++;
			nb_ident(d, 0);
		}
		d->depth--;
		return;
	}
	d->s++;
	while (!d->bad && nb_peek(d, 0) && nb_peek(d, 0) != 'E') {
		if (nb_peek(d, 0) == 'B') {
			d->s++;
			nb_ident(d, 0);
		} else if (nb_peek(d, 0) == 'I') {
			if (!parts)
				d->bad = 1;
			else
				nb_template(d);
		} else {
			if (parts++)
				nb_put(d, ".", 1);
			nb_ident(d, 1);
		}
	}
	if (d->s < d->end)
		d->s++;			/* E */
	d->depth--;
}

static void nb_type(struct nb *d)
{
	static const char basic[] = "vbhatsjiyxfd";
	static const char *const names[] = { "void", "bool", "uint8", "int8", "uint16",
		"int16", "uint32", "int32", "uint64", "int64", "float32", "float64" };
	const char *b, *e;
	char c = nb_peek(d, 0);

	if (c == 'D' && nb_peek(d, 1) == 'h') {
		d->s += 2;
		nb_put(d, "float16", 7);
	} else if (c && (b = strchr(basic, c))) {
		d->s++;
		nb_put(d, names[b - basic], strlen(names[b - basic]));
	} else if (c == 'L' && nb_peek(d, 1) == 'i') {
		if (!(e = memchr(d->s, 'E', (size_t)(d->end - d->s)))) {
			d->bad = 1;
			return;
		}
		nb_put(d, d->s + 2, (size_t)(e - d->s - 2));
		d->s = e + 1;
	} else {
		nb_name(d);
	}
}

/* Numba's name for sym, malloc'd, or NULL when it is not one. */
static char *numba_demangle(const char *sym)
{
	static const char cfunc[] = "cfunc._Z", cpy[] = "_ZN7cpython";
	const char *suffix = "";
	struct nb d = { 0 };
	int first = 1;

	if (!strncmp(sym, cfunc, sizeof(cfunc) - 1)) {
		sym += 6;
		suffix = " [cfunc wrapper]";
	}
	if (strncmp(sym, "_Z", 2))
		return NULL;
	d.s = sym + 2;
	d.end = sym + strlen(sym);
	nb_name(&d);
	if (!d.bad && !strncmp(sym, cpy, sizeof(cpy) - 1) && d.n >= 7 &&
	    (d.out[7] == '.' || !d.out[7])) {
		size_t skip = d.out[7] ? 8 : 7;

		d.n -= skip;
		memmove(d.out, d.out + skip, d.n + 1);
		suffix = " [cpython wrapper]";
	}
	nb_put(&d, "(", 1);
	while (!d.bad && d.s < d.end) {
		if (!first)
			nb_put(&d, ", ", 2);
		first = 0;
		nb_type(&d);
	}
	nb_put(&d, ")", 1);
	nb_put(&d, suffix, strlen(suffix));
	if (d.bad) {
		free(d.out);
		return NULL;
	}
	return d.out;
}

UEVENT_EXPORT int uevent_demangle(const char *sym, unsigned int flags, char *buf, size_t len)
{
	char *d;
	const char *name;
	size_t n;

	if (!sym || (!buf && len) || (flags & ~(unsigned int)UEVENT_DEMANGLE_NUMBA))
		return _uevent_err(EINVAL);
	d = flags & UEVENT_DEMANGLE_NUMBA ? numba_demangle(sym) : _uevent_demangle(sym);
	name = d ? d : sym;
	n = strlen(name);
	if (len) {
		size_t k = n < len - 1 ? n : len - 1;

		memcpy(buf, name, k);
		buf[k] = 0;
	}
	free(d);
	return n > INT_MAX ? _uevent_err(EOVERFLOW) : (int)n;
}
