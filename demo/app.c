/* app.c - the README tour's program to profile: `demo/app [SECONDS]` (default 1) runs
 * frames of two phases, each a uevent range, "parse" (parse_tokens, about two thirds
 * of the time) and "render" (render_rows), and marks each tenth frame and counts the
 * frames done, so `uevent record -F 1000 -- demo/app` gives report, export and perf
 * report a little of everything: named samples, callchains, ranges, marks, a counter.
 * Built with frame pointers, so the samples' callchains go back to main. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "uevent.h"

/* external, so their names stay in the symbol table as written */
void parse_tokens(uint64_t n);
void render_rows(uint64_t n);
void frame(uint64_t n);

static volatile uint64_t sink;

__attribute__((noinline)) void parse_tokens(uint64_t n)
{
	uint64_t i, x = sink;

	for (i = 0; i < 2 * n; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	sink = x;
}

__attribute__((noinline)) void render_rows(uint64_t n)
{
	uint64_t i, x = sink;

	for (i = 0; i < n; i++)
		x = (x ^ (x >> 7)) * 2862933555777941757ull + 3037000493ull;
	sink = x;
}

__attribute__((noinline)) void frame(uint64_t n)
{
	uint64_t r = uevent_range_begin("parse");

	parse_tokens(n);
	uevent_range_end(r);
	r = uevent_range_begin("render");
	render_rows(n);
	uevent_range_end(r);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 1.0, end;
	long frames = 0;

	if (argc > 2 || secs < 0) {
		fprintf(stderr, "usage: %s [SECONDS]\n", argv[0]);
		return 2;
	}
	uevent_mark("demo start");
	for (end = now() + secs; now() < end; frames++) {
		frame(200000);
		if (frames % 10 == 0)
			uevent_markf("frame %ld", frames);
		uevent_counter_set("frames", frames + 1);
	}
	uevent_mark("demo done");
	printf("demo: %ld frames in %.1f s\n", frames, secs);
	return 0;
}
