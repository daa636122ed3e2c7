/* nvtx-module.c - a second module with its own NVTX instance, as each of PyTorch's
 * libraries has: its first call initialises the injection library once more. */
#include <nvtx3/nvToolsExt.h>

void module_work(void);

void module_work(void)
{
	nvtxRangePushA("module range");
	nvtxMarkA("module mark");
	nvtxRangePop();
}
