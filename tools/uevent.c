/* uevent.c - the libuevent command line: probe the system, emit marks, dump captures. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <linux/perf_uevent.h>

#include "uevent.h"

static const char *prog = "uevent";

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: %s COMMAND [OPTIONS]\n"
		"\n"
		"Commands:\n"
		"  probe [--json]                 what this kernel and machine support, probed live\n"
		"  emit [OPTIONS] [TEXT...]       send a mark (the words joined by spaces)\n"
		"      -t, --transport NAME       prctl, user_events, usdt, ftrace, file, none, auto\n"
		"      -o, --output FILE          file for the file transport\n"
		"      -T, --type N               payload type (default: text)\n"
		"      -c, --counter NAME=VALUE   emit a counter instead of text\n"
		"      -n, --count N              emit N times (default 1)\n"
		"  dump [--json] FILE             print the records of a capture: a file-transport\n"
		"                                 file, or a perf.data (`perf record`, pipe mode too)\n"
		"  record [OPTIONS] -- CMD [ARGS...]\n"
		"                                 run CMD and record its uevents into a perf.data\n"
		"                                 (pipe mode; perf script reads it too)\n"
		"      -o, --output FILE          where (default uevent.data; - for stdout)\n"
		"      -t, --transport LIST       transports to read (prctl,user_events,usdt)\n"
		"      -n, --usdt-bytes N         payload bytes fetched per usdt mark (default 4096)\n"
		"      -b, --bpf                  also BPF_EVENT and KSYMBOL records (BPF programs)\n"
		"      -a, --all                  also COMM, MMAP, FORK, EXIT records\n"
		"      -F, --sample-ns NS         also cpu-clock samples every NS nanoseconds\n"
		"          --tls BYTES            with samples: BYTES of the thread's TLS in each\n"
		"                                 (PERF_SAMPLE_TLS_USER, patched kernel)\n"
		"      -m, --ring-pages N         data pages per ring buffer (default 256)\n"
		"      -C, --cpus LIST            only these CPUs, as perf -C: 0-3,7\n"
		"  export --chrome OUT FILE       write FILE as Trace Event Format JSON (Perfetto,\n"
		"                                 chrome://tracing): marks, ranges, counters\n"
		"  help, --help                   this text\n"
		"  version, --version             library version\n"
		"\n"
		"Environment: UEVENT_TRANSPORT (transport name or comma list), UEVENT_FILE.\n"
		"Exit status: 0 success, 1 failure, 2 usage error.\n",
		prog);
}

static const char *state_name(int s)
{
	switch (s) {
	case UEVENT_FEAT_PRESENT:	return "yes";
	case UEVENT_FEAT_ABSENT:	return "no";
	case UEVENT_FEAT_DENIED:	return "denied";
	default:			return "unknown";
	}
}

static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

static int cmd_probe(int argc, char **argv)
{
	int json = 0, f, paranoid;
	struct uevent_feature_info info;

	if (argc > 1 && !strcmp(argv[1], "--json"))
		json = 1;
	else if (argc > 1) {
		fprintf(stderr, "%s probe: unknown option '%s'\n", prog, argv[1]);
		return 2;
	}
	paranoid = uevent_perf_paranoid();
	if (json)
		printf("{\"perf_event_paranoid\": %d, \"transport\": ", paranoid);
	else
		printf("%-18s %-8s %s\n", "feature", "state", "detail");
	for (f = 0; f < UEVENT_FEAT_COUNT; f++) {
		if (uevent_feature_probe(f, &info) < 0)
			continue;
		if (json) {
			if (f == 0) {
				json_str(uevent_transport_name(uevent_transport()));
				printf(", \"features\": {");
			}
			printf("%s", f ? ", " : "");
			json_str(uevent_feature_name(f));
			printf(": {\"state\": ");
			json_str(state_name(info.state));
			printf(", \"errno\": %d, \"detail\": ", info.err);
			json_str(info.detail);
			printf("}");
		} else {
			printf("%-18s %-8s %s\n", uevent_feature_name(f), state_name(info.state),
			       info.detail);
		}
	}
	if (json) {
		printf("}}\n");
	} else {
		printf("%-18s %-8d %s\n", "perf_event_paranoid", paranoid,
		       paranoid < 0 ? strerror(-paranoid) : "/proc/sys/kernel/perf_event_paranoid");
		printf("%-18s %-8s %s\n", "transport", uevent_transport_name(uevent_transport()),
		       uevent_open_reason());
	}
	return 0;
}

static int cmd_emit(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "transport", required_argument, NULL, 't' },
		{ "output", required_argument, NULL, 'o' },
		{ "type", required_argument, NULL, 'T' },
		{ "counter", required_argument, NULL, 'c' },
		{ "count", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *tname = NULL, *out = NULL, *counter = NULL;
	char text[UEVENT_MAX_PAYLOAD + 1];
	long type = UEVENT_TYPE_TEXT, count = 1, i;
	struct uevent_stats st;
	size_t len = 0;
	int c, ret = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, "t:o:T:c:n:h", opts, NULL)) != -1) {
		switch (c) {
		case 't': tname = optarg; break;
		case 'o': out = optarg; break;
		case 'T': type = strtol(optarg, NULL, 0); break;
		case 'c': counter = optarg; break;
		case 'n': count = strtol(optarg, NULL, 0); break;
		case 'h': usage(stdout); return 0;
		default: return 2;
		}
	}
	if (count < 0 || type < 0 || type > UINT32_MAX) {
		fprintf(stderr, "%s emit: bad --count or --type\n", prog);
		return 2;
	}
	if (tname || out) {
		UEVENT_OPTS(o, .path = out);
		int t = UEVENT_TRANSPORT_AUTO;

		if (tname) {
			t = uevent_transport_from_name(tname);
			if (t < 0) {
				fprintf(stderr, "%s emit: unknown transport '%s' (known: prctl, "
					"user_events, usdt, ftrace, file, none, auto)\n", prog, tname);
				return 2;
			}
		} else if (out) {
			t = UEVENT_TRANSPORT_FILE;
		}
		o.transport = t;
		o.flags = tname ? UEVENT_OPEN_IGNORE_ENV : 0;
		if (uevent_open(&o) < 0) {
			fprintf(stderr, "%s emit: cannot open transport: %s\n", prog,
				uevent_open_reason());
			return 1;
		}
	} else if (uevent_transport() == UEVENT_TRANSPORT_NONE &&
		   getenv("UEVENT_TRANSPORT") && *getenv("UEVENT_TRANSPORT")) {
		fprintf(stderr, "%s emit: transport not usable: %s\n", prog, uevent_open_reason());
		return 1;
	}
	for (i = optind; i < argc; i++) {
		size_t n = strlen(argv[i]);

		if (len + n + 1 > sizeof(text) - 1) {
			fprintf(stderr, "%s emit: text longer than %d bytes\n", prog,
				UEVENT_MAX_PAYLOAD - 1);
			return 1;
		}
		if (len)
			text[len++] = ' ';
		memcpy(text + len, argv[i], n);
		len += n;
	}
	text[len] = 0;

	for (i = 0; i < count && ret >= 0; i++) {
		if (counter) {
			char name[256], *eq = strchr(counter, '=');

			if (!eq || (size_t)(eq - counter) >= sizeof(name)) {
				fprintf(stderr, "%s emit: --counter wants NAME=VALUE\n", prog);
				return 2;
			}
			memcpy(name, counter, (size_t)(eq - counter));
			name[eq - counter] = 0;
			ret = uevent_counter(name, strtoll(eq + 1, NULL, 0));
		} else if (type == UEVENT_TYPE_TEXT) {
			ret = uevent_mark(text);
		} else {
			ret = uevent_emit((uint32_t)type, text, len);
		}
	}
	if (ret < 0) {
		fprintf(stderr, "%s emit: %s transport: %s\n", prog,
			uevent_transport_name(uevent_transport()), uevent_strerror(ret));
		return 1;
	}
	uevent_stats_get(&st, sizeof(st));
	if (!uevent_enabled())
		fprintf(stderr, "%s emit: nobody listens on the %s transport; nothing sent\n",
			prog, uevent_transport_name(uevent_transport()));
	return 0;
}

static void print_payload(const struct uevent_record *r, int json, int bo)
{
	struct uevent_text t;
	struct uevent_counter c;
	struct uevent_range_begin rb;
	struct uevent_range_end re;
	const char *name = uevent_type_name(r->type);
	uint32_t i;

	if (json) {
		printf("\"type\": %u, \"type_name\": ", r->type);
		json_str(name ? name : "user");
	} else {
		printf(" %s", name ? name : "user");
		if (!name)
			printf("(%u)", r->type);
	}
	if (r->type == UEVENT_TYPE_TEXT && !uevent_text_decode(r->data, r->size, bo, &t)) {
		if (json) {
			printf(", \"text\": ");
			json_str(t.text);
		} else {
			printf(" \"%s\"", t.text);
		}
	} else if (r->type == UEVENT_TYPE_COUNTER &&
		   !uevent_counter_decode(r->data, r->size, bo, &c)) {
		if (json) {
			printf(", \"name\": ");
			json_str(c.name);
			printf(", \"value\": %" PRId64, c.value);
		} else {
			printf(" %s=%" PRId64, c.name, c.value);
		}
	} else if (r->type == UEVENT_TYPE_RANGE_BEGIN &&
		   !uevent_range_begin_decode(r->data, r->size, bo, &rb)) {
		if (json) {
			printf(", \"id\": %" PRIu64 ", \"parent\": %" PRIu64 ", \"async\": %s, \"name\": ",
			       rb.id, rb.parent, rb.flags & UEVENT_RANGE_ASYNC ? "true" : "false");
			json_str(rb.name);
		} else {
			printf(" id=%#" PRIx64 " parent=%#" PRIx64 "%s \"%s\"", rb.id, rb.parent,
			       rb.flags & UEVENT_RANGE_ASYNC ? " async" : "", rb.name);
		}
	} else if (r->type == UEVENT_TYPE_RANGE_END &&
		   !uevent_range_end_decode(r->data, r->size, bo, &re)) {
		if (json)
			printf(", \"id\": %" PRIu64, re.id);
		else
			printf(" id=%#" PRIx64, re.id);
	} else {
		const uint8_t *p = r->data;

		printf(json ? ", \"hex\": \"" : " ");
		for (i = 0; i < r->size && i < 64; i++)
			printf("%02x", p[i]);
		if (r->size > 64)
			printf("...");
		if (json)
			putchar('"');
	}
}

static int is_perf_data(const char *path)
{
	char magic[8];
	FILE *f = fopen(path, "rb");
	int yes;

	if (!f)
		return 0;
	yes = fread(magic, 1, 8, f) == 8 &&
	      (!memcmp(magic, "PERFILE2", 8) || !memcmp(magic, "2ELIFREP", 8));
	fclose(f);
	return yes;
}

static const char *open_error(const char *path, int err, int perf)
{
	static char buf[512];

	if (err == EINVAL)
		snprintf(buf, sizeof(buf), "%s: %s", path, perf ? "corrupt perf.data (bad header)"
							   : "not a uevent capture (bad header)");
	else
		snprintf(buf, sizeof(buf), "%s: %s", path, strerror(err));
	return buf;
}

/* ---- dump --json: every decoded field, keys named as the C members --------------- */

static void json_hex(const char *key, const void *p, uint64_t n)
{
	const uint8_t *b = p;
	uint64_t i;

	printf("\"%s\": \"", key);
	for (i = 0; b && i < n; i++)
		printf("%02x", b[i]);
	putchar('"');
}

static void json_u64s(const char *key, const void *p, uint64_t n, int bo)
{
	uint64_t i;

	printf("\"%s\": [", key);
	for (i = 0; p && i < n; i++)
		printf("%s%" PRIu64, i ? ", " : "", uevent_perf_u64(p, i, bo));
	putchar(']');
}

#define J64(st, m)	printf(", \"" #m "\": %" PRIu64, (uint64_t)(st)->m)

static void json_sample_id(const struct uevent_sample_id *id)
{
	const char *sep = "";

	if (!id->fields)
		return;
	printf(", \"sample_id\": {");
	if (id->fields & UEVENT_ID_TID) {
		printf("\"pid\": %u, \"tid\": %u", id->pid, id->tid);
		sep = ", ";
	}
	if (id->fields & UEVENT_ID_TIME) {
		printf("%s\"time\": %" PRIu64, sep, id->time);
		sep = ", ";
	}
	if (id->fields & UEVENT_ID_ID) {
		printf("%s\"id\": %" PRIu64, sep, id->id);
		sep = ", ";
	}
	if (id->fields & UEVENT_ID_STREAM_ID) {
		printf("%s\"stream_id\": %" PRIu64, sep, id->stream_id);
		sep = ", ";
	}
	if (id->fields & UEVENT_ID_CPU) {
		printf("%s\"cpu\": %u", sep, id->cpu);
		sep = ", ";
	}
	if (id->fields & UEVENT_ID_IDENTIFIER)
		printf("%s\"identifier\": %" PRIu64, sep, id->identifier);
	putchar('}');
}

static void json_sample(const struct uevent_perf_sample *s, int bo)
{
	const struct uevent_perf_read *rd = &s->read;
	uint64_t i, k, per = rd->entry_size / 8;

	printf(", \"sample\": {\"identifier\": %" PRIu64, s->identifier);
	J64(s, ip); J64(s, pid); J64(s, tid); J64(s, time); J64(s, addr); J64(s, id);
	J64(s, stream_id); J64(s, cpu); J64(s, period);
	printf(", \"read\": {\"nr\": %" PRIu64, rd->nr);
	J64(rd, time_enabled); J64(rd, time_running); J64(rd, value); J64(rd, id);
	J64(rd, lost); J64(rd, entry_size);
	printf(", \"values\": [");
	for (i = 0; rd->values && i < rd->nr; i++) {
		printf("%s[", i ? ", " : "");
		for (k = 0; k < per; k++)
			printf("%s%" PRIu64, k ? ", " : "", uevent_perf_u64(rd->values, i * per + k, bo));
		putchar(']');
	}
	printf("]}");
	J64(s, callchain_nr);
	printf(", ");
	json_u64s("callchain", s->callchain, s->callchain_nr, bo);
	J64(s, raw_size);
	printf(", ");
	json_hex("raw", s->raw, s->raw_size);
	J64(s, branch_nr); J64(s, branch_hw_idx);
	printf(", \"branch_entries\": [");
	for (i = 0; s->branch_entries && i < s->branch_nr; i++)
		printf("%s[%" PRIu64 ", %" PRIu64 ", %" PRIu64 "]", i ? ", " : "",
		       uevent_perf_u64(s->branch_entries, i * 3, bo),
		       uevent_perf_u64(s->branch_entries, i * 3 + 1, bo),
		       uevent_perf_u64(s->branch_entries, i * 3 + 2, bo));
	printf("], ");
	json_u64s("branch_counters", s->branch_counters, s->branch_counters ? s->branch_nr : 0, bo);
	J64(s, regs_user_abi); J64(s, regs_user_nr);
	printf(", ");
	json_u64s("regs_user", s->regs_user, s->regs_user_nr, bo);
	J64(s, stack_user_size);
	printf(", ");
	json_hex("stack_user", s->stack_user, s->stack_user ? s->stack_user_size : 0);
	J64(s, stack_user_dyn_size); J64(s, weight); J64(s, weight_var1); J64(s, weight_var2);
	J64(s, weight_var3); J64(s, data_src); J64(s, transaction); J64(s, regs_intr_abi);
	J64(s, regs_intr_nr);
	printf(", ");
	json_u64s("regs_intr", s->regs_intr, s->regs_intr_nr, bo);
	J64(s, phys_addr); J64(s, cgroup); J64(s, data_page_size); J64(s, code_page_size);
	J64(s, tls_user_size);
	printf(", ");
	json_hex("tls_user", s->tls_user, s->tls_user ? s->tls_user_size : 0);
	J64(s, tls_user_dyn_size); J64(s, aux_size);
	printf(", ");
	json_hex("aux", s->aux, s->aux ? s->aux_size : 0);
	putchar('}');
}

/* The record's header, sample_id and union member, after the summary keys. */
static void json_perf_body(const struct uevent_perf_record *r, int bo)
{
	const union uevent_perf_body *u = &r->u;

	printf(", \"misc\": %u, \"size\": %u", r->misc, r->size);
	json_sample_id(&r->id);
	switch (r->body) {
	case UEVENT_BODY_SAMPLE:
		json_sample(&u->sample, bo);
		return;
	case UEVENT_BODY_MMAP:
		printf(", \"mmap\": {\"pid\": %u", u->mmap.pid);
		J64(&u->mmap, tid); J64(&u->mmap, addr); J64(&u->mmap, len); J64(&u->mmap, pgoff);
		J64(&u->mmap, maj); J64(&u->mmap, min); J64(&u->mmap, ino);
		J64(&u->mmap, ino_generation); J64(&u->mmap, prot); J64(&u->mmap, flags);
		J64(&u->mmap, build_id_size);
		printf(", ");
		json_hex("build_id", u->mmap.build_id,
			 u->mmap.build_id_size <= 20 ? u->mmap.build_id_size : 20);
		printf(", \"filename\": ");
		json_str(u->mmap.filename ? u->mmap.filename : "");
		break;
	case UEVENT_BODY_COMM:
		printf(", \"comm\": {\"pid\": %u, \"tid\": %u, \"comm\": ", u->comm.pid, u->comm.tid);
		json_str(u->comm.comm ? u->comm.comm : "");
		break;
	case UEVENT_BODY_TASK:
		printf(", \"task\": {\"pid\": %u", u->task.pid);
		J64(&u->task, ppid); J64(&u->task, tid); J64(&u->task, ptid); J64(&u->task, time);
		break;
	case UEVENT_BODY_LOST:
		printf(", \"lost\": {\"id\": %" PRIu64, u->lost.id);
		J64(&u->lost, lost);
		break;
	case UEVENT_BODY_THROTTLE:
		printf(", \"throttle\": {\"time\": %" PRIu64, u->throttle.time);
		J64(&u->throttle, id); J64(&u->throttle, stream_id);
		break;
	case UEVENT_BODY_SW:
		printf(", \"sw\": {\"next_prev_pid\": %u", u->sw.next_prev_pid);
		J64(&u->sw, next_prev_tid);
		break;
	case UEVENT_BODY_KSYMBOL:
		printf(", \"ksymbol\": {\"addr\": %" PRIu64, u->ksymbol.addr);
		J64(&u->ksymbol, len); J64(&u->ksymbol, ksym_type); J64(&u->ksymbol, flags);
		printf(", \"name\": ");
		json_str(u->ksymbol.name ? u->ksymbol.name : "");
		break;
	case UEVENT_BODY_BPF_EVENT:
		printf(", \"bpf_event\": {\"type\": %u", u->bpf_event.type);
		J64(&u->bpf_event, flags); J64(&u->bpf_event, id);
		printf(", ");
		json_hex("tag", u->bpf_event.tag, 8);
		break;
	case UEVENT_BODY_UEVENT:
		printf(", \"uevent\": {\"record_type\": %u", u->uevent.record_type);
		J64(&u->uevent, misc); J64(&u->uevent, record_size); J64(&u->uevent, format);
		J64(&u->uevent, type); J64(&u->uevent, flags); J64(&u->uevent, size);
		printf(", ");
		json_hex("data", u->uevent.data, u->uevent.size);
		printf(", \"id_fields\": %u", u->uevent.id.fields);
		J64(&u->uevent.id, pid); J64(&u->uevent.id, tid);
		J64(&u->uevent.id, time); J64(&u->uevent.id, id); J64(&u->uevent.id, stream_id);
		J64(&u->uevent.id, cpu); J64(&u->uevent.id, identifier);
		break;
	default:
		printf(", \"other\": {\"size\": %u, ", u->other.size);
		json_hex("data", u->other.data, u->other.size);
		break;
	}
	putchar('}');
}

static void print_perf_record(const struct uevent_perf_record *r, int json, int bo)
{
	const char *name = uevent_perf_record_name(r->type);
	static const char *const tnames[] = { "auto", "prctl", "user_events", "usdt", "ftrace",
					      "file", "none" };

	if (json) {
		printf("{\"time\": %" PRIu64 ", \"pid\": %u, \"tid\": %u, \"cpu\": %u, \"record\": ",
		       r->id.time, r->id.pid, r->id.tid, r->id.cpu);
		json_str(name ? name : "unknown");
		printf(", \"record_type\": %u", r->type);
	} else {
		printf("%" PRIu64 ".%09" PRIu64 " %u/%u %s", r->id.time / 1000000000u,
		       r->id.time % 1000000000u, r->id.pid, r->id.tid, name ? name : "unknown");
		if (!name)
			printf("(%u)", r->type);
	}
	switch (r->type) {
	case PERF_RECORD_UEVENT:
		if (json) {
			printf(", \"transport\": ");
			json_str(r->transport < 7 ? tnames[r->transport] : "?");
			printf(", ");
		}
		print_payload(&r->u.uevent, json, bo);
		break;
	case PERF_RECORD_SAMPLE:
		printf(json ? ", \"ip\": %" PRIu64 ", \"period\": %" PRIu64 : " ip=%#" PRIx64 " period=%" PRIu64,
		       r->u.sample.ip, r->u.sample.period);
		if (r->u.sample.tls_user_size)
			printf(json ? ", \"tls_bytes\": %" PRIu64 : " tls=%" PRIu64 "B",
			       r->u.sample.tls_user_dyn_size);
		break;
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		if (json) {
			printf(", \"addr\": %" PRIu64 ", \"len\": %" PRIu64 ", \"filename\": ",
			       r->u.mmap.addr, r->u.mmap.len);
			json_str(r->u.mmap.filename);
		} else {
			printf(" %#" PRIx64 "+%#" PRIx64 " %s", r->u.mmap.addr, r->u.mmap.len,
			       r->u.mmap.filename);
		}
		break;
	case PERF_RECORD_COMM:
		if (!json)		/* JSON: in the "comm" member */
			printf(" %s", r->u.comm.comm);
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		printf(json ? ", \"task_pid\": %u, \"ppid\": %u" : " pid=%u ppid=%u",
		       r->u.task.pid, r->u.task.ppid);
		break;
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES:
		if (!json)		/* JSON: in the "lost" member */
			printf(" lost=%" PRIu64, r->u.lost.lost);
		break;
	case PERF_RECORD_KSYMBOL:
		if (json) {
			printf(", \"addr\": %" PRIu64 ", \"name\": ", r->u.ksymbol.addr);
			json_str(r->u.ksymbol.name);
		} else {
			printf(" %#" PRIx64 " %s", r->u.ksymbol.addr, r->u.ksymbol.name);
		}
		break;
	case PERF_RECORD_BPF_EVENT:
		printf(json ? ", \"bpf_type\": %u, \"bpf_id\": %u" : " type=%u id=%u",
		       r->u.bpf_event.type, r->u.bpf_event.id);
		break;
	}
	if (json)
		json_perf_body(r, bo);
	printf(json ? "}\n" : "\n");
}

static int dump_perf(const char *path, int json)
{
	struct uevent_perf_file *f = uevent_perf_file__open(path);
	struct uevent_perf_record r = { .sz = sizeof(r) };
	unsigned long n = 0, nu = 0;
	uint64_t lost = 0;
	int ret, i;

	if (!f) {
		fprintf(stderr, "%s dump: %s\n", prog, open_error(path, errno, 1));
		return 1;
	}
	if (!json)
		for (i = 0; i < uevent_perf_file__nr_events(f); i++)
			printf("# event %d: %s\n", i, uevent_perf_file__event_name(f, i));
	while ((ret = uevent_perf_file__next(f, &r)) != 0) {
		if (ret == -EPROTO)
			continue;
		if (ret < 0) {
			fprintf(stderr, "%s dump: %s: corrupt record at offset %" PRIu64 ": %s\n",
				prog, path, uevent_perf_file__offset(f), strerror(-ret));
			uevent_perf_file__close(f);
			return 1;
		}
		if (r.type >= 64 && !json)
			continue;	/* perf's own bookkeeping (FINISHED_ROUND, ...) */
		n++;
		nu += r.type == PERF_RECORD_UEVENT;
		if (r.type == PERF_RECORD_LOST || r.type == PERF_RECORD_LOST_SAMPLES)
			lost += r.u.lost.lost;
		print_perf_record(&r, json, uevent_perf_file__byte_order(f));
	}
	uevent_perf_file__close(f);
	if (!json)
		fprintf(stderr, "%lu records, %lu uevents, %" PRIu64 " lost\n", n, nu, lost);
	return 0;
}

/* Records of either kind of capture, as perf records. */
struct src {
	struct uevent_file_reader *fr;
	struct uevent_perf_file *pf;
	const char *path;
	int bo;			/* byte order of the payloads */
};

static int src_open(struct src *s, const char *path)
{
	memset(s, 0, sizeof(*s));
	s->path = path;
	if (is_perf_data(path))
		s->pf = uevent_perf_file__open(path);
	else
		s->fr = uevent_file_reader__open(path);
	return s->pf || s->fr ? 0 : -errno;
}

static int src_next(struct src *s, struct uevent_perf_record *r)
{
	int ret;

	s->bo = s->pf ? uevent_perf_file__byte_order(s->pf) : uevent_file_reader__byte_order(s->fr);
	if (s->pf) {
		while ((ret = uevent_perf_file__next(s->pf, r)) == -EPROTO)
			;
		return ret;
	}
	memset(r, 0, sizeof(*r));
	r->sz = sizeof(*r);
	r->u.uevent.sz = sizeof(r->u.uevent);
	while ((ret = uevent_file_reader__next(s->fr, &r->u.uevent)) == -EPROTO)
		;
	if (ret > 0) {
		r->type = PERF_RECORD_UEVENT;
		r->body = UEVENT_BODY_UEVENT;
		r->transport = UEVENT_TRANSPORT_FILE;
		r->id = r->u.uevent.id;
	}
	return ret;
}

static void src_close(struct src *s)
{
	uevent_perf_file__close(s->pf);
	uevent_file_reader__close(s->fr);
}

static void fjson_str(FILE *f, const char *s, size_t max)
{
	size_t i;

	fputc('"', f);
	for (i = 0; s[i] && i < max; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

/* Trace Event Format: marks are instant events, ranges B/E (async: b/e), counters C. */
static int cmd_export(int argc, char **argv)
{
	const char *out = NULL, *in = NULL;
	struct uevent_perf_record r = { .sz = sizeof(r) };
	struct src src;
	uint64_t names_id[256] = { 0 };
	char names[256][64];
	unsigned long n = 0;
	int i, ret, first = 1;
	FILE *f;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--chrome") && i + 1 < argc)
			out = argv[++i];
		else if (argv[i][0] == '-' && argv[i][1]) {
			fprintf(stderr, "%s export: unknown option '%s'\n", prog, argv[i]);
			return 2;
		} else
			in = argv[i];
	}
	if (!out || !in) {
		fprintf(stderr, "%s export: usage: export --chrome OUT.json FILE\n", prog);
		return 2;
	}
	if (src_open(&src, in) < 0) {
		fprintf(stderr, "%s export: %s\n", prog, open_error(in, errno, is_perf_data(in)));
		return 1;
	}
	f = strcmp(out, "-") ? fopen(out, "w") : stdout;
	if (!f) {
		fprintf(stderr, "%s export: %s: %s\n", prog, out, strerror(errno));
		src_close(&src);
		return 1;
	}
	fprintf(f, "{\"displayTimeUnit\": \"ns\", \"traceEvents\": [");
	while ((ret = src_next(&src, &r)) > 0) {
		const struct uevent_record *u = &r.u.uevent;
		struct uevent_text t;
		struct uevent_counter c;
		struct uevent_range_begin rb;
		struct uevent_range_end re;
		double ts = (double)r.id.time / 1000.0;

		if (r.type != PERF_RECORD_UEVENT)
			continue;
#define EV_HEAD(ph) fprintf(f, "%s\n{\"ph\": \"%s\", \"ts\": %.3f, \"pid\": %u, \"tid\": %u, " \
			    "\"cat\": \"uevent\"", first ? "" : ",", ph, ts, r.id.pid, r.id.tid)
		if (u->type == UEVENT_TYPE_TEXT && !uevent_text_decode(u->data, u->size, src.bo, &t)) {
			EV_HEAD("i");
			fprintf(f, ", \"s\": \"t\", \"name\": ");
			fjson_str(f, t.text, 4096);
		} else if (u->type == UEVENT_TYPE_COUNTER &&
			   !uevent_counter_decode(u->data, u->size, src.bo, &c)) {
			EV_HEAD("C");
			fprintf(f, ", \"name\": ");
			fjson_str(f, c.name, 4096);
			fprintf(f, ", \"args\": {");
			fjson_str(f, c.name, 4096);
			fprintf(f, ": %" PRId64 "}", c.value);
		} else if (u->type == UEVENT_TYPE_RANGE_BEGIN &&
			   !uevent_range_begin_decode(u->data, u->size, src.bo, &rb)) {
			int async = rb.flags & UEVENT_RANGE_ASYNC;

			names_id[rb.id % 256] = rb.id;
			snprintf(names[rb.id % 256], sizeof(names[0]), "%s", rb.name);
			EV_HEAD(async ? "b" : "B");
			fprintf(f, ", \"name\": ");
			fjson_str(f, rb.name, 4096);
			if (async)
				fprintf(f, ", \"id\": \"0x%" PRIx64 "\"", rb.id);
		} else if (u->type == UEVENT_TYPE_RANGE_END &&
			   !uevent_range_end_decode(u->data, u->size, src.bo, &re)) {
			int async = re.flags & UEVENT_RANGE_ASYNC;
			const char *nm = names_id[re.id % 256] == re.id ? names[re.id % 256] : "range";

			EV_HEAD(async ? "e" : "E");
			fprintf(f, ", \"name\": ");
			fjson_str(f, nm, 64);
			if (async)
				fprintf(f, ", \"id\": \"0x%" PRIx64 "\"", re.id);
		} else {
			const char *tn = uevent_type_name(u->type);

			EV_HEAD("i");
			fprintf(f, ", \"s\": \"t\", \"name\": ");
			fjson_str(f, tn ? tn : "user", 64);
			fprintf(f, ", \"args\": {\"type\": %u, \"size\": %u}", u->type, u->size);
		}
#undef EV_HEAD
		fprintf(f, "}");
		first = 0;
		n++;
	}
	fprintf(f, "\n]}\n");
	src_close(&src);
	if (f != stdout && fclose(f) != 0) {
		fprintf(stderr, "%s export: %s: %s\n", prog, out, strerror(errno));
		return 1;
	}
	if (ret < 0) {
		fprintf(stderr, "%s export: %s: corrupt record: %s\n", prog, in, strerror(-ret));
		return 1;
	}
	fprintf(stderr, "%lu events written to %s\n", n, out);
	return 0;
}

static volatile sig_atomic_t got_signal;

static void on_signal(int sig)
{
	got_signal = sig;
}

static int cmd_record(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "transport", required_argument, NULL, 't' },
		{ "usdt-bytes", required_argument, NULL, 'n' },
		{ "bpf", no_argument, NULL, 'b' },
		{ "all", no_argument, NULL, 'a' },
		{ "sample-ns", required_argument, NULL, 'F' },
		{ "tls", required_argument, NULL, 'T' },
		{ "ring-pages", required_argument, NULL, 'm' },
		{ "cpus", required_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct uevent_session_opts so = { .sz = sizeof(so) };
	const char *out = "uevent.data", *tlist = NULL;
	struct uevent_session_stats st;
	struct uevent_perf_record r = { .sz = sizeof(r) };
	struct uevent_session *s;
	unsigned long nrec = 0, nuev = 0, nsamples = 0, nbpf = 0;
	int c, go[2], status = 0, ret, fd, done = 0, idle = 0, failed = 0, usdt_only = 0;
	pid_t child;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+o:t:n:baF:m:C:h", opts, NULL)) != -1) {
		char *end = NULL;
		unsigned long long v = 0;

		if (c == 'n' || c == 'F' || c == 'T' || c == 'm') {
			errno = 0;
			v = strtoull(optarg, &end, 0);
			if (errno || !*optarg || *end || !v) {
				fprintf(stderr, "%s record: '%s' is not a positive number\n", prog, optarg);
				return 2;
			}
		}
		switch (c) {
		case 'o': out = optarg; break;
		case 't': tlist = optarg; break;
		case 'n': so.usdt_max_payload = (unsigned int)v; break;
		case 'b': so.flags |= UEVENT_SESSION_BPF_EVENTS; break;
		case 'C': so.cpus = optarg; break;
		case 'a': so.flags |= UEVENT_SESSION_ALL_RECORDS; break;
		case 'F': so.sample_period_ns = v; break;
		case 'T': so.tls_user = (unsigned int)v; break;
		case 'm':
			if (v & (v - 1)) {
				fprintf(stderr, "%s record: --ring-pages must be a power of 2\n", prog);
				return 2;
			}
			so.ring_pages = (unsigned int)v;
			break;
		case 'h': usage(stdout); return 0;
		default: return 2;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "%s record: which command? (uevent record -- CMD ARGS...)\n", prog);
		return 2;
	}
	if (so.tls_user && !so.sample_period_ns) {
		fprintf(stderr, "%s record: --tls needs samples (--sample-ns NS)\n", prog);
		return 2;
	}
	if (tlist) {
		char tmp[128], *tok, *save = NULL;

		snprintf(tmp, sizeof(tmp), "%s", tlist);
		for (tok = strtok_r(tmp, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			int t = uevent_transport_from_name(tok);

			if (t != UEVENT_TRANSPORT_PRCTL && t != UEVENT_TRANSPORT_USDT &&
			    t != UEVENT_TRANSPORT_USER_EVENTS) {
				fprintf(stderr, "%s record: cannot read transport '%s' (readable: "
					"prctl, user_events, usdt)\n", prog, tok);
				return 2;
			}
			so.transports |= 1u << t;
		}
	}
	fd = strcmp(out, "-") ? open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)
			      : dup(1);
	if (fd < 0) {
		fprintf(stderr, "%s record: %s: %s\n", prog, out, strerror(errno));
		return 1;
	}
	if (pipe2(go, O_CLOEXEC) < 0)
		return 1;
	child = fork();
	if (child < 0) {
		fprintf(stderr, "%s record: fork: %s\n", prog, strerror(errno));
		return 1;
	}
	if (child == 0) {
		char name[32];
		ssize_t n;

		/* wait until the session listens; the parent sends the transport to use */
		close(go[1]);
		n = read(go[0], name, sizeof(name) - 1);
		if (n <= 0)
			_exit(127);
		name[n] = 0;
		setenv("UEVENT_TRANSPORT", name, 1);
		/*
		 * The session attaches to each copy of libuevent's probes the command's
		 * processes map, when it sees the mapping: their libuevent waits for that
		 * (up to 5 s: a uprobe takes an RCU grace period to install) before the
		 * program runs.
		 */
		if (!strcmp(name, "usdt"))
			setenv("UEVENT_WAIT_TRACER", "5000", 1);
		execvp(argv[optind], argv + optind);
		fprintf(stderr, "%s record: cannot run %s: %s\n", prog, argv[optind], strerror(errno));
		_exit(127);
	}
	close(go[0]);
	so.pid = child;
	s = uevent_session__open(&so);
	if (!s || uevent_session__record_to(s, fd) < 0) {
		int err = errno;

		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		uevent_session__close(s);
		close(fd);
		if (strcmp(out, "-"))
			unlink(out);
		if (!s && (err == EACCES || err == EPERM))
			fprintf(stderr, "%s record: not allowed to open perf events or tracefs (%s; "
				"perf_event_paranoid is %d): run as root\n", prog,
				uevent_perf_open_reason(), uevent_perf_paranoid());
		else if (!s)
			fprintf(stderr, "%s record: cannot start a session: %s (%s)\n", prog,
				strerror(err), uevent_perf_open_reason());
		else
			fprintf(stderr, "%s record: %s: %s\n", prog, out, strerror(err));
		return 1;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGPIPE, SIG_IGN);
	{
		/* the child emits through what we read best; usdt marks fire under any transport */
		unsigned int t = uevent_session__transports(s);
		const char *name = t & (1u << UEVENT_TRANSPORT_PRCTL) ? "prctl" :
				   t & (1u << UEVENT_TRANSPORT_USER_EVENTS) ? "user_events" : "usdt";

		usdt_only = !strcmp(name, "usdt");

		if (write(go[1], name, strlen(name)) != (ssize_t)strlen(name))
			return 1;
	}
	close(go[1]);
	for (;;) {
		ret = uevent_session__next(s, &r, done ? 0 : 100);
		if (ret < 0 && ret != -EINTR) {
			fprintf(stderr, "%s record: %s: %s\n", prog, out, strerror(-ret));
			failed = 1;
			if (!done)
				kill(child, SIGTERM);
			break;
		}
		if (ret > 0) {
			nrec++;
			nuev += r.type == PERF_RECORD_UEVENT;
			nsamples += r.type == PERF_RECORD_SAMPLE;
			nbpf += r.type == PERF_RECORD_BPF_EVENT;
			continue;
		}
		if (done && ++idle > 1)
			break;
		if (!done && waitpid(child, &status, WNOHANG) == child)
			done = 1;
		if (got_signal && !done)
			kill(child, got_signal);
	}
	if (!done)
		waitpid(child, &status, 0);
	uevent_session__stats(s, &st, sizeof(st));
	uevent_session__close(s);
	if (close(fd) < 0 && !failed) {
		fprintf(stderr, "%s record: %s: %s\n", prog, out, strerror(errno));
		failed = 1;
	}
	fprintf(stderr, "%s record: %lu uevents", prog, nuev);
	if (so.sample_period_ns)
		fprintf(stderr, ", %lu samples", nsamples);
	if (so.flags & UEVENT_SESSION_BPF_EVENTS)
		fprintf(stderr, ", %lu BPF events", nbpf);
	/* the kernel's counts, read after the last records: also losses no LOST record told */
	fprintf(stderr, " written to %s (%lu records; lost %" PRIu64 ", truncated %" PRIu64 "%s",
		out, nrec, (st.lost_counted > st.lost ? st.lost_counted : st.lost) + st.lost_samples,
		st.truncated, st.trimmed ? ", " : ")\n");
	if (st.trimmed)
		fprintf(stderr, "%" PRIu64 " BPF side-band records the kernel wrote too long, trimmed)\n",
			st.trimmed);
	if (!nuev && !st.usdt_objects && usdt_only)
		fprintf(stderr, "%s record: %s never mapped libuevent's probes (no executable or "
			"library with the libuevent:emit16..emit4096 SDT notes): it cannot have "
			"made marks\n", prog, argv[optind]);
	if (failed)
		return 1;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

static int cmd_dump(int argc, char **argv)
{
	struct uevent_file_reader *rd;
	struct uevent_record rec = { .sz = sizeof(rec) };
	const char *path = NULL;
	int json = 0, i, ret;
	unsigned long n = 0;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json"))
			json = 1;
		else if (argv[i][0] == '-' && argv[i][1]) {
			fprintf(stderr, "%s dump: unknown option '%s'\n", prog, argv[i]);
			return 2;
		} else
			path = argv[i];
	}
	if (!path) {
		fprintf(stderr, "%s dump: which file?\n", prog);
		return 2;
	}
	if (is_perf_data(path))
		return dump_perf(path, json);
	rd = uevent_file_reader__open(path);
	if (!rd) {
		fprintf(stderr, "%s dump: %s: %s\n", prog, path,
			errno == EINVAL ? "not a uevent capture (bad header)" : strerror(errno));
		return 1;
	}
	while ((ret = uevent_file_reader__next(rd, &rec)) != 0) {
		if (ret == -EPROTO) {
			fprintf(stderr, "%s dump: %s: skipping record of unknown format %u\n",
				prog, path, rec.format);
			continue;
		}
		if (ret < 0) {
			fprintf(stderr, "%s dump: %s: corrupt record at offset %" PRIu64 ": %s\n",
				prog, path, uevent_file_reader__offset(rd), strerror(-ret));
			uevent_file_reader__close(rd);
			return 1;
		}
		n++;
		if (json) {
			printf("{\"time\": %" PRIu64 ", \"pid\": %u, \"tid\": %u, \"size\": %u, ",
			       rec.id.time, rec.id.pid, rec.id.tid, rec.size);
			print_payload(&rec, 1, uevent_file_reader__byte_order(rd));
			printf("}\n");
		} else {
			printf("%" PRIu64 ".%09" PRIu64 " %u/%u", rec.id.time / 1000000000u,
			       rec.id.time % 1000000000u, rec.id.pid, rec.id.tid);
			print_payload(&rec, 0, uevent_file_reader__byte_order(rd));
			putchar('\n');
		}
	}
	uevent_file_reader__close(rd);
	if (!json)
		fprintf(stderr, "%lu records\n", n);
	return 0;
}

int main(int argc, char **argv)
{
	const char *cmd;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	cmd = argv[1];
	if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(cmd, "version") || !strcmp(cmd, "--version") || !strcmp(cmd, "-V")) {
		printf("uevent %s (library %s)\n", PACKAGE_VERSION, uevent_version());
		return 0;
	}
	if (!strcmp(cmd, "probe"))
		return cmd_probe(argc - 1, argv + 1);
	if (!strcmp(cmd, "emit"))
		return cmd_emit(argc - 1, argv + 1);
	if (!strcmp(cmd, "dump"))
		return cmd_dump(argc - 1, argv + 1);
	if (!strcmp(cmd, "record"))
		return cmd_record(argc - 1, argv + 1);
	if (!strcmp(cmd, "export"))
		return cmd_export(argc - 1, argv + 1);
	fprintf(stderr, "%s: unknown command '%s' (try '%s --help')\n", prog, cmd, prog);
	return 2;
}
