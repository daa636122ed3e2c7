/* nvtx.c - libuevent-nvtx.so: an NVTX injection library; NVTX marks and ranges become uevents. */
#include "config.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

#include "uevent.h"
#include "inject.h"

#define EXPORT __attribute__((visibility("default")))

/*
 * NVTX's loader (compiled into each program or library that uses NVTX: PyTorch, CUDA
 * libraries) dlopens $NVTX_INJECTION64_PATH on its first call and hands our
 * InitializeInjectionNvtx2 its export table, whose callback tables are arrays of
 * pointers to that module's function slots. We write ours into the CORE and CORE2
 * slots of every module that initialises, so calls from all of them are one stream.
 */

/* ---- domains, registered strings, categories ------------------------------------- */

struct category {
	struct category	*next;
	uint32_t	id;
	char		name[];
};

/* The handle NVTX gives back to the program; the default domain is NULL. */
struct nvtxDomainRegistration_st {
	struct category	*cats;		/* newest first; read without a lock */
	nvtxDomainHandle_t theirs;	/* the chained library's handle for it */
	size_t		len;		/* strlen(name) */
	char		name[];
};

struct nvtxStringRegistration_st {
	nvtxStringHandle_t theirs;	/* the chained library's handle for it */
	char		name[];		/* "domain:string", as a range or mark is named */
};

static struct category *default_cats;
static pthread_mutex_t cat_lock = PTHREAD_MUTEX_INITIALIZER;

static struct category **cats_of(nvtxDomainHandle_t d)
{
	return d ? &d->cats : &default_cats;
}

static const char *category_name(nvtxDomainHandle_t d, uint32_t id)
{
	const struct category *c = __atomic_load_n(cats_of(d), __ATOMIC_ACQUIRE);

	for (; c; c = c->next)
		if (c->id == id)
			return c->name;
	return "";
}

static void name_category(nvtxDomainHandle_t d, uint32_t id, const char *name)
{
	size_t len = strlen(name ? name : "");
	struct category *c;

	if (!name)
		return;
	c = malloc(sizeof(*c) + len + 1);
	if (!c)
		return;
	c->id = id;
	memcpy(c->name, name, len + 1);
	/* Appended newest first, never freed: a reader may be walking the list. */
	pthread_mutex_lock(&cat_lock);
	c->next = *cats_of(d);
	__atomic_store_n(cats_of(d), c, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&cat_lock);
	if (UEVENT_ENABLED())
		_uevent_inject_meta("nvtx category domain=%s id=%u name=%s", d ? d->name : "",
				    id, name);
}

/* "domain:text" for a domain, the text itself for the default one. */
static const char *qualify(nvtxDomainHandle_t d, const char *text, char *buf, size_t cap)
{
	if (!d)
		return text;
	snprintf(buf, cap, "%s:%s", d->name, text);
	return buf;
}

/* The name of an event from its attributes, or NULL if they carry none we can read. */
static const char *message(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a, char *buf,
			   size_t cap)
{
	char w[INJECT_NAME_MAX];

	if (!a || a->size < offsetof(nvtxEventAttributes_t, message) + sizeof(a->message))
		return NULL;
	switch (a->messageType) {
	case NVTX_MESSAGE_TYPE_ASCII:
		return a->message.ascii ? qualify(d, a->message.ascii, buf, cap) : NULL;
	case NVTX_MESSAGE_TYPE_UNICODE:
		if (!a->message.unicode)
			return NULL;
		return qualify(d, _uevent_inject_utf8(a->message.unicode, w, sizeof(w)), buf, cap);
	case NVTX_MESSAGE_TYPE_REGISTERED:
		return a->message.registered ? a->message.registered->name : NULL;
	default:
		return NULL;
	}
}

/* The attributes a range or mark record cannot hold, as a side record after it. */
static void attributes(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a, uint64_t range)
{
	char what[40], color[24] = "", payload[48] = "";

	if (!a || (!a->category && a->colorType != NVTX_COLOR_ARGB && !a->payloadType))
		return;
	if (range)
		snprintf(what, sizeof(what), "range=%#llx", (unsigned long long)range);
	else
		snprintf(what, sizeof(what), "mark");
	if (a->colorType == NVTX_COLOR_ARGB)
		snprintf(color, sizeof(color), " color=#%08x", a->color);
	switch (a->payloadType) {
	case NVTX_PAYLOAD_TYPE_UNSIGNED_INT64:
		snprintf(payload, sizeof(payload), " payload=u64:%llu",
			 (unsigned long long)a->payload.ullValue);
		break;
	case NVTX_PAYLOAD_TYPE_INT64:
		snprintf(payload, sizeof(payload), " payload=i64:%lld", (long long)a->payload.llValue);
		break;
	case NVTX_PAYLOAD_TYPE_DOUBLE:
		snprintf(payload, sizeof(payload), " payload=f64:%.17g", a->payload.dValue);
		break;
	case NVTX_PAYLOAD_TYPE_UNSIGNED_INT32:
		snprintf(payload, sizeof(payload), " payload=u32:%u", a->payload.uiValue);
		break;
	case NVTX_PAYLOAD_TYPE_INT32:
		snprintf(payload, sizeof(payload), " payload=i32:%d", a->payload.iValue);
		break;
	case NVTX_PAYLOAD_TYPE_FLOAT:
		snprintf(payload, sizeof(payload), " payload=f32:%.9g", (double)a->payload.fValue);
		break;
	}
	_uevent_inject_meta("nvtx %s domain=%s category=%u category_name=%s%s%s", what,
			    d ? d->name : "", a->category, category_name(d, a->category), color,
			    payload);
}

/* ---- the chained injection library -------------------------------------------------- */

/*
 * UEVENT_NVTX_CHAIN names a second injection library (Nsight's, CUPTI's). It gets an
 * export table of our own whose slots it fills; we call through them after our work.
 */
#define MODULES		NVTX_CB_MODULE_SIZE
#define SLOTS		32
static NvtxFunctionPointer chain_slot[MODULES][SLOTS];
static NvtxFunctionPointer *chain_table[MODULES][SLOTS + 1];
static const unsigned int module_size[MODULES] = {
	[NVTX_CB_MODULE_CORE] = NVTX_CBID_CORE_SIZE,
	[NVTX_CB_MODULE_CUDA] = NVTX_CBID_CUDA_SIZE,
	[NVTX_CB_MODULE_OPENCL] = NVTX_CBID_OPENCL_SIZE,
	[NVTX_CB_MODULE_CUDART] = NVTX_CBID_CUDART_SIZE,
	[NVTX_CB_MODULE_CORE2] = NVTX_CBID_CORE2_SIZE,
	[NVTX_CB_MODULE_SYNC] = NVTX_CBID_SYNC_SIZE,
};
static int chained;		/* a chained library's RangeStart ids need our pairs */
static NvtxGetExportTableFunc_t first_get;	/* the first module's, for its version info */

#define CHAIN(mod, cbid, type)	((type)chain_slot[NVTX_CB_MODULE_##mod][NVTX_CBID_##mod##_##cbid])

static int NVTX_API chain_module_table(NvtxCallbackModule m, NvtxFunctionTable *out,
				       unsigned int *size)
{
	if (m <= NVTX_CB_MODULE_INVALID || m >= MODULES || module_size[m] >= SLOTS)
		return 0;
	if (out)
		*out = chain_table[m];
	if (size)
		*size = module_size[m];
	return 1;
}

static const NvtxExportTableCallbacks chain_callbacks = {
	sizeof(NvtxExportTableCallbacks), chain_module_table
};

static const void *NVTX_API chain_export_table(uint32_t id)
{
	switch (id) {
	case NVTX_ETID_CALLBACKS:
		return &chain_callbacks;
	case NVTX_ETID_VERSIONINFO:
		return first_get ? first_get(id) : NULL;
	default:
		return NULL;
	}
}

EXPORT int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get);

static void chain_load(void)
{
	const char *path = getenv("UEVENT_NVTX_CHAIN");
	NvtxInitializeInjectionNvtxFunc_t init;
	void *h;
	int m, i;

	if (!path || !*path)
		return;
	for (m = 1; m < MODULES; m++)
		for (i = 1; i < (int)module_size[m] && i < SLOTS; i++)
			chain_table[m][i] = &chain_slot[m][i];
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "libuevent-nvtx: UEVENT_NVTX_CHAIN: %s; NVTX calls reach uevents only\n",
			dlerror());
		return;
	}
	init = (NvtxInitializeInjectionNvtxFunc_t)dlsym(h, "InitializeInjectionNvtx2");
	if (init == InitializeInjectionNvtx2)
		return;		/* ourselves again */
	if (!init || !init(chain_export_table)) {
		fprintf(stderr, "libuevent-nvtx: UEVENT_NVTX_CHAIN=%s: %s; NVTX calls reach uevents only\n",
			path, init ? "its InitializeInjectionNvtx2 failed"
				   : "no InitializeInjectionNvtx2 in it");
		memset(chain_slot, 0, sizeof(chain_slot));
		dlclose(h);
		return;
	}
	chained = 1;
}

/* What the chained library knows a domain as. */
static nvtxDomainHandle_t their(nvtxDomainHandle_t d)
{
	return d ? d->theirs : NULL;
}

/* The attributes as the chained library registered their string (a copy in *tmp). */
static const nvtxEventAttributes_t *their_attr(const nvtxEventAttributes_t *a,
					       nvtxEventAttributes_t *tmp)
{
	if (!a || a->messageType != NVTX_MESSAGE_TYPE_REGISTERED || !a->message.registered ||
	    a->size < offsetof(nvtxEventAttributes_t, message) + sizeof(a->message))
		return a;
	*tmp = *a;
	tmp->message.registered = a->message.registered->theirs;
	return tmp;
}

/* ---- push/pop ------------------------------------------------------------------------ */

static int push(nvtxDomainHandle_t d, const char *name, const nvtxEventAttributes_t *a)
{
	uint64_t id;
	int l = _uevent_inject_push(d, name, &id);

	if (id)
		attributes(d, a, id);
	return l;
}

/* ---- start/end: async ranges --------------------------------------------------------- */

/* With a chained library both give an id: the program holds a pair of them. */
struct pair {
	uint64_t ours, theirs;
};

static nvtxRangeId_t start(nvtxDomainHandle_t d, const char *name, const nvtxEventAttributes_t *a,
			   nvtxRangeId_t theirs)
{
	uint64_t id = 0;
	struct pair *p;

	if (name && UEVENT_ENABLED()) {
		id = uevent_async_begin(name);
		if (id)
			attributes(d, a, id);
	}
	if (!chained)
		return id;
	p = malloc(sizeof(*p));
	if (!p)
		return 0;
	p->ours = id;
	p->theirs = theirs;
	return (nvtxRangeId_t)(uintptr_t)p;
}

/* Ends ours, returns the chained library's id. */
static nvtxRangeId_t end(nvtxRangeId_t id)
{
	struct pair *p = (struct pair *)(uintptr_t)id;
	nvtxRangeId_t theirs;

	if (!chained) {
		if (id)
			uevent_async_end(id);
		return 0;
	}
	if (!p)
		return 0;
	if (p->ours)
		uevent_async_end(p->ours);
	theirs = p->theirs;
	free(p);
	return theirs;
}

/* ---- CORE ----------------------------------------------------------------------------- */

static void mark(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	char buf[INJECT_NAME_MAX];
	const char *name;

	if (!UEVENT_ENABLED())
		return;
	name = message(d, a, buf, sizeof(buf));
	if (name && uevent_mark(name) == 0)
		attributes(d, a, 0);
}

static void NVTX_API markEx(const nvtxEventAttributes_t *a)
{
	nvtxEventAttributes_t t;

	mark(NULL, a);
	if (CHAIN(CORE, MarkEx, nvtxMarkEx_impl_fntype))
		CHAIN(CORE, MarkEx, nvtxMarkEx_impl_fntype)(their_attr(a, &t));
}

static void NVTX_API markA(const char *msg)
{
	if (UEVENT_ENABLED() && msg)
		uevent_mark(msg);
	if (CHAIN(CORE, MarkA, nvtxMarkA_impl_fntype))
		CHAIN(CORE, MarkA, nvtxMarkA_impl_fntype)(msg);
}

static void NVTX_API markW(const wchar_t *msg)
{
	char buf[INJECT_NAME_MAX];

	if (UEVENT_ENABLED() && msg)
		uevent_mark(_uevent_inject_utf8(msg, buf, sizeof(buf)));
	if (CHAIN(CORE, MarkW, nvtxMarkW_impl_fntype))
		CHAIN(CORE, MarkW, nvtxMarkW_impl_fntype)(msg);
}

static nvtxRangeId_t NVTX_API rangeStartEx(const nvtxEventAttributes_t *a)
{
	char buf[INJECT_NAME_MAX];
	nvtxEventAttributes_t t;
	nvtxRangeId_t theirs = 0;

	if (CHAIN(CORE, RangeStartEx, nvtxRangeStartEx_impl_fntype))
		theirs = CHAIN(CORE, RangeStartEx, nvtxRangeStartEx_impl_fntype)(their_attr(a, &t));
	return start(NULL, UEVENT_ENABLED() ? message(NULL, a, buf, sizeof(buf)) : NULL, a, theirs);
}

static nvtxRangeId_t NVTX_API rangeStartA(const char *msg)
{
	nvtxRangeId_t theirs = 0;

	if (CHAIN(CORE, RangeStartA, nvtxRangeStartA_impl_fntype))
		theirs = CHAIN(CORE, RangeStartA, nvtxRangeStartA_impl_fntype)(msg);
	return start(NULL, msg, NULL, theirs);
}

static nvtxRangeId_t NVTX_API rangeStartW(const wchar_t *msg)
{
	char buf[INJECT_NAME_MAX];
	nvtxRangeId_t theirs = 0;

	if (CHAIN(CORE, RangeStartW, nvtxRangeStartW_impl_fntype))
		theirs = CHAIN(CORE, RangeStartW, nvtxRangeStartW_impl_fntype)(msg);
	return start(NULL, msg && UEVENT_ENABLED() ? _uevent_inject_utf8(msg, buf, sizeof(buf))
						  : NULL, NULL, theirs);
}

static void NVTX_API rangeEnd(nvtxRangeId_t id)
{
	nvtxRangeId_t theirs = end(id);

	if (CHAIN(CORE, RangeEnd, nvtxRangeEnd_impl_fntype))
		CHAIN(CORE, RangeEnd, nvtxRangeEnd_impl_fntype)(theirs);
}

static int NVTX_API rangePushEx(const nvtxEventAttributes_t *a)
{
	char buf[INJECT_NAME_MAX];
	int l = push(NULL, UEVENT_ENABLED() ? message(NULL, a, buf, sizeof(buf)) : NULL, a);
	nvtxEventAttributes_t t;

	if (CHAIN(CORE, RangePushEx, nvtxRangePushEx_impl_fntype))
		CHAIN(CORE, RangePushEx, nvtxRangePushEx_impl_fntype)(their_attr(a, &t));
	return l;
}

static int NVTX_API rangePushA(const char *msg)
{
	int l = push(NULL, msg, NULL);

	if (CHAIN(CORE, RangePushA, nvtxRangePushA_impl_fntype))
		CHAIN(CORE, RangePushA, nvtxRangePushA_impl_fntype)(msg);
	return l;
}

static int NVTX_API rangePushW(const wchar_t *msg)
{
	char buf[INJECT_NAME_MAX];
	int l = push(NULL, msg && UEVENT_ENABLED() ? _uevent_inject_utf8(msg, buf, sizeof(buf))
						  : NULL, NULL);

	if (CHAIN(CORE, RangePushW, nvtxRangePushW_impl_fntype))
		CHAIN(CORE, RangePushW, nvtxRangePushW_impl_fntype)(msg);
	return l;
}

static int NVTX_API rangePop(void)
{
	int l = _uevent_inject_pop(NULL);

	if (CHAIN(CORE, RangePop, nvtxRangePop_impl_fntype))
		CHAIN(CORE, RangePop, nvtxRangePop_impl_fntype)();
	return l;
}

static void NVTX_API nameCategoryA(uint32_t id, const char *name)
{
	name_category(NULL, id, name);
	if (CHAIN(CORE, NameCategoryA, nvtxNameCategoryA_impl_fntype))
		CHAIN(CORE, NameCategoryA, nvtxNameCategoryA_impl_fntype)(id, name);
}

static void NVTX_API nameCategoryW(uint32_t id, const wchar_t *name)
{
	char buf[INJECT_NAME_MAX];

	if (name)
		name_category(NULL, id, _uevent_inject_utf8(name, buf, sizeof(buf)));
	if (CHAIN(CORE, NameCategoryW, nvtxNameCategoryW_impl_fntype))
		CHAIN(CORE, NameCategoryW, nvtxNameCategoryW_impl_fntype)(id, name);
}

static void NVTX_API nameOsThreadA(uint32_t tid, const char *name)
{
	if (UEVENT_ENABLED() && name)
		_uevent_inject_meta("nvtx thread tid=%u name=%s", tid, name);
	if (CHAIN(CORE, NameOsThreadA, nvtxNameOsThreadA_impl_fntype))
		CHAIN(CORE, NameOsThreadA, nvtxNameOsThreadA_impl_fntype)(tid, name);
}

static void NVTX_API nameOsThreadW(uint32_t tid, const wchar_t *name)
{
	char buf[INJECT_NAME_MAX];

	if (UEVENT_ENABLED() && name)
		_uevent_inject_meta("nvtx thread tid=%u name=%s", tid,
				    _uevent_inject_utf8(name, buf, sizeof(buf)));
	if (CHAIN(CORE, NameOsThreadW, nvtxNameOsThreadW_impl_fntype))
		CHAIN(CORE, NameOsThreadW, nvtxNameOsThreadW_impl_fntype)(tid, name);
}

/* ---- CORE2: domains ------------------------------------------------------------------- */

static void NVTX_API domainMarkEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	nvtxEventAttributes_t t;

	mark(d, a);
	if (CHAIN(CORE2, DomainMarkEx, nvtxDomainMarkEx_impl_fntype))
		CHAIN(CORE2, DomainMarkEx, nvtxDomainMarkEx_impl_fntype)(their(d), their_attr(a, &t));
}

static nvtxRangeId_t NVTX_API domainRangeStartEx(nvtxDomainHandle_t d,
						 const nvtxEventAttributes_t *a)
{
	char buf[INJECT_NAME_MAX];
	nvtxEventAttributes_t t;
	nvtxRangeId_t theirs = 0;

	if (CHAIN(CORE2, DomainRangeStartEx, nvtxDomainRangeStartEx_impl_fntype))
		theirs = CHAIN(CORE2, DomainRangeStartEx, nvtxDomainRangeStartEx_impl_fntype)(their(d), their_attr(a, &t));
	return start(d, UEVENT_ENABLED() ? message(d, a, buf, sizeof(buf)) : NULL, a, theirs);
}

static void NVTX_API domainRangeEnd(nvtxDomainHandle_t d, nvtxRangeId_t id)
{
	nvtxRangeId_t theirs = end(id);

	if (CHAIN(CORE2, DomainRangeEnd, nvtxDomainRangeEnd_impl_fntype))
		CHAIN(CORE2, DomainRangeEnd, nvtxDomainRangeEnd_impl_fntype)(their(d), theirs);
}

static int NVTX_API domainRangePushEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	char buf[INJECT_NAME_MAX];
	int l = push(d, UEVENT_ENABLED() ? message(d, a, buf, sizeof(buf)) : NULL, a);
	nvtxEventAttributes_t t;

	if (CHAIN(CORE2, DomainRangePushEx, nvtxDomainRangePushEx_impl_fntype))
		CHAIN(CORE2, DomainRangePushEx, nvtxDomainRangePushEx_impl_fntype)(their(d), their_attr(a, &t));
	return l;
}

static int NVTX_API domainRangePop(nvtxDomainHandle_t d)
{
	int l = _uevent_inject_pop(d);

	if (CHAIN(CORE2, DomainRangePop, nvtxDomainRangePop_impl_fntype))
		CHAIN(CORE2, DomainRangePop, nvtxDomainRangePop_impl_fntype)(their(d));
	return l;
}

static void NVTX_API domainNameCategoryA(nvtxDomainHandle_t d, uint32_t id, const char *name)
{
	name_category(d, id, name);
	if (CHAIN(CORE2, DomainNameCategoryA, nvtxDomainNameCategoryA_impl_fntype))
		CHAIN(CORE2, DomainNameCategoryA, nvtxDomainNameCategoryA_impl_fntype)(their(d), id, name);
}

static void NVTX_API domainNameCategoryW(nvtxDomainHandle_t d, uint32_t id, const wchar_t *name)
{
	char buf[INJECT_NAME_MAX];

	if (name)
		name_category(d, id, _uevent_inject_utf8(name, buf, sizeof(buf)));
	if (CHAIN(CORE2, DomainNameCategoryW, nvtxDomainNameCategoryW_impl_fntype))
		CHAIN(CORE2, DomainNameCategoryW, nvtxDomainNameCategoryW_impl_fntype)(their(d), id, name);
}

/* Registered strings live as long as the process (NVTX has no unregister). */
static nvtxStringHandle_t register_string(nvtxDomainHandle_t d, const char *s,
					  nvtxStringHandle_t theirs)
{
	char buf[INJECT_NAME_MAX];
	const char *name;
	nvtxStringHandle_t h;
	size_t len;

	if (!s)
		return NULL;
	name = qualify(d, s, buf, sizeof(buf));
	len = strlen(name);
	h = malloc(sizeof(*h) + len + 1);
	if (!h)
		return NULL;
	h->theirs = theirs;
	memcpy(h->name, name, len + 1);
	return h;
}

static nvtxStringHandle_t NVTX_API domainRegisterStringA(nvtxDomainHandle_t d, const char *s)
{
	nvtxStringHandle_t theirs = NULL;

	if (CHAIN(CORE2, DomainRegisterStringA, nvtxDomainRegisterStringA_impl_fntype))
		theirs = CHAIN(CORE2, DomainRegisterStringA,
			       nvtxDomainRegisterStringA_impl_fntype)(their(d), s);
	return register_string(d, s, theirs);
}

static nvtxStringHandle_t NVTX_API domainRegisterStringW(nvtxDomainHandle_t d, const wchar_t *s)
{
	char buf[INJECT_NAME_MAX];
	nvtxStringHandle_t theirs = NULL;

	if (CHAIN(CORE2, DomainRegisterStringW, nvtxDomainRegisterStringW_impl_fntype))
		theirs = CHAIN(CORE2, DomainRegisterStringW,
			       nvtxDomainRegisterStringW_impl_fntype)(their(d), s);
	return s ? register_string(d, _uevent_inject_utf8(s, buf, sizeof(buf)), theirs) : NULL;
}

static nvtxDomainHandle_t create_domain(const char *name, nvtxDomainHandle_t theirs)
{
	size_t len = strlen(name);
	nvtxDomainHandle_t d = calloc(1, sizeof(*d) + len + 1);

	if (!d)
		return NULL;
	d->theirs = theirs;
	d->len = len;
	memcpy(d->name, name, len + 1);
	if (UEVENT_ENABLED())
		_uevent_inject_meta("nvtx domain name=%s", name);
	return d;
}

static nvtxDomainHandle_t NVTX_API domainCreateA(const char *name)
{
	nvtxDomainHandle_t theirs = NULL;

	if (CHAIN(CORE2, DomainCreateA, nvtxDomainCreateA_impl_fntype))
		theirs = CHAIN(CORE2, DomainCreateA, nvtxDomainCreateA_impl_fntype)(name);
	return name ? create_domain(name, theirs) : NULL;
}

static nvtxDomainHandle_t NVTX_API domainCreateW(const wchar_t *name)
{
	char buf[INJECT_NAME_MAX];
	nvtxDomainHandle_t theirs = NULL;

	if (CHAIN(CORE2, DomainCreateW, nvtxDomainCreateW_impl_fntype))
		theirs = CHAIN(CORE2, DomainCreateW, nvtxDomainCreateW_impl_fntype)(name);
	return name ? create_domain(_uevent_inject_utf8(name, buf, sizeof(buf)), theirs) : NULL;
}

/*
 * A destroyed domain's handle stays allocated: another thread may still be naming a
 * range with it, and its registered strings outlive it. Domains are few.
 */
static void NVTX_API domainDestroy(nvtxDomainHandle_t d)
{
	if (d && UEVENT_ENABLED())
		_uevent_inject_meta("nvtx domain_destroy name=%s", d->name);
	if (CHAIN(CORE2, DomainDestroy, nvtxDomainDestroy_impl_fntype))
		CHAIN(CORE2, DomainDestroy, nvtxDomainDestroy_impl_fntype)(their(d));
}

static nvtxResourceHandle_t NVTX_API domainResourceCreate(nvtxDomainHandle_t d,
							  nvtxResourceAttributes_t *attr)
{
	if (CHAIN(CORE2, DomainResourceCreate, nvtxDomainResourceCreate_impl_fntype))
		return CHAIN(CORE2, DomainResourceCreate, nvtxDomainResourceCreate_impl_fntype)(their(d), attr);
	return NULL;
}

static void NVTX_API domainResourceDestroy(nvtxResourceHandle_t r)
{
	if (CHAIN(CORE2, DomainResourceDestroy, nvtxDomainResourceDestroy_impl_fntype))
		CHAIN(CORE2, DomainResourceDestroy, nvtxDomainResourceDestroy_impl_fntype)(r);
}

static void NVTX_API initialize(const void *reserved)
{
	if (CHAIN(CORE2, Initialize, nvtxInitialize_impl_fntype))
		CHAIN(CORE2, Initialize, nvtxInitialize_impl_fntype)(reserved);
}

/* ---- the entry point -------------------------------------------------------------------- */

#define SLOT(f) ((NvtxFunctionPointer)(f))

static const NvtxFunctionPointer core[NVTX_CBID_CORE_SIZE] = {
	[NVTX_CBID_CORE_MarkEx] = SLOT(markEx),
	[NVTX_CBID_CORE_MarkA] = SLOT(markA),
	[NVTX_CBID_CORE_MarkW] = SLOT(markW),
	[NVTX_CBID_CORE_RangeStartEx] = SLOT(rangeStartEx),
	[NVTX_CBID_CORE_RangeStartA] = SLOT(rangeStartA),
	[NVTX_CBID_CORE_RangeStartW] = SLOT(rangeStartW),
	[NVTX_CBID_CORE_RangeEnd] = SLOT(rangeEnd),
	[NVTX_CBID_CORE_RangePushEx] = SLOT(rangePushEx),
	[NVTX_CBID_CORE_RangePushA] = SLOT(rangePushA),
	[NVTX_CBID_CORE_RangePushW] = SLOT(rangePushW),
	[NVTX_CBID_CORE_RangePop] = SLOT(rangePop),
	[NVTX_CBID_CORE_NameCategoryA] = SLOT(nameCategoryA),
	[NVTX_CBID_CORE_NameCategoryW] = SLOT(nameCategoryW),
	[NVTX_CBID_CORE_NameOsThreadA] = SLOT(nameOsThreadA),
	[NVTX_CBID_CORE_NameOsThreadW] = SLOT(nameOsThreadW),
};

static const NvtxFunctionPointer core2[NVTX_CBID_CORE2_SIZE] = {
	[NVTX_CBID_CORE2_DomainMarkEx] = SLOT(domainMarkEx),
	[NVTX_CBID_CORE2_DomainRangeStartEx] = SLOT(domainRangeStartEx),
	[NVTX_CBID_CORE2_DomainRangeEnd] = SLOT(domainRangeEnd),
	[NVTX_CBID_CORE2_DomainRangePushEx] = SLOT(domainRangePushEx),
	[NVTX_CBID_CORE2_DomainRangePop] = SLOT(domainRangePop),
	[NVTX_CBID_CORE2_DomainResourceCreate] = SLOT(domainResourceCreate),
	[NVTX_CBID_CORE2_DomainResourceDestroy] = SLOT(domainResourceDestroy),
	[NVTX_CBID_CORE2_DomainNameCategoryA] = SLOT(domainNameCategoryA),
	[NVTX_CBID_CORE2_DomainNameCategoryW] = SLOT(domainNameCategoryW),
	[NVTX_CBID_CORE2_DomainRegisterStringA] = SLOT(domainRegisterStringA),
	[NVTX_CBID_CORE2_DomainRegisterStringW] = SLOT(domainRegisterStringW),
	[NVTX_CBID_CORE2_DomainCreateA] = SLOT(domainCreateA),
	[NVTX_CBID_CORE2_DomainCreateW] = SLOT(domainCreateW),
	[NVTX_CBID_CORE2_DomainDestroy] = SLOT(domainDestroy),
	[NVTX_CBID_CORE2_Initialize] = SLOT(initialize),
};

/* Writes each non-NULL f[i] into the module's slot i; 0 if the module has no table. */
static int fill(const NvtxExportTableCallbacks *cb, NvtxCallbackModule m,
		const NvtxFunctionPointer *f, unsigned int n)
{
	NvtxFunctionTable t = NULL;
	unsigned int size = 0, i;

	if (!cb->GetModuleFunctionTable(m, &t, &size) || !t)
		return 0;
	for (i = 1; i < size && i < n; i++)
		if (t[i] && f[i])
			*t[i] = f[i];
	return 1;
}

static pthread_once_t chain_once = PTHREAD_ONCE_INIT;

EXPORT int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get)
{
	const NvtxExportTableCallbacks *cb;
	int m;

	if (!get)
		return 0;
	cb = get(NVTX_ETID_CALLBACKS);
	if (!cb || cb->struct_size < sizeof(*cb) || !cb->GetModuleFunctionTable)
		return 0;
	if (!__atomic_load_n(&first_get, __ATOMIC_ACQUIRE))
		__atomic_store_n(&first_get, get, __ATOMIC_RELEASE);
	pthread_once(&chain_once, chain_load);
	if (!fill(cb, NVTX_CB_MODULE_CORE, core, NVTX_CBID_CORE_SIZE) ||
	    !fill(cb, NVTX_CB_MODULE_CORE2, core2, NVTX_CBID_CORE2_SIZE))
		return 0;
	/* The modules we do not handle (CUDA, OpenCL, CUDA runtime, sync) go to the chain. */
	for (m = 1; chained && m < MODULES; m++)
		if (m != NVTX_CB_MODULE_CORE && m != NVTX_CB_MODULE_CORE2)
			fill(cb, m, chain_slot[m], module_size[m] < SLOTS ? module_size[m] : SLOTS);
	return 1;
}
