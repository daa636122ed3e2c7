/* nvtx-client.c - calls NVTX as PyTorch does (the unmodified v3 headers and their loader),
 * for inject/nvtx-check: marks, nested and async ranges, domains, registered strings,
 * categories, threads, a second NVTX module; "late" waits for a session between calls. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

#include <nvtx3/nvToolsExt.h>

#define THREADS	8
#define ROUNDS	100

static int failed;

#define expect(cond) do { if (!(cond)) { fprintf(stderr, "nvtx-client: %s:%d: %s\n", \
	__FILE__, __LINE__, #cond); failed = 1; } } while (0)

static nvtxRangeId_t async_id;

static void *worker(void *arg)
{
	int i;

	(void)arg;
	for (i = 0; i < ROUNDS; i++) {
		expect(nvtxRangePushA("thread work") == 0);
		expect(nvtxRangePushA("thread step") == 1);
		expect(nvtxRangePop() == 1);
		expect(nvtxRangePop() == 0);
	}
	return NULL;
}

static void *ender(void *arg)
{
	(void)arg;
	nvtxRangeEnd(async_id);		/* started on the main thread */
	return NULL;
}

static nvtxEventAttributes_t attr(uint32_t category)
{
	nvtxEventAttributes_t a;

	memset(&a, 0, sizeof(a));
	a.version = NVTX_VERSION;
	a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	a.category = category;
	a.colorType = NVTX_COLOR_ARGB;
	a.color = 0xff00ff00;
	a.payloadType = NVTX_PAYLOAD_TYPE_INT64;
	a.payload.llValue = 42;
	a.messageType = NVTX_MESSAGE_TYPE_ASCII;
	return a;
}

static int all(const char *module)
{
	pthread_t th[THREADS], t;
	nvtxDomainHandle_t d;
	nvtxStringHandle_t s;
	nvtxEventAttributes_t a;
	void (*module_work)(void);
	void *h;
	int i;

	nvtxNameOsThreadA((uint32_t)syscall(SYS_gettid), "client main");
	nvtxMarkA("mark A");
	nvtxMarkW(L"mark W \u00fc");
	nvtxNameCategoryA(7, "seven");
	a = attr(7);
	a.message.ascii = "mark Ex";
	nvtxMarkEx(&a);

	expect(nvtxRangePushA("outer") == 0);
	a.message.ascii = "inner";
	expect(nvtxRangePushEx(&a) == 1);
	expect(nvtxRangePushW(L"innermost") == 2);
	expect(nvtxRangePop() == 2);
	expect(nvtxRangePop() == 1);
	expect(nvtxRangePop() == 0);
	expect(nvtxRangePop() < 0);	/* nothing open */

	async_id = nvtxRangeStartA("async");
	pthread_create(&t, NULL, ender, NULL);
	pthread_join(t, NULL);

	d = nvtxDomainCreateA("dom");
	nvtxDomainNameCategoryA(d, 3, "three");
	s = nvtxDomainRegisterStringA(d, "reg");
	a = attr(3);
	a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
	a.message.registered = s;
	expect(nvtxRangePushA("plain") == 0);
	expect(nvtxDomainRangePushEx(d, &a) == 0);	/* levels count per domain */
	a.messageType = NVTX_MESSAGE_TYPE_ASCII;
	a.message.ascii = "dmark";
	nvtxDomainMarkEx(d, &a);
	a.message.ascii = "dasync";
	nvtxDomainRangeEnd(d, nvtxDomainRangeStartEx(d, &a));
	expect(nvtxDomainRangePop(d) == 0);
	expect(nvtxRangePop() == 0);
	nvtxDomainDestroy(d);

	for (i = 0; i < THREADS; i++)
		pthread_create(&th[i], NULL, worker, NULL);
	for (i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);

	/* a second module with its own copy of NVTX, as each of PyTorch's libraries has */
	h = dlopen(module, RTLD_NOW);
	module_work = h ? (void (*)(void))dlsym(h, "module_work") : NULL;
	expect(module_work != NULL);
	if (module_work)
		module_work();
	return failed;
}

/* Calls before a session, a byte on stdout, a byte on stdin when it runs, calls after. */
static int late(void)
{
	char c;

	expect(nvtxRangePushA("early outer") == 0);
	nvtxMarkA("early mark");
	if (write(1, "1", 1) != 1 || read(0, &c, 1) != 1)
		return 1;
	nvtxMarkA("late mark");
	expect(nvtxRangePushA("late range") == 1);
	expect(nvtxRangePop() == 1);
	expect(nvtxRangePop() == 0);	/* "early outer": begun unrecorded, ends unrecorded */
	return failed;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "all"))
		return all(argv[2]);
	if (argc == 2 && !strcmp(argv[1], "late"))
		return late();
	fprintf(stderr, "usage: nvtx-client all MODULE.so | late\n");
	return 2;
}
