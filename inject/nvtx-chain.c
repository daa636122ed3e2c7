/* nvtx-chain.c - a second NVTX injection library for inject/nvtx-check: counts each call
 * it gets through UEVENT_NVTX_CHAIN, checks that its own handles and ids come back to
 * it, and writes the counts to $CHAIN_COUNTS at exit. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chain-count.h"

#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

enum { MarkA, MarkW, MarkEx, PushA, PushW, PushEx, Pop, StartA, End, NameCategoryA,
       NameOsThreadA, DomainCreateA, DomainNameCategoryA, DomainRegisterStringA,
       DomainPushEx, DomainMarkEx, DomainStartEx, DomainEnd, DomainPop, DomainDestroy,
       Mismatch, Inits, N };
static const char *const names[N] = {
	"MarkA", "MarkW", "MarkEx", "RangePushA", "RangePushW", "RangePushEx", "RangePop",
	"RangeStartA", "RangeEnd", "NameCategoryA", "NameOsThreadA", "DomainCreateA",
	"DomainNameCategoryA", "DomainRegisterStringA", "DomainRangePushEx", "DomainMarkEx",
	"DomainRangeStartEx", "DomainRangeEnd", "DomainRangePop", "DomainDestroy", "mismatch",
	"inits"
};
static unsigned long count[N];
static char domain_obj, string_obj;	/* what our handles point at */

#define COUNT(i) __atomic_add_fetch(&count[i], 1, __ATOMIC_RELAXED)

static void check_domain(nvtxDomainHandle_t d)
{
	if (d != (nvtxDomainHandle_t)(void *)&domain_obj)
		COUNT(Mismatch);
}

static void check_attr(const nvtxEventAttributes_t *a)
{
	if (a->messageType == NVTX_MESSAGE_TYPE_REGISTERED &&
	    a->message.registered != (nvtxStringHandle_t)(void *)&string_obj)
		COUNT(Mismatch);
}

static void markA(const char *m) { (void)m; COUNT(MarkA); }
static void markW(const wchar_t *m) { (void)m; COUNT(MarkW); }
static void markEx(const nvtxEventAttributes_t *a) { check_attr(a); COUNT(MarkEx); }
static int pushA(const char *m) { (void)m; COUNT(PushA); return 0; }
static int pushW(const wchar_t *m) { (void)m; COUNT(PushW); return 0; }
static int pushEx(const nvtxEventAttributes_t *a) { check_attr(a); COUNT(PushEx); return 0; }
static int pop(void) { COUNT(Pop); return 0; }
static nvtxRangeId_t startA(const char *m) { (void)m; COUNT(StartA); return 0x5eed; }
static void end(nvtxRangeId_t id) { if (id != 0x5eed) COUNT(Mismatch); COUNT(End); }
static void nameCategoryA(uint32_t c, const char *n) { (void)c; (void)n; COUNT(NameCategoryA); }
static void nameOsThreadA(uint32_t t, const char *n) { (void)t; (void)n; COUNT(NameOsThreadA); }

static nvtxDomainHandle_t domainCreateA(const char *n)
{
	(void)n;
	COUNT(DomainCreateA);
	return (nvtxDomainHandle_t)(void *)&domain_obj;
}

static void domainNameCategoryA(nvtxDomainHandle_t d, uint32_t c, const char *n)
{
	(void)c; (void)n;
	check_domain(d);
	COUNT(DomainNameCategoryA);
}

static nvtxStringHandle_t domainRegisterStringA(nvtxDomainHandle_t d, const char *s)
{
	(void)s;
	check_domain(d);
	COUNT(DomainRegisterStringA);
	return (nvtxStringHandle_t)(void *)&string_obj;
}

static int domainPushEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	check_domain(d);
	check_attr(a);
	COUNT(DomainPushEx);
	return 0;
}

static void domainMarkEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	check_domain(d);
	check_attr(a);
	COUNT(DomainMarkEx);
}

static nvtxRangeId_t domainStartEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	check_domain(d);
	check_attr(a);
	COUNT(DomainStartEx);
	return 0xd5eed;
}

static void domainEnd(nvtxDomainHandle_t d, nvtxRangeId_t id)
{
	check_domain(d);
	if (id != 0xd5eed)
		COUNT(Mismatch);
	COUNT(DomainEnd);
}

static int domainPop(nvtxDomainHandle_t d) { check_domain(d); COUNT(DomainPop); return 0; }
static void domainDestroy(nvtxDomainHandle_t d) { check_domain(d); COUNT(DomainDestroy); }

static void report(void)
{
	chain_report(names, count, N);
}

#define SET(t, n, cbid, f) do { if ((cbid) < (n) && (t)[cbid]) *(t)[cbid] = (NvtxFunctionPointer)(f); } while (0)

int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get);

int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get)
{
	const NvtxExportTableCallbacks *cb = get(NVTX_ETID_CALLBACKS);
	NvtxFunctionTable t;
	unsigned int n;

	if (!cb || !cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &t, &n))
		return 0;
	SET(t, n, NVTX_CBID_CORE_MarkA, markA);
	SET(t, n, NVTX_CBID_CORE_MarkW, markW);
	SET(t, n, NVTX_CBID_CORE_MarkEx, markEx);
	SET(t, n, NVTX_CBID_CORE_RangePushA, pushA);
	SET(t, n, NVTX_CBID_CORE_RangePushW, pushW);
	SET(t, n, NVTX_CBID_CORE_RangePushEx, pushEx);
	SET(t, n, NVTX_CBID_CORE_RangePop, pop);
	SET(t, n, NVTX_CBID_CORE_RangeStartA, startA);
	SET(t, n, NVTX_CBID_CORE_RangeEnd, end);
	SET(t, n, NVTX_CBID_CORE_NameCategoryA, nameCategoryA);
	SET(t, n, NVTX_CBID_CORE_NameOsThreadA, nameOsThreadA);
	if (!cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &t, &n))
		return 0;
	SET(t, n, NVTX_CBID_CORE2_DomainCreateA, domainCreateA);
	SET(t, n, NVTX_CBID_CORE2_DomainNameCategoryA, domainNameCategoryA);
	SET(t, n, NVTX_CBID_CORE2_DomainRegisterStringA, domainRegisterStringA);
	SET(t, n, NVTX_CBID_CORE2_DomainRangePushEx, domainPushEx);
	SET(t, n, NVTX_CBID_CORE2_DomainMarkEx, domainMarkEx);
	SET(t, n, NVTX_CBID_CORE2_DomainRangeStartEx, domainStartEx);
	SET(t, n, NVTX_CBID_CORE2_DomainRangeEnd, domainEnd);
	SET(t, n, NVTX_CBID_CORE2_DomainRangePop, domainPop);
	SET(t, n, NVTX_CBID_CORE2_DomainDestroy, domainDestroy);
	if (!count[Inits]++)
		atexit(report);
	return 1;
}
