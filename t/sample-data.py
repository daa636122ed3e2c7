#!/usr/bin/env python3
"""sample-data.py - perf.data files of samples and uevent ranges the exporters must survive.

Written here from the layouts alone (perf's pipe-mode perf.data, PERF_RECORD_UEVENT of
format 1), as t/context-data.py writes its file, for t/export-limits.test. Process 300
("leaky"), thread 301, cpu-clock samples with a one-frame callchain:
  leak N OUT    N range begins "leak" that are never ended, a sample after each
                (ip 0x1000): a program that forgets its range ends
  corrupt OUT   a range begin and a sample, then a uevent whose payload size runs past
                its record: a file found corrupt halfway through an export
"""
import struct
import sys

SAMPLE_TYPE = 1 | 2 | 4 | 32 | 256      # IP TID TIME CALLCHAIN PERIOD
PID, TID = 300, 301


def uevent(type_, payload, time, size=None):
    """A PERF_RECORD_UEVENT (63), its sample_id trailer TID|TIME as the attr's."""
    b = struct.pack("<IIII", 1, len(payload) if size is None else size, type_, 0)
    b += payload + bytes(-len(payload) % 8)
    b += struct.pack("<IIQ", PID, TID, time)
    return struct.pack("<IHH", 63, 2, 8 + len(b)) + b


def range_begin(rid, parent, name, time):
    n = name.encode()
    return uevent(1, struct.pack("<QQII", rid, parent, 0, len(n)) + n + b"\0", time)


def sample(time, ip, period):
    b = struct.pack("<QIIQQ", ip, PID, TID, time, period)
    b += struct.pack("<QQ", 1, ip)                  # callchain: nr, the ip
    return struct.pack("<IHH", 9, 2, 8 + len(b)) + b


def comm(name):
    n = name.encode() + b"\0"
    n += bytes(-len(n) % 8)
    b = struct.pack("<II", PID, TID) + n + struct.pack("<IIQ", PID, TID, 0)
    return struct.pack("<IHH", 3, 0, 8 + len(b)) + b


def head():
    a = struct.pack("<IIQQQQ", 1, 136, 0, 1000000, SAMPLE_TYPE, 0)
    a += struct.pack("<Q", (1 << 18) | (1 << 63))   # sample_id_all, uevents
    a += bytes(136 - len(a))
    return (b"PERFILE2" + struct.pack("<Q", 16) +
            struct.pack("<IHH", 64, 0, 8 + len(a) + 8) + a + struct.pack("<Q", 7))


def write(path, recs):
    with open(path, "wb") as f:
        f.write(head() + comm("leaky") + b"".join(recs))


def main():
    what = sys.argv[1] if len(sys.argv) > 1 else ""
    t0, ms = 1000000000, 1000000
    if what == "leak":
        n = int(sys.argv[2])
        recs = []
        for i in range(n):
            recs.append(range_begin(i + 1, i, "leak", t0 + 2 * i * ms))
            recs.append(sample(t0 + (2 * i + 1) * ms, 0x1000, ms))
        write(sys.argv[3], recs)
    elif what == "corrupt":
        write(sys.argv[2], [range_begin(1, 0, "work", t0), sample(t0 + ms, 0x1000, ms),
                            uevent(0, b"text\0", t0 + 2 * ms, size=4096)])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
