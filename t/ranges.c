/* ranges.c - nested ranges on two named threads, async ranges that cross threads, a
 * counter and marks: what `uevent export --chrome` must turn into a valid Trace Event
 * file (t/export.test). "unbalanced" also ends a range twice and one never begun. */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "uevent.h"

static uint64_t async_id;

static void *worker(void *arg)
{
	uint64_t outer, inner;

	(void)arg;
	pthread_setname_np(pthread_self(), "rworker");
	usleep(20000);		/* the rename's COMM record lands before the ranges */
	outer = uevent_range_begin("work");
	inner = uevent_range_begin("work.step");
	uevent_counter_set("queue", 3);
	uevent_range_end(inner);
	uevent_async_end(async_id);	/* begun on the main thread */
	uevent_range_end(outer);
	return NULL;
}

int main(int argc, char **argv)
{
	int unbalanced = argc > 1 && !strcmp(argv[1], "unbalanced");
	uint64_t a, b, c;
	pthread_t t;

	pthread_setname_np(pthread_self(), "rmain");
	usleep(20000);
	a = uevent_range_begin("main");
	async_id = uevent_async_begin("request");
	b = uevent_range_begin("main.parse");
	uevent_mark("parsing");
	c = uevent_range_begin("main.parse.token");
	if (unbalanced) {
		/* the outer one ends first: the inner two are left open by the program */
		uevent_range_end(b);
		uevent_range_end(b);		/* twice */
		uevent_range_end(0x7777);	/* never begun */
	} else {
		uevent_range_end(c);
		uevent_range_end(b);
	}
	pthread_create(&t, NULL, worker, NULL);
	pthread_join(t, NULL);
	uevent_counter_set("queue", 0);
	uevent_range_end(a);
	return 0;
}
