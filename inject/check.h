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
/* Reads a file-transport file into evs; the record count, or -errno. */
int check_read_file(const char *path);
/*
 * Starts argv with env; when it writes a byte to its stdout a usdt session opens on it
 * and a byte goes to its stdin; reads its uevents into evs until it exits. 1 if the
 * session opened and the client exited 0, 0 if not, -1 if this host cannot (SKIP).
 */
int check_live(char *const argv[], char *const env[]);

#endif
