/* process-context.c - OpenTelemetry's process context (OTEP 4719): OTEL_CTX header, protobuf payload. */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

#ifndef MFD_CLOEXEC
#define MFD_CLOEXEC		0x0001U
#endif
#ifndef MFD_ALLOW_SEALING
#define MFD_ALLOW_SEALING	0x0002U
#endif
#ifndef MFD_NOEXEC_SEAL
#define MFD_NOEXEC_SEAL		0x0008U
#endif
#ifndef PR_SET_VMA
#define PR_SET_VMA		0x53564d41
#define PR_SET_VMA_ANON_NAME	0
#endif

/* The header of OTEP 4719, in the mapping that readers find by its name. */
struct otel_ctx_header {
	char		signature[8];			/* "OTEL_CTX", no NUL */
	uint32_t	version;			/* 2 */
	uint32_t	payload_size;
	uint64_t	monotonic_published_at_ns;	/* CLOCK_BOOTTIME; 0: being updated */
	uint64_t	payload;			/* address of the protobuf bytes */
};

enum { OTEL_CTX_VERSION = 2, MAX_KEYS = 256 };

/* The one process context (the OTEP's singleton), its inputs kept for updates. */
static struct {
	pthread_mutex_t lock;
	pid_t pid;			/* who published: a fork()'s child has no mapping */
	struct otel_ctx_header *hdr;
	size_t map_len;
	uint8_t *payload;
	char *service_name;
	char instance_id[37];
	char *keys[MAX_KEYS];
	uint32_t nr_keys;
} pc = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* ---- a protobuf writer for the few messages the payload needs ---- */

struct pb {
	uint8_t *p;
	size_t len, cap;
	int err;
};

static void pb_put(struct pb *b, const void *src, size_t n)
{
	if (b->err)
		return;
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 256;
		uint8_t *p;

		while (cap < b->len + n)
			cap *= 2;
		p = realloc(b->p, cap);
		if (!p) {
			b->err = ENOMEM;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, src, n);
	b->len += n;
}

static void pb_varint(struct pb *b, uint64_t v)
{
	uint8_t tmp[10];
	size_t n = 0;

	do {
		tmp[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	pb_put(b, tmp, n);
}

/* A length-delimited field (wire type 2): strings and embedded messages. */
static void pb_bytes(struct pb *b, uint32_t field, const void *p, size_t n)
{
	pb_varint(b, (uint64_t)field << 3 | 2);
	pb_varint(b, n);
	pb_put(b, p, n);
}

static void pb_sub(struct pb *b, uint32_t field, struct pb *sub)
{
	if (sub->err)
		b->err = sub->err;
	pb_bytes(b, field, sub->p, sub->len);
	free(sub->p);
	*sub = (struct pb){ 0 };
}

/* KeyValue{key = 1, value = 2: AnyValue{string_value = 1}} */
static void pb_kv_string(struct pb *b, uint32_t field, const char *key, const char *val)
{
	struct pb kv = { 0 }, any = { 0 };

	pb_bytes(&any, 1, val, strlen(val));
	pb_bytes(&kv, 1, key, strlen(key));
	pb_sub(&kv, 2, &any);
	pb_sub(b, field, &kv);
}

/* KeyValue{key, value: AnyValue{array_value = 5: ArrayValue{values = 1: AnyValue}}} */
static void pb_kv_strings(struct pb *b, uint32_t field, const char *key, char *const *vals,
			  uint32_t n)
{
	struct pb kv = { 0 }, any = { 0 }, arr = { 0 }, item = { 0 };
	uint32_t i;

	for (i = 0; i < n; i++) {
		pb_bytes(&item, 1, vals[i], strlen(vals[i]));
		pb_sub(&arr, 1, &item);
	}
	pb_sub(&any, 5, &arr);
	pb_bytes(&kv, 1, key, strlen(key));
	pb_sub(&kv, 2, &any);
	pb_sub(b, field, &kv);
}

/*
 * ProcessContext{resource = 1: Resource{attributes = 1}, attributes = 2}: the
 * resource's service.*, and the threadlocal.* keys OTEP 4947 reads.
 */
static int encode(struct pb *out)
{
	struct pb res = { 0 };

	if (pc.service_name)
		pb_kv_string(&res, 1, "service.name", pc.service_name);
	pb_kv_string(&res, 1, "service.instance.id", pc.instance_id);
	pb_sub(out, 1, &res);
	pb_kv_string(out, 2, "threadlocal.schema_version", "tlsdesc_v1_dev");
	pb_kv_strings(out, 2, "threadlocal.attribute_key_map", pc.keys, pc.nr_keys);
	if (out->err) {
		free(out->p);
		return -out->err;
	}
	return 0;
}

/* ---- the mapping and its protocols ---- */

static uint64_t boottime_ns(uint64_t after)
{
	struct timespec ts;
	uint64_t ns;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	/* Every update must show a different, later, non-zero stamp. */
	return ns > after ? ns : after + 1;
}

static int name_mapping(void)
{
	return prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, (unsigned long)pc.hdr, pc.map_len,
		     (unsigned long)"OTEL_CTX");
}

/* Steps 2-5 of the publication protocol: the memfd (or anonymous) mapping. */
static int map_header(int *memfd_ok)
{
	long page = sysconf(_SC_PAGESIZE);
	void *m = MAP_FAILED;
	int fd;

	pc.map_len = page > 0 ? (size_t)page : 4096;
	fd = memfd_create("OTEL_CTX", MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_NOEXEC_SEAL);
	if (fd < 0)
		fd = memfd_create("OTEL_CTX", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd >= 0) {
		if (ftruncate(fd, (off_t)pc.map_len) == 0)
			m = mmap(NULL, pc.map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
		close(fd);
	}
	*memfd_ok = m != MAP_FAILED;
	if (m == MAP_FAILED)
		m = mmap(NULL, pc.map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);
	if (m == MAP_FAILED)
		return -errno;
	if (madvise(m, pc.map_len, MADV_DONTFORK) < 0) {
		int err = errno;

		munmap(m, pc.map_len);
		return -err;
	}
	pc.hdr = m;
	return 0;
}

/* Publish (first time) or update (later) pc's payload; pc.lock held. */
static int publish_locked(void)
{
	struct otel_ctx_header *h;
	struct pb b = { 0 };
	uint64_t prev;
	int ret, memfd_ok = 1;

	ret = encode(&b);
	if (ret)
		return ret;
	if (!pc.hdr) {
		ret = map_header(&memfd_ok);
		if (ret) {
			free(b.p);
			return ret;
		}
		h = pc.hdr;
		memcpy(h->signature, "OTEL_CTX", 8);
		h->version = OTEL_CTX_VERSION;
		h->payload_size = (uint32_t)b.len;
		h->payload = (uint64_t)(uintptr_t)b.p;
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		__atomic_store_n(&h->monotonic_published_at_ns, boottime_ns(0), __ATOMIC_RELAXED);
		pc.pid = getpid();
		/* Neither a memfd nor a name: readers could not find it, so it is an error. */
		if (name_mapping() < 0 && !memfd_ok) {
			ret = -errno;
			munmap(pc.hdr, pc.map_len);
			pc.hdr = NULL;
			free(b.p);
			return ret;
		}
	} else {
		h = pc.hdr;
		prev = h->monotonic_published_at_ns;
		__atomic_store_n(&h->monotonic_published_at_ns, 0, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		h->payload = (uint64_t)(uintptr_t)b.p;
		h->payload_size = (uint32_t)b.len;
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		__atomic_store_n(&h->monotonic_published_at_ns, boottime_ns(prev),
				 __ATOMIC_RELAXED);
		/* Unconditionally, as the OTEP says: readers may hook prctl to see updates. */
		name_mapping();
	}
	/* A reader still copying the old payload sees the stamp change and reads again. */
	free(pc.payload);
	pc.payload = b.p;
	return 0;
}

/* fork()'s child has none of the parent's mapping (MADV_DONTFORK): forget it there. */
static void forget_if_forked(void)
{
	if (pc.hdr && pc.pid != getpid()) {
		pc.hdr = NULL;
		free(pc.payload);
		pc.payload = NULL;
		pc.instance_id[0] = 0;
	}
}

static int random_uuid(char out[37])
{
	uint8_t u[16];

	if (getrandom(u, sizeof(u), 0) != (ssize_t)sizeof(u))
		return -errno;
	u[6] = (uint8_t)((u[6] & 0x0f) | 0x40);	/* version 4 */
	u[8] = (uint8_t)((u[8] & 0x3f) | 0x80);	/* RFC 4122 variant */
	snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11],
		 u[12], u[13], u[14], u[15]);
	return 0;
}

static int add_keys_locked(const char *const *keys, uint32_t nr)
{
	uint32_t i, first = pc.nr_keys;

	if (nr && !keys)
		return -EFAULT;
	if (nr > MAX_KEYS - pc.nr_keys)
		return -ENOSPC;
	for (i = 0; i < nr; i++) {
		if (!keys[i] || !(pc.keys[first + i] = strdup(keys[i]))) {
			int err = keys[i] ? ENOMEM : EFAULT;

			while (i--)
				free(pc.keys[first + i]);
			return -err;
		}
	}
	pc.nr_keys += nr;
	return (int)first;
}

UEVENT_EXPORT int uevent_process_context_publish(const struct uevent_process_context_opts *opts)
{
	struct uevent_process_context_opts o;
	char *name = NULL;
	uint32_t i, old_nr;
	int ret;

	ret = _uevent_opts_copy(&o, sizeof(o), opts,
				offsetof(struct uevent_process_context_opts, service_name));
	if (ret)
		return ret;
	if (o.nr_attr_keys && !o.attr_keys)
		return _uevent_err(EFAULT);
	if (o.service_name && !(name = strdup(o.service_name)))
		return _uevent_err(ENOMEM);
	if (o.service_instance_id && strlen(o.service_instance_id) >= sizeof(pc.instance_id)) {
		free(name);
		return _uevent_err(EINVAL);
	}
	pthread_mutex_lock(&pc.lock);
	forget_if_forked();
	/* The key map is append-only: a publish names keys from index 0 again. */
	old_nr = pc.nr_keys;
	if (o.nr_attr_keys < old_nr) {
		ret = -EINVAL;
		goto out;
	}
	for (i = 0; i < old_nr; i++)
		if (!o.attr_keys[i] || strcmp(o.attr_keys[i], pc.keys[i])) {
			ret = -EINVAL;
			goto out;
		}
	ret = add_keys_locked(o.attr_keys ? o.attr_keys + old_nr : NULL, o.nr_attr_keys - old_nr);
	if (ret < 0)
		goto out;
	if (o.service_instance_id)
		snprintf(pc.instance_id, sizeof(pc.instance_id), "%s", o.service_instance_id);
	else if (!pc.instance_id[0] && (ret = random_uuid(pc.instance_id)) < 0)
		goto out;
	free(pc.service_name);
	pc.service_name = name;
	name = NULL;
	ret = publish_locked();
out:
	pthread_mutex_unlock(&pc.lock);
	free(name);
	return ret < 0 ? _uevent_err(-ret) : 0;
}

UEVENT_EXPORT int uevent_process_context_add_keys(const char *const *keys, uint32_t nr)
{
	int first, ret;

	pthread_mutex_lock(&pc.lock);
	forget_if_forked();
	if (!pc.hdr) {
		pthread_mutex_unlock(&pc.lock);
		return _uevent_err(ENODATA);
	}
	first = add_keys_locked(keys, nr);
	ret = first < 0 ? first : publish_locked();
	pthread_mutex_unlock(&pc.lock);
	return ret < 0 ? _uevent_err(-ret) : first;
}

UEVENT_EXPORT int uevent_process_context_drop(void)
{
	uint32_t i;

	pthread_mutex_lock(&pc.lock);
	forget_if_forked();
	if (pc.hdr)
		munmap(pc.hdr, pc.map_len);
	pc.hdr = NULL;
	free(pc.payload);
	pc.payload = NULL;
	for (i = 0; i < pc.nr_keys; i++)
		free(pc.keys[i]);
	pc.nr_keys = 0;
	free(pc.service_name);
	pc.service_name = NULL;
	pc.instance_id[0] = 0;
	pthread_mutex_unlock(&pc.lock);
	return 0;
}
