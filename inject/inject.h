/* inject.h - what the NVTX and ITT injection libraries share: their side records. */
#ifndef UEVENT_INJECT_H
#define UEVENT_INJECT_H

#include <stddef.h>
#include <stdint.h>
#include <wchar.h>

/*
 * The type of a side record: UTF-8 text, NUL included, "nvtx ..." or "itt ..." then
 * key=value words (docs/nvtx.md). It carries what a range or mark record has no field
 * for (category, colour, payload) and the names a program gives (threads, categories).
 * An application type (>= UEVENT_TYPE_USER): readers that do not know it pass it on.
 */
#define INJECT_META_TYPE	0x756d6574u	/* "temu": uevent meta */

/* Names longer than this are cut (a uevent's payload is at most 4096 bytes). */
#define INJECT_NAME_MAX		1024

/* UTF-32 (Linux's wchar_t) to UTF-8 into buf, cut to cap - 1 bytes; returns buf. */
char *_uevent_inject_utf8(const wchar_t *ws, char *buf, size_t cap);

/* Emits a side record (printf-formatted); call only when UEVENT_ENABLED(). */
__attribute__((format(printf, 1, 2)))
void _uevent_inject_meta(const char *fmt, ...);

/*
 * Push/pop ranges, a stack per thread. NVTX nests them per domain and thread, ITT its
 * tasks; uevent ranges nest per thread. Each push is one entry (its uevent id, 0 when
 * nobody recorded it), so a pop after a session started or stopped ends only what was
 * begun. key is the domain: a pop ends the innermost entry of its key. Deeper than
 * INJECT_DEPTH, pushes are counted but not recorded.
 */
#define INJECT_DEPTH	256
/* Begins a range named name (NULL: none) when enabled; *id its uevent id or 0; the
 * 0-based level among key's open ones. */
int _uevent_inject_push(const void *key, const char *name, uint64_t *id);
/* Ends key's innermost range on this thread; its level, or -1 if none is open. */
int _uevent_inject_pop(const void *key);

#endif
