/* itt-client.c - two ITT static parts, as two modules built with ittnotify have, loading
 * the collector named by INTEL_LIBITTNOTIFY64 and calling it as ittnotify.h's macros do,
 * for inject/itt-check: tasks, overlapped tasks, frames, markers, counters, threads;
 * "late" waits for a session between calls. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "itt.h"

#define THREADS	4
#define ROUNDS	50

typedef struct itt_domain D;
typedef struct itt_string_handle S;
typedef struct itt_id I;

/* One static part: its global, its API list, the slots its calls go through. */
struct part {
	struct itt_global g;
	struct itt_api_info list[32];
	D *(*domain_create)(const char *);
	S *(*string_handle_create)(const char *);
	void (*thread_set_name)(const char *);
	void (*task_begin)(const D *, I, I, S *);
	void (*task_begin_fn)(const D *, I, I, void *);
	void (*task_end)(const D *);
	void (*task_begin_overlapped)(const D *, I, I, S *);
	void (*task_end_overlapped)(const D *, I);
	void (*frame_begin_v3)(const D *, I *);
	void (*frame_end_v3)(const D *, I *);
	void (*marker)(const D *, I, S *, int);
	void *(*counter_create)(const char *, const char *);
	void (*counter_set_value)(void *, void *);
	void (*counter_inc)(void *);
	void (*counter_inc_delta)(void *, unsigned long long);
	void (*counter_dec)(void *);
	void (*counter_inc_v3)(const D *, S *);
	void (*metadata_add)(const D *, I, S *, int, size_t, void *);
	void (*sync_create)(void *, const char *, const char *, int);
};

static void null_sync_create(void *a, const char *t, const char *n, int f)
{
	(void)a; (void)t; (void)n; (void)f;
}

#define API(p, n, null) (struct itt_api_info){ "__itt_" #n, (void **)(void *)&(p)->n, NULL, \
					       (void *)(null), ITT_GROUP_ALL }

/* What ittnotify_static.c's init does with a collector that has __itt_api_init. */
static int part_init(struct part *p)
{
	const char *path = getenv("INTEL_LIBITTNOTIFY64");
	itt_api_init_fn *init;
	int i = 0;

	memset(p, 0, sizeof(*p));
	memcpy(p->g.magic, "\xED\xAB\xAB\xEC\x0D\xEE\xDA\x30", 8);
	p->g.version_major = 3;
	pthread_mutex_init(&p->g.mutex, NULL);
	p->g.mutex_initialized = 1;
	p->list[i++] = API(p, domain_create, NULL);
	p->list[i++] = API(p, string_handle_create, NULL);
	p->list[i++] = API(p, thread_set_name, NULL);
	p->list[i++] = API(p, task_begin, NULL);
	p->list[i++] = API(p, task_begin_fn, NULL);
	p->list[i++] = API(p, task_end, NULL);
	p->list[i++] = API(p, task_begin_overlapped, NULL);
	p->list[i++] = API(p, task_end_overlapped, NULL);
	p->list[i++] = API(p, frame_begin_v3, NULL);
	p->list[i++] = API(p, frame_end_v3, NULL);
	p->list[i++] = API(p, marker, NULL);
	p->list[i++] = API(p, counter_create, NULL);
	p->list[i++] = API(p, counter_set_value, NULL);
	p->list[i++] = API(p, counter_inc, NULL);
	p->list[i++] = API(p, counter_inc_delta, NULL);
	p->list[i++] = API(p, counter_dec, NULL);
	p->list[i++] = API(p, counter_inc_v3, NULL);
	p->list[i++] = API(p, metadata_add, NULL);
	p->list[i++] = API(p, sync_create, null_sync_create);
	p->g.api_list_ptr = p->list;
	if (!path || !(p->g.lib = dlopen(path, RTLD_LAZY)) ||
	    !(init = (itt_api_init_fn *)dlsym(p->g.lib, "__itt_api_init"))) {
		fprintf(stderr, "itt-client: no collector with __itt_api_init in %s\n",
			path ? path : "(INTEL_LIBITTNOTIFY64 unset)");
		return -1;
	}
	init(&p->g, ITT_GROUP_ALL);
	p->g.api_initialized = 1;
	return 0;
}

/* ittnotify.h's macros: nothing without a domain that is on or without a function. */
#define CALL(p, n, d, ...) ((d) && (d)->flags && (p)->n ? (p)->n((d), __VA_ARGS__) : (void)0)
#define CALL0(p, n, d) ((d) && (d)->flags && (p)->n ? (p)->n(d) : (void)0)

static const I null_id;
static struct part a, b;
static D *dom;
static S *s_work, *s_step;
static int failed;
static struct itt_counter_info early_ctr;

#define expect(cond) do { if (!(cond)) { fprintf(stderr, "itt-client: %s:%d: %s\n", \
	__FILE__, __LINE__, #cond); failed = 1; } } while (0)

static void *worker(void *arg)
{
	int i;

	(void)arg;
	for (i = 0; i < ROUNDS; i++) {
		CALL(&a, task_begin, dom, null_id, null_id, s_work);
		CALL(&a, task_begin, dom, null_id, null_id, s_step);
		CALL0(&a, task_end, dom);
		CALL0(&a, task_end, dom);
	}
	return NULL;
}

static void *ender(void *arg)
{
	I id1 = { 1, 0, 0 };

	(void)arg;
	CALL(&a, task_end_overlapped, dom, id1);	/* begun on the main thread */
	return NULL;
}

static int all(void)
{
	I id1 = { 1, 0, 0 }, id2 = { 2, 0, 0 };
	unsigned long long seven = 7, meta[2] = { 3, 4 };
	pthread_t th[THREADS], t;
	D *dom_b;
	void *c;
	int i;

	if (part_init(&a) < 0 || part_init(&b) < 0)
		return 1;
	/* a call our collector lacks: the static part's own, or a chained collector's */
	expect(a.sync_create != NULL);
	a.sync_create(&a, "mutex", "lock", 0);
	dom = a.domain_create("tbb");
	expect(dom && dom->flags);
	s_work = a.string_handle_create("work");
	s_step = a.string_handle_create("step");
	a.thread_set_name("itt main");

	CALL(&a, task_begin, dom, null_id, null_id, s_work);
	CALL(&a, task_begin, dom, null_id, null_id, s_step);
	CALL0(&a, task_end, dom);
	CALL0(&a, task_end, dom);
	CALL(&a, task_begin_fn, dom, null_id, null_id, (void *)qsort);
	CALL0(&a, task_end, dom);

	CALL(&a, task_begin_overlapped, dom, id1, null_id, a.string_handle_create("olap"));
	CALL(&a, task_begin_overlapped, dom, id2, null_id, a.string_handle_create("olap"));
	pthread_create(&t, NULL, ender, NULL);
	pthread_join(t, NULL);
	CALL(&a, task_end_overlapped, dom, id2);

	for (i = 0; i < 3; i++) {
		CALL(&a, frame_begin_v3, dom, NULL);
		CALL(&a, frame_end_v3, dom, NULL);
	}
	CALL(&a, marker, dom, null_id, a.string_handle_create("tick"), 1);

	c = a.counter_create("depth", "tbb");
	a.counter_set_value(c, &seven);
	a.counter_inc(c);
	a.counter_inc_delta(c, 5);
	a.counter_dec(c);
	CALL(&a, counter_inc_v3, dom, a.string_handle_create("queue"));
	CALL(&a, counter_inc_v3, dom, a.string_handle_create("queue"));
	CALL(&a, metadata_add, dom, null_id, a.string_handle_create("sizes"), ITT_METADATA_U64, 2,
	     meta);

	for (i = 0; i < THREADS; i++)
		pthread_create(&th[i], NULL, worker, NULL);
	for (i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);

	/* a counter the static part made itself, before its collector loaded */
	early_ctr.nameA = "early";
	early_ctr.domainA = "tbb";
	early_ctr.type = ITT_METADATA_U64;
	a.counter_inc_delta(&early_ctr, 3);
	a.counter_inc(&early_ctr);

	/* the second static part: one domain per name across both */
	dom_b = b.domain_create("tbb");
	expect(dom_b == dom);
	CALL(&b, task_begin, dom_b, null_id, null_id, b.string_handle_create("module task"));
	CALL0(&b, task_end, dom_b);
	return failed;
}

/* Calls before a session, a byte on stdout, a byte on stdin when it runs, calls after. */
static int late(void)
{
	char ch;

	if (part_init(&a) < 0)
		return 1;
	dom = a.domain_create("tbb");
	CALL(&a, task_begin, dom, null_id, null_id, a.string_handle_create("early outer"));
	CALL(&a, marker, dom, null_id, a.string_handle_create("early mark"), 1);
	if (write(1, "1", 1) != 1 || read(0, &ch, 1) != 1)
		return 1;
	CALL(&a, marker, dom, null_id, a.string_handle_create("late mark"), 1);
	CALL(&a, task_begin, dom, null_id, null_id, a.string_handle_create("late range"));
	CALL0(&a, task_end, dom);
	CALL0(&a, task_end, dom);	/* "early outer": begun unrecorded, ends unrecorded */
	return failed;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "all"))
		return all();
	if (argc == 2 && !strcmp(argv[1], "late"))
		return late();
	fprintf(stderr, "usage: itt-client all | late\n");
	return 2;
}
