/*
 * plugin_uevent.c - a libtraceevent plugin: trace-cmd report shows our ftrace marks.
 *
 * The ftrace transport writes each mark as one trace_marker_raw entry, which the kernel
 * files as ftrace:raw_data {u32 id; char buf[]}. Ours have id "uev2" and a buf of u32
 * type, u32 size, payload (docs/format.md); this plugin prints them the way
 * `uevent dump` does:
 *
 *   raw_data: uevent text "hello"
 *   raw_data: uevent counter queue_depth=7
 *
 * Entries of other writers, and ours that are cut short, print as the id and the bytes,
 * saying what is wrong. trace-cmd loads plugins from $TRACEEVENT_PLUGIN_DIR,
 * ~/.local/lib/traceevent/plugins and its own directory.
 */
#include "config.h"

#include <inttypes.h>
#include <stdint.h>
#include <string.h>

#include <event-parse.h>
#include <trace-seq.h>

#include "uevent.h"
#include "internal.h"	/* _UEVENT_FTRACE_ID: the transport's id word */

#define HEX_MAX			64

static void hex(struct trace_seq *s, const uint8_t *p, size_t n)
{
	size_t i;

	trace_seq_putc(s, ' ');
	for (i = 0; i < n && i < HEX_MAX; i++)
		trace_seq_printf(s, "%02x", p[i]);
	if (n > HEX_MAX)
		trace_seq_puts(s, "...");
}

static uint32_t u32_at(struct tep_handle *tep, const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return tep_read_number(tep, &v, sizeof(v));
}

static void payload(struct trace_seq *s, uint32_t type, const uint8_t *p, uint32_t n, int bo)
{
	const char *name = uevent_type_name(type);
	union {
		struct uevent_text t;
		struct uevent_counter c;
		struct uevent_range_begin rb;
		struct uevent_range_end re;
		struct uevent_jit_code_load jl;
		struct uevent_jit_code_move jm;
		struct uevent_jit_code_unload ju;
	} u;

	trace_seq_printf(s, "uevent %s", name ? name : "user");
	if (!name)
		trace_seq_printf(s, "(%u)", type);
	if (type == UEVENT_TYPE_TEXT && !uevent_text_decode(p, n, bo, &u.t))
		trace_seq_printf(s, " \"%s\"", u.t.text);
	else if (type == UEVENT_TYPE_COUNTER && !uevent_counter_decode(p, n, bo, &u.c))
		trace_seq_printf(s, " %s=%" PRId64, u.c.name, u.c.value);
	else if (type == UEVENT_TYPE_RANGE_BEGIN && !uevent_range_begin_decode(p, n, bo, &u.rb))
		trace_seq_printf(s, " id=%#" PRIx64 " parent=%#" PRIx64 "%s \"%s\"", u.rb.id,
				 u.rb.parent, u.rb.flags & UEVENT_RANGE_ASYNC ? " async" : "",
				 u.rb.name);
	else if (type == UEVENT_TYPE_RANGE_END && !uevent_range_end_decode(p, n, bo, &u.re))
		trace_seq_printf(s, " id=%#" PRIx64, u.re.id);
	else if (type == UEVENT_TYPE_JIT_CODE_LOAD &&
		 !uevent_jit_code_load_decode(p, n, bo, &u.jl))
		trace_seq_printf(s, " %#" PRIx64 "+%#" PRIx64 " index=%" PRIu64 " \"%s\"",
				 u.jl.code_addr, u.jl.code_size, u.jl.code_index, u.jl.name);
	else if (type == UEVENT_TYPE_JIT_CODE_MOVE &&
		 !uevent_jit_code_move_decode(p, n, bo, &u.jm))
		trace_seq_printf(s, " index=%" PRIu64 " %#" PRIx64 "->%#" PRIx64 "+%#" PRIx64,
				 u.jm.code_index, u.jm.old_addr, u.jm.new_addr, u.jm.code_size);
	else if (type == UEVENT_TYPE_JIT_CODE_UNLOAD &&
		 !uevent_jit_code_unload_decode(p, n, bo, &u.ju))
		trace_seq_printf(s, " %#" PRIx64 "+%#" PRIx64 " index=%" PRIu64,
				 u.ju.code_addr, u.ju.code_size, u.ju.code_index);
	else
		hex(s, p, n);
}

static int raw_data_handler(struct trace_seq *s, struct tep_record *record,
			    struct tep_event *event, void *context)
{
	struct tep_format_field *f = tep_find_field(event, "id");
	struct tep_format_field *b = tep_find_field(event, "buf");
	struct tep_handle *tep = event->tep;
	const uint8_t *p;
	uint32_t id, type, size;
	size_t n;

	(void)context;
	if (!f || !b || f->size != 4 || record->size < 0 || b->offset > record->size)
		return trace_seq_puts(s, "[raw_data: unexpected format]");
	id = u32_at(tep, (const uint8_t *)record->data + f->offset);
	p = (const uint8_t *)record->data + b->offset;
	n = (size_t)(record->size - b->offset);
	if (id != _UEVENT_FTRACE_ID) {
		trace_seq_printf(s, "id:%08x", id);
		hex(s, p, n);
		return 0;
	}
	if (n < 8) {
		trace_seq_printf(s, "uevent [cut short: %zu of 8 header bytes]", n);
		return 0;
	}
	type = u32_at(tep, p);
	size = u32_at(tep, p + 4);
	if (size > n - 8) {
		trace_seq_printf(s, "uevent [cut short: %u payload bytes, %zu there]", size, n - 8);
		hex(s, p + 8, n - 8);
		return 0;
	}
	payload(s, type, p + 8, size,
		tep_is_file_bigendian(tep) ? UEVENT_BO_BIG : UEVENT_BO_LITTLE);
	return 0;
}

int TEP_PLUGIN_LOADER(struct tep_handle *tep);
void TEP_PLUGIN_UNLOADER(struct tep_handle *tep);

int TEP_PLUGIN_LOADER(struct tep_handle *tep)
{
	return tep_register_event_handler(tep, -1, "ftrace", "raw_data", raw_data_handler,
					  NULL) < 0 ? -1 : 0;
}

void TEP_PLUGIN_UNLOADER(struct tep_handle *tep)
{
	tep_unregister_event_handler(tep, -1, "ftrace", "raw_data", raw_data_handler, NULL);
}
