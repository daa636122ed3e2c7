"""nvtx_pytorch.py - a small PyTorch load whose NVTX ranges `uevent record --nvtx` records.

Three rounds of matmul, relu and sum under torch.autograd.profiler.emit_nvtx() (a range
per op) inside torch.cuda.nvtx.range_push/pop ("round N"), and one mark. CPU tensors:
NVTX is called on the CPU; no GPU is needed. Prints what it did, for the log.
"""
import os
import sys
import time

import torch

N = int(os.environ.get("NVTX_PYTORCH_N", "1024"))
REPEAT = int(os.environ.get("NVTX_PYTORCH_REPEAT", "8"))


def main():
    torch.manual_seed(0)
    a = torch.randn(N, N)
    b = torch.randn(N, N)
    t0 = time.perf_counter()
    torch.cuda.nvtx.mark("nvtx_pytorch start")
    with torch.autograd.profiler.emit_nvtx():
        for r in range(3):
            torch.cuda.nvtx.range_push("round %d" % r)
            for _ in range(REPEAT):
                c = torch.matmul(a, b)
                d = torch.relu(c)
                s = d.sum()
            torch.cuda.nvtx.range_pop()
    dt = time.perf_counter() - t0
    print("torch %s (cuda %s): 3 rounds x %d of matmul/relu/sum on %dx%d, %.3f s, sum %.3f"
          % (torch.__version__, torch.version.cuda, REPEAT, N, N, dt, float(s)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
