/* names.c - uevent_demangle() (C++, Rust, Numba's names) and uevent_elf_symbol_next()
 * (a JIT's object in memory, a file read whole): what they give, and what they refuse. */
#include "config.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "uevent.h"
#include "tap.h"

static const char *dm(const char *sym, unsigned int flags)
{
	static char buf[512];

	return uevent_demangle(sym, flags, buf, sizeof(buf)) >= 0 ? buf : "(error)";
}

#define NUMBA UEVENT_DEMANGLE_NUMBA

static void check_demangle(void)
{
	char deep[1024], small[8];
	int n, i;

	ok(!strcmp(dm("_ZN8__main__3hotB2v1B38c8tJTIcFHzwl2ILiXkcBV0KBSgP9CGZpAgA_3dExd", NUMBA),
		   "__main__.hot(int64, float64)") &&
	   !strcmp(dm("_ZN7cpython8__main__1fB2v3B38c8tJTIcFHzwl2ILiXkcBV0KBSgP9CGZpAgA_3dEd",
		      NUMBA), "__main__.f(float64) [cpython wrapper]") &&
	   !strcmp(dm("cfunc._ZN5numba7cpython7unicode11unicode_len12_3clocals_3e8len_implB2v9B4"
		      "2c8tJTIcFHzwl2ILiXkcBV0KBSmNGHkyiCKJEEwA_3dE12unicode_type", NUMBA),
		   "numba.cpython.unicode.unicode_len.<locals>.len_impl(unicode_type) "
		   "[cfunc wrapper]"),
	   "Numba: a function, its cpython and cfunc wrappers, escapes and tags");
	ok(!strcmp(dm("_ZN3app3dotB2v5B2xxE5ArrayIdLi1E1C7mutable7alignedE", NUMBA),
		   "app.dot(Array<float64, 1, C, mutable, aligned>)") &&
	   !strcmp(dm("_ZN3app1gEDhbLi0E", NUMBA), "app.g(float16, bool, 0)"),
	   "Numba: template arguments, literals and float16 (%s)",
	   dm("_ZN3app1gEDhbLi0E", NUMBA));
	ok(!strcmp(dm("_ZN8__main__9caf_c3_a9E", NUMBA), "__main__.caf\xc3\xa9()") &&
	   !strcmp(dm("_ZN1m5a_5fbEx", NUMBA), "m.a_5fb(int64)"),
	   "Numba: escaped bytes come back as UTF-8; an escape of a kept character is text");
	ok(!strcmp(dm("NRT_incref", NUMBA), "NRT_incref") &&
	   !strcmp(dm("_Zbroken9", NUMBA), "_Zbroken9") &&
	   !strcmp(dm("_ZN1aIxEq", NUMBA), "_ZN1aIxEq") &&
	   !strcmp(dm("_ZN99aE", NUMBA), "_ZN99aE") &&
	   !strcmp(dm("_ZN1aE1bLi5", NUMBA), "_ZN1aE1bLi5"),
	   "Numba: plain names, a bad length, an unknown type, a literal without its end: "
	   "copied as they are");
	strcpy(deep, "_ZN1a");
	for (i = 0; i < 150; i++)
		strcat(deep, "I1b");
	n = uevent_demangle(deep, NUMBA, NULL, 0);
	ok(n == (int)strlen(deep), "Numba: 150 nested templates are refused, not recursed into "
	   "(the name copied, %d bytes)", n);
#ifdef HAVE_LIBIBERTY
	ok(!strcmp(dm("_ZN2at8internal15invoke_parallelEl", 0), "at::internal::invoke_parallel(long)") &&
	   !strcmp(dm("_ZN46_$LT$demo..Foo$u20$as$u20$core..fmt..Debug$GT$3fmt17h0123456789abcdefE",
		      0), "<demo::Foo as core::fmt::Debug>::fmt") &&
	   !strcmp(dm("_RNvNtCs1234_7mycrate5inner3foo", 0), "mycrate::inner::foo") &&
	   !strcmp(dm("main", 0), "main"),
	   "C++ and Rust (legacy, v0) as perf prints them; a C name as it is");
#else
	skip(1, "built without libiberty (Debian: libiberty-dev)");
#endif
	n = uevent_demangle("_ZN1m6hello_E", NUMBA, small, sizeof(small));
	ok(n == (int)strlen("m.hello_()") && !strcmp(small, "m.hello"),
	   "a short buffer gets the name cut and NUL-ended; the return is its whole length (%d)", n);
	errno = 0;
	ok(uevent_demangle(NULL, 0, small, sizeof(small)) == -EINVAL && errno == EINVAL &&
	   uevent_demangle("x", 0, NULL, 4) == -EINVAL && uevent_demangle("x", 8, small, 8) == -EINVAL,
	   "NULL name, NULL buffer with a length, unknown flag: -EINVAL");
}

/* A JIT's object: .text loaded at TEXT_AT, .symtab, .strtab, a .dynsym. */
#define TEXT_AT 0x7f0000001000ull
static size_t make_object(unsigned char *o)
{
	static const char strs[] = "\0f\0o\0g\0d\0u";
	Elf64_Ehdr eh = { .e_ident = { 0x7f, 'E', 'L', 'F', ELFCLASS64, ELFDATA2LSB, EV_CURRENT },
			  .e_type = ET_REL, .e_machine = EM_X86_64, .e_shentsize = sizeof(Elf64_Shdr),
			  .e_shnum = 5 };
	Elf64_Sym sym[] = {
		{ 0 },
		{ .st_name = 1, .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC), .st_shndx = 1,
		  .st_value = 8, .st_size = 16 },			/* f: loaded */
		{ .st_name = 3, .st_info = ELF64_ST_INFO(STB_LOCAL, STT_OBJECT), .st_shndx = 1,
		  .st_value = 0, .st_size = 4 },			/* o: data */
		{ .st_name = 5, .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC), .st_shndx = 1,
		  .st_value = 8, .st_size = 40 },			/* g: past .text */
		{ .st_name = 500, .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC), .st_shndx = 1,
		  .st_value = 0, .st_size = 4 },			/* name past .strtab */
		{ .st_name = 9, .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC), .st_shndx = 1,
		  .st_value = 0, .st_size = 4 },			/* u: name not NUL-ended */
	};
	Elf64_Sym dyn[] = { { 0 }, { .st_name = 7, .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),
				     .st_shndx = 1, .st_value = 0, .st_size = 8 } };
	Elf64_Shdr sh[5] = {
		{ 0 },
		{ .sh_type = SHT_PROGBITS, .sh_flags = SHF_ALLOC | SHF_EXECINSTR, .sh_addr = TEXT_AT,
		  .sh_offset = 64, .sh_size = 32 },
		{ .sh_type = SHT_SYMTAB, .sh_link = 3, .sh_offset = 96, .sh_size = sizeof(sym),
		  .sh_entsize = sizeof(Elf64_Sym) },
		{ .sh_type = SHT_STRTAB, .sh_offset = 96 + sizeof(sym), .sh_size = sizeof(strs) - 1 },
		{ .sh_type = SHT_DYNSYM, .sh_link = 3, .sh_offset = 112 + sizeof(sym),
		  .sh_size = sizeof(dyn), .sh_entsize = sizeof(Elf64_Sym) },
	};
	size_t end = 112 + sizeof(sym) + sizeof(dyn);

	eh.e_shoff = end;
	memset(o, 0x90, 96);
	memcpy(o, &eh, sizeof(eh));
	memcpy(o + 96, sym, sizeof(sym));
	memcpy(o + 96 + sizeof(sym), strs, sizeof(strs) - 1);
	memcpy(o + 112 + sizeof(sym), dyn, sizeof(dyn));
	memcpy(o + end, sh, sizeof(sh));
	return end + sizeof(sh);
}

/* "name@addr+size " for each symbol, or "error N". */
static const char *walk(const void *o, size_t len, unsigned int flags)
{
	static char out[4096];
	struct uevent_elf_symbol s = { .sz = sizeof(s) };
	uint64_t pos = 0;
	size_t n = 0;
	int r;

	out[0] = 0;
	while ((r = uevent_elf_symbol_next(o, len, flags, &pos, &s)) == 1 && n < sizeof(out) - 64)
		n += (size_t)snprintf(out + n, sizeof(out) - n, "%s@%#llx+%llu%s ", s.name,
				      (unsigned long long)s.addr, (unsigned long long)s.size,
				      s.type == STT_OBJECT ? "o" : "");
	if (r < 0)
		snprintf(out, sizeof(out), "error %d", -r);
	return out;
}

static void check_elf(void)
{
	static unsigned char o[2048], cut[2048];
	struct uevent_elf_symbol s = { .sz = sizeof(s) };
	char want[128], *exe;
	size_t len = make_object(o), i, bad = 0;
	uint64_t pos = 0;
	struct stat st;
	int fd, found = 0;

	snprintf(want, sizeof(want), "f@%#llx+16 ", TEXT_AT + 8);
	ok(!strcmp(walk(o, len, 0), want), "a JIT's object: the function inside executable "
	   "code, at its section's load address (%s)", walk(o, len, 0));
	ok(!strcmp(walk(o, len, UEVENT_ELF_FILE), "f@0x8+16 o@0+4o g@0x8+40 d@0+8 "),
	   "a file: functions and objects of .symtab and .dynsym, st_value as it is (%s)",
	   walk(o, len, UEVENT_ELF_FILE));
	/* every cut of it: no read past the cut (ASan in fuzz/names), and fewer symbols */
	for (i = 0; i < len; i++) {
		unsigned char *c = malloc(i ? i : 1);

		memcpy(c, o, i);
		if (strlen(walk(c, i, UEVENT_ELF_FILE)) > strlen(walk(o, len, UEVENT_ELF_FILE)))
			bad++;
		free(c);
	}
	ok(!bad, "every one of its %zu cut copies reads as no more than the whole", len);
	memcpy(cut, o, len);
	((Elf64_Shdr *)(cut + len - 5 * sizeof(Elf64_Shdr)))[2].sh_link = 99;
	((Elf64_Shdr *)(cut + len - 5 * sizeof(Elf64_Shdr)))[4].sh_offset = 1ull << 62;
	ok(!strcmp(walk(cut, len, UEVENT_ELF_FILE), ""),
	   "a symbol table whose strings or entries lie outside the object is skipped");
	ok(!strcmp(walk("\x7f" "ELF", 4, 0), "error 8") && !strcmp(walk(want, sizeof(want), 0),
	   "error 8") && uevent_elf_symbol_next(NULL, 0, 0, &pos, &s) == -EINVAL &&
	   uevent_elf_symbol_next(o, len, 2, &pos, &s) == -EINVAL &&
	   (s.sz = 8, uevent_elf_symbol_next(o, len, 0, &pos, &s) == -EINVAL),
	   "not ELF64: -ENOEXEC; NULL object, unknown flag, an old struct: -EINVAL");
	/* this program's file, read whole: its main */
	exe = NULL;
	fd = open("/proc/self/exe", O_RDONLY);
	if (fd >= 0 && !fstat(fd, &st) && (exe = malloc((size_t)st.st_size)) &&
	    read(fd, exe, (size_t)st.st_size) == st.st_size) {
		s.sz = sizeof(s);
		pos = 0;
		while (uevent_elf_symbol_next(exe, (size_t)st.st_size, UEVENT_ELF_FILE, &pos, &s) == 1)
			found |= !strcmp(s.name, "main") && s.type == STT_FUNC && s.size > 0;
	}
	ok(found, "this test's own file: main is among its symbols");
	free(exe);
	if (fd >= 0)
		close(fd);
}

int main(void)
{
	plan(14);
	check_demangle();
	check_elf();
	return exit_status();
}
