#!/usr/bin/env python3
"""sample-data.py - perf.data files of samples and uevent ranges the exporters must survive.

Written here from the layouts alone (perf's pipe-mode perf.data, PERF_RECORD_UEVENT of
format 1), as t/context-data.py writes its file, for t/export-limits.test. Process 300
("leaky"), thread 301, cpu-clock samples with a one-frame callchain:
  leak N OUT    N range begins "leak" that are never ended, a sample after each
                (ip 0x1000): a program that forgets its range ends
  corrupt OUT   a range begin and a sample, then a uevent whose payload size runs past
                its record: a file found corrupt halfway through an export
  period OUT    4 samples with periods 2**63, 2**64 - 1, 1000 and 2**63 (ips 0x1000,
                0x2000, 0x3000, 0x1000): periods past pprof's int64, and a sum past u64
  values PB     a pprof profile's period, then each sample's values, a line each: a
                reader of profile.proto's few fields, no protobuf module needed
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


def varint(b, i):
    v = s = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7f) << s
        s += 7
        if c < 0x80:
            return v, i


def fields(b):
    """(field number, value) of a message: an int, or the bytes of a length-delimited."""
    i = 0
    while i < len(b):
        key, i = varint(b, i)
        if key & 7 == 0:
            v, i = varint(b, i)
        elif key & 7 == 2:
            n, i = varint(b, i)
            v, i = b[i:i + n], i + n
        elif key & 7 in (1, 5):
            n = 8 if key & 7 == 1 else 4
            v, i = b[i:i + n], i + n
        else:
            raise ValueError("wire type %d" % (key & 7))
        yield key >> 3, v


def int64(v):
    return v - (1 << 64) if v >= 1 << 63 else v


def values(path):
    """Profile.period (field 12), each Sample's (2) values (2: int64s, packed or not)."""
    with open(path, "rb") as f:
        prof = f.read()
    for n, v in fields(prof):
        if n == 12:
            print("period", int64(v))
    for n, v in fields(prof):
        if n != 2:
            continue
        vals = []
        for m, w in fields(v):
            if m == 2 and isinstance(w, bytes):
                j = 0
                while j < len(w):
                    x, j = varint(w, j)
                    vals.append(int64(x))
            elif m == 2:
                vals.append(int64(w))
        print("sample", *vals)


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
    elif what == "period":
        write(sys.argv[2], [sample(t0, 0x1000, 1 << 63), sample(t0 + ms, 0x2000, (1 << 64) - 1),
                            sample(t0 + 2 * ms, 0x3000, 1000), sample(t0 + 3 * ms, 0x1000, 1 << 63)])
    elif what == "values":
        values(sys.argv[2])
    elif what == "corrupt":
        write(sys.argv[2], [range_begin(1, 0, "work", t0), sample(t0 + ms, 0x1000, ms),
                            uevent(0, b"text\0", t0 + 2 * ms, size=4096)])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
