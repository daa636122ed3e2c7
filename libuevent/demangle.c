/* demangle.c - C++ and Rust symbol names as perf, c++filt and rustfilt print them, for
 * uevent_symbolizer (UEVENT_SYMBOLIZER_NO_DEMANGLE: raw). Itanium C++ (_Z), Rust's legacy
 * names (_ZN...17h<hash>E, the hash dropped) and its v0 names (_R) through libiberty's
 * cplus_demangle when configure found it (Debian: libiberty-dev, linked statically); else
 * C++ and legacy Rust through libstdc++'s __cxa_demangle, looked up at run time (the
 * library links no C++ runtime, and a program with C++ names has one), v0 names raw. */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
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
