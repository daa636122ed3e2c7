/*
 * names.c - libFuzzer target: uevent_elf_symbol_next() over the input as a JIT's object
 * and as a file (every name it gives must end inside the input, and the walk must end),
 * then uevent_demangle() of the input as a name, Numba's way and perf's (the return is
 * the whole name's length, a cut copy is its prefix).
 */
#include "fuzz.h"

#include <elf.h>

#define SAME(cond) do { if (!(cond)) __builtin_trap(); } while (0)

static char name[4096], whole[16384], part[16];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct uevent_elf_symbol s = { .sz = sizeof(s) };
	unsigned int flags;
	uint64_t pos, n;
	int r;

	for (flags = 0; flags <= UEVENT_ELF_FILE; flags++) {
		for (pos = 0, n = 0; (r = uevent_elf_symbol_next(data, size, flags, &pos, &s)) == 1;
		     n++) {
			SAME(s.name >= (const char *)data && s.name < (const char *)data + size);
			touch(s.name, strlen(s.name) + 1);
			SAME((const uint8_t *)s.name + strlen(s.name) < data + size);
			SAME(n <= size / sizeof(Elf64_Sym));
		}
		SAME(r == 0 || r == -ENOEXEC);
	}
	if (size >= sizeof(name))
		return 0;
	memcpy(name, data, size);
	name[size] = 0;
	for (flags = 0; flags <= UEVENT_DEMANGLE_NUMBA; flags++) {
		r = uevent_demangle(name, flags, whole, sizeof(whole));
		SAME(r >= 0 && (size_t)r < sizeof(whole) && strlen(whole) == (size_t)r);
		SAME(uevent_demangle(name, flags, part, sizeof(part)) == r);
		SAME(!strncmp(part, whole, sizeof(part) - 1) && strlen(part) < sizeof(part));
	}
	return 0;
}
