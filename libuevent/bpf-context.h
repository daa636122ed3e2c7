/* bpf-context.h - samples' thread context read by a BPF program (stock kernels), for the session. */
#ifndef UEVENT_BPF_CONTEXT_H
#define UEVENT_BPF_CONTEXT_H

#include <stddef.h>
#include <stdint.h>

#include "uevent.h"

struct _uevent_bpf_ctx;

/*
 * Loads and attaches the programs: NULL with errno set and why (n bytes) saying what is
 * missing (the build's tools, kernel BTF, privileges...) when the path is not there.
 */
struct _uevent_bpf_ctx *_uevent_bpf_ctx_open(char *why, size_t n);
/* Runs the sample program on each sample of perf_fd (a sampling event): 0 or -errno. */
int _uevent_bpf_ctx_attach(struct _uevent_bpf_ctx *c, int perf_fd);
/* The program learns where pid's threads keep their record, if it knows not (0: done). */
void _uevent_bpf_ctx_learn(struct _uevent_bpf_ctx *c, uint32_t pid);
/* A sample without a context from the kernel gets the one the program read, if any. */
void _uevent_bpf_ctx_fill(struct _uevent_bpf_ctx *c, struct uevent_perf_record *rec);
void _uevent_bpf_ctx_close(struct _uevent_bpf_ctx *c);

struct uevent_session;
struct perf_event_attr;
/* Recording: a sample (n bytes at r, rec its decoding) with its context as a TLS dump */
void _uevent_bpf_ctx_rec_append(struct uevent_session *s, const void *r, size_t n,
				const struct uevent_perf_record *rec);
/* ... and the attr that says so, for a session whose samples get context by BPF */
void _uevent_bpf_ctx_rec_attr(const struct uevent_session *s, int kind,
			      struct perf_event_attr *a);
/* 0 and why saying how samples get their context, or -errno and why not. */
int _uevent_bpf_ctx_probe(char *why, size_t n);

#endif
