/* uevent-json.h - generated from libuevent/uevent.h by tools/gen_json.py:
 * `uevent dump --json`'s printer for each record struct, keys named as the
 * members. Do not edit: change uevent.h and run `make records`. */

static void json_uevent_sample_id(const struct uevent_sample_id *s, int bo)
{
	(void)bo;
	printf("{\"fields\": %" PRIu64, (uint64_t)s->fields);
	printf(", \"pid\": %" PRIu64, (uint64_t)s->pid);
	printf(", \"tid\": %" PRIu64, (uint64_t)s->tid);
	printf(", \"time\": %" PRIu64, (uint64_t)s->time);
	printf(", \"id\": %" PRIu64, (uint64_t)s->id);
	printf(", \"stream_id\": %" PRIu64, (uint64_t)s->stream_id);
	printf(", \"cpu\": %" PRIu64, (uint64_t)s->cpu);
	printf(", \"identifier\": %" PRIu64, (uint64_t)s->identifier);
	putchar('}');
}

static void json_uevent_perf_read(const struct uevent_perf_read *s, int bo)
{
	printf("{\"nr\": %" PRIu64, (uint64_t)s->nr);
	printf(", \"time_enabled\": %" PRIu64, (uint64_t)s->time_enabled);
	printf(", \"time_running\": %" PRIu64, (uint64_t)s->time_running);
	printf(", \"value\": %" PRIu64, (uint64_t)s->value);
	printf(", \"id\": %" PRIu64, (uint64_t)s->id);
	printf(", \"lost\": %" PRIu64, (uint64_t)s->lost);
	printf(", \"values\": "); json_u64s(s->values, s->nr, s->entry_size / 8, 1, bo);
	printf(", \"entry_size\": %" PRIu64, (uint64_t)s->entry_size);
	putchar('}');
}

static void json_uevent_perf_sample(const struct uevent_perf_sample *s, int bo)
{
	printf("{\"identifier\": %" PRIu64, (uint64_t)s->identifier);
	printf(", \"ip\": %" PRIu64, (uint64_t)s->ip);
	printf(", \"pid\": %" PRIu64, (uint64_t)s->pid);
	printf(", \"tid\": %" PRIu64, (uint64_t)s->tid);
	printf(", \"time\": %" PRIu64, (uint64_t)s->time);
	printf(", \"addr\": %" PRIu64, (uint64_t)s->addr);
	printf(", \"id\": %" PRIu64, (uint64_t)s->id);
	printf(", \"stream_id\": %" PRIu64, (uint64_t)s->stream_id);
	printf(", \"cpu\": %" PRIu64, (uint64_t)s->cpu);
	printf(", \"period\": %" PRIu64, (uint64_t)s->period);
	printf(", \"read\": "); json_uevent_perf_read(&s->read, bo);
	printf(", \"callchain_nr\": %" PRIu64, (uint64_t)s->callchain_nr);
	printf(", \"callchain\": "); json_u64s(s->callchain, s->callchain_nr, 1, 0, bo);
	printf(", \"raw_size\": %" PRIu64, (uint64_t)s->raw_size);
	printf(", \"raw\": "); json_bytes(s->raw, s->raw_size);
	printf(", \"branch_nr\": %" PRIu64, (uint64_t)s->branch_nr);
	printf(", \"branch_hw_idx\": %" PRIu64, (uint64_t)s->branch_hw_idx);
	printf(", \"branch_entries\": "); json_u64s(s->branch_entries, s->branch_nr, 3, 1, bo);
	printf(", \"branch_counters\": "); json_u64s(s->branch_counters, s->branch_nr, 1, 0, bo);
	printf(", \"regs_user_abi\": %" PRIu64, (uint64_t)s->regs_user_abi);
	printf(", \"regs_user_nr\": %" PRIu64, (uint64_t)s->regs_user_nr);
	printf(", \"regs_user\": "); json_u64s(s->regs_user, s->regs_user_nr, 1, 0, bo);
	printf(", \"stack_user_size\": %" PRIu64, (uint64_t)s->stack_user_size);
	printf(", \"stack_user\": "); json_bytes(s->stack_user, s->stack_user_size);
	printf(", \"stack_user_dyn_size\": %" PRIu64, (uint64_t)s->stack_user_dyn_size);
	printf(", \"weight\": %" PRIu64, (uint64_t)s->weight);
	printf(", \"weight_var1\": %" PRIu64, (uint64_t)s->weight_var1);
	printf(", \"weight_var2\": %" PRIu64, (uint64_t)s->weight_var2);
	printf(", \"weight_var3\": %" PRIu64, (uint64_t)s->weight_var3);
	printf(", \"data_src\": %" PRIu64, (uint64_t)s->data_src);
	printf(", \"transaction\": %" PRIu64, (uint64_t)s->transaction);
	printf(", \"regs_intr_abi\": %" PRIu64, (uint64_t)s->regs_intr_abi);
	printf(", \"regs_intr_nr\": %" PRIu64, (uint64_t)s->regs_intr_nr);
	printf(", \"regs_intr\": "); json_u64s(s->regs_intr, s->regs_intr_nr, 1, 0, bo);
	printf(", \"phys_addr\": %" PRIu64, (uint64_t)s->phys_addr);
	printf(", \"cgroup\": %" PRIu64, (uint64_t)s->cgroup);
	printf(", \"data_page_size\": %" PRIu64, (uint64_t)s->data_page_size);
	printf(", \"code_page_size\": %" PRIu64, (uint64_t)s->code_page_size);
	printf(", \"tls_user_size\": %" PRIu64, (uint64_t)s->tls_user_size);
	printf(", \"tls_user\": "); json_bytes(s->tls_user, s->tls_user_size);
	printf(", \"tls_user_dyn_size\": %" PRIu64, (uint64_t)s->tls_user_dyn_size);
	printf(", \"context_err\": %" PRId64, (int64_t)s->context_err);
	printf(", \"context_trace_id\": "); json_bytes(s->context_trace_id, (16) < sizeof(s->context_trace_id) ? (16) : sizeof(s->context_trace_id));
	printf(", \"context_span_id\": "); json_bytes(s->context_span_id, (8) < sizeof(s->context_span_id) ? (8) : sizeof(s->context_span_id));
	printf(", \"context_flags\": %" PRIu64, (uint64_t)s->context_flags);
	printf(", \"aux_size\": %" PRIu64, (uint64_t)s->aux_size);
	printf(", \"aux\": "); json_bytes(s->aux, s->aux_size);
	printf(", \"event_index\": %" PRId64, (int64_t)s->event_index);
	putchar('}');
}

static void json_uevent_perf_mmap(const struct uevent_perf_mmap *s, int bo)
{
	(void)bo;
	printf("{\"pid\": %" PRIu64, (uint64_t)s->pid);
	printf(", \"tid\": %" PRIu64, (uint64_t)s->tid);
	printf(", \"addr\": %" PRIu64, (uint64_t)s->addr);
	printf(", \"len\": %" PRIu64, (uint64_t)s->len);
	printf(", \"pgoff\": %" PRIu64, (uint64_t)s->pgoff);
	printf(", \"maj\": %" PRIu64, (uint64_t)s->maj);
	printf(", \"min\": %" PRIu64, (uint64_t)s->min);
	printf(", \"ino\": %" PRIu64, (uint64_t)s->ino);
	printf(", \"ino_generation\": %" PRIu64, (uint64_t)s->ino_generation);
	printf(", \"prot\": %" PRIu64, (uint64_t)s->prot);
	printf(", \"flags\": %" PRIu64, (uint64_t)s->flags);
	printf(", \"build_id_size\": %" PRIu64, (uint64_t)s->build_id_size);
	printf(", \"build_id\": "); json_bytes(s->build_id, (s->build_id_size) < sizeof(s->build_id) ? (s->build_id_size) : sizeof(s->build_id));
	printf(", \"filename\": "); json_str(s->filename ? s->filename : "");
	putchar('}');
}

static void json_uevent_perf_comm(const struct uevent_perf_comm *s, int bo)
{
	(void)bo;
	printf("{\"pid\": %" PRIu64, (uint64_t)s->pid);
	printf(", \"tid\": %" PRIu64, (uint64_t)s->tid);
	printf(", \"comm\": "); json_str(s->comm ? s->comm : "");
	putchar('}');
}

static void json_uevent_perf_task(const struct uevent_perf_task *s, int bo)
{
	(void)bo;
	printf("{\"pid\": %" PRIu64, (uint64_t)s->pid);
	printf(", \"ppid\": %" PRIu64, (uint64_t)s->ppid);
	printf(", \"tid\": %" PRIu64, (uint64_t)s->tid);
	printf(", \"ptid\": %" PRIu64, (uint64_t)s->ptid);
	printf(", \"time\": %" PRIu64, (uint64_t)s->time);
	putchar('}');
}

static void json_uevent_perf_lost(const struct uevent_perf_lost *s, int bo)
{
	(void)bo;
	printf("{\"id\": %" PRIu64, (uint64_t)s->id);
	printf(", \"lost\": %" PRIu64, (uint64_t)s->lost);
	putchar('}');
}

static void json_uevent_perf_throttle(const struct uevent_perf_throttle *s, int bo)
{
	(void)bo;
	printf("{\"time\": %" PRIu64, (uint64_t)s->time);
	printf(", \"id\": %" PRIu64, (uint64_t)s->id);
	printf(", \"stream_id\": %" PRIu64, (uint64_t)s->stream_id);
	putchar('}');
}

static void json_uevent_perf_switch(const struct uevent_perf_switch *s, int bo)
{
	(void)bo;
	printf("{\"next_prev_pid\": %" PRIu64, (uint64_t)s->next_prev_pid);
	printf(", \"next_prev_tid\": %" PRIu64, (uint64_t)s->next_prev_tid);
	putchar('}');
}

static void json_uevent_perf_ksymbol(const struct uevent_perf_ksymbol *s, int bo)
{
	(void)bo;
	printf("{\"addr\": %" PRIu64, (uint64_t)s->addr);
	printf(", \"len\": %" PRIu64, (uint64_t)s->len);
	printf(", \"ksym_type\": %" PRIu64, (uint64_t)s->ksym_type);
	printf(", \"flags\": %" PRIu64, (uint64_t)s->flags);
	printf(", \"name\": "); json_str(s->name ? s->name : "");
	putchar('}');
}

static void json_uevent_perf_bpf_event(const struct uevent_perf_bpf_event *s, int bo)
{
	(void)bo;
	printf("{\"type\": %" PRIu64, (uint64_t)s->type);
	printf(", \"flags\": %" PRIu64, (uint64_t)s->flags);
	printf(", \"id\": %" PRIu64, (uint64_t)s->id);
	printf(", \"tag\": "); json_bytes(s->tag, (8) < sizeof(s->tag) ? (8) : sizeof(s->tag));
	putchar('}');
}

static void json_uevent_record(const struct uevent_record *s, int bo)
{
	printf("{\"record_type\": %" PRIu64, (uint64_t)s->record_type);
	printf(", \"misc\": %" PRIu64, (uint64_t)s->misc);
	printf(", \"record_size\": %" PRIu64, (uint64_t)s->record_size);
	printf(", \"format\": %" PRIu64, (uint64_t)s->format);
	printf(", \"type\": %" PRIu64, (uint64_t)s->type);
	printf(", \"flags\": %" PRIu64, (uint64_t)s->flags);
	printf(", \"size\": %" PRIu64, (uint64_t)s->size);
	printf(", \"data\": "); json_bytes(s->data, s->size);
	printf(", \"id\": "); json_uevent_sample_id(&s->id, bo);
	printf(", \"event_index\": %" PRId64, (int64_t)s->event_index);
	putchar('}');
}

static void json_uevent_perf_bytes(const struct uevent_perf_bytes *s, int bo)
{
	(void)bo;
	printf("{\"data\": "); json_bytes(s->data, s->size);
	printf(", \"size\": %" PRIu64, (uint64_t)s->size);
	putchar('}');
}

/* The member the record's body says is set, as "member": {...}. */
static void json_perf_member(const struct uevent_perf_record *r, int bo)
{
	switch (r->body) {
	case UEVENT_BODY_SAMPLE:
		printf(", \"sample\": ");
		json_uevent_perf_sample(&r->u.sample, bo);
		break;
	case UEVENT_BODY_MMAP:
		printf(", \"mmap\": ");
		json_uevent_perf_mmap(&r->u.mmap, bo);
		break;
	case UEVENT_BODY_COMM:
		printf(", \"comm\": ");
		json_uevent_perf_comm(&r->u.comm, bo);
		break;
	case UEVENT_BODY_TASK:
		printf(", \"task\": ");
		json_uevent_perf_task(&r->u.task, bo);
		break;
	case UEVENT_BODY_LOST:
		printf(", \"lost\": ");
		json_uevent_perf_lost(&r->u.lost, bo);
		break;
	case UEVENT_BODY_THROTTLE:
		printf(", \"throttle\": ");
		json_uevent_perf_throttle(&r->u.throttle, bo);
		break;
	case UEVENT_BODY_SW:
		printf(", \"sw\": ");
		json_uevent_perf_switch(&r->u.sw, bo);
		break;
	case UEVENT_BODY_KSYMBOL:
		printf(", \"ksymbol\": ");
		json_uevent_perf_ksymbol(&r->u.ksymbol, bo);
		break;
	case UEVENT_BODY_BPF_EVENT:
		printf(", \"bpf_event\": ");
		json_uevent_perf_bpf_event(&r->u.bpf_event, bo);
		break;
	case UEVENT_BODY_UEVENT:
		printf(", \"uevent\": ");
		json_uevent_record(&r->u.uevent, bo);
		break;
	case UEVENT_BODY_OTHER:
		printf(", \"other\": ");
		json_uevent_perf_bytes(&r->u.other, bo);
		break;
	}
}
