#!/usr/bin/env python3
"""make-corpus.py - write the fuzz targets' seeds (fuzz/corpus/TARGET/) from t/data.

Usage: fuzz/make-corpus.py [--record BUILDDIR]
  --record BUILDDIR   also record fuzz/corpus/perf-file/tiny-record.perf.data anew with
                      BUILDDIR/tools/uevent (root, uprobes): 2 marks and a counter through
                      the usdt probe, 32 payload bytes fetched each (pipe mode)

Each target's input starts with what it cannot find in the bytes themselves:
  perf-record  72 bytes: sample_type, read_format, branch_sample_type, regs_user,
               regs_intr (u64), sample_id_all, flags (u32), byte order, raw layout kind
               (u8), 2 unused, type/size/data offsets and capacity (u32), 4 unused
  record       16 bytes: sample_type (u64), flags (u32), byte order (u8), 3 unused
  payload      2 bytes: payload type, byte order
  names        an ELF object as a JIT hands it to debuggers, or a symbol name
  elf          a file a recording or a traced process names: an ELF file (SDT notes,
               symbols, build-id, .gnu_debuglink; one compiled with DWARF lines when a C
               compiler is at hand) or a jitdump
  perf-map     a perf-PID.map, as it is
  tracing      u32 tracepoint config, u32 length, that many bytes of tracing data, then
               each sample's raw data as a u16 length and its bytes
  perf-file, uevent-file, cli: the file as it is

It replaces only the seeds it writes, which fuzz/corpus/generated.txt lists (and removes
one it listed before and writes no more); a seed added by hand, under a name it does not
write (libFuzzer's are hashes), stays. Without a C compiler, or without --record, the
seed those make stays as it was.
"""
import os
import re
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "t", "data")
OUT = os.path.join(HERE, "corpus")
MANIFEST = os.path.join(OUT, "generated.txt")
BO = {"le": 1, "be": 2}
TID, TIME = 1 << 1, 1 << 2
PAYLOADS = ["text", "range_begin", "range_end", "counter", "jit_code_load",
            "jit_code_move", "jit_code_unload", "jit_debug_info", "trace_context"]


def data(name):
    with open(os.path.join(DATA, name), "rb") as f:
        return f.read()


written = set()	# TARGET/NAME of each seed put this run


def put(target, name, b):
    os.makedirs(os.path.join(OUT, target), exist_ok=True)
    with open(os.path.join(OUT, target, name), "wb") as f:
        f.write(b)
    written.add(target + "/" + name)


def kept(target, name):
    """The bytes of a seed already there, or None."""
    path = os.path.join(OUT, target, name)
    if not os.path.exists(path):
        return None
    with open(path, "rb") as f:
        return f.read()


def listed():
    """TARGET/NAME of each seed the manifest says an earlier run wrote."""
    try:
        with open(MANIFEST) as f:
            rows = [ln.strip() for ln in f]
    except FileNotFoundError:
        return set()
    # a row that is not TARGET/NAME is never a path to remove
    return {r for r in rows if re.fullmatch(r"[\w.-]+/[\w.-]+", r) and ".." not in r}


def finish(before):
    """Removes the seeds an earlier run wrote and this one did not, lists this run's."""
    for rel in sorted(before - written):
        path = os.path.join(OUT, rel)
        if os.path.isfile(path):
            os.remove(path)
    with open(MANIFEST, "w") as f:
        f.write("# generated.txt - the seeds fuzz/make-corpus.py wrote, one TARGET/NAME a line:\n"
                "# it replaces and removes only these; the others were added by hand.\n")
        f.writelines(rel + "\n" for rel in sorted(written))


def records(b, e, off=0, end=None):
    """(offset, type, bytes) of each perf record in b[off:end]."""
    end = len(b) if end is None else end
    while off + 8 <= end:
        t, _, size = struct.unpack_from(e + "IHH", b, off)
        if size < 8:
            return
        extra = struct.unpack_from(e + "I", b, off + 8)[0] if t == 66 else 0
        yield off, t, b[off:off + size]
        off += size + extra


def perf_prefix(e, st, rf=0, bst=0, ru=0, ri=0, id_all=0, flags=0, bo=0, layout=(0, 0, 0, 0, 0)):
    kind, to, so, do, cap = layout
    return (struct.pack("<5Q", st, rf, bst, ru, ri) + struct.pack("<II", id_all, flags)
            + bytes([bo, kind, 0, 0]) + struct.pack("<4I", to, so, do, cap) + b"\0" * 4)


def field(fmt, name):
    m = re.search(r"field:[^;]*\b" + name + r"(\[\d*\])?;\s*offset:(\d+);\s*size:(\d+);", fmt)
    return (int(m.group(2)), int(m.group(3))) if m else None


def main():
    before = listed()
    tiny = kept("perf-file", "tiny-record.perf.data")
    if "--record" in sys.argv:
        build = sys.argv[sys.argv.index("--record") + 1]
        uev = os.path.join(build, "tools", "uevent")
        path = os.path.join("/tmp", "fuzz-tiny-%d.data" % os.getpid())
        subprocess.run([uev, "record", "-n", "32", "-o", path, "--", "sh", "-c",
                        f"{uev} emit -n 2 tiny mark; {uev} emit --counter tiny=3"], check=True)
        tiny = open(path, "rb").read()
        os.unlink(path)

    # perf-record: the golden records under their format, both byte orders
    for tag, bo in BO.items():
        e = "<" if tag == "le" else ">"
        b = data(f"perf_records.{tag}.bin")
        pre = perf_prefix(e, 0x3ffbfff, 0x1f, 1 << 17, 0x7, 0x3, 1, 0, bo)
        for i, (_, t, r) in enumerate(records(b, e)):
            put("perf-record", f"golden-{tag}-{i:02d}-type{t}", pre + r)
        put("perf-record", f"uevent-v1-{tag}", perf_prefix(e, TID | TIME, id_all=1, bo=bo)
            + data(f"record_v1.{tag}.bin"))
    # a usdt sample of the pipe recording with the layout its tracing data gives
    b = data("usdt.pipe.perf.data")
    tracing = b[b.index(b"\x17\x08\x44tracing"):].decode("latin-1")
    emit = tracing[tracing.index("name: emit"):]
    (to, _), (so, _), (do, dsz) = field(emit, "type"), field(emit, "size"), field(emit, "d0")
    attr = next(r for _, t, r in records(b, "<", 16) if t == 64)
    st, rf = struct.unpack_from("<QQ", attr, 8 + 24)[0], struct.unpack_from("<Q", attr, 8 + 32)[0]
    for i, (_, t, r) in enumerate(x for x in records(b, "<", 16) if x[1] == 9):
        put("perf-record", f"usdt-sample-{i}", perf_prefix("<", st, rf, bo=1,
            layout=(1, to, so, do, dsz)) + r)

    # record: the PERF_RECORD_UEVENT goldens (v1 and the V0 layout), the captures'
    for tag, bo in BO.items():
        e = "<" if tag == "le" else ">"
        put("record", f"v1-{tag}", struct.pack("<QI", TID | TIME, 0) + bytes([bo, 0, 0, 0])
            + data(f"record_v1.{tag}.bin"))
        put("record", f"v0-{tag}", struct.pack("<QI", TID | TIME, 1) + bytes([bo, 0, 0, 0])
            + data(f"record_v0.{tag}.bin"))
        # the file transport's capture: pipe-mode perf.data, its attr's sample_type
        cap = data(f"capture.{tag}.perf.data")
        attr = next(r for _, t, r in records(cap, e, 16) if t == 64)
        st = struct.unpack_from(e + "Q", attr, 8 + 24)[0]
        ue = [r for _, t, r in records(cap, e, 16) if t == 63]	# PERF_RECORD_UEVENT
        for i, r in enumerate(ue):
            put("record", f"capture-{tag}-{i}", struct.pack("<QI", st, 0)
                + bytes([bo, 0, 0, 0]) + r)

    # payload: every well-known type's golden, both byte orders
    for ty, name in enumerate(PAYLOADS):
        for tag, bo in BO.items():
            put("payload", f"{name}-{tag}", bytes([ty, bo]) + data(f"{name}.{tag}.bin"))

    # perf-file: pipe and file mode, both byte orders, tracing data and event names
    for name in ("perf_records.le.perf.data", "perf_records.be.perf.data", "usdt.perf.data",
                 "clock.perf.data"):
        put("perf-file", name, data(name))
    if tiny:
        put("perf-file", "tiny-record.perf.data", tiny)

    # uevent-file: the file-transport captures (pipe-mode perf.data)
    for tag in BO:
        put("uevent-file", f"capture.{tag}.perf.data", data(f"capture.{tag}.perf.data"))

    # names: a JIT's object (.text loaded at an address, .symtab, .strtab, .dynsym) and
    # Numba, C++ and Rust names
    put("names", "jit-object", jit_object())
    for i, sym in enumerate([
            "_ZN8__main__3hotB2v1B38c8tJTIcFHzwl2ILiXkcBV0KBSgP9CGZpAgA_3dExd",
            "_ZN7cpython8__main__1fB2v3B38c8tJTIcFHzwl2ILiXkcBV0KBSgP9CGZpAgA_3dEd",
            "cfunc._ZN5numba7cpython7unicode11unicode_len12_3clocals_3e8len_implB2v9B4"
            "2c8tJTIcFHzwl2ILiXkcBV0KBSmNGHkyiCKJEEwA_3dE12unicode_type",
            "_ZN3app3dotB2v5B2xxE5ArrayIdLi1E1C7mutable7alignedE",
            "_ZN2at8internal15invoke_parallelEl", "_RNvNtCs1234_7mycrate5inner3foo"]):
        put("names", f"name-{i}", sym.encode())

    # elf: a made-up ELF file with everything the readers look at, a real one, jitdumps
    put("elf", "sdt-symbols", elf_file())
    put("elf", "sdt-misaligned", elf_file(shift=3))
    cc = compiled_elf() or kept("elf", "compiled-dwarf")
    if cc:
        put("elf", "compiled-dwarf", cc)
    put("elf", "jitdump", jitdump())

    # perf-map: t/symbolize's maps (the last line wins, overlaps end lines), odd lines
    put("perf-map", "last-wins",
        b"7f0000100000 40 old map name\n7f0000100000 40 Lua:hot loop.lua:3\n")
    put("perf-map", "overlaps", b"7f0000200000 100 wide_old\n7f0000200040 10 inner_new\n"
        b"7f0000400010 10 inner_old\n7f0000400000 40 wide_new\n"
        b"7f0000500000 40 first\n7f0000500040 40 touching\n7f0000500020 40 second\n"
        b"7f0000600000 40 alone\n")
    put("perf-map", "odd-lines", b"0x1000 0x10 hex_prefixed\r\n2000 0 zero_size\n3000\n"
        b"junk line\n4000 10\n5000 10 \n6000 10 tab\tname\n" + b"7000 10 " + b"L" * 5000
        + b"\nffffffffffffff00 200 wraps\n")

    # tracing: the usdt recording's tracing data and samples; a made-up system of fields
    b = data("usdt.pipe.perf.data")
    at = b.index(b"\x17\x08\x44tracing")
    td = b[at:at + struct.unpack_from("<I", b, at - 8)[0]]
    attr = next(r for _, t, r in records(b, "<", 16) if t == 64)
    raws = [r[56 + 4:56 + 4 + struct.unpack_from("<I", r, 56)[0]]
            for _, t, r in records(b, "<", 16) if t == 9]
    put("tracing", "usdt-emit", struct.pack("<II", struct.unpack_from("<Q", attr, 8 + 8)[0],
                                            len(td)) + td
        + b"".join(struct.pack("<H", len(r)) + r for r in raws))
    for tag, big in (("le", 0), ("be", 1)):
        put("tracing", f"fields-{tag}", tracing_fields(big))

    # cli: the perf.data files, and one of samples, mappings, JIT code, ranges, traces
    for name in ("perf_records.le.perf.data", "perf_records.be.perf.data", "usdt.perf.data",
                 "usdt.pipe.perf.data", "clock.perf.data", "capture.le.perf.data"):
        put("cli", name, data(name))
    put("cli", "profile.perf.data", profile())
    finish(before)


def note(name, ntype, desc):
    pad = lambda b: b + bytes(-len(b) % 4)
    return struct.pack("<III", len(name), len(desc), ntype) + pad(name) + pad(desc)


def elf_file(shift=0):
    """ELF64 LE executable: a PT_LOAD of the whole file at 0x400000; .text with three
    functions (.symtab, .strtab); .note.stapsdt with libuevent's text, emit16 and emit
    probes and another provider's, .stapsdt.base, a semaphore in .probes; a GNU build-id
    note; a .gnu_debuglink; .shstrtab last. shift: bytes before the section headers
    (so that they, and what follows, sit off their alignment)."""
    base = 0x400000
    names = [b"", b".text", b".note.stapsdt", b".stapsdt.base", b".probes", b".symtab",
             b".strtab", b".note.gnu.build-id", b".gnu_debuglink", b".shstrtab"]
    shstr = b"\0".join(names) + b"\0"
    name_off = {n: shstr.index(n + b"\0") if n else 0 for n in names}
    off = 64 + 2 * 56
    secs = []	# name, type, flags, offset, bytes, link, entsize

    def add(name, t, fl, data, align=8, link=0, ent=0):
        nonlocal off
        off += -off % align
        secs.append((name, t, fl, off, data, link, ent))
        off += len(data)
        return off - len(data)

    text = b"\x90" * 15 + b"\xc3" + b"\x90" * 15 + b"\xc3" + b"\xc3" * 16
    text_off = add(b".text", 1, 6, text, 16)
    base_off = off + (-off % 8)
    sdt_base = base + base_off
    probes_off = base_off + 8
    sdt = b""
    for prov, pname, pc, args in [(b"libuevent", b"text", 4, b"-4@%edi 8@%rsi 8@%rdx"),
                                  (b"libuevent", b"emit16", 20, b"-4@%edi 8@%rsi -8@8(%rbp)"),
                                  (b"libuevent", b"emit", 36, b"4@$5 8@-24(%rbp) 8@%rax"),
                                  (b"other", b"probe", 8, b"")]:
        desc = struct.pack("<QQQ", base + text_off + pc, sdt_base, base + probes_off) + \
            prov + b"\0" + pname + b"\0" + args + b"\0"
        sdt += note(b"stapsdt\0", 3, desc)
    add(b".stapsdt.base", 1, 2, b"\0" * 8)
    add(b".probes", 1, 3, b"\0" * 8)
    add(b".note.stapsdt", 7, 0, sdt, 4)
    strs = b"\0first\0second\0third\0"
    sym = lambda name, info, value, size, shndx=1: struct.pack("<IBBHQQ", name, info, 0, shndx,
                                                                  value, size)
    syms = bytes(24) + sym(1, 0x12, base + text_off, 16) + sym(7, 0x02, base + text_off + 16, 16) \
        + sym(14, 0x12, base + text_off + 32, 0)
    add(b".symtab", 2, 0, syms, 8, link=6, ent=24)
    add(b".strtab", 3, 0, strs, 1)
    add(b".note.gnu.build-id", 7, 2, note(b"GNU\0", 3, bytes(range(1, 21))), 4)
    add(b".gnu_debuglink", 1, 0, b"prog.debug\0\0" + struct.pack("<I", 0x12345678), 4)
    add(b".shstrtab", 3, 0, shstr, 1)
    shoff = off + (-off % 8) + shift
    size = shoff + 64 * (len(secs) + 1)
    eh = (b"\x7fELF" + bytes([2, 1, 1]) + bytes(9)
          + struct.pack("<HHIQQQIHHHHHH", 2, 62, 1, base + text_off, 64, shoff, 0, 64, 56, 2,
                        64, len(secs) + 1, len(secs)))
    ph = struct.pack("<IIQQQQQQ", 1, 5, 0, base, base, size, size, 0x1000)
    nt = next(s for s in secs if s[0] == b".note.stapsdt")
    ph += struct.pack("<IIQQQQQQ", 4, 4, nt[3], base + nt[3], base + nt[3], len(nt[4]),
                      len(nt[4]), 4)
    body = bytearray(eh + ph)
    for name, t, fl, o, data, link, ent in secs:
        body += bytes(o - len(body)) + data
    body += bytes(shoff - len(body))
    body += bytes(64)
    idx = {s[0]: i + 1 for i, s in enumerate(secs)}
    for name, t, fl, o, data, link, ent in secs:
        addr = base + o if fl & 2 else 0
        body += struct.pack("<IIQQQQIIQQ", name_off[name], t, fl, addr, o, len(data), link,
                            0, 1, ent)
    assert len(body) == size and idx[b".strtab"] == 6
    return bytes(body)


def compiled_elf():
    """A tiny static program built with DWARF lines and a build-id, or None without cc."""
    import tempfile
    src = ("static int helper(int x) { return x * 3 + 1; }\n"
           "int work(int n) { int s = 0; for (int i = 0; i < n; i++) s += helper(i); return s; }\n"
           "void _start(void) { volatile int r = work(5); (void)r; for (;;) ; }\n")
    with tempfile.TemporaryDirectory() as d:
        c, out = os.path.join(d, "t.c"), os.path.join(d, "t")
        open(c, "w").write(src)
        try:
            subprocess.run(["cc", "-g", "-O1", "-fdebug-prefix-map=%s=/src" % d,
                            "-fno-asynchronous-unwind-tables", "-nostdlib", "-static",
                            "-Wl,--build-id", "-o", out, c], check=True, capture_output=True)
        except (OSError, subprocess.CalledProcessError):
            return None
        b = open(out, "rb").read()
        return b if len(b) <= 65536 else None


def jitdump():
    """A jitdump: its header, two loads (the second over the first's bytes), a move."""
    hdr = struct.pack("<IIIIIIQQ", 0x4A695444, 1, 40, 62, 0, 4242, 1, 0)

    def rec(rid, t, body):
        return struct.pack("<IIQ", rid, 16 + len(body), t) + body

    def load(t, addr, size, index, name):
        return rec(0, t, struct.pack("<IIQQQQ", 4242, 4242, addr, addr, size, index)
                   + name + b"\0" + b"\xc3" * size)

    x = 0x7f0000000000
    return (hdr + load(2, x, 16, 1, b"jit_first") + load(3, x + 8, 16, 2, b"jit_second")
            + rec(1, 4, struct.pack("<IIQQQQQ", 4242, 4242, x + 8, x + 8, x + 64, 16, 2)))


def tracing_fields(big):
    """A tracing data of one system, "fz", of two events (ids 7 and 8) whose fields are of
    every kind libtraceevent prints (numbers signed or not, a char array, a __data_loc
    string, a __rel_loc one, an array, a pointer), then samples of event 7: one as written,
    one whose strings have no NUL (the last ends the data), one whose locations point past
    it."""
    e = ">" if big else "<"
    fmt7 = (b"name: fields\nID: 7\nformat:\n"
            b"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
            b"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
            b"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
            b"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
            b"\tfield:char comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
            b"\tfield:__data_loc char[] msg;\toffset:24;\tsize:4;\tsigned:0;\n"
            b"\tfield:__rel_loc char[] rel;\toffset:28;\tsize:4;\tsigned:0;\n"
            b"\tfield:short delta;\toffset:32;\tsize:2;\tsigned:1;\n"
            b"\tfield:u8 bytes[6];\toffset:34;\tsize:6;\tsigned:0;\n"
            b"\tfield:void * ptr;\toffset:40;\tsize:8;\tsigned:0;\n"
            b"\tfield:long value;\toffset:48;\tsize:8;\tsigned:1;\n\n"
            b'print fmt: "comm=%s msg=%s rel=%s delta=%d ptr=%p value=%ld", REC->comm, '
            b"__get_str(msg), __get_rel_str(rel), REC->delta, REC->ptr, REC->value\n")
    fmt8 = (b"name: emit\nID: 8\nformat:\n"
            b"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
            b"\tfield:u32 type;\toffset:8;\tsize:4;\tsigned:0;\n"
            b"\tfield:u64 size;\toffset:12;\tsize:8;\tsigned:0;\n"
            b"\tfield:u64 d0[];\toffset:20;\tsize:16;\tsigned:0;\n\n"
            b'print fmt: "type=%u size=%Lu", REC->type, REC->size\n')
    u32 = lambda v: struct.pack(e + "I", v)
    blob = lambda b: struct.pack(e + "Q", len(b)) + b
    td = (b"\x17\x08\x44tracing0.6\0" + bytes([big, 8]) + u32(4096)
          + b"header_page\0" + blob(b"") + b"header_event\0" + blob(b"") + u32(0)
          + u32(1) + b"fz\0" + u32(2) + blob(fmt7) + blob(fmt8))

    def raw(comm, loc, rel, tail):
        b = (struct.pack(e + "HBBi", 7, 0, 0, 4242) + comm + u32(loc) + u32(rel)
             + struct.pack(e + "h", -3) + b"\x01\x02\x03\x04\x05\x06"
             + struct.pack(e + "Qq", 0xffffffff81000000, -42))
        return b + tail

    msg, rel = b"hello\0", b"rel\0"
    good = raw(b"worker".ljust(16, b"\0"), (len(msg) << 16) | 56, (len(rel) << 16) | (62 - 32),
               msg + rel)
    # no NULs: the string at the data's very end (56 + 4 bytes: the kernel pads none)
    unended = raw(b"W" * 16, (4 << 16) | 56, (2 << 16) | 26, b"abcd")
    past = raw(b"x\0".ljust(16, b"\0"), (200 << 16) | 50, (0xffff << 16) | 0xfff0, b"")
    return (struct.pack("<II", 7, len(td)) + td
            + b"".join(struct.pack("<H", len(r)) + r for r in (good, unended, past)))


def profile():
    """A pipe-mode perf.data (as t/sample-data.py writes them) of process 300: its COMM,
    an executable MMAP2, a JIT load, nested uevent ranges "r" and "inner", a trace
    context, a counter, and samples in and out of them with callchains (user and kernel
    frames, perf's context markers), then the end of a range never begun."""
    ST = 1 | 2 | 4 | 32 | 256		# IP TID TIME CALLCHAIN PERIOD
    PID, TID = 300, 301
    a = struct.pack("<IIQQQQQ", 1, 136, 0, 1000000, ST, 0, (1 << 18) | (1 << 63))
    a += bytes(136 - len(a))
    out = b"PERFILE2" + struct.pack("<Q", 16) + struct.pack("<IHH", 64, 0, 8 + len(a) + 8) + a \
        + struct.pack("<Q", 7)
    tail = lambda t: struct.pack("<IIQ", PID, TID, t)

    def rec(t, misc, body):
        return struct.pack("<IHH", t, misc, 8 + len(body)) + body

    def uevent(ty, payload, t):
        b = struct.pack("<IIII", 1, len(payload), ty, 0) + payload + bytes(-len(payload) % 8)
        return rec(63, 2, b + tail(t))

    def rbegin(rid, parent, name, t):
        n = name.encode()
        return uevent(1, struct.pack("<QQII", rid, parent, 0, len(n)) + n + b"\0", t)

    def sample(t, chain, period=1000):
        ip = next((c for c in chain if c < 0xfffffffffffff000), 0)	# the leaf
        b = struct.pack("<QIIQQ", ip, PID, TID, t, period)
        b += struct.pack("<Q", len(chain)) + b"".join(struct.pack("<Q", c) for c in chain)
        return rec(9, 2, b)

    comm = b"prog\0\0\0\0"
    name = b"/no/such/prog\0"
    name += bytes(-len(name) % 8)
    mmap2 = rec(10, 2, struct.pack("<IIQQQIIQQII", PID, TID, 0x400000, 0x10000, 0, 8, 1, 42, 0,
                                   5, 2) + name + tail(1))
    k, user = 0xffffffffffffff80, 0xfffffffffffffe00		# PERF_CONTEXT_KERNEL, _USER
    out += rec(3, 0, struct.pack("<II", PID, TID) + comm + tail(0)) + mmap2
    out += uevent(4, data("jit_code_load.le.bin"), 2)
    out += rbegin(1, 0, "r", 10) + rbegin(2, 1, "inner", 11)
    out += uevent(8, data("trace_context.le.bin"), 12)
    out += sample(20, [k, 0xffffffff81000010, user, 0x401000, 0x402000])
    out += sample(21, [0x7f0000001008, 0x401100])
    out += uevent(3, data("counter.le.bin"), 22)
    out += uevent(2, struct.pack("<QQ", 2, 0), 30) + sample(31, [0x401000])
    out += uevent(2, struct.pack("<QQ", 1, 0), 40) + sample(41, [], 2 ** 63)
    out += uevent(2, struct.pack("<QQ", 9, 0), 50)
    return out


def jit_object():
    """ELF64 LE: .text (executable, loaded at 0x7f0000001000), .symtab with a function,
    a data object and one past its section, .strtab, .dynsym."""
    strs = b"\0f\0o\0g\0d\0"
    sym = lambda name, info, value, size: struct.pack("<IBBHQQ", name, info, 0, 1, value, size)
    syms = bytes(24) + sym(1, 0x12, 8, 16) + sym(3, 0x01, 0, 4) + sym(5, 0x12, 8, 40)
    dyn = bytes(24) + sym(7, 0x12, 0, 8)
    text = b"\x90" * 32
    body = text + syms + strs + bytes(-len(strs) % 8) + dyn
    o_syms = 64 + len(text)
    o_strs = o_syms + len(syms)
    o_dyn = o_strs + len(strs) + (-len(strs) % 8)
    shoff = 64 + len(body)
    sh = lambda t, fl, addr, off, size, link=0, ent=0: struct.pack(
        "<IIQQQQIIQQ", 0, t, fl, addr, off, size, link, 0, 8, ent)
    shdrs = (bytes(64) + sh(1, 6, 0x7f0000001000, 64, 32) + sh(2, 0, 0, o_syms, len(syms), 3, 24)
             + sh(3, 0, 0, o_strs, len(strs)) + sh(11, 0, 0, o_dyn, len(dyn), 3, 24))
    eh = (b"\x7fELF" + bytes([2, 1, 1]) + bytes(9)
          + struct.pack("<HHIQQQIHHHHHH", 1, 62, 1, 0, 0, shoff, 0, 64, 0, 0, 64, 5, 0))
    return eh + body + shdrs


main()
