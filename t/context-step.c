/* context-step.c - the thread context record (OTEP 4947) against a signal handler on
 * the same thread at every instruction of a write: the thread single-steps itself (the
 * x86 trap flag), and at instruction k of the outer call (k = 0, 1, ... each in a fresh
 * thread) its SIGTRAP handler makes the inner call. At every instruction the record is
 * checked as a sampling reader sees it: valid only if whole (ids, flags and attributes
 * all of one context; a restored context with all of its attributes); and a clear made
 * after the outer set published must stick. */
#define _GNU_SOURCE 1
#include "config.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <ucontext.h>

#include "uevent.h"
#include "tap.h"

#if defined(__x86_64__) && defined(REG_EFL)

enum scenario {
	CLEAR_SET,		/* outer clear, inner set */
	SET_CLEAR,		/* outer set, inner clear */
	ATTR_SET,		/* outer set_attr that must compact (record full), inner set */
	FIRST_CLEAR,		/* a thread's first set, inner clear */
	FIRST_SET,		/* a thread's first set, inner set */
	RESTORE_SET,		/* outer restore (ids and attributes), inner set */
};

static const struct uevent_thread_context_record *rec;
static volatile int stepping, step, target, fired, pre_valid, pre_c;
static enum scenario scen;
static long torn, lost;
static char why[200];
static struct uevent_thread_context_record saved;	/* RESTORE_SET's: 0x22, attributes */

/* Valid and not all of one context (0x11, 0x22 or 0x33 in every byte; an attribute
 * may also be the outer set_attr's own, 0x44, whichever context it came to): torn. */
static int is_torn(const struct uevent_thread_context_record *r)
{
	uint8_t c = r->trace_id[0], k, n;
	uint32_t off = 0;
	const char *v;
	int i;

	if (r->valid != 1)
		return 0;
	for (i = 0; i < 16; i++)
		if (r->trace_id[i] != c)
			goto torn;
	for (i = 0; i < 8; i++)
		if (r->span_id[i] != c)
			goto torn;
	if (r->trace_flags != c || (c != 0x11 && c != 0x22 && c != 0x33))
		goto torn;
	if (scen == RESTORE_SET && c == 0x22 && r->attrs_data_size != saved.attrs_data_size)
		goto torn;	/* the restored ids without all their attributes */
	while (uevent_thread_context_attr_next(r, sizeof(*r), UEVENT_BO_HOST, &off, &k, &v, &n) == 0)
		for (i = 0; i < n; i++)
			if ((uint8_t)v[i] != c && (uint8_t)v[i] != 0x44)
				goto torn;
	return 0;
torn:
	snprintf(why, sizeof(why), "valid, trace %02x..%02x span %02x..%02x flags %02x, %u "
		 "attribute bytes", r->trace_id[0], r->trace_id[15], r->span_id[0], r->span_id[7],
		 r->trace_flags, r->attrs_data_size);
	return 1;
}

static void set_c(uint8_t c)
{
	uint8_t id[16];

	memset(id, c, sizeof(id));
	uevent_thread_context_set(id, id, c);
}

static void inner(void)
{
	if (scen == SET_CLEAR || scen == FIRST_CLEAR)
		uevent_thread_context_clear();
	else
		set_c(0x33);
}

static void trap(int sig, siginfo_t *si, void *arg)
{
	ucontext_t *uc = arg;

	(void)sig, (void)si;
	if (!stepping) {
		uc->uc_mcontext.gregs[REG_EFL] &= ~0x100L;
		return;
	}
	torn += is_torn(rec);
	if (step == target) {
		pre_valid = rec->valid;
		pre_c = rec->trace_id[0];
		inner();
		fired = 1;
		torn += is_torn(rec);
	}
	step++;
	uc->uc_mcontext.gregs[REG_EFL] |= 0x100L;
}

static void outer(void)
{
	char v[60];

	memset(v, 0x44, sizeof(v));
	/* the trap flag on: a SIGTRAP after each instruction from here */
	__asm__ volatile("pushfq; orq $0x100, (%%rsp); popfq" ::: "memory", "cc");
	switch (scen) {
	case CLEAR_SET:
		uevent_thread_context_clear();
		break;
	case ATTR_SET:
		uevent_thread_context_set_attr(2, v, sizeof(v));
		break;
	case RESTORE_SET:
		uevent_thread_context_restore(&saved, sizeof(saved));
		break;
	default:
		set_c(0x22);
		break;
	}
	stepping = 0;
	__asm__ volatile("nop; nop");
}

/* One thread: the inner call at instruction `target` of the outer; -1: no such one. */
static void *one(void *arg)
{
	char v[60];

	rec = uevent_thread_context_get();
	if (scen != FIRST_CLEAR && scen != FIRST_SET)
		set_c(0x11);
	if (scen == ATTR_SET) {
		/* 226 of 228 attribute bytes: the next entry must drop older ones */
		memset(v, 0x11, sizeof(v));
		uevent_thread_context_set_attr(1, v, 60);
		uevent_thread_context_set_attr(2, v, 60);
		uevent_thread_context_set_attr(3, v, 60);
		uevent_thread_context_set_attr(1, v, 38);
	}
	step = fired = 0;
	target = (int)(intptr_t)arg;
	stepping = 1;
	outer();
	torn += is_torn(rec);
	/* a clear once the set had begun (it had made the old context invalid; a fresh
	 * thread's: it had published) must stick */
	if (fired && rec->valid == 1 &&
	    ((scen == SET_CLEAR && (pre_valid == 0 || pre_c == 0x22)) ||
	     (scen == FIRST_CLEAR && pre_valid == 1 && pre_c == 0x22)) && !lost++)
		snprintf(why, sizeof(why), "a clear at instruction %d did not stick", target);
	return (void *)(intptr_t)(fired ? step : -1);
}

static void run(enum scenario s, const char *what)
{
	int k, n = 0;
	void *r;

	scen = s;
	torn = lost = 0;
	why[0] = 0;
	for (k = 0; k < 100000; k++) {
		pthread_t t;

		if (pthread_create(&t, NULL, one, (void *)(intptr_t)k) || pthread_join(t, &r))
			break;
		if ((intptr_t)r < 0) {
			n = k;
			break;
		}
	}
	if (torn || lost)
		diag("%s", why);
	ok(n > 10 && !torn && !lost, "%s, at each of its %d instructions: never a torn record "
	   "valid (%ld), no clear lost (%ld)", what, n, torn, lost);
}

int main(void)
{
	struct sigaction sa = { .sa_sigaction = trap, .sa_flags = SA_SIGINFO };
	uint8_t id[16] = { 0 };
	char v[40];

	plan(6);
	sigaction(SIGTRAP, &sa, NULL);
	/* calls resolved before stepping (lazy binding would be stepped through once) */
	uevent_thread_context_set(id, id, 0);
	uevent_thread_context_set_attr(1, "", 0);
	uevent_thread_context_clear();
	uevent_thread_context_restore(&saved, sizeof(saved));
	/* the context a restore brings back: 0x22, two attributes */
	memset(v, 0x22, sizeof(v));
	set_c(0x22);
	uevent_thread_context_set_attr(1, v, 40);
	uevent_thread_context_set_attr(5, v, 20);
	saved = *uevent_thread_context_get();
	uevent_thread_context_clear();
	run(CLEAR_SET, "clear, a set in a handler");
	run(SET_CLEAR, "set, a clear in a handler");
	run(ATTR_SET, "set_attr that drops older entries, a set in a handler");
	run(FIRST_CLEAR, "a thread's first set, a clear in a handler");
	run(FIRST_SET, "a thread's first set, a set in a handler");
	run(RESTORE_SET, "restore of ids and attributes, a set in a handler");
	return exit_status();
}

#else

int main(void)
{
	plan_skip_all("single-stepping with the trap flag: x86-64 Linux only");
	return 0;
}

#endif
