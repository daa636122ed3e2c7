/* symbolize.c - name (pid, address, time) from a recording's side-band: ELF/DWARF,
 * kallsyms, perf maps, jitdump files and the in-stream JIT uevents. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <linux/perf_uevent.h>

#ifdef HAVE_LIBDW
#include <elfutils/libdwfl.h>
#include <gelf.h>
#endif

#include "fs-trust.h"
#include "internal.h"
#include "uevent.h"

#define TIME_MAX UINT64_MAX

/* A named address range live over [start, end) of the recording's time. */
struct code {
	uint64_t	addr, size, index, start, end;
	char		*name;
	const char	*dso;		/* interned */
	char		*file;		/* jitdump line: "FILE" */
	uint32_t	line;
	uint32_t	source;
};

/* A live code in the treap: its key beside the links, so a walk stays in a small array. */
struct live_node {
	uint64_t	addr, to;	/* [addr, to): its bytes (one, if no size) */
	uint32_t	kid[2];		/* v indexes + 1, 0 none */
};

struct code_list {
	struct code	*v;		/* in the order added (time order) */
	size_t		n, cap;
	size_t		*by_addr;	/* indexes into v by address, for lookups: sorted up */
	size_t		sorted;		/* to here, the rest sorted in on the next lookup */
	size_t		idx_cap;
	uint32_t	live;		/* the live codes (end TIME_MAX) by address: a treap
					   root, v index + 1 (0: none) */
	struct live_node *node;		/* the treap's nodes, by v index */
	size_t		node_cap;
	uint64_t	max_size;	/* the largest code: how far back a search looks */
	int		no_index;	/* kallsyms: sorted whole instead */
};

struct fsym {
	uint64_t	addr, size;
	const char	*name;		/* libdwfl's, valid while the Dwfl is */
	int		global;
};

/* An ELF file, opened once, named through libdwfl. */
struct file {
	char		*path;		/* as the stream names it */
	int		tried, ok;
#ifdef HAVE_LIBDW
	Dwfl		*dwfl;
	void		*cb;		/* its Dwfl_Callbacks and debug path */
	Dwfl_Module	*mod;
	GElf_Addr	bias;
	size_t		nload;
	struct { uint64_t off, vaddr, filesz; } *load;
	struct fsym	*syms;		/* its functions by address, for a binary search
					   (libdwfl's own lookup walks the whole table) */
	size_t		nsyms;
#endif
};

struct map {
	uint64_t	addr, len, pgoff, start;
	struct file	*file;
};

struct comm {
	uint64_t	time;
	char		*name;
};

struct proc {
	uint32_t	pid, ppid;
	uint64_t	fork_time;
	struct map	*maps;
	size_t		nmaps, maps_cap;
	struct code_list jit;		/* the JIT uevents */
	struct code_list jd;		/* jitdump records (no unloads: apart) */
	struct code_list pmap;		/* perf-PID.map, read on first need */
	int		pmap_read;
	int		proc_maps_read;	/* UEVENT_SYMBOLIZER_PROC_MAPS */
};

struct thread {
	uint32_t	tid, ptid;
	uint64_t	fork_time;
	struct comm	*comms;
	size_t		ncomms;
};

struct uevent_symbolizer {
	struct uevent_symbolizer_opts o;
	struct proc	**procs;
	size_t		nprocs, procs_cap;
	struct thread	**threads;
	size_t		nthreads, threads_cap;
	struct file	**files;
	size_t		nfiles, files_cap;
	char		**strs;		/* interned strings */
	size_t		nstrs, strs_cap;
	struct code_list kern;		/* kallsyms, sorted by addr, end = next start */
	struct code_list ksym;		/* KSYMBOL records */
	int		kern_read;
	char		**jitdumps;	/* jitdump files read (once each) */
	size_t		njitdumps;
	struct _uevent_demangler *dem;	/* demangle.c's names */
};

static int grow(void **v, size_t *cap, size_t n, size_t elem)
{
	void *p;
	size_t c;

	if (n < *cap)
		return 0;
	c = *cap ? *cap * 2 : 16;
	p = realloc(*v, c * elem);
	if (!p)
		return -ENOMEM;
	*v = p;
	*cap = c;
	return 0;
}

static const char *intern(struct uevent_symbolizer *s, const char *str)
{
	size_t i;
	char *d;

	for (i = 0; i < s->nstrs; i++)
		if (!strcmp(s->strs[i], str))
			return s->strs[i];
	if (grow((void **)&s->strs, &s->strs_cap, s->nstrs, sizeof(*s->strs)) < 0)
		return NULL;
	d = strdup(str);
	if (!d)
		return NULL;
	s->strs[s->nstrs++] = d;
	return d;
}

static struct proc *proc_get(struct uevent_symbolizer *s, uint32_t pid, int create)
{
	size_t i;
	struct proc *p;

	for (i = s->nprocs; i-- > 0;)
		if (s->procs[i]->pid == pid)
			return s->procs[i];
	if (!create)
		return NULL;
	if (grow((void **)&s->procs, &s->procs_cap, s->nprocs, sizeof(*s->procs)) < 0)
		return NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	p->ppid = pid;
	s->procs[s->nprocs++] = p;
	return p;
}

static struct thread *thread_get(struct uevent_symbolizer *s, uint32_t tid, int create)
{
	size_t i;
	struct thread *t;

	for (i = s->nthreads; i-- > 0;)
		if (s->threads[i]->tid == tid)
			return s->threads[i];
	if (!create)
		return NULL;
	if (grow((void **)&s->threads, &s->threads_cap, s->nthreads, sizeof(*s->threads)) < 0)
		return NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->tid = tid;
	t->ptid = tid;
	s->threads[s->nthreads++] = t;
	return t;
}

/* The path to open for a path the stream names (opts->root prefixed). */
static void real_path(const struct uevent_symbolizer *s, const char *path, char *buf,
		      size_t cap)
{
	snprintf(buf, cap, "%s%s", s->o.root ? s->o.root : "", path);
}

/*
 * Opens a file the recording points at, to read: others can plant one where it is looked
 * for (/tmp/perf-PID.map), so a symlink there is not followed, a FIFO or a device (a link
 * to /dev/zero) is skipped rather than read forever, and *size, the bytes to read at
 * most, is the size it had when opened. What is skipped is said on the reason channel
 * (uevent_reason()), "symbolizer: skipped PATH: why". Returns a stream or NULL.
 */
static int open_input_fd(const char *path, int nofollow, off_t *size)
{
	char why[600] = "";
	int fd = _uevent_open_regular(AT_FDCWD, path, nofollow, size, why, sizeof(why));

	if (fd < 0 && *why)
		_uevent_reason("symbolizer: %s", why);
	return fd;
}

static FILE *open_input(const char *path, off_t *size)
{
	int fd = open_input_fd(path, 1, size);
	FILE *f;

	if (fd < 0)
		return NULL;
	f = fdopen(fd, "r");
	if (!f)
		close(fd);
	return f;
}

/* ---- code lists: JIT code, perf maps, kernel symbols ------------------------------ */

/*
 * Adding n codes costs O(n log n): a code goes to the end of by_addr, and the next lookup
 * sorts what came since and merges it in (one pass); the live codes, which never overlap
 * (a load ends what it covers), sit in a treap by address, so finding the ones a load
 * replaces costs O(log n) rather than a scan of every code ever added.
 */
static struct code *code_add(struct code_list *l, uint64_t addr, uint64_t size,
			     uint64_t start, const char *name, size_t name_len)
{
	struct code *c;

	if (grow((void **)&l->v, &l->cap, l->n, sizeof(*l->v)) < 0)
		return NULL;
	c = &l->v[l->n];
	memset(c, 0, sizeof(*c));
	c->name = strndup(name, name_len);
	if (!c->name)
		return NULL;
	c->addr = addr;
	c->size = size;
	c->start = start;
	c->end = TIME_MAX;
	if (!l->no_index) {
		if (l->n >= UINT32_MAX ||
		    grow((void **)&l->by_addr, &l->idx_cap, l->n, sizeof(*l->by_addr)) < 0 ||
		    grow((void **)&l->node, &l->node_cap, l->n, sizeof(*l->node)) < 0) {
			free(c->name);
			return NULL;
		}
		l->node[l->n].addr = addr;
		l->node[l->n].to = addr + (size ? size : 1);
		l->by_addr[l->n] = l->n;
		if (size > l->max_size)
			l->max_size = size;
	}
	l->n++;
	return c;
}

/* by address, then in the order added */
static int by_addr_cmp(const void *a, const void *b, void *arg)
{
	const struct code *v = arg;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	if (v[x].addr != v[y].addr)
		return v[x].addr < v[y].addr ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* Sorts the codes added since the last lookup into by_addr. */
static int code_index(struct code_list *l)
{
	size_t *m, i, j, k, n = l->n, s = l->sorted;

	if (s == n)
		return 0;
	qsort_r(l->by_addr + s, n - s, sizeof(*l->by_addr), by_addr_cmp, l->v);
	if (s && by_addr_cmp(&l->by_addr[s - 1], &l->by_addr[s], l->v) > 0) {
		m = malloc(n * sizeof(*m));
		if (!m)
			return -ENOMEM;
		for (i = 0, j = s, k = 0; k < n; k++)
			m[k] = j == n || (i < s && by_addr_cmp(&l->by_addr[i], &l->by_addr[j],
							      l->v) < 0) ?
			       l->by_addr[i++] : l->by_addr[j++];
		memcpy(l->by_addr, m, n * sizeof(*m));
		free(m);
	}
	l->sorted = n;
	return 0;
}

/* ---- the live treap: keys (addr, v index), heap on a hash of the index ---- */

/* splitmix64's finalizer: a multiplicative hash alone tracks keys made the same way */
static uint32_t live_prio(size_t t)
{
	uint64_t x = (uint64_t)t * 0x9E3779B97F4A7C15ull;

	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
	return (uint32_t)(x ^ (x >> 31));
}

/* t into lo (keys below (addr, i)) and hi (the rest). */
static void live_split(struct live_node *v, uint32_t t, uint64_t addr, size_t i, uint32_t *lo,
		       uint32_t *hi)
{
	while (t) {
		struct live_node *c = &v[t - 1];

		if (c->addr < addr || (c->addr == addr && t - 1 < i)) {
			*lo = t;
			lo = &c->kid[1];
			t = c->kid[1];
		} else {
			*hi = t;
			hi = &c->kid[0];
			t = c->kid[0];
		}
	}
	*lo = *hi = 0;
}

/* a's keys all below b's */
static uint32_t live_merge(struct live_node *v, uint32_t a, uint32_t b)
{
	uint32_t root = 0, *at = &root;

	while (a && b) {
		if (live_prio(a) > live_prio(b)) {
			*at = a;
			at = &v[a - 1].kid[1];
			a = v[a - 1].kid[1];
		} else {
			*at = b;
			at = &v[b - 1].kid[0];
			b = v[b - 1].kid[0];
		}
	}
	*at = a ? a : b;
	return root;
}

static void live_insert(struct code_list *l, size_t i)
{
	uint32_t lo, hi;

	l->node[i].kid[0] = l->node[i].kid[1] = 0;
	live_split(l->node, l->live, l->node[i].addr, i, &lo, &hi);
	l->live = live_merge(l->node, live_merge(l->node, lo, (uint32_t)i + 1), hi);
}

static void live_remove(struct code_list *l, size_t i)
{
	uint32_t lo, mid, hi;

	live_split(l->node, l->live, l->node[i].addr, i, &lo, &mid);
	live_split(l->node, mid, l->node[i].addr, i + 1, &mid, &hi);
	l->live = live_merge(l->node, lo, hi);
}

/* The first live code at or after (addr, i) (into *above), and the last before addr
 * (*below): v index + 1, 0 if none. One walk down. */
static void live_seek(const struct code_list *l, uint64_t addr, size_t i, uint32_t *below,
		      uint32_t *above)
{
	uint32_t t = l->live;

	*below = *above = 0;
	while (t) {
		const struct live_node *c = &l->node[t - 1];

		if (c->addr < addr || (c->addr == addr && t - 1 < i)) {
			*below = t;
			t = c->kid[1];
		} else {
			*above = t;
			t = c->kid[0];
		}
	}
}

/* Ends c at time t (unloaded, moved, replaced). */
static void code_end(struct code_list *l, struct code *c, uint64_t t)
{
	if (c->end == TIME_MAX && !l->no_index)
		live_remove(l, (size_t)(c - l->v));
	c->end = t;
}

/*
 * Ends, at time t, the live code of l that overlaps [addr, addr+size): it was replaced.
 * Returns when the new code ends: TIME_MAX, or the start of a live code over the same
 * bytes loaded after t (records a little out of time order), which replaced it.
 */
static uint64_t code_end_overlap(struct code_list *l, uint64_t addr, uint64_t size, uint64_t t)
{
	uint64_t end = addr + (size ? size : 1), until = TIME_MAX;
	uint32_t below, k;

	live_seek(l, addr, 0, &below, &k);
	if (below && l->node[below - 1].to > addr)
		k = below;	/* the one below reaches into it */
	while (k && l->node[k - 1].addr < end) {
		struct code *c = &l->v[k - 1];
		uint64_t a = c->addr;

		if (c->start <= t)
			code_end(l, c, t);
		else if (c->start < until)
			until = c->start;
		live_seek(l, a, k, &below, &k);	/* the next after it */
	}
	return until;
}

/* A new code over [addr, addr+size) from time t, ending the ones it replaces. */
static struct code *code_replace(struct code_list *l, uint64_t addr, uint64_t size,
				 uint64_t t, const char *name, size_t name_len)
{
	uint64_t until = code_end_overlap(l, addr, size, t);
	struct code *c = code_add(l, addr, size, t, name, name_len);

	if (c && until != TIME_MAX)
		c->end = until;
	else if (c)
		live_insert(l, (size_t)(c - l->v));
	return c;
}

/* The live code at addr of l at time t: the latest started of those covering it. */
static const struct code *code_find(struct code_list *l, uint64_t addr, uint64_t t)
{
	const struct code *best = NULL;
	size_t lo = 0, hi = l->n, span = l->max_size ? l->max_size : 1;

	if (code_index(l) < 0)
		return NULL;
	/* the codes starting at or below addr, back as far as the largest one reaches */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (l->v[l->by_addr[mid]].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	while (lo-- > 0) {
		const struct code *c = &l->v[l->by_addr[lo]];

		if (addr - c->addr >= span)
			break;
		if (addr - c->addr < (c->size ? c->size : 1) && c->start <= t && t < c->end &&
		    (!best || c->start >= best->start))
			best = c;
	}
	return best;
}

static void code_free(struct code_list *l)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		free(l->v[i].name);
		free(l->v[i].file);
	}
	free(l->v);
	free(l->by_addr);
	free(l->node);
	memset(l, 0, sizeof(*l));
}

/* A live code of the process whose index (or, index 0, address) is given. */
static struct code *code_live(struct code_list *l, uint64_t index, uint64_t addr)
{
	size_t i;

	for (i = l->n; i-- > 0;) {
		struct code *c = &l->v[i];

		if (c->end == TIME_MAX && (index ? c->index == index : c->addr == addr))
			return c;
	}
	for (i = l->n; i-- > 0;)	/* an index we never saw: by address */
		if (l->v[i].end == TIME_MAX && l->v[i].addr == addr)
			return &l->v[i];
	return NULL;
}

static int jit_load(struct uevent_symbolizer *s, struct code_list *l, uint64_t addr,
		    uint64_t size, uint64_t index, const char *name, size_t len, uint64_t t,
		    uint32_t source, const char *dso)
{
	struct code *c;

	c = code_replace(l, addr, size, t, name, len);
	if (!c)
		return -ENOMEM;
	c->index = index;
	c->source = source;
	c->dso = intern(s, dso);
	return c->dso ? 1 : -ENOMEM;
}

static int jit_move(struct code_list *l, uint64_t index,
		    uint64_t old_addr, uint64_t new_addr, uint64_t size, uint64_t t)
{
	struct code *c = code_live(l, index, old_addr), *n;
	char *name, *file;
	uint32_t line, source;
	const char *dso;

	if (!c)
		return 0;	/* moved code we never saw loaded */
	code_end(l, c, t);
	name = c->name;
	file = c->file;
	line = c->line;
	source = c->source;
	dso = c->dso;
	if (!size)
		size = c->size;
	n = code_replace(l, new_addr, size, t, name, strlen(name));	/* may move l->v */
	if (!n)
		return -ENOMEM;
	n->index = index;
	n->source = source;
	n->dso = dso;
	n->line = line;
	n->file = file ? strdup(file) : NULL;
	return 1;
}

/* ---- jitdump files ------------------------------------------------------------ */

static uint32_t bswap32_if(uint32_t v, int swap) { return swap ? __builtin_bswap32(v) : v; }
static uint64_t bswap64_if(uint64_t v, int swap) { return swap ? __builtin_bswap64(v) : v; }

/*
 * Reads a jitdump file into p's JIT code: loads and moves at their timestamps (the
 * file's clock, CLOCK_MONOTONIC, which sessions record with). jitdump has no unload: a
 * later load over the same bytes ends the earlier one.
 */
static int read_jitdump(struct uevent_symbolizer *s, struct proc *p, const char *path)
{
	char rp[4096];
	struct jd_header h;
	const char *dso;
	unsigned char *buf = NULL;
	size_t i, cap = 0;
	off_t left;
	FILE *f;
	int swap;

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
	dso = intern(s, path);
	if (!dso)
		return -ENOMEM;
	real_path(s, path, rp, sizeof(rp));
	f = open_input(rp, &left);
	if (!f)
		return 0;	/* gone, or not a file: its code stays unnamed */
	if (fread(&h, sizeof(h), 1, f) != 1 || (h.magic != JITDUMP_MAGIC && h.magic != JITDUMP_MAGIC_SWAPPED))
		goto out;
	swap = h.magic == JITDUMP_MAGIC_SWAPPED;
	if (fseek(f, (long)bswap32_if(h.total_size, swap), SEEK_SET) < 0)
		goto out;
	left -= bswap32_if(h.total_size, swap);
	for (;;) {
		struct jd_prefix r;
		uint32_t size, id;
		uint64_t t;

		if (fread(&r, sizeof(r), 1, f) != 1)
			break;
		id = bswap32_if(r.id, swap);
		size = bswap32_if(r.total_size, swap);
		t = bswap64_if(r.timestamp, swap);
		if (size < sizeof(r) || size > (64u << 20) || id > 64 || size > left)
			break;		/* the zeros past the last record, garbage, or
					   what was written since it was opened */
		left -= size;
		if (cap < size) {
			unsigned char *nb = realloc(buf, size);

			if (!nb)
				break;
			buf = nb;
			cap = size;
		}
		if (size > sizeof(r) && fread(buf, size - sizeof(r), 1, f) != 1)
			break;		/* cut short: the writer is still at it, or died */
		if (id == JIT_CODE_LOAD && size >= sizeof(r) + 40) {
			uint64_t addr, csz, index;
			size_t nlen = size - sizeof(r) - 40;

			memcpy(&addr, buf + 16, 8);
			memcpy(&csz, buf + 24, 8);
			memcpy(&index, buf + 32, 8);
			addr = bswap64_if(addr, swap);
			csz = bswap64_if(csz, swap);
			index = bswap64_if(index, swap);
			nlen = strnlen((char *)buf + 40, nlen);
			if (jit_load(s, &p->jd, addr, csz, index, (char *)buf + 40, nlen, t,
				     UEVENT_SYM_JITDUMP, dso) < 0)
				break;
		} else if (id == JIT_CODE_MOVE && size >= sizeof(r) + 48) {
			uint64_t v[4];

			memcpy(v, buf + 16, sizeof(v));	/* old, new, size, index */
			if (jit_move(&p->jd, bswap64_if(v[3], swap), bswap64_if(v[0], swap),
				     bswap64_if(v[1], swap), bswap64_if(v[2], swap), t) < 0)
				break;
		}
	}
out:
	free(buf);
	fclose(f);
	return 0;
}

static int is_jitdump_name(const char *path)
{
	const char *b = strrchr(path, '/');
	size_t n;

	b = b ? b + 1 : path;
	n = strlen(b);
	return !strncmp(b, "jit-", 4) && n > 9 && !strcmp(b + n - 5, ".dump");
}

/* ---- perf-PID.map ------------------------------------------------------------- */

static void read_perf_map(struct uevent_symbolizer *s, struct proc *p)
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
	dso = intern(s, path);
	f = dso ? open_input(path, &left) : NULL;
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
		/* no times: a later line for the same bytes replaces the earlier one */
		c = code_replace(&p->pmap, a, n, 0, line + off, len);
		if (!c)
			break;
		c->source = UEVENT_SYM_PERF_MAP;
		c->dso = dso;
	}
	fclose(f);
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
	dso = intern(s, "[kernel.kallsyms]");
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
		c = code_add(&s->kern, a, 0, 0, name, strlen(name));
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

static const struct code *kern_find(struct uevent_symbolizer *s, uint64_t addr, uint64_t t)
{
	const struct code *c = code_find(&s->ksym, addr, t);
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

/* ---- ELF files through libdwfl ------------------------------------------------ */

static struct file *file_get(struct uevent_symbolizer *s, const char *path)
{
	struct file *f;
	size_t i;

	for (i = s->nfiles; i-- > 0;)
		if (!strcmp(s->files[i]->path, path))
			return s->files[i];
	if (grow((void **)&s->files, &s->files_cap, s->nfiles, sizeof(*s->files)) < 0)
		return NULL;
	f = calloc(1, sizeof(*f));
	if (!f || !(f->path = strdup(path))) {
		free(f);
		return NULL;
	}
	s->files[s->nfiles++] = f;
	return f;
}

#ifdef HAVE_LIBDW
/*
 * libdwfl's search (build-id, .gnu_debuglink beside the file, in .debug/, under the
 * path's directories), then opts->debug_dir/NAME for a .gnu_debuglink NAME: a debug
 * file kept flat in a directory of its own, as a build's separate debug output is.
 */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			  Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			  GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	const struct uevent_symbolizer *s = *userdata;
	char path[4096];
	int fd = dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name,
					      debuglink_file, debuglink_crc,
					      debuginfo_file_name);

	if (fd >= 0 || !s || !s->o.debug_dir || !debuglink_file || strchr(debuglink_file, '/'))
		return fd;
	snprintf(path, sizeof(path), "%s/%s", s->o.debug_dir, debuglink_file);
	/* the directory is the user's (links in it are followed); the file must be one */
	fd = open_input_fd(path, 0, NULL);
	if (fd >= 0 && !(*debuginfo_file_name = strdup(path))) {
		close(fd);
		fd = -1;
	}
	return fd;
}

static int fsym_cmp(const void *a, const void *b)
{
	const struct fsym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* at one address the global, sized one is kept: first after the sort */
	if (x->global != y->global)
		return y->global - x->global;
	return (y->size > 0) - (x->size > 0);
}

/* The file's function symbols (its .symtab, else its debug file's, else .dynsym). */
static int read_syms(struct file *f)
{
	int n = dwfl_module_getsymtab(f->mod), i;
	size_t k = 0;

	if (n <= 0)
		return 0;
	f->syms = calloc((size_t)n, sizeof(*f->syms));
	if (!f->syms)
		return -ENOMEM;
	for (i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *name = dwfl_module_getsym_info(f->mod, i, &sym, &addr, NULL, NULL,
							   NULL);
		int type = GELF_ST_TYPE(sym.st_info);

		if (!name || !*name || !addr || sym.st_shndx == SHN_UNDEF ||
		    (type != STT_FUNC && type != STT_GNU_IFUNC))
			continue;
		f->syms[k].addr = addr;
		f->syms[k].size = sym.st_size;
		f->syms[k].name = name;
		f->syms[k].global = GELF_ST_BIND(sym.st_info) != STB_LOCAL;
		k++;
	}
	qsort(f->syms, k, sizeof(*f->syms), fsym_cmp);
	{	/* one per address */
		size_t w = 0;

		for (i = 0; (size_t)i < k; i++)
			if (!w || f->syms[w - 1].addr != f->syms[i].addr)
				f->syms[w++] = f->syms[i];
		k = w;
	}
	f->nsyms = k;
	return 0;
}

/* The function at vaddr: the last starting at or below it, if vaddr is inside it (an
 * unsized one: up to the next). */
static const struct fsym *fsym_find(const struct file *f, uint64_t vaddr)
{
	size_t lo = 0, hi = f->nsyms;
	const struct fsym *c;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (f->syms[mid].addr <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	c = &f->syms[lo - 1];
	if (c->size ? vaddr - c->addr < c->size : lo < f->nsyms)
		return c;
	return NULL;
}

static int file_open(struct uevent_symbolizer *s, struct file *f)
{
	static const Dwfl_Callbacks cb_base = {
		.find_elf = dwfl_build_id_find_elf,
		.find_debuginfo = find_debuginfo,
		.section_address = dwfl_offline_section_address,
	};
	char rp[4096];
	Dwfl_Callbacks *cb;
	Elf *elf;
	GElf_Ehdr eh;
	size_t n, i;

	f->tried = 1;
	real_path(s, f->path, rp, sizeof(rp));
	/* the callbacks live as long as the Dwfl; the debug path is the symbolizer's */
	cb = calloc(1, sizeof(*cb) + 4096 + sizeof(char *));
	if (!cb)
		return -ENOMEM;
	*cb = cb_base;
	{
		char **pp = (char **)(cb + 1), *path = (char *)(pp + 1);

		/* "": the file's own directory, then .debug/ beside it, then the system's */
		snprintf(path, 4096, "%s%s:.debug:/usr/lib/debug",
			 s->o.debug_dir ? s->o.debug_dir : "", s->o.debug_dir ? ":" : "");
		*pp = path;
		cb->debuginfo_path = pp;
	}
	f->cb = cb;
	f->dwfl = dwfl_begin(cb);
	if (!f->dwfl)
		return -ENOMEM;
	{	/* libdwfl's own open would wait on a FIFO planted there */
		int fd = open_input_fd(rp, 1, NULL);

		if (fd < 0)
			return fd;
		f->mod = dwfl_report_offline(f->dwfl, f->path, rp, fd);
		if (!f->mod)
			close(fd);	/* consumed only on success */
	}
	dwfl_report_end(f->dwfl, NULL, NULL);
	if (!f->mod)
		return -ENOENT;
	{
		void **ud = NULL;

		dwfl_module_info(f->mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL);
		if (ud)
			*ud = s;	/* for find_debuginfo */
	}
	elf = dwfl_module_getelf(f->mod, &f->bias);
	if (!elf || !gelf_getehdr(elf, &eh) || elf_getphdrnum(elf, &n) < 0)
		return -ENOENT;
	f->load = calloc(n ? n : 1, sizeof(*f->load));
	if (!f->load)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		f->load[f->nload].off = ph.p_offset;
		f->load[f->nload].vaddr = ph.p_vaddr;
		f->load[f->nload].filesz = ph.p_filesz;
		f->nload++;
	}
	f->ok = 1;
	return read_syms(f);
}

/* Names the byte at file offset off of f. */
static int file_lookup(struct uevent_symbolizer *s, struct file *f, uint64_t off,
		       uint64_t addr, struct uevent_symbol *out)
{
	GElf_Sym sym;
	GElf_Off soff = 0;
	GElf_Addr vaddr = 0;
	const char *name;
	size_t i;
	int found = 0;

	if (!f->tried)
		file_open(s, f);
	if (!f->ok)
		return -ENOENT;
	for (i = 0; i < f->nload; i++) {
		if (off >= f->load[i].off && off - f->load[i].off < f->load[i].filesz) {
			vaddr = f->load[i].vaddr + (off - f->load[i].off) + f->bias;
			found = 1;
			break;
		}
	}
	if (!found)
		return -ENOENT;
	{
		const struct fsym *fs = fsym_find(f, vaddr);

		if (!fs)
			return -ENOENT;
		name = fs->name;
		soff = vaddr - fs->addr;
		sym.st_size = fs->size;
	}
	out->name = name;
	out->offset = soff;
	out->sym_addr = addr - soff;
	out->sym_size = sym.st_size;
	out->source = UEVENT_SYM_ELF;
	if (!(s->o.flags & UEVENT_SYMBOLIZER_NO_LINES)) {
		Dwfl_Line *l = dwfl_module_getsrc(f->mod, vaddr);
		int line = 0;
		const char *src = l ? dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL) : NULL;

		if (src) {
			/* a relative name is the compilation directory's: whole, as a
			 * reader of the profile elsewhere (pprof -list) needs it */
			const char *cd = src[0] != '/' ? dwfl_line_comp_dir(l) : NULL, *whole;
			char path[4096];

			if (cd && snprintf(path, sizeof(path), "%s/%s", cd, src) < (int)sizeof(path) &&
			    (whole = intern(s, path)))
				src = whole;
			out->file = src;
			out->line = (uint32_t)(line > 0 ? line : 0);
		}
	}
	return 0;
}

static void file_close(struct file *f)
{
	if (f->dwfl)
		dwfl_end(f->dwfl);
	free(f->cb);
	free(f->syms);
	free(f->load);
}
#else
static int file_lookup(struct uevent_symbolizer *s, struct file *f, uint64_t off,
		       uint64_t addr, struct uevent_symbol *out)
{
	(void)s; (void)f; (void)off; (void)addr; (void)out;
	return -ENOENT;
}

static void file_close(struct file *f)
{
	(void)f;
}
#endif

/* ---- the API ------------------------------------------------------------------ */

static int add_map(struct uevent_symbolizer *s, struct proc *p, uint64_t addr, uint64_t len,
		   uint64_t pgoff, const char *path, uint64_t t);

UEVENT_EXPORT struct uevent_symbolizer *
uevent_symbolizer__new(const struct uevent_symbolizer_opts *opts)
{
	struct uevent_symbolizer *s = calloc(1, sizeof(*s));
	int err;

	if (!s)
		return NULL;
	err = _uevent_opts_copy(&s->o, sizeof(s->o), opts,
				offsetof(struct uevent_symbolizer_opts, flags));
	if (err < 0) {
		free(s);
		errno = -err;
		return NULL;
	}
	/* the paths are ours (a failed strdup leaves NULL): the caller's strings need
	 * not outlive this call */
	{
		const char **v[] = { &s->o.debug_dir, &s->o.kallsyms, &s->o.perf_map_dir,
				     &s->o.root };
		size_t i;

		for (i = 0; i < 4; i++)
			if (*v[i] && !(*v[i] = strdup(*v[i])))
				err = -ENOMEM;
	}
	if (err < 0) {
		uevent_symbolizer__free(s);
		errno = ENOMEM;
		return NULL;
	}
	return s;
}

static int feed_uevent(struct uevent_symbolizer *s, const struct uevent_perf_record *rec)
{
	const struct uevent_record *u = &rec->u.uevent;
	int bo = s->o.byte_order;
	uint64_t t = rec->id.time;
	struct proc *p;

	if (u->type < UEVENT_TYPE_JIT_CODE_LOAD || u->type > UEVENT_TYPE_JIT_CODE_UNLOAD)
		return 0;
	p = proc_get(s, rec->id.pid, 1);
	if (!p)
		return -ENOMEM;
	if (u->type == UEVENT_TYPE_JIT_CODE_LOAD) {
		struct uevent_jit_code_load l;

		if (uevent_jit_code_load_decode(u->data, u->size, bo, &l) < 0)
			return -EINVAL;
		return jit_load(s, &p->jit, l.code_addr, l.code_size, l.code_index, l.name,
				l.name_len, t, UEVENT_SYM_JIT_UEVENT, "[jit]");
	}
	if (u->type == UEVENT_TYPE_JIT_CODE_MOVE) {
		struct uevent_jit_code_move m;
		int ret;

		if (uevent_jit_code_move_decode(u->data, u->size, bo, &m) < 0)
			return -EINVAL;
		ret = jit_move(&p->jit, m.code_index, m.old_addr, m.new_addr, m.code_size, t);
		return ret < 0 ? ret : 1;
	}
	{
		struct uevent_jit_code_unload un;
		struct code *c;

		if (uevent_jit_code_unload_decode(u->data, u->size, bo, &un) < 0)
			return -EINVAL;
		c = code_live(&p->jit, un.code_index, un.code_addr);
		if (c)
			code_end(&p->jit, c, t);
		return 1;
	}
}

UEVENT_EXPORT int uevent_symbolizer__feed(struct uevent_symbolizer *s,
					  const struct uevent_perf_record *rec)
{
	uint64_t t;
	int ret = 1;

	if (!s || !rec)
		return _uevent_err(EINVAL);
	t = rec->id.fields & UEVENT_ID_TIME ? rec->id.time : 0;
	switch (rec->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2: {
		const struct uevent_perf_mmap *m = &rec->u.mmap;
		struct proc *p = proc_get(s, m->pid, 1);

		if (!p)
			return _uevent_err(ENOMEM);
		if (m->filename && is_jitdump_name(m->filename)) {
			if (!(s->o.flags & UEVENT_SYMBOLIZER_NO_JITDUMP) &&
			    read_jitdump(s, p, m->filename) < 0)
				return _uevent_err(ENOMEM);
			return 1;	/* the marker mapping, not code */
		}
		if (!(m->prot & 4) && rec->type == PERF_RECORD_MMAP2 &&
		    (rec->misc & PERF_RECORD_MISC_MMAP_DATA))
			return 1;	/* data: never sampled code */
		if (add_map(s, p, m->addr, m->len, m->pgoff, m->filename ? m->filename : "//anon",
			    t) < 0)
			return _uevent_err(ENOMEM);
		break;
	}
	case PERF_RECORD_COMM: {
		struct thread *th = thread_get(s, rec->u.comm.tid, 1);
		struct comm *c;

		if (!th)
			return _uevent_err(ENOMEM);
		c = realloc(th->comms, (th->ncomms + 1) * sizeof(*c));
		if (!c)
			return _uevent_err(ENOMEM);
		th->comms = c;
		c[th->ncomms].time = t;
		c[th->ncomms].name = strdup(rec->u.comm.comm ? rec->u.comm.comm : "");
		if (!c[th->ncomms].name)
			return _uevent_err(ENOMEM);
		th->ncomms++;
		if (rec->misc & PERF_RECORD_MISC_COMM_EXEC) {
			/* a new program: the old mappings and JIT code are gone */
			struct proc *p = proc_get(s, rec->u.comm.pid, 0);
			size_t i;

			for (i = 0; p && i < p->jit.n; i++)
				if (p->jit.v[i].end > t)
					p->jit.v[i].end = t;
			for (i = 0; p && i < p->jd.n; i++)
				if (p->jd.v[i].end > t)
					p->jd.v[i].end = t;
			if (p)
				p->jit.live = p->jd.live = 0;	/* none live now */
		}
		break;
	}
	case PERF_RECORD_FORK: {
		const struct uevent_perf_task *k = &rec->u.task;
		struct thread *th = thread_get(s, k->tid, 1);

		if (!th)
			return _uevent_err(ENOMEM);
		th->ptid = k->ptid;
		th->fork_time = k->time ? k->time : t;
		if (k->pid != k->ppid) {	/* a new process: its parent's space, copied */
			struct proc *p = proc_get(s, k->pid, 1);

			if (!p)
				return _uevent_err(ENOMEM);
			p->ppid = k->ppid;
			p->fork_time = th->fork_time;
		}
		break;
	}
	case PERF_RECORD_EXIT:
		break;
	case PERF_RECORD_KSYMBOL: {
		const struct uevent_perf_ksymbol *k = &rec->u.ksymbol;
		const char *dso = intern(s, "[kernel.kallsyms]");
		struct code *c;

		if (!dso)
			return _uevent_err(ENOMEM);
		if (k->flags & PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER) {
			code_end_overlap(&s->ksym, k->addr, k->len, t);
			break;
		}
		c = code_replace(&s->ksym, k->addr, k->len, t, k->name ? k->name : "",
				 k->name ? strlen(k->name) : 0);
		if (!c)
			return _uevent_err(ENOMEM);
		c->source = UEVENT_SYM_KERNEL;
		c->dso = dso;
		break;
	}
	case PERF_RECORD_UEVENT:
		if (rec->body != UEVENT_BODY_UEVENT)
			return 0;
		ret = feed_uevent(s, rec);
		return ret < 0 ? _uevent_err(-ret) : ret;
	default:
		return 0;
	}
	return ret;
}

static void set_code(struct uevent_symbol *out, const struct code *c, uint64_t addr)
{
	out->name = c->name;
	out->dso = c->dso;
	out->offset = addr - c->addr;
	out->sym_addr = c->addr;
	out->sym_size = c->size;
	out->file = c->file;
	out->line = c->line;
	out->source = c->source;
}

/* Mappings are sorted by start: the last one covering addr that began by time t. */
static const struct map *map_find(const struct proc *p, uint64_t addr, uint64_t t)
{
	size_t i;

	for (i = p->nmaps; i-- > 0;) {
		const struct map *m = &p->maps[i];

		if (m->start <= t && addr >= m->addr && addr - m->addr < m->len)
			return m;
	}
	return NULL;
}

static int add_map(struct uevent_symbolizer *s, struct proc *p, uint64_t addr, uint64_t len,
		   uint64_t pgoff, const char *path, uint64_t t)
{
	struct map *mp;
	size_t i;

	if (grow((void **)&p->maps, &p->maps_cap, p->nmaps, sizeof(*p->maps)) < 0)
		return -ENOMEM;
	for (i = 0; i < p->nmaps; i++)	/* kept in time order for lookup */
		if (p->maps[i].start > t)
			break;
	memmove(&p->maps[i + 1], &p->maps[i], (p->nmaps - i) * sizeof(*p->maps));
	mp = &p->maps[i];
	mp->addr = addr;
	mp->len = len;
	mp->pgoff = pgoff;
	mp->start = t;
	mp->file = file_get(s, path);
	if (!mp->file) {
		memmove(&p->maps[i], &p->maps[i + 1], (p->nmaps - i) * sizeof(*p->maps));
		return -ENOMEM;
	}
	p->nmaps++;
	return 0;
}

/* A live process's executable mappings, as made before the recording (time 0). */
static void read_proc_maps(struct uevent_symbolizer *s, struct proc *p)
{
	char path[64], line[4096];
	FILE *f;

	p->proc_maps_read = 1;
	snprintf(path, sizeof(path), "/proc/%u/maps", p->pid);
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long a, b, off;
		char perms[8];
		int n = 0;

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &a, &b, perms, &off, &n) < 4 ||
		    perms[2] != 'x')
			continue;
		line[strcspn(line, "\n")] = 0;
		if (add_map(s, p, a, b - a, off, n && line[n] ? line + n : "//anon", 0) < 0)
			break;
	}
	fclose(f);
}

static int is_anon(const char *path)
{
	return !strncmp(path, "//anon", 6) || !strncmp(path, "[anon", 5) ||
	       !strncmp(path, "/memfd:", 7) || !strncmp(path, "[heap]", 6) ||
	       !strncmp(path, "[stack]", 7) || path[0] != '/';
}

static int lookup(struct uevent_symbolizer *s, uint32_t pid, uint64_t addr, uint64_t time,
		  struct uevent_symbol *out)
{
	const struct code *c;
	const struct map *m = NULL;
	struct proc *p, *self;
	uint64_t t = time == TIME_MAX ? TIME_MAX - 1 : time;	/* live code ends at TIME_MAX */
	int depth;

	if (!s || !out || out->sz < sizeof(*out))
		return _uevent_err(EINVAL);
	memset(out, 0, sizeof(*out));
	out->sz = sizeof(*out);
	if (addr >= 0xffff800000000000ull) {		/* x86-64 / arm64 kernel half */
		c = kern_find(s, addr, t);
		if (!c)
			return _uevent_err(ENOENT);
		set_code(out, c, addr);
		return 0;
	}
	self = proc_get(s, pid, !!(s->o.flags & UEVENT_SYMBOLIZER_PROC_MAPS));
	/* this process, then the ones it was forked from, as they were at the fork */
	for (p = self, depth = 0; p && depth < 64; depth++) {
		c = code_find(&p->jit, addr, t);
		if (!c)
			c = code_find(&p->jd, addr, t);
		if (c) {
			set_code(out, c, addr);
			return 0;
		}
		m = map_find(p, addr, t);
		if (!m && (s->o.flags & UEVENT_SYMBOLIZER_PROC_MAPS) && !p->proc_maps_read) {
			read_proc_maps(s, p);
			m = map_find(p, addr, t);
		}
		if (m || p->ppid == p->pid)
			break;
		if (p->fork_time && p->fork_time < t)
			t = p->fork_time;
		p = proc_get(s, p->ppid, 0);
	}
	if (m && !is_anon(m->file->path)) {
		out->dso = m->file->path;
		out->offset = addr - m->addr + m->pgoff;
		return file_lookup(s, m->file, out->offset, addr, out) < 0 ?
			_uevent_err(ENOENT) : 0;
	}
	/* anonymous code: a JIT that wrote only a perf map */
	p = self ? self : proc_get(s, pid, 1);
	if (p && !p->pmap_read)
		read_perf_map(s, p);
	c = p ? code_find(&p->pmap, addr, 0) : NULL;
	if (c) {
		set_code(out, c, addr);
		return 0;
	}
	if (m) {
		out->dso = m->file->path;
		out->offset = addr - m->addr + m->pgoff;
	}
	return _uevent_err(ENOENT);
}

UEVENT_EXPORT int uevent_symbolizer__lookup(struct uevent_symbolizer *s, uint32_t pid,
					    uint64_t addr, uint64_t time,
					    struct uevent_symbol *out)
{
	int ret = lookup(s, pid, addr, time, out);

	if (ret == 0 && !(s->o.flags & UEVENT_SYMBOLIZER_NO_DEMANGLE))
		out->name = _uevent_demangled(&s->dem, out->name);
	return ret;
}

UEVENT_EXPORT const char *uevent_symbolizer__comm(struct uevent_symbolizer *s, uint32_t tid,
						  uint64_t time)
{
	struct thread *th;
	int depth;

	if (!s)
		return NULL;
	for (th = thread_get(s, tid, 0), depth = 0; th && depth < 64; depth++) {
		const char *best = NULL;
		size_t i;

		for (i = 0; i < th->ncomms; i++)
			if (th->comms[i].time <= time)
				best = th->comms[i].name;
		if (!best && th->ncomms && !th->fork_time)
			best = th->comms[0].name;	/* named before the recording began */
		if (best)
			return best;
		if (th->ptid == th->tid)
			break;
		if (th->fork_time && th->fork_time < time)
			time = th->fork_time;
		th = thread_get(s, th->ptid, 0);
	}
	return NULL;
}

UEVENT_EXPORT void uevent_symbolizer__free(struct uevent_symbolizer *s)
{
	size_t i, k;

	if (!s)
		return;
	for (i = 0; i < s->nprocs; i++) {
		free(s->procs[i]->maps);
		code_free(&s->procs[i]->jit);
		code_free(&s->procs[i]->jd);
		code_free(&s->procs[i]->pmap);
		free(s->procs[i]);
	}
	for (i = 0; i < s->nthreads; i++) {
		for (k = 0; k < s->threads[i]->ncomms; k++)
			free(s->threads[i]->comms[k].name);
		free(s->threads[i]->comms);
		free(s->threads[i]);
	}
	for (i = 0; i < s->nfiles; i++) {
		file_close(s->files[i]);
		free(s->files[i]->path);
		free(s->files[i]);
	}
	for (i = 0; i < s->nstrs; i++)
		free(s->strs[i]);
	for (i = 0; i < s->njitdumps; i++)
		free(s->jitdumps[i]);
	_uevent_demangler_free(s->dem);
	code_free(&s->kern);
	code_free(&s->ksym);
	free(s->procs);
	free(s->threads);
	free(s->files);
	free(s->strs);
	free(s->jitdumps);
	free((char *)s->o.debug_dir);
	free((char *)s->o.kallsyms);
	free((char *)s->o.perf_map_dir);
	free((char *)s->o.root);
	free(s);
}
