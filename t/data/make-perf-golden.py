#!/usr/bin/env python3
"""make-perf-golden.py - golden perf records and ring-buffer images for t/perfdec.

An implementation of the perf record layouts independent of libuevent/decode.c (which
t/perfdec compares against). Writes, for byte orders le and be:
  perf_records.<bo>.bin  records back to back, every one of them described in
                         t/perfdec.c (FORMAT below: every sample_type bit through
                         WEIGHT_STRUCT, plus TLS_USER and AUX; a group read_format)
  ring.le.bin            a 4096-byte metadata page and 4096 data bytes: a perf ring
                         whose data_tail sits near the end so that one record wraps,
                         holding a uevent, a LOST record and a sample
  perf_records.<bo>.perf.data
                         the same records as a pipe-mode perf.data (as `perf record -o -`
                         writes it on a machine of that byte order): the 16-byte header,
                         a HEADER_ATTR record giving FORMAT (id 7), then the records
Run: python3 t/data/make-perf-golden.py [outdir]
"""
import os
import struct
import sys

ID_BITS = dict(TID=1 << 1, TIME=1 << 2, ID=1 << 6, STREAM_ID=1 << 9, CPU=1 << 7,
               IDENTIFIER=1 << 16)
S = dict(IP=1 << 0, TID=1 << 1, TIME=1 << 2, ADDR=1 << 3, READ=1 << 4, CALLCHAIN=1 << 5,
         ID=1 << 6, CPU=1 << 7, PERIOD=1 << 8, STREAM_ID=1 << 9, RAW=1 << 10,
         BRANCH_STACK=1 << 11, REGS_USER=1 << 12, STACK_USER=1 << 13, WEIGHT=1 << 14,
         DATA_SRC=1 << 15, IDENTIFIER=1 << 16, TRANSACTION=1 << 17, REGS_INTR=1 << 18,
         PHYS_ADDR=1 << 19, AUX=1 << 20, CGROUP=1 << 21, DATA_PAGE_SIZE=1 << 22,
         CODE_PAGE_SIZE=1 << 23, WEIGHT_STRUCT=1 << 24, TLS_USER=1 << 25)
SAMPLE_TYPE = sum(v for k, v in S.items() if k != "WEIGHT")   # 0x3ffbfff
READ_FORMAT = 1 | 2 | 4 | 8 | 16        # TOTAL_TIME_ENABLED|RUNNING|ID|GROUP|LOST
BRANCH_SAMPLE_TYPE = 1 << 17            # PERF_SAMPLE_BRANCH_HW_INDEX
REGS_USER = 0x7                          # three registers
REGS_INTR = 0x3                          # two registers


class W:
    def __init__(self, bo):
        self.bo = "<" if bo == "le" else ">"
        self.b = bytearray()

    def u8(self, v): self.b += struct.pack(self.bo + "B", v)
    def u16(self, v): self.b += struct.pack(self.bo + "H", v)
    def u32(self, v): self.b += struct.pack(self.bo + "I", v)
    def u64(self, v): self.b += struct.pack(self.bo + "Q", v)
    def raw(self, v): self.b += v

    def pad8(self):
        while len(self.b) % 8:
            self.b += b"\0"


def trailer(w, st, pid=100, tid=101, time=5000, id_=7, stream=8, cpu=1):
    if st & ID_BITS["TID"]: w.u32(pid); w.u32(tid)
    if st & ID_BITS["TIME"]: w.u64(time)
    if st & ID_BITS["ID"]: w.u64(id_)
    if st & ID_BITS["STREAM_ID"]: w.u64(stream)
    if st & ID_BITS["CPU"]: w.u32(cpu); w.u32(0)
    if st & ID_BITS["IDENTIFIER"]: w.u64(id_)


def record(bo, type_, misc, body, st, **tr):
    w = W(bo)
    body(w)
    w.pad8()
    if st is not None:
        trailer(w, st, **tr)
    h = W(bo)
    h.u32(type_); h.u16(misc); h.u16(8 + len(w.b))
    return bytes(h.b + w.b)


def sample_body(w):
    w.u64(7)                        # identifier
    w.u64(0x401000)                 # ip
    w.u32(100); w.u32(101)          # pid, tid
    w.u64(5000)                     # time
    w.u64(0xdead0000)               # addr
    w.u64(7)                        # id
    w.u64(8)                        # stream_id
    w.u32(1); w.u32(0)              # cpu, res
    w.u64(4000)                     # period
    w.u64(2); w.u64(111); w.u64(99)           # read: nr, enabled, running
    w.u64(10); w.u64(7); w.u64(0)             # value, id, lost
    w.u64(20); w.u64(9); w.u64(3)
    w.u64(3); w.u64(0x401000); w.u64(0x401100); w.u64(0x401200)   # callchain
    raw = b"RAWDATA\0" + b"\x01\x02\x03\x04"
    w.u32(len(raw)); w.raw(raw)     # 4 + 12 = 16: 8-aligned as the kernel keeps it
    w.u64(1); w.u64(5)              # branch nr, hw_idx
    w.u64(0x1000); w.u64(0x2000); w.u64(0x3)
    w.u64(2)                        # regs_user abi (64)
    w.u64(11); w.u64(12); w.u64(13)
    w.u64(16); w.raw(bytes(range(16))); w.u64(12)   # stack_user size, data, dyn_size
    w.u64((5 << 48) | (4 << 32) | 300)   # weight struct: var1 300, var2 4, var3 5 (one u64)
    w.u64(0x68100142)               # data_src
    w.u64(0x10)                     # transaction
    w.u64(2); w.u64(21); w.u64(22)  # regs_intr
    w.u64(0x12345000)               # phys_addr
    w.u64(77)                       # cgroup
    w.u64(4096)                     # data_page_size
    w.u64(2097152)                  # code_page_size
    w.u64(24); w.raw(b"TLS:trace-0123456789ab\0\0"); w.u64(24)   # tls_user
    w.u64(8); w.raw(b"AUXBYTES")    # aux


def str_body(s):
    b = s.encode() + b"\0"
    return b + b"\0" * (-len(b) % 8)


def records(bo):
    st = sum(ID_BITS.values())
    out = []
    h = W(bo); sample_body(h)
    hh = W(bo); hh.u32(9); hh.u16(2); hh.u16(8 + len(h.b))
    out.append(bytes(hh.b + h.b))                                         # SAMPLE
    out.append(record(bo, 1, 2, lambda w: (w.u32(100), w.u32(101), w.u64(0x400000),
                                           w.u64(0x1000), w.u64(0), w.raw(str_body("/bin/true"))), st))
    out.append(record(bo, 10, 2, lambda w: (w.u32(100), w.u32(101), w.u64(0x7f0000000000),
                                            w.u64(0x2000), w.u64(0x1000), w.u32(8), w.u32(1),
                                            w.u64(1234), w.u64(1), w.u32(5), w.u32(2),
                                            w.raw(str_body("/usr/lib/libc.so.6"))), st))
    out.append(record(bo, 10, 2 | (1 << 14), lambda w: (w.u32(100), w.u32(101), w.u64(0x7f0000000000),
                                            w.u64(0x2000), w.u64(0x1000), w.u8(20), w.u8(0), w.u16(0),
                                            w.raw(bytes(range(1, 21))), w.u32(5), w.u32(2),
                                            w.raw(str_body("/usr/lib/libbuild.so"))), st))
    out.append(record(bo, 3, 2, lambda w: (w.u32(100), w.u32(101), w.raw(str_body("demo"))), st))
    out.append(record(bo, 7, 0, lambda w: (w.u32(102), w.u32(100), w.u32(102), w.u32(101), w.u64(4000)), st))
    out.append(record(bo, 4, 0, lambda w: (w.u32(102), w.u32(100), w.u32(102), w.u32(101), w.u64(6000)), st))
    out.append(record(bo, 2, 0, lambda w: (w.u64(7), w.u64(42)), st))        # LOST
    out.append(record(bo, 13, 0, lambda w: w.u64(5), st))                    # LOST_SAMPLES
    out.append(record(bo, 5, 0, lambda w: (w.u64(5100), w.u64(7), w.u64(8)), st))
    out.append(record(bo, 6, 0, lambda w: (w.u64(5200), w.u64(7), w.u64(8)), st))
    out.append(record(bo, 14, 1 << 13, lambda w: None, st))                  # SWITCH out
    out.append(record(bo, 15, 0, lambda w: (w.u32(200), w.u32(201)), st))
    out.append(record(bo, 17, 0, lambda w: (w.u64(0xffffffffc0001000), w.u32(256), w.u16(1),
                                            w.u16(0), w.raw(str_body("bpf_prog_6deef7357e7b4530_x"))), st))
    out.append(record(bo, 18, 0, lambda w: (w.u16(1), w.u16(0), w.u32(42),
                                            w.raw(bytes([0x6d, 0xee, 0xf7, 0x35, 0x7e, 0x7b, 0x45, 0x30]))), st))
    payload = b"hello perf\0"
    out.append(record(bo, 63, 2, lambda w: (w.u32(1), w.u32(len(payload)), w.u32(0), w.u32(0),
                                            w.raw(payload)), st))             # UEVENT
    return out


def revbits(b):
    return int("{:08b}".format(b)[::-1], 2)


def attr(bo):
    """struct perf_event_attr (136 bytes, PERF_ATTR_SIZE_VER8) giving FORMAT."""
    w = W(bo)
    w.u32(1); w.u32(136)            # PERF_TYPE_SOFTWARE, size
    w.u64(0); w.u64(4000)           # config (cpu-clock), sample_period
    w.u64(SAMPLE_TYPE); w.u64(READ_FORMAT)
    flags = (1 << 18) | (1 << 63)   # sample_id_all, uevents
    le = struct.pack("<Q", flags)
    # a bitfield: big-endian compilers number its bits from the top of each byte
    w.raw(le if bo == "le" else bytes(revbits(b) for b in le))
    w.u32(0); w.u32(0)              # wakeup_events, bp_type
    w.u64(0); w.u64(0)              # config1, config2
    w.u64(BRANCH_SAMPLE_TYPE); w.u64(REGS_USER)
    w.u32(16); w.u32(0)             # sample_stack_user, clockid
    w.u64(REGS_INTR)
    w.u32(0); w.u16(0); w.u16(24)   # aux_watermark, sample_max_stack, sample_tls_user
    w.u32(8); w.u32(0)              # aux_sample_size, aux_action
    w.u64(0); w.u64(0)              # sig_data, config3
    assert len(w.b) == 136
    return bytes(w.b)


def pipe_perf_data(bo):
    w = W(bo)
    w.raw(b"PERFILE2" if bo == "le" else b"PERFILE2"[::-1])   # the magic, a u64
    w.u64(16)
    a = attr(bo)
    h = W(bo); h.u32(64); h.u16(0); h.u16(8 + len(a) + 8)    # PERF_RECORD_HEADER_ATTR
    ids = W(bo); ids.u64(7)
    return bytes(w.b + h.b) + a + bytes(ids.b) + b"".join(records(bo))


def ring(bo):
    """A ring with 4096 data bytes, data_tail at 4096-24: the first record wraps."""
    st = ID_BITS["TID"] | ID_BITS["TIME"] | ID_BITS["CPU"] | ID_BITS["IDENTIFIER"]
    payload = b"wrapped mark, longer than the 24 bytes left before the end\0"
    recs = [
        record(bo, 63, 2, lambda w: (w.u32(1), w.u32(len(payload)), w.u32(0), w.u32(0),
                                     w.raw(payload)), st, time=1000),
        record(bo, 2, 0, lambda w: (w.u64(7), w.u64(3)), st, time=2000),
        record(bo, 63, 2, lambda w: (w.u32(1), w.u32(6), w.u32(0), w.u32(0), w.raw(b"after\0")),
               st, time=3000),
    ]
    data = b"".join(recs)
    size, tail = 4096, 4096 - 24 + 8192     # positions are free-running counters
    buf = bytearray(size)
    for i, c in enumerate(data):
        buf[(tail + i) % size] = c
    page = bytearray(4096)
    # struct perf_event_mmap_page: data_head @1024, data_tail @1032, data_offset @1040,
    # data_size @1048 (host order: the ring is read where it was written)
    p = "<" if bo == "le" else ">"
    struct.pack_into(p + "QQQQ", page, 1024, tail + len(data), tail, 4096, size)
    return bytes(page + buf)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    for bo in ("le", "be"):
        with open(os.path.join(out, "perf_records.%s.bin" % bo), "wb") as f:
            f.write(b"".join(records(bo)))
        with open(os.path.join(out, "perf_records.%s.perf.data" % bo), "wb") as f:
            f.write(pipe_perf_data(bo))
    with open(os.path.join(out, "ring.le.bin"), "wb") as f:
        f.write(ring("le"))


if __name__ == "__main__":
    main()
