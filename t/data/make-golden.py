#!/usr/bin/env python3
"""make-golden.py - writes the golden payload and record files in t/data/.

An implementation of docs/format.md that shares no code with the C encoders, so that
the C test (t/codec.c) and every binding compare against bytes derived from the spec.
Each case is written little-endian (NAME.le.bin) and big-endian (NAME.be.bin); the
file-transport capture as capture.le.perf.data and capture.be.perf.data.
Run it again only when the format changes; the outputs are checked in.
"""
import os
import struct
import sys

OUT = os.path.dirname(os.path.abspath(__file__))

PERF_RECORD_UEVENT = 63
FORMAT_V1 = 1
MISC_USER = 2


def cstr(s):
    return s.encode() + b"\0"


def payloads(e):
    """name -> payload bytes, for byte order e ('<' or '>')."""
    def p(fmt, *a):
        return struct.pack(e + fmt, *a)

    debug_entries = [(0x7F0000001000, 34, 0, "app.lua"), (0x7F0000001010, 35, 1, "app.lua")]
    dbg = p("QII", 0x7F0000001000, len(debug_entries), 0)
    for addr, line, disc, f in debug_entries:
        dbg += p("QIII", addr, line, disc, len(f)) + cstr(f)
    return {
        "text": cstr("hello, perf"),
        "range_begin": p("QQII", 0x1122334455667788, 0x42, 1, len("parse")) + cstr("parse"),
        "range_end": p("QII", 0x1122334455667788, 1, 0),
        "counter": p("qII", -12345, len("queue_depth"), 0) + cstr("queue_depth"),
        "jit_code_load": p("QQQII", 0x7F0000001000, 0x80, 7, len("TRACE_12 app.lua:34"), 0)
        + cstr("TRACE_12 app.lua:34"),
        "jit_code_move": p("QQQQ", 7, 0x7F0000001000, 0x7F0000002000, 0x80),
        "jit_code_unload": p("QQQ", 0x7F0000002000, 0x80, 7),
        "jit_debug_info": dbg,
        "trace_context": bytes(range(16)) + bytes(range(0xA0, 0xA8)) + b"\x01" + b"\0" * 7,
    }


def record_v1(e, rtype, data, pid, tid, time):
    pad = -len(data) & 7
    size = 8 + 16 + len(data) + pad + 16
    return (struct.pack(e + "IHH", PERF_RECORD_UEVENT, MISC_USER, size)
            + struct.pack(e + "IIII", FORMAT_V1, len(data), rtype, 0)
            + data + b"\0" * pad + struct.pack(e + "IIQ", pid, tid, time))


def record_v0(e, rtype, data, pid, tid, time):
    """The V0 layout (type, size, data), sample_id TID|TIME."""
    pad = -len(data) & 7
    size = 8 + 8 + len(data) + pad + 16
    return (struct.pack(e + "IHH", 11, 0, size) + struct.pack(e + "II", rtype, len(data))
            + data + b"\0" * pad + struct.pack(e + "IIQ", pid, tid, time))


def revbits(b):
    return int("{:08b}".format(b)[::-1], 2)


def file_attr(e):
    """The file transport's event: struct perf_event_attr (136 bytes, VER8), a software
    dummy whose records carry a sample_id of TID|TIME, on CLOCK_MONOTONIC."""
    a = struct.pack(e + "IIQQQQ", 1, 136, 9, 1, (1 << 1) | (1 << 2), 0)
    flags = struct.pack("<Q", (1 << 18) | (1 << 25))     # sample_id_all, use_clockid
    # a bitfield: big-endian compilers number its bits from the top of each byte
    a += flags if e == "<" else bytes(revbits(b) for b in flags)
    a += struct.pack(e + "IIQQQQIiQIHHIIQQ", 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0)
    assert len(a) == 136
    return a


def file_head(e):
    """What the process that makes a file-transport file writes first (docs/format.md):
    the pipe-mode header, the event's HEADER_ATTR (id 1), its name in a HEADER_FEATURE
    EVENT_DESC record."""
    a = file_attr(e)
    head = b"PERFILE2" if e == "<" else b"PERFILE2"[::-1]
    head += struct.pack(e + "Q", 16)
    head += struct.pack(e + "IHH", 64, 0, 8 + len(a) + 8) + a + struct.pack(e + "Q", 1)
    name = b"uevent:file".ljust(64, b"\0")
    desc = struct.pack(e + "QII", 12, 1, len(a)) + a + struct.pack(e + "II", 1, 64) + name
    desc += struct.pack(e + "Q", 1)
    head += struct.pack(e + "IHH", 80, 0, 8 + len(desc)) + desc
    return head


def main():
    for e, tag in (("<", "le"), (">", "be")):
        pl = payloads(e)
        for name, data in pl.items():
            with open(os.path.join(OUT, f"{name}.{tag}.bin"), "wb") as f:
                f.write(data)
        with open(os.path.join(OUT, f"record_v1.{tag}.bin"), "wb") as f:
            f.write(record_v1(e, 0, pl["text"], 100, 101, 123456789))
        with open(os.path.join(OUT, f"record_v0.{tag}.bin"), "wb") as f:
            f.write(record_v0(e, 0, pl["text"], 100, 101, 123456789))
        # A file-transport capture: pipe-mode perf.data, then three records.
        recs = (record_v1(e, 0, pl["text"], 100, 101, 1000)
                + record_v1(e, 3, pl["counter"], 100, 102, 2000)
                + record_v1(e, 1, pl["range_begin"], 100, 101, 3000))
        with open(os.path.join(OUT, f"capture.{tag}.perf.data"), "wb") as f:
            f.write(file_head(e) + recs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
