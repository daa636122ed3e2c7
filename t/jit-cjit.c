/* jit-cjit.c - a tiny C JIT for the perf end-to-end tests: hot loops announced via
 * uevent_jit__code_load, optionally unloaded and replaced at the same address ("reuse"),
 * or moved, unloaded, and its first address reused ("move"). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "uevent.h"

/* long f(long n): counts n down to zero. A and B differ in bytes so that perf's
 * generated ELF files (build-id from the code) differ too. */
static const unsigned char code_a[] = {
	0x48, 0x89, 0xf8,		/* mov rax, rdi */
	0x48, 0x83, 0xe8, 0x01,		/* 1: sub rax, 1 */
	0x75, 0xfa,			/* jnz 1b */
	0xc3				/* ret */
};
static const unsigned char code_b[] = {
	0x48, 0x89, 0xf8,		/* mov rax, rdi */
	0x90,				/* nop */
	0x48, 0xff, 0xc8,		/* 1: dec rax */
	0x75, 0xfb,			/* jnz 1b */
	0xc3				/* ret */
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* W^X: write while RW, run while RX. */
static int install(unsigned char *mem, const unsigned char *code, size_t n)
{
	if (mprotect(mem, 4096, PROT_READ | PROT_WRITE) < 0)
		return -1;
	memset(mem, 0xcc, 4096);
	memcpy(mem, code, n);
	__builtin___clear_cache((char *)mem, (char *)mem + n);
	return mprotect(mem, 4096, PROT_READ | PROT_EXEC);
}

static void run(unsigned char *mem, double secs)
{
	long (*f)(long) = (long (*)(long))(void *)mem;
	double end = now() + secs;
	volatile long sink = 0;

	while (now() < end)
		sink += f(200000);
	(void)sink;
}

int main(int argc, char **argv)
{
	struct uevent_jit_debug_entry e = { 0, 42, 0, "cjit.c", 0 };
	double secs = argc > 1 ? atof(argv[1]) : 0.5;
	int reuse = argc > 2 && !strcmp(argv[2], "reuse");
	int move = argc > 2 && !strcmp(argv[2], "move");
	struct uevent_jit *j;
	unsigned char *mem;
	uint64_t addr;
	int ret;

#ifndef __x86_64__
	fprintf(stderr, "jit-cjit: x86-64 only\n");
	return 77;
#endif
	mem = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	addr = (uint64_t)(uintptr_t)mem;
	j = uevent_jit__open(NULL);
	if (!j) {
		perror("uevent_jit__open");
		return 1;
	}
	printf("dump %s\nmap %s\n", uevent_jit__dump_path(j), uevent_jit__perf_map_path(j));
	if (install(mem, code_a, sizeof(code_a)) < 0) {
		perror("mprotect");
		return 1;
	}
	e.addr = addr;
	uevent_jit__debug_info(j, addr, &e, 1);
	ret = uevent_jit__code_load(j, "uevent_cjit_hot_a", addr, sizeof(code_a), NULL);
	if (ret < 0) {
		fprintf(stderr, "code_load: %s\n", strerror(-ret));
		return 1;
	}
	printf("load a 0x%llx\n", (unsigned long long)addr);
	fflush(stdout);
	run(mem, move ? 2 * secs : secs);	/* move: a's first address is mostly a's */
	if (move) {
		/* a moves to a second page and is unloaded there; b reuses a's first address */
		unsigned char *mem2 = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
					   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		uint64_t addr2 = (uint64_t)(uintptr_t)mem2;

		if (mem2 == MAP_FAILED || install(mem2, code_a, sizeof(code_a)) < 0 ||
		    (ret = uevent_jit__code_move(j, addr, addr2, sizeof(code_a))) < 0) {
			fprintf(stderr, "move: %s\n", strerror(ret < 0 ? -ret : errno));
			return 1;
		}
		printf("move a 0x%llx\n", (unsigned long long)addr2);
		fflush(stdout);
		run(mem2, secs);
		ret = uevent_jit__code_unload(j, addr2, sizeof(code_a));
		if (ret == 0 && install(mem, code_b, sizeof(code_b)) == 0)
			ret = uevent_jit__code_load(j, "uevent_cjit_hot_b", addr, sizeof(code_b),
						    NULL);
		if (ret < 0) {
			fprintf(stderr, "unload/load: %s\n", strerror(-ret));
			return 1;
		}
		printf("load b 0x%llx\n", (unsigned long long)addr);
		fflush(stdout);
		run(mem, secs);
	}
	if (reuse) {
		ret = uevent_jit__code_unload(j, addr, sizeof(code_a));
		if (ret == 0 && install(mem, code_b, sizeof(code_b)) == 0)
			ret = uevent_jit__code_load(j, "uevent_cjit_hot_b", addr, sizeof(code_b),
						    NULL);
		if (ret < 0) {
			fprintf(stderr, "reuse: %s\n", strerror(errno));
			return 1;
		}
		printf("load b 0x%llx\n", (unsigned long long)addr);
		fflush(stdout);
		run(mem, secs);
	}
	return uevent_jit__close(j) < 0;
}
