/* check.h - what inject/nvtx-check and inject/itt-check share: run a client, keep its
 * uevents (from a file or a live session), find them by name. */
#ifndef UEVENT_INJECT_CHECK_H
#define UEVENT_INJECT_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "uevent.h"

struct ev {
	uint32_t	type, tid;
	struct uevent_range_begin b;	/* type RANGE_BEGIN */
	struct uevent_range_end e;	/* type RANGE_END */
	struct uevent_counter c;	/* type COUNTER (c.name points into text) */
	char		*text;		/* a mark's or side record's text, a begin's name */
};

extern struct ev *evs;
extern size_t nev;

void check_forget(void);
size_t check_count(uint32_t type, const char *text);
const struct ev *check_find(uint32_t type, const char *text);
const struct ev *check_end_of(uint64_t id);
const struct ev *check_begin_of(uint64_t id);
/* A side record starting with prefix that contains needle. */
int check_meta_has(const char *prefix, const char *needle);
/* Ranges begun as name, each ended on the thread that began it, nested in one named
 * parent of the same thread (parent NULL: not checked); how many. */
size_t check_nested(const char *name, const char *parent);

/* Runs argv with the variables of env ("NAME=VALUE", NULL-ended) set; its exit status. */
int check_run(char *const argv[], char *const env[]);
/*
 * Runs argv with var=lib, the file transport into a temporary file and chain_var=chain
 * counting into counts (a file the caller made), then reads that file into evs and
 * removes it; the client's exit status, *records what check_read_file() said.
 */
int check_run_file(char *const argv[], const char *var, const char *lib, const char *chain_var,
		   const char *chain, const char *counts, int *records);
/* Reads a file-transport file into evs; the record count, or -errno. */
int check_read_file(const char *path);
/*
 * Starts argv with env; when it writes a byte to its stdout a usdt session opens on it
 * and a byte goes to its stdin; reads its uevents into evs until it exits. 1 if the
 * session opened and the client exited 0, 0 if not, -1 if this host cannot (SKIP).
 */
int check_live(char *const argv[], char *const env[]);

/* What a chained test library must have counted: name and calls. */
struct check_want {
	const char	*name;
	unsigned long	n;
};

/* " name=got (want n)" for each count in the file counts that differs; "" if none. */
void check_chain(const char *counts, const struct check_want *want, size_t n, char *wrong,
		 size_t cap);

/*
 * The "late" client under check_live(): live is check_live's answer; after: its "late
 * mark" and "late range" (names after prefix) are there, the range ended; before: its
 * "early mark" and "early outer" are not, nor any end without its begin.
 */
struct check_late {
	int live, after, before;
};
struct check_late check_late(char *const argv[], char *const env[], const char *prefix);

#ifdef UEVENT_TAP_H
/* check_late() as three TAP lines in the caller's plan: client "late" with var=lib. */
static inline void check_late_tap(char *client, const char *var, const char *lib,
				  const char *chain_var, const char *prefix, const char *what)
{
	char *argv[] = { client, "late", NULL }, env[4096], nochain[64];
	char *envp[] = { env, nochain, NULL };
	struct check_late r;

	snprintf(env, sizeof(env), "%s=%s", var, lib);
	snprintf(nochain, sizeof(nochain), "%s=", chain_var);
	r = check_late(argv, envp, prefix);
	if (r.live < 0) {
		skip(3, "a live session needs root and uprobes");
		return;
	}
	ok(r.live == 1, "a session opened on the running client, which exited 0");
	ok(r.after, "calls after the session started are uevents");
	ok(r.before, "calls before it are not, and the end of a %s begun before it ends nothing",
	   what);
}
#endif

#endif
