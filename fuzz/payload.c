/*
 * payload.c - libFuzzer target: the payload codecs (uevent_*_decode). Input: the payload
 * type (u8; 0-8 are the well-known ones), the byte order (u8), then the payload. A
 * payload that decodes (and is no longer than an encoder writes) is encoded again and
 * must decode to the same fields.
 */
#include "fuzz.h"

#define SAME(cond) do { if (!(cond)) __builtin_trap(); } while (0)

static uint8_t buf[UEVENT_MAX_PAYLOAD + 4096];

static void round_trip(uint32_t type, const void *p, size_t len, int bo)
{
	union fuzz_payload a, b;
	ssize_t n;

	if (len > UEVENT_MAX_PAYLOAD)
		return;		/* more than an encoder writes */
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	switch (type) {
	case UEVENT_TYPE_TEXT:
		if (uevent_text_decode(p, len, bo, &a.t))
			return;
		n = uevent_text_encode(buf, sizeof(buf), a.t.text);
		SAME(n > 0 && !uevent_text_decode(buf, (size_t)n, UEVENT_BO_HOST, &b.t) &&
		     !strcmp(a.t.text, b.t.text));
		break;
	case UEVENT_TYPE_RANGE_BEGIN:
		if (uevent_range_begin_decode(p, len, bo, &a.rb))
			return;
		n = uevent_range_begin_encode(buf, sizeof(buf), &a.rb);
		SAME(n > 0 && !uevent_range_begin_decode(buf, (size_t)n, UEVENT_BO_HOST, &b.rb) &&
		     a.rb.id == b.rb.id && a.rb.parent == b.rb.parent && a.rb.flags == b.rb.flags &&
		     !strcmp(a.rb.name, b.rb.name));
		break;
	case UEVENT_TYPE_RANGE_END:
		if (uevent_range_end_decode(p, len, bo, &a.re))
			return;
		n = uevent_range_end_encode(buf, sizeof(buf), &a.re);
		SAME(n > 0 && !uevent_range_end_decode(buf, (size_t)n, UEVENT_BO_HOST, &b.re) &&
		     a.re.id == b.re.id && a.re.flags == b.re.flags);
		break;
	case UEVENT_TYPE_COUNTER:
		if (uevent_counter_decode(p, len, bo, &a.c))
			return;
		n = uevent_counter_encode(buf, sizeof(buf), &a.c);
		SAME(n > 0 && !uevent_counter_decode(buf, (size_t)n, UEVENT_BO_HOST, &b.c) &&
		     a.c.value == b.c.value && !strcmp(a.c.name, b.c.name));
		break;
	case UEVENT_TYPE_JIT_CODE_LOAD:
		if (uevent_jit_code_load_decode(p, len, bo, &a.jl))
			return;
		n = uevent_jit_code_load_encode(buf, sizeof(buf), &a.jl);
		SAME(n > 0 && !uevent_jit_code_load_decode(buf, (size_t)n, UEVENT_BO_HOST, &b.jl) &&
		     a.jl.code_addr == b.jl.code_addr && a.jl.code_size == b.jl.code_size &&
		     a.jl.code_index == b.jl.code_index && !strcmp(a.jl.name, b.jl.name));
		break;
	case UEVENT_TYPE_JIT_CODE_MOVE:
		if (uevent_jit_code_move_decode(p, len, bo, &a.jm))
			return;
		n = uevent_jit_code_move_encode(buf, sizeof(buf), &a.jm);
		SAME(n > 0 && !uevent_jit_code_move_decode(buf, (size_t)n, UEVENT_BO_HOST, &b.jm) &&
		     !memcmp(&a.jm, &b.jm, sizeof(a.jm)));
		break;
	case UEVENT_TYPE_JIT_CODE_UNLOAD:
		if (uevent_jit_code_unload_decode(p, len, bo, &a.ju))
			return;
		n = uevent_jit_code_unload_encode(buf, sizeof(buf), &a.ju);
		SAME(n > 0 && !uevent_jit_code_unload_decode(buf, (size_t)n, UEVENT_BO_HOST, &b.ju) &&
		     !memcmp(&a.ju, &b.ju, sizeof(a.ju)));
		break;
	case UEVENT_TYPE_TRACE_CONTEXT:
		if (uevent_trace_context_decode(p, len, bo, &a.tc))
			return;
		n = uevent_trace_context_encode(buf, sizeof(buf), &a.tc);
		SAME(n > 0 && !uevent_trace_context_decode(buf, (size_t)n, UEVENT_BO_HOST, &b.tc) &&
		     !memcmp(&a.tc, &b.tc, sizeof(a.tc)));
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	touch_payload(data[0], data + 2, size - 2, data[1] % 3);
	round_trip(data[0], data + 2, size - 2, data[1] % 3);
	return 0;
}
