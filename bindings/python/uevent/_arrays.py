"""uevent._arrays - a perf.data file's samples and uevents as NumPy structured arrays.

The rows are filled in C (uevent_perf_file__read_batch) straight into the arrays' memory:
no Python code runs per record. NumPy is needed only here, imported on first use.
"""
from __future__ import annotations

import errno as _errno
import os as _os
from typing import Any, List, NamedTuple, Optional, Union

from . import _out
from ._records import BATCH_COLUMNS
from ._uevent import ffi as _ffi, lib as _lib

try:
    import numpy as _np
except ImportError as e:            # the batch API is the only part that needs it
    _np = None
    _why = str(e)

# Rows: the columns of struct uevent_sample_batch / uevent_record_batch, host order
# (generated from their notes in uevent.h).
_SAMPLE = BATCH_COLUMNS["uevent_sample_batch"]
_UEVENT = BATCH_COLUMNS["uevent_record_batch"]


def _numpy() -> Any:
    if _np is None:
        raise ImportError("uevent's batch reader (read_batch, read_arrays) needs NumPy "
                          f"(Debian: apt install python3-numpy): {_why}")
    return _np


def dtypes() -> Any:
    """(sample dtype, uevent dtype): the structured arrays' row types."""
    np = _numpy()
    return (np.dtype([(n, "=" + t) for n, t in _SAMPLE], align=True),
            np.dtype([(n, "=" + t) for n, t in _UEVENT], align=True))


class Arrays(NamedTuple):
    """Samples and uevents as columns. A sample's callchain is
    chains[chain_off:chain_off + chain_len], a uevent's payload
    payloads[data_off:data_off + data_len]; transport is enum uevent_transport."""
    samples: Any            # structured array, SAMPLE dtype
    chains: Any             # uint64 array: every sample's callchain, back to back
    uevents: Any            # structured array, UEVENT dtype
    payloads: Any           # uint8 array: every uevent's payload, back to back

    def callchain(self, i: int) -> Any:
        s = self.samples[i]
        return self.chains[int(s["chain_off"]):int(s["chain_off"]) + int(s["chain_len"])]

    def payload(self, i: int) -> bytes:
        u = self.uevents[i]
        return self.payloads[int(u["data_off"]):int(u["data_off"]) + int(u["data_len"])].tobytes()


def _point(batch: Any, arr: Any, names: List[Any]) -> None:
    """Each column of the batch at its field of the structured array's row 0."""
    base = arr.ctypes.data
    batch.stride = arr.dtype.itemsize
    for n, t in names:
        # "u8" -> uint64_t *, "i4" -> int32_t *
        ctype = "%sint%d_t *" % ("u" if t[0] == "u" else "", 8 * int(t[1:]))
        setattr(batch, n, _ffi.cast(ctype, base + arr.dtype.fields[n][1]))


def read_batch(handle: Any, n: int, chain_cap: int = 0, data_cap: int = 0,
               call: Any = None) -> Union[Arrays, None, int]:
    """Up to n samples and n uevents from the uevent_perf_file handle (or what call(handle,
    samples, uevents) reads): Arrays, None at the end, or the C call's -errno (ENODATA: a
    cut file; EINVAL: a bad n) for the caller to raise."""
    np = _numpy()
    if not isinstance(n, int) or not 0 < n < 1 << 31:
        return -_errno.EINVAL
    call = call or _lib.uevent_perf_file__read_batch
    sdt, udt = dtypes()
    # room for n rows (16 ips, 64 bytes a row) and the largest record (65535 bytes): a
    # session reads on only while that much is free
    chain_cap = chain_cap or 16 * n + 8192
    data_cap = data_cap or 64 * n + 65536
    while True:
        s, u = np.empty(n, sdt), np.empty(n, udt)
        chains, data = np.empty(chain_cap, np.uint64), np.empty(data_cap, np.uint8)
        sb, ub = _out("struct uevent_sample_batch *"), _out("struct uevent_record_batch *")
        sb.cap = ub.cap = n
        _point(sb, s, _SAMPLE)
        _point(ub, u, _UEVENT)
        sb.chain, sb.chain_cap = _ffi.cast("uint64_t *", chains.ctypes.data), chain_cap
        ub.data, ub.data_cap = _ffi.cast("uint8_t *", data.ctypes.data), data_cap
        ret = call(handle, sb, ub)
        if ret == -_errno.ENOSPC and chain_cap < 1 << 32:   # one record larger than the
            chain_cap, data_cap = chain_cap * 4, data_cap * 4   # buffers: grow them
            continue
        if ret < 0:
            return ret              # the caller raises it, with the file's name
        if ret == 0:
            return None
        return Arrays(s[:sb.n], chains[:sb.chain_n], u[:ub.n], data[:ub.data_n])


def read_all(f: Any, error: Any) -> Arrays:
    """Every row of the PerfData f. A regular file bounds what its rows can need (a
    record is at least 16 bytes, a callchain entry 8), so one call reads most files
    whole into arrays that size (only the pages written are ever touched)."""
    n, chain_cap, data_cap = 1 << 16, 0, 0
    if f.path != "-":
        size = _os.stat(f.path).st_size
        n = max(1, min(size // 16 + 1, 1 << 22))
        chain_cap, data_cap = min(size // 8 + 1, 1 << 25), min(size + 1, 1 << 26)
    parts: List[Arrays] = []
    while True:
        r = read_batch(f._live(), n, chain_cap, data_cap)
        if isinstance(r, int):
            e = error(-r, f"{f.path!r} at offset {f.offset}")
            e.partial = concat(parts)
            raise e
        if r is None:
            return parts[0] if len(parts) == 1 else concat(parts)
        parts.append(r)


def concat(parts: List[Arrays]) -> Arrays:
    """Batches as one Arrays, offsets rebased."""
    np = _numpy()
    sdt, udt = dtypes()
    if not parts:
        return Arrays(np.empty(0, sdt), np.empty(0, np.uint64), np.empty(0, udt),
                      np.empty(0, np.uint8))
    s = np.concatenate([p.samples for p in parts])
    u = np.concatenate([p.uevents for p in parts])
    at, i, j = 0, 0, 0
    dat = 0
    for p in parts:
        s["chain_off"][i:i + len(p.samples)] += at
        u["data_off"][j:j + len(p.uevents)] += dat
        at, dat = at + len(p.chains), dat + len(p.payloads)
        i, j = i + len(p.samples), j + len(p.uevents)
    return Arrays(s, np.concatenate([p.chains for p in parts]), u,
                  np.concatenate([p.payloads for p in parts]))

