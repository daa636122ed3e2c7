/* jit_core.c - uevent.jit_core: the LuaJIT hook's trace handler, in C (a lua_CFunction). */
/*
 * uevent/jit.lua opens the session (through the FFI binding) and gives jit.attach the
 * handler made here, so each trace event runs no interpreted Lua and makes no FFI call:
 * on "stop" one jit.util.tracemc (for the address and size; libuevent reads the bytes
 * at the address), on a trace start not seen before one jit.util.funcinfo, then one
 * call into libuevent with the name "TRACE_n" formatted on the stack and the file, line
 * and function name kept per function (a weak-keyed table: a function's entries go with
 * it). The library's functions come as addresses from the FFI binding (bind()), so the
 * handler calls the very library the binding loaded and this module links nothing but
 * LuaJIT's API.
 *
 *   local h, handler = core.new(jit.util.tracemc, jit.util.funcinfo)
 *   core.bind(h, session, code_load, code_load_func, code_unload, code_unload_all, lines,
 *             owner)                -- owner: what keeps the session open (its cdata)
 *   jit.attach(handler, "trace")  ...  core.bind(h)   -- unbound: the handler does nothing
 *   core.counts(h)                -- loaded, unloaded, errors, flushes (since new())
 *
 * While bound, h holds owner (in its environment table; the handler holds h): the
 * attached handler keeps the session's cdata, and so the session, alive. Without it a
 * program that dropped uevent.jit (package.loaded["uevent.jit"] = nil) had the cdata
 * collected, its finalizer close the session, and the next trace call into freed memory.
 *
 * Addresses are Lua numbers (tonumber of an ffi.cast("uintptr_t", ...)): exact below
 * 2^53, which user-space addresses are; bind() refuses one that is not a whole number.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "uevent.h"

/* The library's entry points, typed from the header they are declared in. */
typedef __typeof__(uevent_jit__code_load) load_fn;
typedef __typeof__(uevent_jit__code_load_func) load_func_fn;
typedef __typeof__(uevent_jit__code_unload) unload_fn;
typedef __typeof__(uevent_jit__code_unload_all) unload_all_fn;

struct hook {
	struct uevent_jit *j;		/* NULL: unbound, the handler returns at once */
	load_fn *load;
	load_func_fn *load_func;
	unload_fn *unload;
	unload_all_fn *unload_all;
	int lines;			/* a DEBUG_INFO line record per trace */
	/* by trace number: the pc "start" gave, and the address announced (0: none) */
	int32_t *pc;
	uint64_t *addr;
	size_t ntr;
	size_t nloaded;
	double loaded, unloaded, errors, flushes;
};

/* The handler's upvalues. */
enum { UP_HOOK = 1, UP_TRACEMC, UP_FUNCINFO, UP_STARTS, UP_CACHE };

/* The hook's environment table: what it holds while bound, and the handler's UP_STARTS
 * (for bind() to clear). */
enum { ENV_OWNER = 1, ENV_STARTS };

/* The per-function cache table's non-pc keys (pcs are >= 0). */
enum { AT_FILE = -1, AT_FN = -2 };

#define UP(i) lua_upvalueindex(i)

/* The highest trace number LuaJIT gives (lj_trace.c caps its trace array at 65535
 * slots); the handler ignores a larger one, which only a direct call can pass, instead
 * of growing the per-trace arrays for it (n * 8 bytes wraps for n near 2^61). */
#define MAX_TRACE 65535

/* Room for trace number tr (<= MAX_TRACE: the handler checks) in the per-trace arrays;
 * 0 or -1 (out of memory). */
static int grow(struct hook *h, size_t tr)
{
	size_t n = h->ntr ? h->ntr : 256;
	int32_t *pc;
	uint64_t *addr;

	if (tr < h->ntr)
		return 0;
	while (n <= tr)
		n *= 2;
	if (!(pc = realloc(h->pc, n * sizeof(*pc))))
		return -1;
	h->pc = pc;
	if (!(addr = realloc(h->addr, n * sizeof(*addr))))
		return -1;
	h->addr = addr;
	memset(pc + h->ntr, 0, (n - h->ntr) * sizeof(*pc));
	memset(addr + h->ntr, 0, (n - h->ntr) * sizeof(*addr));
	h->ntr = n;
	return 0;
}

static void unload_one(struct hook *h, size_t tr)
{
	uint64_t a = h->addr[tr];

	h->addr[tr] = 0;
	h->nloaded--;
	if (h->unload(h->j, a, 0) == 0)
		h->unloaded++;
}

/* "mix" when the function being recorded (stack level 1: the handler is level 0) is
 * func and its caller's call instruction names it; NULL otherwise (a main chunk, a
 * trace that left its function). Pushes one value (the name or false) to keep it. */
static const char *func_name(lua_State *L, int func, int linedefined)
{
	lua_Debug ar;

	if (linedefined > 0 && lua_getstack(L, 1, &ar) && lua_getinfo(L, "nf", &ar)) {
		int same = lua_rawequal(L, -1, func);

		lua_pop(L, 1);
		if (same && ar.name) {
			lua_pushstring(L, ar.name);
			return lua_tostring(L, -1);
		}
	}
	lua_pushboolean(L, 0);
	return NULL;
}

/* The cache table of func (stack index): made, with its function name (func_name's),
 * when it has none yet. Pushes it and returns its stack index. */
static int cache_of(lua_State *L, int func, int linedefined)
{
	lua_pushvalue(L, func);
	lua_rawget(L, UP(UP_CACHE));
	if (!lua_istable(L, -1)) {
		lua_pop(L, 1);
		lua_createtable(L, 0, 4);
		func_name(L, func, linedefined);
		lua_rawseti(L, -2, AT_FN);
		lua_pushvalue(L, func);
		lua_pushvalue(L, -2);
		lua_rawset(L, UP(UP_CACHE));
	}
	return lua_gettop(L);
}

/* "TRACE_12" into name (room for it): this runs for every trace; returns its length. */
static int trace_name(char *name, size_t tr)
{
	char t[24];
	int k = 0, n = 6;

	memcpy(name, "TRACE_", 6);
	do
		t[k++] = (char)('0' + tr % 10);
	while ((tr /= 10));
	while (k)
		name[n++] = t[--k];
	name[n] = 0;
	return n;
}

/* A string chunk's text in its name: up to this many bytes (as jit.util.funcinfo's loc). */
#define CHUNK_TEXT 40

/*
 * The file part of a trace's name for a chunk: "app.lua" for "@/x/app.lua", "t.lua" for
 * "=t.lua" and "\"code\"" for a string chunk, as jit.util.funcinfo's loc, but for a
 * string chunk cut at its first control character or at CHUNK_TEXT bytes, with "..."
 * ("\"local s = 0...\"", as LuaJIT's [string "..."]), where loc says "0x7f...": the
 * address of the prototype asked about, which other functions of the chunk, or a chunk
 * loaded later with the same text, do not have. Into buf (CHUNK_TEXT + 8 bytes).
 */
static const char *chunk_file(const char *src, char *buf, size_t cap)
{
	const char *b;
	size_t n;

	if (*src == '@') {
		b = strrchr(src, '/');
		return b ? b + 1 : src + 1;
	}
	if (*src == '=')
		return src + 1;
	for (n = 0; n < CHUNK_TEXT && (unsigned char)src[n] >= ' '; n++)
		;
	if (n == CHUNK_TEXT && src[n])		/* cut: not inside a UTF-8 character */
		while (n > 0 && ((unsigned char)src[n] & 0xc0) == 0x80)
			n--;
	snprintf(buf, cap, "\"%.*s%s\"", (int)n, src, src[n] ? "..." : "");
	return buf;
}

/*
 * At a root trace's "start" the function being recorded is running (stack level 1; the
 * handler is level 0) at the trace's first instruction: lua_getinfo gives its chunk and
 * that line without building a table and a string, which jit.util.funcinfo at "stop"
 * does. (Not at a side trace's: the frame is not at its start; t/jit-core checks both
 * against funcinfo.) Fills the
 * cache for (func, pc) when it has no line for them yet; when level 1 is not func (or
 * not a Lua function) it leaves them to "stop", which asks funcinfo.
 */
static void learn(lua_State *L, struct hook *h, int func, int32_t pc)
{
	char buf[CHUNK_TEXT + 8];
	lua_Debug ar;
	int top = lua_gettop(L), at;

	if (!h->lines || !lua_isfunction(L, func))
		return;
	lua_pushvalue(L, func);
	lua_rawget(L, UP(UP_CACHE));
	if (lua_istable(L, -1)) {
		lua_rawgeti(L, -1, pc);
		if (lua_isnumber(L, -1))
			goto out;		/* known */
	}
	if (!lua_getstack(L, 1, &ar) || !lua_getinfo(L, "Slf", &ar) ||
	    !lua_rawequal(L, -1, func) || ar.currentline <= 0 || *ar.what == 'C')
		goto out;
	at = cache_of(L, func, ar.linedefined);
	lua_rawgeti(L, at, AT_FILE);
	if (!lua_isstring(L, -1)) {
		lua_pushstring(L, chunk_file(ar.source, buf, sizeof(buf)));
		lua_rawseti(L, at, AT_FILE);
	}
	lua_pushinteger(L, ar.currentline);
	lua_rawseti(L, at, pc);
out:
	lua_settop(L, top);
}

static void count(struct hook *h, uint64_t addr, size_t tr, int ret)
{
	if (ret == 0) {
		h->addr[tr] = addr;
		h->nloaded++;
		h->loaded++;
	} else {
		h->errors++;
	}
}

/* "stop": announces trace tr, started at func (stack index, or 0) and pc. */
static void stop(lua_State *L, struct hook *h, size_t tr, int func, int32_t pc)
{
	char name[512];
	const char *fn = NULL, *file = NULL;
	lua_Number line = 0;
	uint64_t addr;
	size_t size;
	int at = 0, n;

	lua_pushvalue(L, UP(UP_TRACEMC));
	lua_pushinteger(L, (lua_Integer)tr);
	lua_call(L, 1, 2);
	if (lua_type(L, -2) != LUA_TSTRING || lua_type(L, -1) != LUA_TNUMBER)
		return;
	size = lua_objlen(L, -2);
	addr = (uint64_t)lua_tonumber(L, -1);
	if (!size || !addr)
		return;
	if (h->addr[tr])		/* the number was reused */
		unload_one(h, tr);
	n = trace_name(name, tr);
	if (func && h->lines) {
		lua_pushvalue(L, func);
		lua_rawget(L, UP(UP_CACHE));
		if (lua_istable(L, -1)) {
			at = lua_gettop(L);
			lua_rawgeti(L, at, pc);
			line = lua_tonumber(L, -1);
		}
	}
	if (line > 0) {
		lua_rawgeti(L, at, AT_FILE);
		lua_rawgeti(L, at, AT_FN);
		file = lua_tostring(L, -2);
		fn = lua_tostring(L, -1);
	} else if (func) {
		/* funcinfo only here, at a trace start not seen before: it allocates, and
		 * "start" fires for every attempt, aborted ones included */
		char buf[CHUNK_TEXT + 8];
		const char *loc, *src;
		int fi, lined;

		lua_pushvalue(L, UP(UP_FUNCINFO));
		lua_pushvalue(L, func);
		lua_pushinteger(L, pc);
		lua_call(L, 2, 1);
		fi = lua_gettop(L);
		if (!lua_istable(L, fi))
			goto plain;
		lua_getfield(L, fi, "loc");
		loc = lua_tostring(L, -1);
		lua_getfield(L, fi, "currentline");
		line = lua_tonumber(L, -1);
		lua_getfield(L, fi, "linedefined");
		lined = (int)lua_tointeger(L, -1);
		lua_getfield(L, fi, "source");
		src = lua_tostring(L, -1);
		if (!loc || !src) {
			lua_getfield(L, fi, "ffid");
			if (lua_isnumber(L, -1))
				snprintf(name + n, sizeof(name) - (size_t)n, " [builtin#%d]",
					 (int)lua_tointeger(L, -1));
			goto plain;
		}
		if (!at)
			at = cache_of(L, func, lined);
		lua_rawgeti(L, at, AT_FN);
		fn = lua_tostring(L, -1);
		lua_rawgeti(L, at, AT_FILE);
		if (!lua_isstring(L, -1)) {
			/* once per function, its chunk's name as learn() gives it: not loc's
			 * file part, an address for a string chunk of over 40 bytes, and no
			 * table by source (a string chunk's source is its text: kept, it kept
			 * every chunk's text alive) */
			lua_pop(L, 1);
			lua_pushstring(L, chunk_file(src, buf, sizeof(buf)));
			lua_pushvalue(L, -1);
			lua_rawseti(L, at, AT_FILE);
		}
		file = lua_tostring(L, -1);
		if (h->lines && line > 0) {
			lua_pushnumber(L, line);
			lua_rawseti(L, at, pc);
		} else {	/* no line record: the name says where (loc's line) */
			const char *c = strrchr(loc, ':');

			snprintf(name + n, sizeof(name) - (size_t)n, "%s%s %s%s", fn ? " " : "",
				 fn ? fn : "", file, c ? c : "");
			fn = file = NULL;
		}
	}
	if (file) {
		count(h, addr, tr, h->load_func(h->j, name, fn, addr, size, NULL, file,
						(uint32_t)line));
		return;
	}
plain:
	count(h, addr, tr, h->load(h->j, name, addr, size, NULL));
}

/* The jit.attach(handler, "trace") callback: (what, tr, func, pc). */
static int handler(lua_State *L)
{
	struct hook *h = lua_touserdata(L, UP(UP_HOOK));
	const char *what = lua_tostring(L, 1);
	lua_Number trn = lua_tonumber(L, 2);
	size_t tr;

	if (!h->j || !what)
		return 0;
	if (!strcmp(what, "flush")) {	/* (no trace number) */
		h->flushes++;
		/* every trace is gone: one call, not one per trace (a flush can drop
		 * thousands) */
		if (h->nloaded && h->unload_all(h->j) == 0)
			h->unloaded += (double)h->nloaded;
		h->nloaded = 0;
		if (h->addr)
			memset(h->addr, 0, h->ntr * sizeof(*h->addr));
		return 0;
	}
	/* a trace number LuaJIT can give: a whole number from 1 to MAX_TRACE (compared as
	 * a double: NaN, 2^61 or 1.5 converted first would be undefined or another) */
	if (!(trn >= 1 && trn <= MAX_TRACE) || trn != (lua_Number)(size_t)trn)
		return 0;
	tr = (size_t)trn;
	if (grow(h, tr) < 0) {
		h->errors++;
		return 0;
	}
	if (!strcmp(what, "start")) {
		lua_settop(L, 5);
		lua_pushvalue(L, 3);
		lua_rawseti(L, UP(UP_STARTS), (int)tr);
		h->pc[tr] = (int32_t)lua_tointeger(L, 4);
		if (lua_isnoneornil(L, 5))	/* a root trace: no parent trace */
			learn(L, h, 3, h->pc[tr]);
	} else if (!strcmp(what, "abort")) {
		/* the attempt came to nothing and its number goes to the next one: a trace
		 * with that number whose start the hook does not see (compiled while unbound,
		 * announced at start()) must not take this function's name and line */
		lua_pushnil(L);
		lua_rawseti(L, UP(UP_STARTS), (int)tr);
		h->pc[tr] = 0;
	} else if (!strcmp(what, "stop")) {
		lua_settop(L, 2);
		lua_rawgeti(L, UP(UP_STARTS), (int)tr);
		lua_pushnil(L);
		lua_rawseti(L, UP(UP_STARTS), (int)tr);
		stop(L, h, tr, lua_isfunction(L, 3) ? 3 : 0, h->pc[tr]);
	}
	return 0;
}

static int hook_gc(lua_State *L)
{
	struct hook *h = lua_touserdata(L, 1);

	free(h->pc);
	free(h->addr);
	h->pc = NULL;
	h->addr = NULL;
	h->ntr = 0;
	return 0;
}

/* core.new(tracemc, funcinfo) -> h, handler */
static int core_new(lua_State *L)
{
	struct hook *h;

	luaL_checktype(L, 1, LUA_TFUNCTION);
	luaL_checktype(L, 2, LUA_TFUNCTION);
	h = lua_newuserdata(L, sizeof(*h));
	memset(h, 0, sizeof(*h));
	luaL_getmetatable(L, "uevent.jit_core");
	lua_setmetatable(L, -2);
	lua_createtable(L, 2, 0);	/* its environment: ENV_OWNER, ENV_STARTS */
	lua_setfenv(L, -2);
	lua_pushvalue(L, -1);		/* UP_HOOK */
	lua_pushvalue(L, 1);		/* UP_TRACEMC */
	lua_pushvalue(L, 2);		/* UP_FUNCINFO */
	lua_newtable(L);		/* UP_STARTS: trace number -> function at "start" */
	lua_getfenv(L, -4);		/* the hook's (UP_HOOK): its ENV_STARTS too */
	lua_pushvalue(L, -2);
	lua_rawseti(L, -2, ENV_STARTS);
	lua_pop(L, 1);
	lua_newtable(L);		/* UP_CACHE: function -> { [pc] = line, file, fn } */
	lua_createtable(L, 0, 1);
	lua_pushliteral(L, "k");
	lua_setfield(L, -2, "__mode");
	lua_setmetatable(L, -2);
	lua_pushcclosure(L, handler, 5);
	return 2;
}

static struct hook *check_hook(lua_State *L)
{
	return luaL_checkudata(L, 1, "uevent.jit_core");
}

/* An address given as a Lua number: a whole number from 1 up to 2^53. */
static void *check_addr(lua_State *L, int i)
{
	lua_Number v = luaL_checknumber(L, i);

	if (!(v >= 1 && v <= 9007199254740992.0) || v != (lua_Number)(uint64_t)v)
		luaL_argerror(L, i, "not an address (a whole number from 1 to 2^53)");
	return (void *)(uintptr_t)(uint64_t)v;
}

/*
 * Forgets the trace starts seen (bind, unbind): a start whose abort or stop came while
 * unbound is over, and the trace that gets its number next may be one compiled while
 * unbound, which start() announces by number "without a location". h is at index 1.
 */
static void forget_starts(lua_State *L, struct hook *h)
{
	lua_getfenv(L, 1);
	lua_rawgeti(L, -1, ENV_STARTS);
	lua_pushnil(L);
	while (lua_next(L, -2)) {
		lua_pop(L, 1);
		lua_pushvalue(L, -1);
		lua_pushnil(L);
		lua_rawset(L, -4);	/* clearing a field lua_next is at is allowed */
	}
	lua_pop(L, 2);
	if (h->pc)
		memset(h->pc, 0, h->ntr * sizeof(*h->pc));
}

/* core.bind(h, session, code_load, code_load_func, code_unload, code_unload_all, lines,
 * owner) or core.bind(h): unbound. h holds owner until unbound or bound again. */
static int core_bind(lua_State *L)
{
	struct hook *h = check_hook(L);
	struct hook b = *h;

	if (lua_isnoneornil(L, 2)) {
		h->j = NULL;
		forget_starts(L, h);
		lua_getfenv(L, 1);
		lua_pushnil(L);
		lua_rawseti(L, -2, ENV_OWNER);
		return 0;
	}
	b.j = check_addr(L, 2);
	b.load = (load_fn *)check_addr(L, 3);
	b.load_func = (load_func_fn *)check_addr(L, 4);
	b.unload = (unload_fn *)check_addr(L, 5);
	b.unload_all = (unload_all_fn *)check_addr(L, 6);
	b.lines = lua_toboolean(L, 7);
	/* a new session: what the last one loaded is not its to unload */
	if (b.addr)
		memset(b.addr, 0, b.ntr * sizeof(*b.addr));
	b.nloaded = 0;
	*h = b;
	forget_starts(L, h);
	lua_getfenv(L, 1);
	lua_pushvalue(L, 8);
	lua_rawseti(L, -2, ENV_OWNER);
	return 0;
}

/* core.counts(h) -> loaded, unloaded, errors, flushes */
static int core_counts(lua_State *L)
{
	struct hook *h = check_hook(L);

	lua_pushnumber(L, h->loaded);
	lua_pushnumber(L, h->unloaded);
	lua_pushnumber(L, h->errors);
	lua_pushnumber(L, h->flushes);
	return 4;
}

/* require "uevent.jit_core" (the only symbol exported) */
__attribute__((visibility("default"))) int luaopen_uevent_jit_core(lua_State *L);
int luaopen_uevent_jit_core(lua_State *L)
{
	static const luaL_Reg fns[] = {
		{ "new", core_new }, { "bind", core_bind }, { "counts", core_counts },
		{ NULL, NULL }
	};

	if (luaL_newmetatable(L, "uevent.jit_core")) {
		lua_pushcfunction(L, hook_gc);
		lua_setfield(L, -2, "__gc");
	}
	lua_pop(L, 1);
	lua_newtable(L);
	luaL_register(L, NULL, fns);
	return 1;
}
