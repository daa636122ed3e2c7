/* elf-object.c - the symbols of an ELF object in memory, for uevent_elf_symbol_next():
 * the objects a JIT hands to debuggers (the GDB JIT interface), whose section headers
 * hold the addresses the code was loaded at, and a file's own tables read whole.
 * Headers are copied out (the object may sit at any alignment) and every offset is
 * checked against len. */
#include "config.h"

#include <elf.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "internal.h"

/* Section header i into *sh: 0, or -1 when the object does not hold it whole. */
static int shdr(const unsigned char *o, size_t len, const Elf64_Ehdr *eh, size_t i,
		Elf64_Shdr *sh)
{
	if (i >= eh->e_shnum || eh->e_shoff > len ||
	    (len - eh->e_shoff) / eh->e_shentsize <= i)
		return -1;
	memcpy(sh, o + eh->e_shoff + i * eh->e_shentsize, sizeof(*sh));
	return 0;
}

/* Whether the symbol is one the caller asked for; fills out. */
static int take(const unsigned char *o, size_t len, const Elf64_Ehdr *eh, unsigned int flags,
		const Elf64_Shdr *tab, const Elf64_Sym *st, struct uevent_elf_symbol *out)
{
	unsigned int type = ELF64_ST_TYPE(st->st_info);
	Elf64_Shdr strs, sec;
	const char *name;

	if (type != STT_FUNC && !(type == STT_OBJECT && (flags & UEVENT_ELF_FILE)))
		return 0;
	if (shdr(o, len, eh, tab->sh_link, &strs) || strs.sh_offset > len ||
	    strs.sh_size > len - strs.sh_offset || st->st_name >= strs.sh_size)
		return 0;
	name = (const char *)o + strs.sh_offset + st->st_name;
	if (!memchr(name, 0, strs.sh_size - st->st_name))
		return 0;
	out->name = name;
	out->addr = st->st_value;
	out->size = st->st_size;
	out->type = type;
	out->bind = ELF64_ST_BIND(st->st_info);
	if (flags & UEVENT_ELF_FILE)
		return 1;
	/* loaded code: wholly inside an executable section, which sits at its sh_addr */
	if (st->st_shndx == SHN_UNDEF || shdr(o, len, eh, st->st_shndx, &sec) || !st->st_size ||
	    !(sec.sh_flags & SHF_EXECINSTR) || st->st_value > sec.sh_size ||
	    st->st_size > sec.sh_size - st->st_value)
		return 0;
	out->addr = sec.sh_addr + st->st_value;
	return 1;
}

UEVENT_EXPORT int uevent_elf_symbol_next(const void *obj, size_t len, unsigned int flags,
					 uint64_t *pos, struct uevent_elf_symbol *out)
{
	const unsigned char *o = obj;
	Elf64_Ehdr eh;
	size_t i;

	if (!obj || !pos || !out || out->sz < sizeof(*out) ||
	    (flags & ~(unsigned int)UEVENT_ELF_FILE))
		return _uevent_err(EINVAL);
	if (len < sizeof(eh))
		return _uevent_err(ENOEXEC);
	memcpy(&eh, obj, sizeof(eh));
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_shentsize < sizeof(Elf64_Shdr))
		return _uevent_err(ENOEXEC);
	/* *pos: the section's index in the high 24 bits, the next entry's in the low 40 */
	for (i = *pos >> 40; i < eh.e_shnum; i++, *pos = (uint64_t)i << 40) {
		Elf64_Shdr tab;
		uint64_t j;

		if (shdr(o, len, &eh, i, &tab) || (tab.sh_type != SHT_SYMTAB &&
		    !(tab.sh_type == SHT_DYNSYM && (flags & UEVENT_ELF_FILE))) ||
		    tab.sh_offset > len || tab.sh_size > len - tab.sh_offset)
			continue;
		for (j = *pos & ((1ull << 40) - 1); j < tab.sh_size / sizeof(Elf64_Sym); j++) {
			Elf64_Sym st;

			memcpy(&st, o + tab.sh_offset + j * sizeof(st), sizeof(st));
			if (take(o, len, &eh, flags, &tab, &st, out)) {
				*pos = (uint64_t)i << 40 | (j + 1);
				return 1;
			}
		}
	}
	*pos = (uint64_t)i << 40;
	return 0;
}
