/* perf.c - perf_event_attr helpers, perf_event_open with named features, record decoders. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <linux/perf_uevent.h>

#include "internal.h"
#include "perf-internal.h"

/* ---- attr helpers ------------------------------------------------------------------ */

/* Does an attr of attr->size bytes reach the end of the field at off+len? */
static int attr_has(const struct perf_event_attr *attr, size_t end)
{
	return attr->size >= end;
}

#define ATTR_END(f) (offsetof(struct perf_event_attr, f) + sizeof(((struct perf_event_attr *)0)->f))

UEVENT_EXPORT int uevent_attr_init(struct perf_event_attr *attr, size_t attr_size, uint32_t type,
				   uint64_t config)
{
	if (!attr)
		return _uevent_err(EINVAL);
	if (attr_size < PERF_ATTR_SIZE_VER0 || attr_size > 4096)
		return _uevent_err(E2BIG);
	memset(attr, 0, attr_size);
	attr->size = (uint32_t)attr_size;
	attr->type = type;
	attr->config = config;
	return 0;
}

UEVENT_EXPORT int uevent_attr_set_uevents(struct perf_event_attr *attr, int on)
{
	if (!attr)
		return _uevent_err(EINVAL);
	attr->uevents = on ? 1 : 0;
	return 0;
}

UEVENT_EXPORT int uevent_attr_set_bpf_event(struct perf_event_attr *attr, int on)
{
	if (!attr)
		return _uevent_err(EINVAL);
	attr->bpf_event = on ? 1 : 0;
	attr->ksymbol = on ? 1 : 0;
	return 0;
}

UEVENT_EXPORT int uevent_attr_set_tls_user(struct perf_event_attr *attr, uint32_t bytes)
{
	if (!attr)
		return _uevent_err(EINVAL);
	if (bytes > UINT16_MAX || !attr_has(attr, ATTR_END(sample_tls_user)))
		return _uevent_err(E2BIG);
	attr->sample_tls_user = (uint16_t)bytes;
	if (bytes)
		attr->sample_type |= PERF_SAMPLE_TLS_USER;
	else
		attr->sample_type &= ~(uint64_t)PERF_SAMPLE_TLS_USER;
	return 0;
}

UEVENT_EXPORT int uevent_attr_set_aux_sample(struct perf_event_attr *attr, uint32_t bytes)
{
	if (!attr)
		return _uevent_err(EINVAL);
	if (!attr_has(attr, ATTR_END(aux_sample_size)))
		return _uevent_err(E2BIG);
	attr->aux_sample_size = bytes;
	if (bytes)
		attr->sample_type |= PERF_SAMPLE_AUX;
	else
		attr->sample_type &= ~(uint64_t)PERF_SAMPLE_AUX;
	return 0;
}

#define ID_BITS (PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | \
		 PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER)

UEVENT_EXPORT int uevent_attr_set_sample_id_all(struct perf_event_attr *attr, uint64_t st)
{
	if (!attr || (st & ~(uint64_t)ID_BITS))
		return _uevent_err(EINVAL);
	attr->sample_id_all = 1;
	attr->sample_type |= st;
	return 0;
}

UEVENT_EXPORT int uevent_attr_set_clock(struct perf_event_attr *attr, int clockid)
{
	if (!attr)
		return _uevent_err(EINVAL);
	if (clockid < 0) {
		attr->use_clockid = 0;
		attr->clockid = 0;
	} else {
		attr->use_clockid = 1;
		attr->clockid = clockid;
	}
	return 0;
}

/* ---- perf_event_open --------------------------------------------------------------- */

static __thread char open_reason[512];

static int sys_perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
			       unsigned long flags)
{
	return (int)syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, flags);
}

/* The features a kernel may lack; feat_has/feat_clear take them out of an attr. */
static const struct {
	const char *name;
} features[] = {
	{ "attr.uevents" },
	{ "PERF_SAMPLE_TLS_USER (attr.sample_tls_user)" },
	{ "PERF_SAMPLE_AUX (attr.aux_sample_size)" },
	{ "attr.bpf_event/attr.ksymbol" },
	{ "attr.use_clockid" },
};

static int feat_has(int i, const struct perf_event_attr *a)
{
	switch (i) {
	case 0: return a->uevents;
	case 1: return (a->sample_type & PERF_SAMPLE_TLS_USER) || a->sample_tls_user;
	case 2: return (a->sample_type & PERF_SAMPLE_AUX) || a->aux_sample_size;
	case 3: return a->bpf_event || a->ksymbol;
	case 4: return a->use_clockid;
	}
	return 0;
}

static void feat_clear(int i, struct perf_event_attr *a)
{
	switch (i) {
	case 0: a->uevents = 0; break;
	case 1: a->sample_type &= ~(uint64_t)PERF_SAMPLE_TLS_USER; a->sample_tls_user = 0; break;
	case 2: a->sample_type &= ~(uint64_t)PERF_SAMPLE_AUX; a->aux_sample_size = 0; break;
	case 3: a->bpf_event = 0; a->ksymbol = 0; break;
	case 4: a->use_clockid = 0; a->clockid = 0; break;
	}
}

UEVENT_EXPORT int uevent_perf_open(struct perf_event_attr *attr, int pid, int cpu, int group_fd,
				   unsigned long flags)
{
	struct perf_event_attr copy;
	unsigned long kflags;
	int fd, err;
	size_t i;

	if (!attr)
		return _uevent_err(EFAULT);
	kflags = flags & ~(unsigned long)UEVENT_PERF_FLAG_NO_CLOEXEC;
	if (!(flags & UEVENT_PERF_FLAG_NO_CLOEXEC))
		kflags |= PERF_FLAG_FD_CLOEXEC;
	open_reason[0] = 0;
	fd = sys_perf_event_open(attr, pid, cpu, group_fd, kflags);
	if (fd >= 0)
		return fd;
	err = errno;
	snprintf(open_reason, sizeof(open_reason), "perf_event_open: %s", strerror(err));
	if ((err != EINVAL && err != E2BIG) || attr->size > sizeof(copy))
		return _uevent_err(err);
	/* Which of our features does this kernel refuse? Take each out and ask again. */
	for (i = 0; i < ARRAY_SIZE(features); i++) {
		if (!feat_has((int)i, attr))
			continue;
		memset(&copy, 0, sizeof(copy));
		memcpy(&copy, attr, attr->size);
		feat_clear((int)i, &copy);
		fd = sys_perf_event_open(&copy, pid, cpu, group_fd, kflags);
		if (fd >= 0) {
			close(fd);
			snprintf(open_reason, sizeof(open_reason),
				 "%s is not supported by this kernel (perf_event_open: %s)",
				 features[i].name, strerror(err));
			return _uevent_err(EOPNOTSUPP);
		}
	}
	return _uevent_err(err);
}

void _uevent_set_open_reason(const char *why)
{
	snprintf(open_reason, sizeof(open_reason), "%s", why);
}

UEVENT_EXPORT const char *uevent_perf_open_reason(void)
{
	return open_reason;
}

/* ---- decoding ---------------------------------------------------------------------- */

UEVENT_EXPORT int uevent_perf_format_from_attr(struct uevent_perf_format *fmt,
					       const struct perf_event_attr *attr,
					       size_t attr_size)
{
	struct perf_event_attr a;

	if (!fmt || !attr || attr_size < PERF_ATTR_SIZE_VER0)
		return _uevent_err(EINVAL);
	memset(&a, 0, sizeof(a));
	memcpy(&a, attr, attr_size < sizeof(a) ? attr_size : sizeof(a));
	memset(fmt, 0, sizeof(*fmt));
	fmt->sz = sizeof(*fmt);
	fmt->sample_type = a.sample_type;
	fmt->read_format = a.read_format;
	fmt->sample_id_all = a.sample_id_all;
	if (attr_size >= PERF_ATTR_SIZE_VER1)
		fmt->branch_sample_type = a.branch_sample_type;
	if (attr_size >= PERF_ATTR_SIZE_VER3)
		fmt->sample_regs_user = a.sample_regs_user;
	if (attr_size >= PERF_ATTR_SIZE_VER4)
		fmt->sample_regs_intr = a.sample_regs_intr;
	return 0;
}

/* A NUL-terminated string filling (with padding) the rest of the cursor. */
static const char *gstr(struct _uevent_cur *c)
{
	const char *s = (const char *)c->p;

	if (c->bad || c->p >= c->end || !memchr(c->p, 0, (size_t)(c->end - c->p))) {
		c->bad = 1;
		return NULL;
	}
	c->p = c->end;
	return s;
}

UEVENT_EXPORT uint64_t uevent_perf_u64(const void *array, uint64_t i, int bo)
{
	uint64_t v;

	if (!array)
		return 0;
	memcpy(&v, (const uint8_t *)array + i * 8, 8);
	return _uevent_need_swap(bo) ? __builtin_bswap64(v) : v;
}

size_t _uevent_sample_id_size(uint64_t st)
{
	return 8 * (size_t)__builtin_popcountll(st & ID_BITS);
}

/*
 * The bytes a KSYMBOL or BPF_EVENT record of size bytes really uses: header, body and an
 * idsz-byte sample_id. Some kernels write these records longer than that when more than
 * one event listens: perf_event_header__init_id() adds each listener's sample_id size
 * to the one header all listeners share, so a record's size also counts the sample_id
 * sizes of the listeners served before it (Linux 5.1, which added these records, until
 * the size was set afresh per listener; this host's 6.18.44 does it). The extra bytes
 * at the end are whatever the ring held; the sample_id follows the body, where perf's
 * rule (the sample_id is the record's last bytes) does not look. Returns size for any
 * other record or shape.
 */
size_t _uevent_sideband_used(const void *buf, size_t size, uint32_t type, size_t idsz)
{
	const uint8_t *b = buf, *nul;
	size_t body;

	if (type == PERF_RECORD_BPF_EVENT) {
		body = 24;
	} else if (type == PERF_RECORD_KSYMBOL && size > 24) {
		nul = memchr(b + 24, 0, size - 24);
		if (!nul)
			return size;
		body = ((size_t)(nul - b) + 1 + 7) & ~(size_t)7;
	} else {
		return size;
	}
	return body + idsz < size ? body + idsz : size;
}

static void read_id(struct _uevent_cur *c, uint64_t st, struct uevent_sample_id *id)
{
	if (st & PERF_SAMPLE_TID) {
		id->pid = _uevent_get32(c);
		id->tid = _uevent_get32(c);
		id->fields |= UEVENT_ID_TID;
	}
	if (st & PERF_SAMPLE_TIME) {
		id->time = _uevent_get64(c);
		id->fields |= UEVENT_ID_TIME;
	}
	if (st & PERF_SAMPLE_ID) {
		id->id = _uevent_get64(c);
		id->fields |= UEVENT_ID_ID;
	}
	if (st & PERF_SAMPLE_STREAM_ID) {
		id->stream_id = _uevent_get64(c);
		id->fields |= UEVENT_ID_STREAM_ID;
	}
	if (st & PERF_SAMPLE_CPU) {
		id->cpu = _uevent_get32(c);
		_uevent_get32(c);
		id->fields |= UEVENT_ID_CPU;
	}
	if (st & PERF_SAMPLE_IDENTIFIER) {
		id->identifier = _uevent_get64(c);
		id->fields |= UEVENT_ID_IDENTIFIER;
	}
}

static void read_values(struct _uevent_cur *c, uint64_t rf, struct uevent_perf_read *r)
{
	uint32_t per = 8;

	if (rf & PERF_FORMAT_ID)
		per += 8;
	if (rf & PERF_FORMAT_LOST)
		per += 8;
	r->entry_size = per;
	if (rf & PERF_FORMAT_GROUP) {
		struct _uevent_cur e;

		r->nr = _uevent_get64(c);
		if (rf & PERF_FORMAT_TOTAL_TIME_ENABLED)
			r->time_enabled = _uevent_get64(c);
		if (rf & PERF_FORMAT_TOTAL_TIME_RUNNING)
			r->time_running = _uevent_get64(c);
		if (r->nr > 0xffff) {
			c->bad = 1;
			return;
		}
		r->values = _uevent_take(c, r->nr * per);
		if (r->values && r->nr) {
			e = *c;
			e.p = r->values;
			r->value = _uevent_get64(&e);
			if (rf & PERF_FORMAT_ID)
				r->id = _uevent_get64(&e);
			if (rf & PERF_FORMAT_LOST)
				r->lost = _uevent_get64(&e);
		}
	} else {
		r->nr = 1;
		r->values = c->p;
		r->value = _uevent_get64(c);
		if (rf & PERF_FORMAT_TOTAL_TIME_ENABLED)
			r->time_enabled = _uevent_get64(c);
		if (rf & PERF_FORMAT_TOTAL_TIME_RUNNING)
			r->time_running = _uevent_get64(c);
		if (rf & PERF_FORMAT_ID)
			r->id = _uevent_get64(c);
		if (rf & PERF_FORMAT_LOST)
			r->lost = _uevent_get64(c);
		r->values = NULL;
	}
}

/* u64 abi; u64 regs[popcount(mask)] when abi != 0 */
static void read_regs(struct _uevent_cur *c, uint64_t mask, uint64_t *abi, uint32_t *nr, const void **regs)
{
	*abi = _uevent_get64(c);
	if (*abi) {
		*nr = (uint32_t)__builtin_popcountll(mask);
		*regs = _uevent_take(c, (uint64_t)*nr * 8);
	}
}

/* u64 size; u8 data[size]; u64 dyn_size when size != 0 (STACK_USER and TLS_USER) */
static void read_dump(struct _uevent_cur *c, uint64_t *size, const void **data, uint64_t *dyn)
{
	*size = _uevent_get64(c);
	if (*size) {
		*data = _uevent_take(c, *size);
		*dyn = _uevent_get64(c);
		if (*dyn > *size)
			c->bad = 1;
	}
}

static int decode_sample(struct _uevent_cur *c, const struct uevent_perf_format *f,
			 struct uevent_perf_record *rec)
{
	struct uevent_perf_sample *s = &rec->u.sample;
	uint64_t st = f->sample_type;

	if (st & PERF_SAMPLE_IDENTIFIER)
		s->identifier = _uevent_get64(c);
	if (st & PERF_SAMPLE_IP)
		s->ip = _uevent_get64(c);
	if (st & PERF_SAMPLE_TID) {
		s->pid = _uevent_get32(c);
		s->tid = _uevent_get32(c);
	}
	if (st & PERF_SAMPLE_TIME)
		s->time = _uevent_get64(c);
	if (st & PERF_SAMPLE_ADDR)
		s->addr = _uevent_get64(c);
	if (st & PERF_SAMPLE_ID)
		s->id = _uevent_get64(c);
	if (st & PERF_SAMPLE_STREAM_ID)
		s->stream_id = _uevent_get64(c);
	if (st & PERF_SAMPLE_CPU) {
		s->cpu = _uevent_get32(c);
		_uevent_get32(c);
	}
	if (st & PERF_SAMPLE_PERIOD)
		s->period = _uevent_get64(c);
	if (st & PERF_SAMPLE_READ)
		read_values(c, f->read_format, &s->read);
	if (st & PERF_SAMPLE_CALLCHAIN) {
		s->callchain_nr = _uevent_get64(c);
		if (s->callchain_nr > 0xffff)
			c->bad = 1;
		s->callchain = _uevent_take(c, s->callchain_nr * 8);
	}
	if (st & PERF_SAMPLE_RAW) {
		s->raw_size = _uevent_get32(c);
		s->raw = _uevent_take(c, s->raw_size);
	}
	if (st & PERF_SAMPLE_BRANCH_STACK) {
		s->branch_nr = _uevent_get64(c);
		if (s->branch_nr > 0xffff)
			c->bad = 1;
		if (f->branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX)
			s->branch_hw_idx = _uevent_get64(c);
		s->branch_entries = _uevent_take(c, s->branch_nr * 24);
		if (f->branch_sample_type & PERF_SAMPLE_BRANCH_COUNTERS)
			s->branch_counters = _uevent_take(c, s->branch_nr * 8);
	}
	if (st & PERF_SAMPLE_REGS_USER)
		read_regs(c, f->sample_regs_user, &s->regs_user_abi, &s->regs_user_nr,
			  &s->regs_user);
	if (st & PERF_SAMPLE_STACK_USER)
		read_dump(c, &s->stack_user_size, &s->stack_user, &s->stack_user_dyn_size);
	if (st & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT)) {
		s->weight = _uevent_get64(c);
		s->weight_var1 = (uint32_t)s->weight;
		s->weight_var2 = (uint16_t)(s->weight >> 32);
		s->weight_var3 = (uint16_t)(s->weight >> 48);
		if (st & PERF_SAMPLE_WEIGHT_STRUCT)
			s->weight = s->weight_var1;
	}
	if (st & PERF_SAMPLE_DATA_SRC)
		s->data_src = _uevent_get64(c);
	if (st & PERF_SAMPLE_TRANSACTION)
		s->transaction = _uevent_get64(c);
	if (st & PERF_SAMPLE_REGS_INTR)
		read_regs(c, f->sample_regs_intr, &s->regs_intr_abi, &s->regs_intr_nr,
			  &s->regs_intr);
	if (st & PERF_SAMPLE_PHYS_ADDR)
		s->phys_addr = _uevent_get64(c);
	if (st & PERF_SAMPLE_CGROUP)
		s->cgroup = _uevent_get64(c);
	if (st & PERF_SAMPLE_DATA_PAGE_SIZE)
		s->data_page_size = _uevent_get64(c);
	if (st & PERF_SAMPLE_CODE_PAGE_SIZE)
		s->code_page_size = _uevent_get64(c);
	if (st & PERF_SAMPLE_TLS_USER)
		read_dump(c, &s->tls_user_size, &s->tls_user, &s->tls_user_dyn_size);
	if (st & PERF_SAMPLE_AUX) {
		s->aux_size = _uevent_get64(c);
		s->aux = _uevent_take(c, s->aux_size);
	}
	if (c->bad || c->p != c->end)
		return _uevent_err(EINVAL);

	rec->id.pid = s->pid;
	rec->id.tid = s->tid;
	rec->id.time = s->time;
	rec->id.id = s->id;
	rec->id.stream_id = s->stream_id;
	rec->id.cpu = s->cpu;
	rec->id.identifier = s->identifier;
	rec->id.fields = (st & PERF_SAMPLE_TID ? UEVENT_ID_TID : 0) |
			 (st & PERF_SAMPLE_TIME ? UEVENT_ID_TIME : 0) |
			 (st & PERF_SAMPLE_ID ? UEVENT_ID_ID : 0) |
			 (st & PERF_SAMPLE_STREAM_ID ? UEVENT_ID_STREAM_ID : 0) |
			 (st & PERF_SAMPLE_CPU ? UEVENT_ID_CPU : 0) |
			 (st & PERF_SAMPLE_IDENTIFIER ? UEVENT_ID_IDENTIFIER : 0);
	return 0;
}

UEVENT_EXPORT int uevent_perf_record_decode(const void *buf, size_t len, int bo,
					    const struct uevent_perf_format *f,
					    struct uevent_perf_record *rec)
{
	const uint8_t *b = buf;
	size_t idsz = 0;
	struct _uevent_cur c;
	int err;

	if (!buf && len)
		return _uevent_err(EFAULT);
	if (!rec || !f || f->sz < sizeof(size_t) + 5 * 8 ||
	    (bo != UEVENT_BO_HOST && bo != UEVENT_BO_LITTLE && bo != UEVENT_BO_BIG))
		return _uevent_err(EINVAL);
	memset(rec, 0, sizeof(*rec));
	c.p = b;
	c.end = b + len;
	c.swap = _uevent_need_swap(bo);
	c.bad = 0;
	rec->type = _uevent_get32(&c);
	rec->misc = _uevent_get16(&c);
	rec->size = _uevent_get16(&c);
	if (c.bad || rec->size < 8 || rec->size > len)
		return _uevent_err(EINVAL);
	c.end = b + rec->size;

	if (rec->type == PERF_RECORD_SAMPLE)
		return decode_sample(&c, f, rec);
	if (rec->type == PERF_RECORD_UEVENT) {
		struct uevent_record *u = &rec->u.uevent;

		rec->transport = UEVENT_TRANSPORT_PRCTL;
		err = uevent_record_decode(buf, rec->size, bo,
					   f->sample_id_all ? f->sample_type : 0,
					   (f->flags & UEVENT_PERF_SEED_UEVENT) ?
					   UEVENT_RECORD_SEED_LAYOUT : 0, u);
		rec->id.fields = u->id_fields;
		rec->id.pid = u->pid;
		rec->id.tid = u->tid;
		rec->id.time = u->time;
		rec->id.id = u->id;
		rec->id.stream_id = u->stream_id;
		rec->id.cpu = u->cpu;
		rec->id.identifier = u->identifier;
		return err;
	}
	/* The perf tool's own records (64 and up) have no sample_id trailer. */
	if (f->sample_id_all && rec->type < PERF_RECORD_HEADER_ATTR_TYPE) {
		struct _uevent_cur t;

		idsz = _uevent_sample_id_size(f->sample_type);
		if ((rec->type == PERF_RECORD_KSYMBOL && !(f->flags & UEVENT_PERF_SEED_BPF_EVENT)) ||
		    rec->type == PERF_RECORD_BPF_EVENT)
			c.end = b + _uevent_sideband_used(b, rec->size, rec->type, idsz);
		if (idsz > (size_t)rec->size - 8)
			return _uevent_err(EINVAL);
		t = c;
		t.p = c.end - idsz;
		read_id(&t, f->sample_type, &rec->id);
		c.end -= idsz;
	}

	switch (rec->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2: {
		struct uevent_perf_mmap *m = &rec->u.mmap;

		m->pid = _uevent_get32(&c);
		m->tid = _uevent_get32(&c);
		m->addr = _uevent_get64(&c);
		m->len = _uevent_get64(&c);
		m->pgoff = _uevent_get64(&c);
		if (rec->type == PERF_RECORD_MMAP2) {
			if (rec->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
				const uint8_t *id = _uevent_take(&c, 24);

				if (id)
					m->build_id_size = id[0];
				id = id ? id + 4 : NULL;
				if (id)
					memcpy(m->build_id, id, 20);
				if (m->build_id_size > 20)
					c.bad = 1;
			} else {
				m->maj = _uevent_get32(&c);
				m->min = _uevent_get32(&c);
				m->ino = _uevent_get64(&c);
				m->ino_generation = _uevent_get64(&c);
			}
			m->prot = _uevent_get32(&c);
			m->flags = _uevent_get32(&c);
		}
		m->filename = gstr(&c);
		break;
	}
	case PERF_RECORD_COMM:
		rec->u.comm.pid = _uevent_get32(&c);
		rec->u.comm.tid = _uevent_get32(&c);
		rec->u.comm.comm = gstr(&c);
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		rec->u.task.pid = _uevent_get32(&c);
		rec->u.task.ppid = _uevent_get32(&c);
		rec->u.task.tid = _uevent_get32(&c);
		rec->u.task.ptid = _uevent_get32(&c);
		rec->u.task.time = _uevent_get64(&c);
		break;
	case PERF_RECORD_LOST:
		rec->u.lost.id = _uevent_get64(&c);
		rec->u.lost.lost = _uevent_get64(&c);
		break;
	case PERF_RECORD_LOST_SAMPLES:
		rec->u.lost.lost = _uevent_get64(&c);
		break;
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
		rec->u.throttle.time = _uevent_get64(&c);
		rec->u.throttle.id = _uevent_get64(&c);
		rec->u.throttle.stream_id = _uevent_get64(&c);
		break;
	case PERF_RECORD_SWITCH:
		break;
	case PERF_RECORD_SWITCH_CPU_WIDE:
		rec->u.sw.next_prev_pid = _uevent_get32(&c);
		rec->u.sw.next_prev_tid = _uevent_get32(&c);
		break;
	case PERF_RECORD_KSYMBOL:
		if (f->flags & UEVENT_PERF_SEED_BPF_EVENT)
			goto seed_bpf;
		rec->u.ksymbol.addr = _uevent_get64(&c);
		rec->u.ksymbol.len = _uevent_get32(&c);
		rec->u.ksymbol.ksym_type = _uevent_get16(&c);
		rec->u.ksymbol.flags = _uevent_get16(&c);
		rec->u.ksymbol.name = gstr(&c);
		break;
	case PERF_RECORD_BPF_EVENT: {
		const void *tag;

		rec->u.bpf_event.type = _uevent_get16(&c);
		rec->u.bpf_event.flags = _uevent_get16(&c);
		rec->u.bpf_event.id = _uevent_get32(&c);
		tag = _uevent_take(&c, 8);
		if (tag)
			memcpy(rec->u.bpf_event.tag, tag, 8);
		break;
	}
	seed_bpf:
		rec->type = PERF_RECORD_BPF_EVENT;
		rec->u.bpf_event.type = _uevent_get16(&c);
		rec->u.bpf_event.flags = _uevent_get16(&c);
		rec->u.bpf_event.id = _uevent_get32(&c);
		break;
	default:
		rec->u.other.data = c.p;
		rec->u.other.size = (uint32_t)(c.end - c.p);
		c.p = c.end;
		break;
	}
	if (c.bad || c.p != c.end)
		return _uevent_err(EINVAL);
	return 0;
}

static const char *const record_names[] = {
	[PERF_RECORD_MMAP] = "MMAP", [PERF_RECORD_LOST] = "LOST", [PERF_RECORD_COMM] = "COMM",
	[PERF_RECORD_EXIT] = "EXIT", [PERF_RECORD_THROTTLE] = "THROTTLE",
	[PERF_RECORD_UNTHROTTLE] = "UNTHROTTLE", [PERF_RECORD_FORK] = "FORK",
	[PERF_RECORD_READ] = "READ", [PERF_RECORD_SAMPLE] = "SAMPLE",
	[PERF_RECORD_MMAP2] = "MMAP2", [PERF_RECORD_AUX] = "AUX",
	[PERF_RECORD_ITRACE_START] = "ITRACE_START", [PERF_RECORD_LOST_SAMPLES] = "LOST_SAMPLES",
	[PERF_RECORD_SWITCH] = "SWITCH", [PERF_RECORD_SWITCH_CPU_WIDE] = "SWITCH_CPU_WIDE",
	[PERF_RECORD_NAMESPACES] = "NAMESPACES", [PERF_RECORD_KSYMBOL] = "KSYMBOL",
	[PERF_RECORD_BPF_EVENT] = "BPF_EVENT", [PERF_RECORD_CGROUP] = "CGROUP",
	[PERF_RECORD_TEXT_POKE] = "TEXT_POKE", [PERF_RECORD_AUX_OUTPUT_HW_ID] = "AUX_OUTPUT_HW_ID",
	[PERF_RECORD_UEVENT] = "UEVENT",
	[64] = "HEADER_ATTR", [65] = "HEADER_EVENT_TYPE", [66] = "HEADER_TRACING_DATA",
	[67] = "HEADER_BUILD_ID", [68] = "FINISHED_ROUND", [69] = "ID_INDEX",
	[70] = "AUXTRACE_INFO", [71] = "AUXTRACE", [72] = "AUXTRACE_ERROR",
	[73] = "THREAD_MAP", [74] = "CPU_MAP", [75] = "STAT_CONFIG", [76] = "STAT",
	[77] = "STAT_ROUND", [78] = "EVENT_UPDATE", [79] = "TIME_CONV",
	[80] = "HEADER_FEATURE", [81] = "COMPRESSED", [82] = "FINISHED_INIT",
};

UEVENT_EXPORT const char *uevent_perf_record_name(uint32_t type)
{
	return type < ARRAY_SIZE(record_names) ? record_names[type] : NULL;
}

/* ---- uevents carried by tracepoint samples ----------------------------------------- */

UEVENT_EXPORT int uevent_raw_to_record(const struct uevent_perf_record *rec,
				       const struct uevent_raw_layout *l, int bo,
				       struct uevent_record *out)
{
	const struct uevent_perf_sample *s;
	const uint8_t *raw;
	uint64_t size;
	uint32_t n, loc, off;
	struct _uevent_cur c;
	int truncated = 0;

	if (!rec || !l || !out || l->sz < offsetof(struct uevent_raw_layout, data_capacity) + 4)
		return _uevent_err(EINVAL);
	if (rec->type != PERF_RECORD_SAMPLE || !rec->u.sample.raw)
		return _uevent_err(EINVAL);
	s = &rec->u.sample;
	raw = s->raw;
	n = s->raw_size;
	memset(out, 0, sizeof(*out));
	c.swap = _uevent_need_swap(bo);
	c.bad = 0;
	if ((uint64_t)l->type_offset + 4 > n)
		return _uevent_err(EINVAL);
	c.p = raw + l->type_offset;
	c.end = raw + n;
	out->type = _uevent_get32(&c);

	switch (l->kind) {
	case UEVENT_RAW_USDT:
		if ((uint64_t)l->size_offset + 8 > n ||
		    (uint64_t)l->data_offset + l->data_capacity > n)
			return _uevent_err(EINVAL);
		c.p = raw + l->size_offset;
		size = _uevent_get64(&c);
		if (size > l->data_capacity) {
			truncated = 1;
			size = l->data_capacity;
		}
		out->data = raw + l->data_offset;
		out->size = (uint32_t)size;
		break;
	case UEVENT_RAW_USER_EVENTS:
		if ((uint64_t)l->data_offset + 4 > n)
			return _uevent_err(EINVAL);
		c.p = raw + l->data_offset;
		loc = _uevent_get32(&c);
		/* __rel_loc: offset from the end of the field (low 16), length (high 16) */
		off = l->data_offset + 4 + (loc & 0xffff);
		size = loc >> 16;
		if ((uint64_t)off + size > n)
			return _uevent_err(EINVAL);
		out->data = raw + off;
		out->size = (uint32_t)size;
		break;
	default:
		return _uevent_err(EINVAL);
	}
	out->record_type = PERF_RECORD_UEVENT;
	out->misc = rec->misc;
	out->record_size = rec->size;
	out->format = PERF_UEVENT_FORMAT_V1;
	out->id_fields = rec->id.fields;
	out->pid = rec->id.pid;
	out->tid = rec->id.tid;
	out->time = rec->id.time;
	out->id = rec->id.id;
	out->stream_id = rec->id.stream_id;
	out->cpu = rec->id.cpu;
	out->identifier = rec->id.identifier;
	return truncated;
}
