/* otel-child.c - a process that publishes OTEP 4947/4719 contexts for t/otel-reader.py to read. */
#include "config.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "uevent.h"

/*
 * otel-child context: the main thread in a span with two attributes, a thread that
 *                     never sets one, a thread that set one and cleared it; the process
 *                     context published; SIGUSR1 appends a key (an update).
 * otel-child none:    links libuevent, sets and publishes nothing.
 * otel-child hammer:  the main thread alternates two contexts, a short spin between.
 * otel-child spans:   the main thread burns 100 ms of CPU in span 1 of trace A, then
 *                     100 ms in span 2, clears it, and exits (for t/export-spans.test).
 * Each prints "tid ROLE TID TLSVAR" per thread (TLSVAR: &otel_thread_ctx_v1 there, for
 * the reader to check what it resolved through the thread pointer), then "ready".
 */
extern __thread struct uevent_thread_context_record *otel_thread_ctx_v1;

static const uint8_t trace[16] = { 0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6,
				   0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36 };
static const uint8_t span[8] = { 0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7 };
static pthread_barrier_t ready;

/* ms of this thread's CPU time: so many samples whatever else the host runs */
static void burn_ms(long ms)
{
	struct timespec t0, t;
	volatile unsigned long x = 0;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	do {
		for (int k = 0; k < 1000; k++)
			x += (unsigned long)k;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000L + (t.tv_nsec - t0.tv_nsec) / 1000000L < ms);
}

static void say(const char *role)
{
	printf("tid %s %ld %p\n", role, (long)syscall(SYS_gettid), (void *)&otel_thread_ctx_v1);
}

static void *bare(void *arg)
{
	say("bare");
	pthread_barrier_wait(&ready);
	for (;;)
		pause();
	return arg;
}

static void *cleared(void *arg)
{
	uevent_thread_context_set(trace, span, 1);
	uevent_thread_context_clear();
	say("cleared");
	pthread_barrier_wait(&ready);
	for (;;)
		pause();
	return arg;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "context";
	static const char *const keys[] = { "http.route", "enduser.id" };
	static const char *const more[] = { "tenant" };
	pthread_t th[2];
	sigset_t usr1;
	int sig;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(mode, "spans")) {
		static const uint8_t a[16] = { [0 ... 15] = 0xa1 };
		static const uint8_t s1[8] = { [0 ... 7] = 0x51 }, s2[8] = { [0 ... 7] = 0x52 };

		uevent_thread_context_set(a, s1, 1);
		burn_ms(100);
		uevent_thread_context_set(a, s2, 1);
		burn_ms(100);
		uevent_thread_context_clear();
		return 0;
	}
	if (!strcmp(mode, "hammer")) {
		static const uint8_t id[2][16] = {
			{ 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11,
			  0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11 },
			{ 0x22, 0x22, 0x22, 0x22, 0x22, 0x22, 0x22, 0x22,
			  0x22, 0x22, 0x22, 0x22, 0x22, 0x22, 0x22, 0x22 } };
		unsigned long n;

		uevent_thread_context_set(id[0], id[0], 0x11);
		say("main");
		printf("ready\n");
		/*
		 * A short spin after each set keeps the record valid for part of the
		 * loop: without it the valid window is a few instructions and a reader's
		 * stops can all land inside set() (0 valid of 400 once, under load).
		 */
		for (n = 0;; n++) {
			volatile unsigned spin;

			uevent_thread_context_set(id[n & 1], id[n & 1], id[n & 1][0]);
			for (spin = 0; spin < 4; spin++)
				;
		}
	}
	if (!strcmp(mode, "none")) {
		say("main");
		printf("ready\n");
		for (;;)
			pause();
	}
	struct uevent_process_context_opts o = {
		.sz = sizeof(o), .service_name = "otel-child",
		.service_instance_id = "5c6a2e1f-8d4b-4c3a-9e7f-0a1b2c3d4e5f",
		.attr_keys = keys, .nr_attr_keys = 2 };
	if (uevent_process_context_publish(&o) < 0) {
		perror("uevent_process_context_publish");
		return 1;
	}
	/* SIGUSR1 (append a key) is taken by sigwait() in the main thread alone. */
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &usr1, NULL);
	pthread_barrier_init(&ready, NULL, 3);
	pthread_create(&th[0], NULL, bare, NULL);
	pthread_create(&th[1], NULL, cleared, NULL);
	uevent_thread_context_set(trace, span, 1);
	uevent_thread_context_set_attr(0, "/api/v1/orders", 14);
	uevent_thread_context_set_attr(1, "alice", 5);
	uevent_thread_context_set_attr(0, "/api/v2/orders", 14);
	say("main");
	pthread_barrier_wait(&ready);
	printf("ready\n");
	for (;;)
		if (sigwait(&usr1, &sig) == 0)
			printf("added %d\n", uevent_process_context_add_keys(more, 1));
}
