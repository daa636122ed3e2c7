/* symbolize-read.c - the side-band files the symbolizer reads into code lists:
 * jitdumps, perf-PID.map and kallsyms. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs-trust.h"
#include "symbolize-internal.h"

/* ---- jitdump files ------------------------------------------------------------ */

static uint32_t bswap32_if(uint32_t v, int swap) { return swap ? __builtin_bswap32(v) : v; }
static uint64_t bswap64_if(uint64_t v, int swap) { return swap ? __builtin_bswap64(v) : v; }

/* The longest name of a load read: a longer one is cut there (JITs' names, mangled C++
 * and Java signatures included, are far shorter; the perf stream's hold 4 KiB). */
#define JD_NAME_MAX	((size_t)64 << 10)
#define JD_NAME_STEP	((size_t)256)	/* read at a time, until its NUL */

/*
 * Reads the name that starts a load's body past its fixed part (room bytes to the
 * record's end) into *buf, up to its NUL, room or JD_NAME_MAX: a step at a time, so a
 * short name reads little of the code after it. *len: the name's length. Returns the
 * bytes read, or -1 (cut short, or no memory).
 */
static ssize_t jd_read_name(FILE *f, size_t room, char **buf, size_t *cap, size_t *len)
{
	size_t n = 0, step;

	if (room > JD_NAME_MAX)
		room = JD_NAME_MAX;
	for (; n < room; n += step) {
		char *z;

		step = room - n < JD_NAME_STEP ? room - n : JD_NAME_STEP;
		if (*cap < n + step) {
			size_t c = *cap ? *cap * 2 : JD_NAME_STEP;
			char *nb;

			if (c < n + step)
				c = n + step;
			if (c > JD_NAME_MAX)
				c = JD_NAME_MAX;
			if (!(nb = realloc(*buf, c)))
				return -1;
			*buf = nb;
			*cap = c;
		}
		if (fread(*buf + n, step, 1, f) != 1)
			return -1;
		if ((z = memchr(*buf + n, 0, step))) {
			*len = (size_t)(z - *buf);
			return (ssize_t)(n + step);
		}
	}
	*len = n;
	return (ssize_t)n;
}

/*
 * Reads a jitdump file into p's JIT code: loads and moves at their timestamps (the
 * file's clock, CLOCK_MONOTONIC, which sessions record with). jitdump has no unload: a
 * later load over the same bytes ends the earlier one. Only what is named is read: a
 * load's fixed part and name (its code is skipped), a move's fields; the records of
 * other kinds are skipped whole, so a record's declared size (up to 64 MiB) costs no
 * memory.
 */
int _uevent_sym_read_jitdump(struct uevent_symbolizer *s, struct proc *p, const char *path)
{
	char rp[4096];
	struct jd_header h;
	const char *dso;
	char *name = NULL;
	size_t i, cap = 0;
	uint64_t last = 0;
	off_t left;
	FILE *f;
	int swap, bulk = 0;

	for (i = 0; i < s->njitdumps; i++)
		if (!strcmp(s->jitdumps[i], path))
			return 0;
	{
		char **v = realloc(s->jitdumps, (s->njitdumps + 1) * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->jitdumps = v;
		if (!(v[s->njitdumps] = strdup(path)))
			return -ENOMEM;
		s->njitdumps++;
	}
	dso = _uevent_sym_intern(s, path);
	if (!dso)
		return -ENOMEM;
	_uevent_sym_real_path(s, path, rp, sizeof(rp));
	f = _uevent_sym_open_input(rp, &left);
	if (!f)
		return 0;	/* gone, or not a file: its code stays unnamed */
	if (fread(&h, sizeof(h), 1, f) != 1 || (h.magic != JITDUMP_MAGIC && h.magic != JITDUMP_MAGIC_SWAPPED))
		goto out;
	swap = h.magic == JITDUMP_MAGIC_SWAPPED;
	if (fseek(f, (long)bswap32_if(h.total_size, swap), SEEK_SET) < 0)
		goto out;
	left -= bswap32_if(h.total_size, swap);
	bulk = !p->jd.n;	/* a first dump: its loads added whole, settled at once */
	for (;;) {
		struct jd_prefix r;
		uint32_t size, id;
		uint64_t t, body;	/* body: its bytes past r, not yet read */

		if (fread(&r, sizeof(r), 1, f) != 1)
			break;
		id = bswap32_if(r.id, swap);
		size = bswap32_if(r.total_size, swap);
		t = bswap64_if(r.timestamp, swap);
		if (size < sizeof(r) || size > (64u << 20) || id > 64 || size > left)
			break;		/* the zeros past the last record, garbage, or
					   what was written since it was opened */
		left -= size;
		body = size - sizeof(r);
		if (id == JIT_CODE_LOAD && body >= 40) {
			uint64_t v[5], addr, csz, index;	/* pid, tid; vma, addr, size, index */
			size_t nlen;
			ssize_t got;

			if (fread(v, sizeof(v), 1, f) != 1 ||
			    (got = jd_read_name(f, body - 40, &name, &cap, &nlen)) < 0)
				break;	/* cut short: the writer is still at it, or died */
			body -= 40 + (uint64_t)got;
			addr = bswap64_if(v[2], swap);
			csz = bswap64_if(v[3], swap);
			index = bswap64_if(v[4], swap);
			/* its code is not all in it (past its name's NUL, where one was
			 * read): not the load it says, and its size may span anything */
			if (nlen < (size_t)got && csz > body + (uint64_t)got - nlen - 1)
				goto skip;
			if (bulk && t < last) {	/* out of time order: one by one */
				_uevent_sym_code_settle(&p->jd);
				bulk = 0;
			}
			last = t;
			if (_uevent_sym_jit_load(s, &p->jd, addr, csz, index, name ? name : "",
						 nlen, t, UEVENT_SYM_JITDUMP, dso, bulk) < 0)
				break;
		} else if (id == JIT_CODE_MOVE && body >= 48) {
			uint64_t v[6];	/* pid, tid; vma, old, new, size, index */

			if (fread(v, sizeof(v), 1, f) != 1)
				break;
			body -= sizeof(v);
			if (bulk) {	/* a move finds its code live: settle first */
				_uevent_sym_code_settle(&p->jd);
				bulk = 0;
			}
			if (_uevent_sym_jit_move(&p->jd, bswap64_if(v[5], swap),
						 bswap64_if(v[2], swap), bswap64_if(v[3], swap),
						 bswap64_if(v[4], swap), t) < 0)
				break;
		}
skip:		/* the rest unread: within the size the file had (left), so a later read
		 * past its end, not this seek, finds one cut short */
		if (body && fseeko(f, (off_t)body, SEEK_CUR) < 0)
			break;
	}
out:
	if (bulk)
		_uevent_sym_code_settle(&p->jd);
	free(name);
	fclose(f);
	return 0;
}

int _uevent_sym_is_jitdump_name(const char *path)
{
	const char *b = strrchr(path, '/');
	size_t n;

	b = b ? b + 1 : path;
	n = strlen(b);
	return !strncmp(b, "jit-", 4) && n > 9 && !strcmp(b + n - 5, ".dump");
}

/* ---- perf-PID.map ------------------------------------------------------------- */

void _uevent_sym_read_perf_map(struct uevent_symbolizer *s, struct proc *p)
{
	char path[4096], line[4096];
	const char *dso;
	off_t left;
	FILE *f;

	p->pmap_read = 1;
	if (s->o.flags & UEVENT_SYMBOLIZER_NO_PERF_MAP)
		return;
	snprintf(path, sizeof(path), "%s/perf-%u.map", s->o.perf_map_dir ? s->o.perf_map_dir
					: "/tmp", p->pid);
	dso = _uevent_sym_intern(s, path);
	f = dso ? _uevent_sym_open_input(path, &left) : NULL;
	if (!f)
		return;
	while (left > 0 && fgets(line, sizeof(line), f)) {
		unsigned long long a, n;
		int off = 0;
		size_t len = strlen(line);
		struct code *c;

		left -= (off_t)len;
		if (sscanf(line, "%llx %llx %n", &a, &n, &off) != 2 || !off)
			continue;
		len = strcspn(line + off, "\n");
		c = _uevent_sym_code_add(&p->pmap, a, n, 0, line + off, len);	/* settled below */
		if (!c)
			break;
		c->source = UEVENT_SYM_PERF_MAP;
		c->dso = dso;
	}
	fclose(f);
	_uevent_sym_pmap_settle(&p->pmap);
}

/* ---- kernel symbols ----------------------------------------------------------- */

static int kcmp(const void *a, const void *b)
{
	const struct code *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static void read_kallsyms(struct uevent_symbolizer *s)
{
	char line[1024];
	const char *dso;
	FILE *f;
	size_t i;

	s->kern_read = 1;
	s->kern.no_index = 1;	/* sorted whole below, searched by kern_find */
	if (s->o.flags & UEVENT_SYMBOLIZER_NO_KERNEL)
		return;
	dso = _uevent_sym_intern(s, "[kernel.kallsyms]");
	f = dso ? fopen(s->o.kallsyms ? s->o.kallsyms : "/proc/kallsyms", "r") : NULL;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long a;
		char type, name[512];
		struct code *c;

		if (sscanf(line, "%llx %c %511s", &a, &type, name) != 3 || !a)
			continue;
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		c = _uevent_sym_code_add(&s->kern, a, 0, 0, name, strlen(name));
		if (!c)
			break;
		c->source = UEVENT_SYM_KERNEL;
		c->dso = dso;
	}
	fclose(f);
	qsort(s->kern.v, s->kern.n, sizeof(*s->kern.v), kcmp);
	for (i = 0; i + 1 < s->kern.n; i++)
		s->kern.v[i].size = s->kern.v[i + 1].addr - s->kern.v[i].addr;
	if (s->kern.n)
		s->kern.v[s->kern.n - 1].size = 4096;
}

const struct code *_uevent_sym_kern_find(struct uevent_symbolizer *s, uint64_t addr, uint64_t t)
{
	const struct code *c = _uevent_sym_code_find(&s->ksym, addr, t);
	size_t lo = 0, hi;

	if (c)
		return c;
	if (!s->kern_read)
		read_kallsyms(s);
	hi = s->kern.n;
	while (lo < hi) {	/* the last symbol starting at or below addr */
		size_t mid = (lo + hi) / 2;

		if (s->kern.v[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	c = &s->kern.v[lo - 1];
	return addr - c->addr < c->size ? c : NULL;
}
