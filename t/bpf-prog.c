/*
 * bpf-prog - loads a two-instruction socket filter named "uevent_t", prints its
 * "id tag" (tag as 16 hex digits), holds it for argv[1] ms, unloads it. The kernel
 * sends PERF_RECORD_BPF_EVENT (load and unload) and KSYMBOL records for it.
 * Exit 77 when this kernel or user may not load BPF programs.
 */
#include "config.h"

#include <errno.h>
#include <linux/bpf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static long sys_bpf(int cmd, union bpf_attr *a)
{
	return syscall(__NR_bpf, cmd, a, sizeof(*a));
}

int main(int argc, char **argv)
{
	struct bpf_insn prog[2] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	struct bpf_prog_info info;
	union bpf_attr a;
	struct timespec ts;
	long ms = argc > 1 ? atol(argv[1]) : 0;
	int fd, i;

	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	a.insns = (uintptr_t)prog;
	a.insn_cnt = 2;
	a.license = (uintptr_t)"GPL";
	strcpy(a.prog_name, "uevent_t");
	fd = (int)sys_bpf(BPF_PROG_LOAD, &a);
	if (fd < 0) {
		fprintf(stderr, "bpf-prog: BPF_PROG_LOAD: %s\n", strerror(errno));
		return errno == EPERM || errno == EACCES || errno == ENOSYS ? 77 : 1;
	}
	memset(&info, 0, sizeof(info));
	memset(&a, 0, sizeof(a));
	a.info.bpf_fd = (uint32_t)fd;
	a.info.info_len = sizeof(info);
	a.info.info = (uintptr_t)&info;
	if (sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &a) < 0) {
		fprintf(stderr, "bpf-prog: BPF_OBJ_GET_INFO_BY_FD: %s\n", strerror(errno));
		return 1;
	}
	printf("%u ", info.id);
	for (i = 0; i < 8; i++)
		printf("%02x", info.tag[i]);
	printf("\n");
	fflush(stdout);
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = ms % 1000 * 1000000;
	nanosleep(&ts, NULL);
	close(fd);
	return 0;
}
