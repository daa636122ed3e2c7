/* itt.c - libuevent-itt.so: an Intel ITT collector; ITT tasks, frames, markers and counters
 * become uevents. */
#define _GNU_SOURCE
#include "config.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "uevent.h"
#include "inject.h"
#include "itt.h"

#define EXPORT __attribute__((visibility("default")))

/*
 * ITT's static part (in every module built with ittnotify) loads $INTEL_LIBITTNOTIFY64 on
 * its first call and, as Intel's collector protocol has it, hands our __itt_api_init its
 * global: we write our functions into the slots its API list names, by name, and leave
 * the static part's null function in the rest. Domains and string handles are ours, one
 * per name across all modules, so calls from all of them are one stream.
 */

#define ITT_APIS(X) \
	X(domain_create) X(string_handle_create) X(task_begin) X(task_begin_fn) X(task_end) \
	X(task_begin_overlapped) X(task_end_overlapped) X(frame_begin_v3) X(frame_end_v3) \
	X(frame_submit_v3) X(marker) X(counter_create) X(counter_create_typed) \
	X(counter_create_v3) X(counter_set_value) X(counter_inc) X(counter_inc_delta) \
	X(counter_dec) X(counter_dec_delta) X(counter_destroy) X(counter_inc_v3) \
	X(counter_inc_delta_v3) X(counter_dec_v3) X(counter_dec_delta_v3) X(thread_set_name) \
	X(metadata_add) X(id_create) X(id_destroy)

#define X(n) API_##n,
enum { ITT_APIS(X) NAPI };
#undef X

/* ---- the chained collector ------------------------------------------------------------ */

/*
 * UEVENT_ITT_CHAIN names a second collector (VTune's, say). It gets a global of ours
 * whose API list names what the first module's did, with slots we own; our functions
 * call its ones after theirs, with its own handles, and the calls we do not handle go
 * straight to it.
 */
static void *no_slot;
static void **chain_of[NAPI];
static struct itt_global chain_global;
static struct itt_api_info *chain_list;
static size_t chain_n;

#define CHAIN(n, ...) do { \
	__typeof__(&n) f_ = (__typeof__(&n))*chain_of[API_##n]; \
	if (f_) f_(__VA_ARGS__); \
} while (0)
#define CHAIN_RET(n, dflt, ...) \
	(*chain_of[API_##n] ? ((__typeof__(&n))*chain_of[API_##n])(__VA_ARGS__) : (dflt))

static const char *const api_name[NAPI] = {
#define X(n) "__itt_" #n,
	ITT_APIS(X)
#undef X
};

EXPORT void __itt_api_init(struct itt_global *g, int groups);

static void chain_load(const struct itt_global *first)
{
	const char *path = getenv("UEVENT_ITT_CHAIN");
	itt_api_init_fn *init;
	size_t n = 0, i, k;
	void **slots;
	void *h;

	for (k = 0; k < NAPI; k++)
		chain_of[k] = &no_slot;
	if (!path || !*path)
		return;
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "libuevent-itt: UEVENT_ITT_CHAIN: %s; ITT calls reach uevents only\n",
			dlerror());
		return;
	}
	init = (itt_api_init_fn *)dlsym(h, "__itt_api_init");
	if (init == __itt_api_init)
		return;		/* ourselves again */
	while (first->api_list_ptr && first->api_list_ptr[n].name)
		n++;
	chain_list = calloc(n + 1, sizeof(*chain_list));
	slots = calloc(n + 1, sizeof(*slots));
	if (!chain_list || !slots)
		return;
	for (i = 0; i < n; i++) {
		chain_list[i].name = first->api_list_ptr[i].name;
		chain_list[i].func_ptr = &slots[i];
		chain_list[i].group = first->api_list_ptr[i].group;
		for (k = 0; k < NAPI; k++)
			if (!strcmp(chain_list[i].name, api_name[k]))
				chain_of[k] = &slots[i];
	}
	chain_n = n;
	memcpy(&chain_global, first, offsetof(struct itt_global, mutex));
	pthread_mutex_init(&chain_global.mutex, NULL);
	chain_global.mutex_initialized = 1;
	chain_global.lib = h;
	chain_global.api_list_ptr = chain_list;
	if (init) {
		init(&chain_global, ITT_GROUP_ALL);
	} else {
		/* an older collector: it exports the functions by name */
		for (i = 0; i < n; i++)
			slots[i] = dlsym(h, chain_list[i].name);
	}
}

/* The chained collector's function for a name we do not handle, or NULL. */
static void *chain_fn(const char *name)
{
	size_t i;

	for (i = 0; i < chain_n; i++)
		if (!strcmp(chain_list[i].name, name))
			return *chain_list[i].func_ptr;
	return NULL;
}

/* ---- domains and string handles: one per name ------------------------------------------ */

#define MAGIC 0x75657674	/* "uevt" in extra1: a handle we made */

struct dom {
	struct itt_domain	pub;
	struct itt_domain	*theirs;
};

struct str {
	struct itt_string_handle pub;
	struct itt_string_handle *theirs;
	long long		value;		/* the counter __itt_counter_inc_v3 names */
};

static struct dom *doms;
static struct str *strs;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static struct itt_domain *their_d(const struct itt_domain *d)
{
	return d && d->extra1 == MAGIC ? ((const struct dom *)d)->theirs : (struct itt_domain *)d;
}

static struct itt_string_handle *their_s(const struct itt_string_handle *s)
{
	return s && s->extra1 == MAGIC ? ((const struct str *)s)->theirs : (struct itt_string_handle *)s;
}

/* "domain:name", as ranges, marks and counters are named. */
static const char *qualify(const struct itt_domain *d, const char *name, char *buf, size_t cap)
{
	snprintf(buf, cap, "%s:%s", d && d->nameA ? d->nameA : "", name ? name : "");
	return buf;
}

static struct itt_domain *domain_create(const char *name)
{
	struct dom *d;

	if (!name)
		return NULL;
	pthread_mutex_lock(&lock);
	for (d = doms; d; d = (struct dom *)d->pub.next)
		if (!strcmp(d->pub.nameA, name))
			break;
	if (!d && (d = calloc(1, sizeof(*d))) && (d->pub.nameA = strdup(name))) {
		d->pub.flags = 1;
		d->pub.extra1 = MAGIC;
		d->theirs = CHAIN_RET(domain_create, NULL, name);
		d->pub.next = doms ? &doms->pub : NULL;
		doms = d;
		if (UEVENT_ENABLED())
			_uevent_inject_meta("itt domain name=%s", name);
	}
	pthread_mutex_unlock(&lock);
	return d ? &d->pub : NULL;
}

static struct itt_string_handle *string_handle_create(const char *name)
{
	struct str *s;

	if (!name)
		return NULL;
	pthread_mutex_lock(&lock);
	for (s = strs; s; s = (struct str *)s->pub.next)
		if (!strcmp(s->pub.strA, name))
			break;
	if (!s && (s = calloc(1, sizeof(*s))) && (s->pub.strA = strdup(name))) {
		s->pub.extra1 = MAGIC;
		s->theirs = CHAIN_RET(string_handle_create, NULL, name);
		s->pub.next = strs ? &strs->pub : NULL;
		strs = s;
	}
	pthread_mutex_unlock(&lock);
	return s ? &s->pub : NULL;
}

/* ---- tasks: nested per thread -------------------------------------------------------------- */

static void task_begin(const struct itt_domain *d, struct itt_id id, struct itt_id parent,
		       struct itt_string_handle *name)
{
	char buf[INJECT_NAME_MAX];
	uint64_t u;

	_uevent_inject_push(d, UEVENT_ENABLED() && name ? qualify(d, name->strA, buf, sizeof(buf))
							: NULL, &u);
	CHAIN(task_begin, their_d(d), id, parent, their_s(name));
}

/* A task named by its function: the symbol dladdr finds for it, else its address. */
static void task_begin_fn(const struct itt_domain *d, struct itt_id id, struct itt_id parent,
			  void *fn)
{
	char buf[INJECT_NAME_MAX], sym[64];
	const char *name = NULL;
	Dl_info info;
	uint64_t u;

	if (UEVENT_ENABLED()) {
		if (dladdr(fn, &info) && info.dli_sname) {
			name = info.dli_sname;
		} else {
			snprintf(sym, sizeof(sym), "%p", fn);
			name = sym;
		}
		name = qualify(d, name, buf, sizeof(buf));
	}
	_uevent_inject_push(d, name, &u);
	CHAIN(task_begin_fn, their_d(d), id, parent, fn);
}

static void task_end(const struct itt_domain *d)
{
	_uevent_inject_pop(d);
	CHAIN(task_end, their_d(d));
}

/* ---- overlapped tasks and frames: async ranges by (domain, id) ----------------------------- */

struct open {
	struct open	*next;
	const void	*key;
	struct itt_id	id;
	uint64_t	uid;
};

static struct open *opens;
static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER;

static void open_put(const void *key, const struct itt_id *id, uint64_t uid)
{
	struct open *o = malloc(sizeof(*o));

	if (!o) {
		uevent_async_end(uid);	/* cannot be found again: end it now */
		return;
	}
	o->key = key;
	o->id = id ? *id : (struct itt_id){ 0, 0, 0 };
	o->uid = uid;
	pthread_mutex_lock(&open_lock);
	o->next = opens;
	opens = o;
	pthread_mutex_unlock(&open_lock);
}

static uint64_t open_take(const void *key, const struct itt_id *id)
{
	struct itt_id k = id ? *id : (struct itt_id){ 0, 0, 0 };
	struct open **p, *o;
	uint64_t uid = 0;

	pthread_mutex_lock(&open_lock);
	for (p = &opens; (o = *p); p = &o->next)
		if (o->key == key && o->id.d1 == k.d1 && o->id.d2 == k.d2 && o->id.d3 == k.d3) {
			*p = o->next;
			uid = o->uid;
			free(o);
			break;
		}
	pthread_mutex_unlock(&open_lock);
	return uid;
}

static void async_begin(const void *key, const struct itt_domain *d, const struct itt_id *id,
			const char *name)
{
	char buf[INJECT_NAME_MAX];
	uint64_t uid;

	if (!UEVENT_ENABLED() || !name)
		return;
	uid = uevent_async_begin(qualify(d, name, buf, sizeof(buf)));
	if (uid)
		open_put(key, id, uid);
}

static void async_end(const void *key, const struct itt_id *id)
{
	uint64_t uid;

	/* nothing is kept for what began unrecorded: no look-up while nobody records */
	if (!__atomic_load_n(&opens, __ATOMIC_RELAXED))
		return;
	uid = open_take(key, id);
	if (uid)
		uevent_async_end(uid);
}

static void task_begin_overlapped(const struct itt_domain *d, struct itt_id id,
				  struct itt_id parent, struct itt_string_handle *name)
{
	async_begin(d, d, &id, name ? name->strA : NULL);
	CHAIN(task_begin_overlapped, their_d(d), id, parent, their_s(name));
}

static void task_end_overlapped(const struct itt_domain *d, struct itt_id id)
{
	async_end(d, &id);
	CHAIN(task_end_overlapped, their_d(d), id);
}

/* A frame is an async range "domain:frame"; its key is the domain's name, not the task's. */
static void frame_begin_v3(const struct itt_domain *d, struct itt_id *id)
{
	if (d)
		async_begin(d->nameA, d, id, "frame");
	CHAIN(frame_begin_v3, their_d(d), id);
}

static void frame_end_v3(const struct itt_domain *d, struct itt_id *id)
{
	if (d)
		async_end(d->nameA, id);
	CHAIN(frame_end_v3, their_d(d), id);
}

/* A frame given after the fact: its times are ITT's clock (__itt_get_timestamp). */
static void frame_submit_v3(const struct itt_domain *d, struct itt_id *id,
			    unsigned long long begin, unsigned long long end)
{
	if (d && UEVENT_ENABLED())
		_uevent_inject_meta("itt frame domain=%s begin=%llu end=%llu", d->nameA, begin, end);
	CHAIN(frame_submit_v3, their_d(d), id, begin, end);
}

static void marker(const struct itt_domain *d, struct itt_id id, struct itt_string_handle *name,
		   int scope)
{
	char buf[INJECT_NAME_MAX];

	if (UEVENT_ENABLED() && name)
		uevent_mark(qualify(d, name->strA, buf, sizeof(buf)));
	CHAIN(marker, their_d(d), id, their_s(name), scope);
}

/* ---- counters -------------------------------------------------------------------------------- */

/*
 * A counter handle starts as the static part's own (ittnotify_config.h's
 * __itt_counter_info_t): it makes one itself when created before the collector loads,
 * as it does domains and string handles. Ours has that layout too, MAGIC in extra1.
 */
struct counter {
	struct itt_counter_info info;	/* info.extra1: MAGIC */
	long long	value;
	void		*theirs;
	struct counter	*next;
	char		name[];		/* "domain:name" */
};

static struct counter *counters;

static struct counter *counter_new(const char *domain, const char *name, int type, void *theirs)
{
	char buf[INJECT_NAME_MAX];
	struct counter *c;
	size_t len;

	if (!name)
		return NULL;
	if (domain && *domain)
		snprintf(buf, sizeof(buf), "%s:%s", domain, name);
	else
		snprintf(buf, sizeof(buf), "%s", name);
	len = strlen(buf);
	c = calloc(1, sizeof(*c) + len + 1);
	if (!c)
		return NULL;
	c->info.type = type;
	c->info.extra1 = MAGIC;
	c->theirs = theirs;
	memcpy(c->name, buf, len + 1);
	c->info.nameA = c->name + (domain && *domain ? strlen(domain) + 1 : 0);
	pthread_mutex_lock(&lock);
	c->next = counters;
	counters = c;
	pthread_mutex_unlock(&lock);
	return c;
}

/* Ours for a handle: itself, or the one of the same name a static part's handle has. */
static struct counter *counter_of(void *h)
{
	const struct itt_counter_info *f = h;
	char buf[INJECT_NAME_MAX];
	struct counter *c;

	if (!f || f->extra1 == MAGIC)
		return h;
	if (!f->nameA)
		return NULL;
	if (f->domainA && *f->domainA)
		snprintf(buf, sizeof(buf), "%s:%s", f->domainA, f->nameA);
	else
		snprintf(buf, sizeof(buf), "%s", f->nameA);
	pthread_mutex_lock(&lock);
	for (c = counters; c; c = c->next)
		if (c->info.type == f->type && !strcmp(c->name, buf))
			break;
	pthread_mutex_unlock(&lock);
	return c ? c : counter_new(f->domainA, f->nameA, f->type, h);
}

static void *their_c(void *c)
{
	return c && ((struct counter *)c)->info.extra1 == MAGIC ? ((struct counter *)c)->theirs : c;
}

static void *counter_create(const char *name, const char *domain)
{
	return counter_new(domain, name, ITT_METADATA_U64,
			   CHAIN_RET(counter_create, NULL, name, domain));
}

static void *counter_create_typed(const char *name, const char *domain, int type)
{
	return counter_new(domain, name, type,
			   CHAIN_RET(counter_create_typed, NULL, name, domain, type));
}

static void *counter_create_v3(const struct itt_domain *d, const char *name, int type)
{
	return counter_new(d ? d->nameA : NULL, name, type,
			   CHAIN_RET(counter_create_v3, NULL, their_d(d), name, type));
}

/* A counter's value in its type; floating ones are cut to integers (uevent counters are). */
static long long value_of(int type, const void *p)
{
	switch (type) {
	case ITT_METADATA_S64: return *(const long long *)p;
	case ITT_METADATA_U32: return *(const unsigned int *)p;
	case ITT_METADATA_S32: return *(const int *)p;
	case ITT_METADATA_U16: return *(const unsigned short *)p;
	case ITT_METADATA_S16: return *(const short *)p;
	case ITT_METADATA_FLOAT: return (long long)*(const float *)p;
	case ITT_METADATA_DOUBLE: return (long long)*(const double *)p;
	default: return (long long)*(const unsigned long long *)p;
	}
}

static void counter_set_value(void *h, void *value)
{
	struct counter *c = counter_of(h);

	if (c && value) {
		long long v = value_of(c->info.type, value);

		__atomic_store_n(&c->value, v, __ATOMIC_RELAXED);
		if (UEVENT_ENABLED())
			uevent_counter_set(c->name, v);
	}
	CHAIN(counter_set_value, their_c(h), value);
}

static void counter_add(const char *name, long long *value, long long delta)
{
	long long v = __atomic_add_fetch(value, delta, __ATOMIC_RELAXED);

	if (UEVENT_ENABLED())
		uevent_counter_set(name, v);
}

static void counter_inc_delta(void *h, unsigned long long delta)
{
	struct counter *c = counter_of(h);

	if (c)
		counter_add(c->name, &c->value, (long long)delta);
	CHAIN(counter_inc_delta, their_c(h), delta);
}

static void counter_dec_delta(void *h, unsigned long long delta)
{
	struct counter *c = counter_of(h);

	if (c)
		counter_add(c->name, &c->value, -(long long)delta);
	CHAIN(counter_dec_delta, their_c(h), delta);
}

static void counter_inc(void *h)
{
	struct counter *c = counter_of(h);

	if (c)
		counter_add(c->name, &c->value, 1);
	CHAIN(counter_inc, their_c(h));
}

static void counter_dec(void *h)
{
	struct counter *c = counter_of(h);

	if (c)
		counter_add(c->name, &c->value, -1);
	CHAIN(counter_dec, their_c(h));
}

/* A destroyed counter stays allocated: a racing call may still be counting on it. */
static void counter_destroy(void *h)
{
	CHAIN(counter_destroy, their_c(h));
}

/* The v3 counters are named by a domain and a string handle: the value lives in ours. */
static void counter_v3(const struct itt_domain *d, struct itt_string_handle *s, long long delta)
{
	char buf[INJECT_NAME_MAX];

	if (s && s->extra1 != MAGIC)	/* a static part's own: ours of its name */
		s = s->strA ? string_handle_create(s->strA) : NULL;
	if (s)
		counter_add(qualify(d, s->strA, buf, sizeof(buf)), &((struct str *)s)->value, delta);
}

static void counter_inc_v3(const struct itt_domain *d, struct itt_string_handle *s)
{
	counter_v3(d, s, 1);
	CHAIN(counter_inc_v3, their_d(d), their_s(s));
}

static void counter_inc_delta_v3(const struct itt_domain *d, struct itt_string_handle *s,
				 unsigned long long delta)
{
	counter_v3(d, s, (long long)delta);
	CHAIN(counter_inc_delta_v3, their_d(d), their_s(s), delta);
}

static void counter_dec_v3(const struct itt_domain *d, struct itt_string_handle *s)
{
	counter_v3(d, s, -1);
	CHAIN(counter_dec_v3, their_d(d), their_s(s));
}

static void counter_dec_delta_v3(const struct itt_domain *d, struct itt_string_handle *s,
				 unsigned long long delta)
{
	counter_v3(d, s, -(long long)delta);
	CHAIN(counter_dec_delta_v3, their_d(d), their_s(s), delta);
}

/* ---- names and metadata ------------------------------------------------------------------- */

static void thread_set_name(const char *name)
{
	if (UEVENT_ENABLED() && name)
		_uevent_inject_meta("itt thread tid=%ld name=%s", (long)syscall(SYS_gettid), name);
	CHAIN(thread_set_name, name);
}

static void metadata_add(const struct itt_domain *d, struct itt_id id,
			 struct itt_string_handle *key, int type, size_t count, void *data)
{
	static const size_t size[] = { 8, 8, 8, 4, 4, 2, 2, 4, 8 };
	char vals[512] = "";
	size_t i, n = 0;

	if (UEVENT_ENABLED() && key && data && type > 0 && type <= ITT_METADATA_DOUBLE) {
		for (i = 0; i < count && i < 16 && n < sizeof(vals) - 32; i++) {
			const char *p = (const char *)data + i * size[type];

			if (type == ITT_METADATA_FLOAT || type == ITT_METADATA_DOUBLE)
				n += (size_t)snprintf(vals + n, sizeof(vals) - n, "%s%.17g", i ? "," : "",
						      type == ITT_METADATA_FLOAT ? *(const float *)p
										 : *(const double *)p);
			else
				n += (size_t)snprintf(vals + n, sizeof(vals) - n, "%s%lld", i ? "," : "",
						      value_of(type, p));
		}
		_uevent_inject_meta("itt metadata domain=%s key=%s values=%s", d ? d->nameA : "",
				    key->strA, vals);
	}
	CHAIN(metadata_add, their_d(d), id, their_s(key), type, count, data);
}

static void id_create(const struct itt_domain *d, struct itt_id id)
{
	CHAIN(id_create, their_d(d), id);
}

static void id_destroy(const struct itt_domain *d, struct itt_id id)
{
	CHAIN(id_destroy, their_d(d), id);
}

/* ---- the entry point ------------------------------------------------------------------------ */

static void *const ours[NAPI] = {
#define X(n) (void *)n,
	ITT_APIS(X)
#undef X
};

static pthread_once_t once = PTHREAD_ONCE_INIT;
static const struct itt_global *first_global;

static void load_chain(void)
{
	chain_load(first_global);
}

EXPORT void __itt_api_init(struct itt_global *g, int groups)
{
	struct itt_api_info *a;
	size_t k;

	(void)groups;	/* a call outside them is not made: the static part filters */
	if (!g || !g->api_list_ptr)
		return;
	pthread_mutex_lock(&lock);
	if (!first_global)
		first_global = g;
	pthread_mutex_unlock(&lock);
	pthread_once(&once, load_chain);
	for (a = g->api_list_ptr; a->name; a++) {
		void *f = NULL;

		for (k = 0; k < NAPI && !f; k++)
			if (!strcmp(a->name, api_name[k]))
				f = ours[k];
		if (!f)
			f = chain_fn(a->name);
		if (a->func_ptr)
			*a->func_ptr = f ? f : a->null_func;
	}
}
