#!/usr/bin/env python3
"""context-data.py - a perf.data whose samples carry known OpenTelemetry thread contexts.

Written here from the layouts alone (perf's pipe-mode perf.data, PERF_SAMPLE_TLS_USER
dumps of OTEP 4947 thread-context records), not with libuevent, for t/report-context.test
and the Python arrays test. Process 200 ("svc"), 1 ms cpu-clock samples:
  tid 201: trace A span A1, 40 samples at 1.000 s + i ms (ip 0x1000)
           then span A2, 20 samples (ip 0x2000)
  tid 202: trace B span B1, 30 samples at 2.000 s + i ms (ip 0x3000)
  tid 203: a cleared record (valid 0), 5 samples (ip 0x4000)
  tid 204: a record being written (valid 2), 5 samples (ip 0x4000)
usage: context-data.py OUT | context-data.py - --ids (A, A1, A2, B, B1 in hex)
"""
import struct
import sys

A = bytes.fromhex("0af7651916cd43dd8448eb211c80319c")
A1 = bytes.fromhex("b7ad6b7169203331")
A2 = bytes.fromhex("00f067aa0ba902b7")
B = bytes.fromhex("4bf92f3577b34da6a3ce929d0e0e4736")
B1 = bytes.fromhex("53995c3f42cd8ad8")

SAMPLE_TYPE = 1 | 2 | 4 | 32 | 256 | (1 << 25)   # IP TID TIME CALLCHAIN PERIOD TLS_USER
TLS = 32                                          # bytes dumped: the 28-byte header


def record(trace, span, valid):
    r = trace + span + bytes([valid, 1]) + struct.pack("<H", 0)
    return r + bytes(TLS - len(r))


def sample(pid, tid, time, ip, tls):
    b = struct.pack("<QIIQ", ip, pid, tid, time)
    b += struct.pack("<QQQ", 1000000, 2, ip)        # period; callchain nr, ips
    b += struct.pack("<Q", ip + 0x100)
    b += struct.pack("<Q", TLS) + tls + struct.pack("<Q", TLS)
    return struct.pack("<IHH", 9, 2, 8 + len(b)) + b


def comm(pid, tid, name):
    n = name.encode() + b"\0"
    n += bytes(-len(n) % 8)
    b = struct.pack("<II", pid, tid) + n + struct.pack("<IIQ", pid, tid, 0)
    return struct.pack("<IHH", 3, 0, 8 + len(b)) + b


def attr():
    a = struct.pack("<IIQQQQ", 1, 136, 0, 1000000, SAMPLE_TYPE, 0)
    a += struct.pack("<Q", (1 << 18))                 # sample_id_all
    a += struct.pack("<IIQQQQ", 0, 0, 0, 0, 0, 0)
    a += struct.pack("<IIQ", 0, 0, 0)
    a += struct.pack("<IHH", 0, 0, TLS)               # sample_tls_user
    a += struct.pack("<IIQQ", 0, 0, 0, 0)
    assert len(a) == 136
    return a


def main():
    if "--ids" in sys.argv:
        print(" ".join(x.hex() for x in (A, A1, A2, B, B1)))
        return
    out = [b"PERFILE2", struct.pack("<Q", 16)]
    a = attr()
    out.append(struct.pack("<IHH", 64, 0, 8 + len(a) + 8) + a + struct.pack("<Q", 7))
    for tid in (201, 202, 203, 204):
        out.append(comm(200, tid, "svc"))
    t0, ms = 1000000000, 1000000
    for i in range(60):
        span = A1 if i < 40 else A2
        out.append(sample(200, 201, t0 + i * ms, 0x1000 if i < 40 else 0x2000,
                          record(A, span, 1)))
    for i in range(30):
        out.append(sample(200, 202, 2 * t0 + i * ms, 0x3000, record(B, B1, 1)))
    for i in range(5):
        out.append(sample(200, 203, 3 * t0 + i * ms, 0x4000, record(B, B1, 0)))
        out.append(sample(200, 204, 3 * t0 + i * ms, 0x4000, record(A, A1, 2)))
    with open(sys.argv[1], "wb") as f:
        f.write(b"".join(out))


if __name__ == "__main__":
    main()
