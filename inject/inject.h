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

#endif
