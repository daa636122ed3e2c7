/* check.c - helpers of inject/nvtx-check and inject/itt-check (check.h). */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <linux/perf_uevent.h>

#include "check.h"
#include "inject.h"

struct ev *evs;
size_t nev;
static size_t cap_ev;

static void take(uint32_t type, uint32_t tid, const void *data, uint32_t size, int bo)
{
	struct ev *e;

	if (nev == cap_ev) {
		cap_ev = cap_ev ? cap_ev * 2 : 1024;
		evs = realloc(evs, cap_ev * sizeof(*evs));
		if (!evs)
			abort();
	}
	e = &evs[nev];
	memset(e, 0, sizeof(*e));
	e->type = type;
	e->tid = tid;
	if (type == UEVENT_TYPE_RANGE_BEGIN && !uevent_range_begin_decode(data, size, bo, &e->b))
		e->text = strdup(e->b.name);
	else if (type == UEVENT_TYPE_RANGE_END && !uevent_range_end_decode(data, size, bo, &e->e))
		;
	else if (type == UEVENT_TYPE_COUNTER && !uevent_counter_decode(data, size, bo, &e->c))
		e->c.name = e->text = strdup(e->c.name);
	else if ((type == UEVENT_TYPE_TEXT || type == INJECT_META_TYPE) && size &&
		 ((const char *)data)[size - 1] == 0)
		e->text = strdup(data);
	else
		return;
	nev++;
}

void check_forget(void)
{
	size_t i;

	for (i = 0; i < nev; i++)
		free(evs[i].text);
	nev = 0;
}

size_t check_count(uint32_t type, const char *text)
{
	size_t i, n = 0;

	for (i = 0; i < nev; i++)
		n += evs[i].type == type && evs[i].text && !strcmp(evs[i].text, text);
	return n;
}

const struct ev *check_find(uint32_t type, const char *text)
{
	size_t i;

	for (i = 0; i < nev; i++)
		if (evs[i].type == type && evs[i].text && !strcmp(evs[i].text, text))
			return &evs[i];
	return NULL;
}

const struct ev *check_end_of(uint64_t id)
{
	size_t i;

	for (i = 0; i < nev; i++)
		if (evs[i].type == UEVENT_TYPE_RANGE_END && evs[i].e.id == id)
			return &evs[i];
	return NULL;
}

const struct ev *check_begin_of(uint64_t id)
{
	size_t i;

	for (i = 0; i < nev; i++)
		if (evs[i].type == UEVENT_TYPE_RANGE_BEGIN && evs[i].b.id == id)
			return &evs[i];
	return NULL;
}

int check_meta_has(const char *prefix, const char *needle)
{
	size_t i;

	for (i = 0; i < nev; i++)
		if (evs[i].type == INJECT_META_TYPE && !strncmp(evs[i].text, prefix, strlen(prefix)) &&
		    strstr(evs[i].text, needle))
			return 1;
	return 0;
}

size_t check_nested(const char *name, const char *parent)
{
	size_t i, n = 0;

	for (i = 0; i < nev; i++) {
		const struct ev *e = &evs[i], *end, *p;

		if (e->type != UEVENT_TYPE_RANGE_BEGIN || strcmp(e->text, name))
			continue;
		end = check_end_of(e->b.id);
		if (!end || end->tid != e->tid)
			continue;
		p = parent ? check_begin_of(e->b.parent) : NULL;
		n += !parent || (p && !strcmp(p->text, parent) && p->tid == e->tid);
	}
	return n;
}

static void set_env(char *const env[])
{
	for (; env && *env; env++)
		putenv(*env);
}

int check_run(char *const argv[], char *const env[])
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		set_env(env);
		execv(argv[0], argv);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int check_read_file(const char *path)
{
	struct uevent_record rec = { .sz = sizeof(rec) };
	struct uevent_file_reader *r = uevent_file_reader__open(path);
	int ret, bo;

	if (!r)
		return -errno;
	bo = uevent_file_reader__byte_order(r);
	while ((ret = uevent_file_reader__next(r, &rec)) == 1)
		take(rec.type, rec.id.tid, rec.data, rec.size, bo);
	uevent_file_reader__close(r);
	return ret < 0 ? ret : (int)nev;
}

int check_run_file(char *const argv[], const char *var, const char *lib, const char *chain_var,
		   const char *chain, const char *counts, int *records)
{
	char file[] = "/tmp/inject-check-XXXXXX", env[4][4096];
	char *envp[] = { env[0], env[1], env[2], env[3], "UEVENT_TRANSPORT=file", NULL };
	int fd = mkstemp(file), st;

	if (fd >= 0)
		close(fd);
	unlink(file);
	snprintf(env[0], sizeof(env[0]), "%s=%s", var, lib);
	snprintf(env[1], sizeof(env[1]), "UEVENT_FILE=%s", file);
	snprintf(env[2], sizeof(env[2]), "%s=%s", chain_var, chain);
	snprintf(env[3], sizeof(env[3]), "CHAIN_COUNTS=%s", counts);
	st = check_run(argv, envp);
	*records = check_read_file(file);
	unlink(file);
	return st;
}

int check_live(char *const argv[], char *const env[])
{
	struct uevent_session_opts so = { .sz = sizeof(so),
					  .transports = 1u << UEVENT_TRANSPORT_USDT };
	struct uevent_perf_record r = { .sz = sizeof(r) };
	struct uevent_session *s = NULL;
	int to[2], from[2], idle = 0, ret, st = -1, exited = 0;
	char c;
	pid_t pid;

	if (getuid() != 0 || access("/sys/bus/event_source/devices/uprobe", F_OK) < 0)
		return -1;
	if (pipe(to) < 0 || pipe(from) < 0)
		return 0;
	pid = fork();
	if (pid == 0) {
		dup2(to[0], 0);
		dup2(from[1], 1);
		set_env(env);
		setenv("UEVENT_TRANSPORT", "usdt", 1);
		execv(argv[0], argv);
		_exit(127);
	}
	close(to[0]);
	close(from[1]);
	if (read(from[0], &c, 1) == 1) {
		so.pid = pid;
		s = uevent_session__open(&so);
	}
	if (write(to[1], "1", 1) != 1)
		kill(pid, SIGKILL);
	while (s && idle < 3 && (ret = uevent_session__next(s, &r, 200)) >= 0) {
		if (ret == 0) {
			if (!exited && waitpid(pid, &st, WNOHANG) == pid)
				exited = 1;
			idle += exited;
			continue;
		}
		if (r.type == PERF_RECORD_UEVENT)
			take(r.u.uevent.type, r.id.tid, r.u.uevent.data, r.u.uevent.size, UEVENT_BO_HOST);
	}
	if (!exited)
		waitpid(pid, &st, 0);
	uevent_session__close(s);
	close(to[1]);
	close(from[0]);
	return s && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

void check_chain(const char *counts, const struct check_want *want, size_t n, char *wrong,
		 size_t cap)
{
	char line[128], name[64];
	size_t i;

	*wrong = 0;
	for (i = 0; i < n; i++) {
		unsigned long v, got = (unsigned long)-1;
		FILE *f = fopen(counts, "r");

		while (f && fgets(line, sizeof(line), f))
			if (sscanf(line, "%63s %lu", name, &v) == 2 && !strcmp(name, want[i].name))
				got = v;
		if (f)
			fclose(f);
		if (got != want[i].n)
			snprintf(wrong + strlen(wrong), cap - strlen(wrong), " %s=%ld (want %lu)",
				 want[i].name, (long)got, want[i].n);
	}
}

struct check_late check_late(char *const argv[], char *const env[], const char *prefix)
{
	struct check_late r = { 0, 0, 0 };
	char late[64], lmark[64], emark[64], early[64];
	const struct ev *b;
	size_t i, orphan_ends = 0;

	snprintf(late, sizeof(late), "%slate range", prefix);
	snprintf(lmark, sizeof(lmark), "%slate mark", prefix);
	snprintf(emark, sizeof(emark), "%searly mark", prefix);
	snprintf(early, sizeof(early), "%searly outer", prefix);
	r.live = check_live(argv, env);
	b = check_find(UEVENT_TYPE_RANGE_BEGIN, late);
	r.after = check_count(UEVENT_TYPE_TEXT, lmark) == 1 && b && check_end_of(b->b.id);
	for (i = 0; i < nev; i++)
		orphan_ends += evs[i].type == UEVENT_TYPE_RANGE_END && !check_begin_of(evs[i].e.id);
	r.before = !check_count(UEVENT_TYPE_TEXT, emark) &&
		   !check_find(UEVENT_TYPE_RANGE_BEGIN, early) && !orphan_ends;
	check_forget();
	return r;
}
