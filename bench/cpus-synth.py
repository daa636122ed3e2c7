#!/usr/bin/env python3
"""cpus-synth.py IN OUT NCPUS [ROUND]: a recording of NCPUS CPUs made from one of fewer.

IN is a pipe-mode perf.data as `uevent record` writes it (samples with IDENTIFIER and
CPU, sample_id_all): marks, or cpu-clock samples with callchains (-F). Each data record gets a CPU id
at random (a fixed seed: the same file every run) and the records are written as a
recorder of NCPUS rings writes them: a round of ROUND records (default 4096 a CPU) at a
time, each CPU's records of the round together, CPU after CPU, then FINISHED_ROUND. So
the file holds NCPUS interleaved time-ordered streams, as a 16-CPU machine's recording
does, with the same records and times as IN: what a reader does per CPU shows as a
fall of its records/s with NCPUS. The CPUs interleave at random, as real rings do: in
a fixed pattern (record i on CPU i mod NCPUS, before session 28) the time sort merged
them faster, and a 16-CPU file read at 0.87 of one CPU's rate where a recording made
on 16 CPUs read at 0.61 (bench/results/2026-11-28-device-s28.md).
"""
import random
import struct
import sys

HEADER_ATTR, TRACING_DATA, FINISHED_ROUND, SAMPLE = 64, 66, 68, 9
# the sample fields before CPU, in the kernel's order: IDENTIFIER, IP, TID, TIME, ADDR,
# ID, STREAM_ID
BEFORE_CPU = (1 << 16, 1 << 0, 1 << 1, 1 << 2, 1 << 3, 1 << 6, 1 << 9)


def cpu_offset(sample_type):
    return 8 + 8 * sum(1 for b in BEFORE_CPU if sample_type & b)


def main():
    src, dst, ncpu = sys.argv[1], sys.argv[2], int(sys.argv[3])
    per_round = (int(sys.argv[4]) if len(sys.argv) > 4 else 4096) * ncpu
    data = open(src, 'rb').read()
    magic, hsize = struct.unpack_from('<QQ', data, 0)
    if hsize != 16:
        sys.exit('cpus-synth: %s is not a pipe-mode perf.data' % src)
    off, head, recs, tail, cpu_at, cpus = 16, [], [], [], {}, []
    rnd = random.Random(24)
    while off + 8 <= len(data):
        typ, misc, size = struct.unpack_from('<IHH', data, off)
        if size < 8 or off + size > len(data):
            break
        extra = struct.unpack_from('<I', data, off + 8)[0] if typ == TRACING_DATA else 0
        rec = bytearray(data[off:off + size + extra])
        off += size + extra
        if typ == FINISHED_ROUND:
            continue
        if typ == HEADER_ATTR:     # attr (its size at 4, sample_type at 24), then ids
            asize = struct.unpack_from('<I', rec, 8 + 4)[0]
            st = struct.unpack_from('<Q', rec, 8 + 24)[0]
            for k in range(8 + asize, size, 8):
                cpu_at[struct.unpack_from('<Q', rec, k)[0]] = cpu_offset(st)
        if typ >= HEADER_ATTR:
            (tail if recs else head).append(rec)
            continue
        if tail:
            sys.exit('cpus-synth: data records after the end features')
        i = len(recs)
        # the CPU id: a sample's after IDENTIFIER, TID, TIME; the others' sample_id
        # trailer ends TID, TIME, CPU, IDENTIFIER
        at = cpu_at.get(struct.unpack_from('<Q', rec, 8)[0], 32) if typ == SAMPLE else size - 16
        cpus.append(rnd.randrange(ncpu))
        struct.pack_into('<I', rec, at, cpus[i])
        recs.append(rec)
    with open(dst, 'wb') as out:
        out.write(data[:16])
        for r in head:
            out.write(r)
        for start in range(0, len(recs), per_round):
            part = range(start, min(start + per_round, len(recs)))
            for cpu in range(ncpu):
                for k in part:
                    if cpus[k] == cpu:
                        out.write(recs[k])
            out.write(struct.pack('<IHH', FINISHED_ROUND, 0, 8))
        for r in tail:
            out.write(r)
    print('%s: %d records on %d CPUs, rounds of %d' % (dst, len(recs), ncpu, per_round))


if __name__ == '__main__':
    main()
