/* itt-chain.c - a second ITT collector for inject/itt-check: counts each call it gets
 * through UEVENT_ITT_CHAIN, checks that its own handles come back to it, and writes the
 * counts to $CHAIN_COUNTS at exit. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chain-count.h"

#include "itt.h"

typedef struct itt_domain D;
typedef struct itt_string_handle S;
typedef struct itt_id I;

#define CALLS(X) X(domain_create) X(string_handle_create) X(thread_set_name) X(task_begin) \
	X(task_begin_fn) X(task_end) X(task_begin_overlapped) X(task_end_overlapped) \
	X(frame_begin_v3) X(frame_end_v3) X(marker) X(counter_create) X(counter_set_value) \
	X(counter_inc) X(counter_inc_delta) X(counter_dec) X(counter_inc_v3) X(metadata_add) \
	X(sync_create)

#define X(n) N_##n,
enum { CALLS(X) N_mismatch, N };
#undef X
#define X(n) #n,
static const char *const names[N] = { CALLS(X) "mismatch" };
#undef X
static unsigned long count[N];
static D dom = { 1, "chained", NULL, 0, NULL, NULL };
static S str = { "chained", NULL, 0, NULL, NULL };
static struct itt_counter_info ctr;

/* Its own counter, or one a static part made itself before collectors loaded. */
#define CTR(c) do { if ((c) != &ctr && !(c && ((struct itt_counter_info *)(c))->nameA)) \
	COUNT(mismatch); } while (0)

#define COUNT(n) __atomic_add_fetch(&count[N_##n], 1, __ATOMIC_RELAXED)
#define MINE(h, obj) do { if ((h) != (obj)) COUNT(mismatch); } while (0)

static D *domain_create(const char *n) { (void)n; COUNT(domain_create); return &dom; }
static S *string_handle_create(const char *n) { (void)n; COUNT(string_handle_create); return &str; }
static void thread_set_name(const char *n) { (void)n; COUNT(thread_set_name); }
static void task_begin(const D *d, I i, I p, S *s)
{ (void)i; (void)p; MINE(d, &dom); MINE(s, &str); COUNT(task_begin); }
static void task_begin_fn(const D *d, I i, I p, void *f)
{ (void)i; (void)p; (void)f; MINE(d, &dom); COUNT(task_begin_fn); }
static void task_end(const D *d) { MINE(d, &dom); COUNT(task_end); }
static void task_begin_overlapped(const D *d, I i, I p, S *s)
{ (void)i; (void)p; MINE(d, &dom); MINE(s, &str); COUNT(task_begin_overlapped); }
static void task_end_overlapped(const D *d, I i) { (void)i; MINE(d, &dom); COUNT(task_end_overlapped); }
static void frame_begin_v3(const D *d, I *i) { (void)i; MINE(d, &dom); COUNT(frame_begin_v3); }
static void frame_end_v3(const D *d, I *i) { (void)i; MINE(d, &dom); COUNT(frame_end_v3); }
static void marker(const D *d, I i, S *s, int sc)
{ (void)i; (void)sc; MINE(d, &dom); MINE(s, &str); COUNT(marker); }
static void *counter_create(const char *n, const char *d) { (void)n; (void)d; COUNT(counter_create); return &ctr; }
static void counter_set_value(void *c, void *v) { (void)v; CTR(c); COUNT(counter_set_value); }
static void counter_inc(void *c) { CTR(c); COUNT(counter_inc); }
static void counter_inc_delta(void *c, unsigned long long v) { (void)v; CTR(c); COUNT(counter_inc_delta); }
static void counter_dec(void *c) { CTR(c); COUNT(counter_dec); }
static void counter_inc_v3(const D *d, S *s) { MINE(d, &dom); MINE(s, &str); COUNT(counter_inc_v3); }
static void metadata_add(const D *d, I i, S *k, int t, size_t n, void *v)
{ (void)i; (void)t; (void)n; (void)v; MINE(d, &dom); MINE(k, &str); COUNT(metadata_add); }
static void sync_create(void *a, const char *t, const char *n, int f)
{ (void)a; (void)t; (void)n; (void)f; COUNT(sync_create); }

static void report(void)
{
	chain_report(names, count, N);
}

void __itt_api_init(struct itt_global *g, int groups);

/* As Intel's reference collector: each slot by name, the null function where we lack one. */
void __itt_api_init(struct itt_global *g, int groups)
{
	static const struct { const char *name; void *fn; } fns[] = {
#define X(n) { "__itt_" #n, (void *)n },
		CALLS(X)
#undef X
	};
	struct itt_api_info *a;
	size_t i;

	(void)groups;
	for (a = g->api_list_ptr; a->name; a++) {
		*a->func_ptr = a->null_func;
		for (i = 0; i < sizeof(fns) / sizeof(fns[0]); i++)
			if (!strcmp(a->name, fns[i].name))
				*a->func_ptr = fns[i].fn;
	}
	atexit(report);
}
