/* jit-core.c - TAP tests of uevent.jit_core, the LuaJIT hook's C trace handler, alone. */
/*
 * Embeds LuaJIT, loads the built bindings/lua/uevent/jit_core.so and binds its handler
 * to stubs in this file instead of libuevent: what the handler calls for each trace (the
 * name, function, file and line, tracemc's address and size), how it counts, what it
 * does on a flush, a failed load, a reused trace number, and the arguments it refuses.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"

#ifdef HAVE_LUAJIT_DEV
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "uevent.h"

static struct { int x; } fake_session;
static int n_load, n_func, n_unload, n_unload_all, fail;
static char last_name[256], last_fn[64], last_file[64];
static uint64_t last_addr, last_size, last_unload;
static uint32_t last_line;
static uint32_t line_of_tr[4096];	/* by trace number: the line of its last load_func */

static int wrong(struct uevent_jit *j)
{
	return j != (struct uevent_jit *)(void *)&fake_session;
}

static int stub_load(struct uevent_jit *j, const char *name, uint64_t addr, uint64_t size,
		     const void *code)
{
	n_load++;
	snprintf(last_name, sizeof(last_name), "%s", name);
	last_fn[0] = last_file[0] = 0;
	last_line = 0;
	last_addr = addr;
	last_size = size;
	return wrong(j) || code ? -EINVAL : fail;
}

static int stub_load_func(struct uevent_jit *j, const char *name, const char *func,
			  uint64_t addr, uint64_t size, const void *code, const char *file,
			  uint32_t line)
{
	n_func++;
	if (!strncmp(name, "TRACE_", 6) && atoi(name + 6) > 0 && atoi(name + 6) < 4096)
		line_of_tr[atoi(name + 6)] = line;
	snprintf(last_name, sizeof(last_name), "%s", name);
	snprintf(last_fn, sizeof(last_fn), "%s", func ? func : "(null)");
	snprintf(last_file, sizeof(last_file), "%s", file ? file : "(null)");
	last_line = line;
	last_addr = addr;
	last_size = size;
	return wrong(j) || code ? -EINVAL : fail;
}

static int stub_unload(struct uevent_jit *j, uint64_t addr, uint64_t size)
{
	n_unload++;
	last_unload = addr;
	return wrong(j) || size ? -EINVAL : 0;
}

static int stub_unload_all(struct uevent_jit *j)
{
	n_unload_all++;
	return wrong(j) ? -EINVAL : 0;
}

/* ok(cond, msg) for the Lua side */
static int l_ok(lua_State *L)
{
	ok(lua_toboolean(L, 1), "%s", luaL_optstring(L, 2, "?"));
	return 0;
}

/* the stubs' record: n_load, n_func, n_unload, n_unload_all, name, fn, file, line,
 * addr, size, last unloaded address */
static int l_calls(lua_State *L)
{
	lua_pushinteger(L, n_load);
	lua_pushinteger(L, n_func);
	lua_pushinteger(L, n_unload);
	lua_pushinteger(L, n_unload_all);
	lua_pushstring(L, last_name);
	lua_pushstring(L, last_fn);
	lua_pushstring(L, last_file);
	lua_pushinteger(L, (lua_Integer)last_line);
	lua_pushnumber(L, (lua_Number)last_addr);
	lua_pushnumber(L, (lua_Number)last_size);
	lua_pushnumber(L, (lua_Number)last_unload);
	return 11;
}

static int l_line_of(lua_State *L)
{
	lua_Integer tr = luaL_checkinteger(L, 1);

	lua_pushinteger(L, tr > 0 && tr < 4096 ? (lua_Integer)line_of_tr[tr] : 0);
	return 1;
}

static int l_fail(lua_State *L)
{
	fail = (int)luaL_checkinteger(L, 1);
	return 0;
}

static void put_addr(lua_State *L, const char *name, const void *p)
{
	lua_pushnumber(L, (lua_Number)(uintptr_t)p);
	lua_setglobal(L, name);
}

/* The test, in Lua: each ok() is one TAP line (27). */
static const char script[] =
"local jutil = require 'jit.util'\n"
"local core = assert(package.loadlib(CORE_SO, 'luaopen_uevent_jit_core'))()\n"
"ok(type(core.new) == 'function' and type(core.bind) == 'function', 'the module loads: new, bind, counts')\n"
"local e1 = select(2, pcall(core.new, 1, 2))\n"
"ok(tostring(e1):match('function expected'), 'new() refuses what is not a function: ' .. tostring(e1))\n"
"local nfi = 0\n"
"local function funcinfo(...) nfi = nfi + 1; return jutil.funcinfo(...) end\n"
"local h, handler = core.new(jutil.tracemc, funcinfo)\n"
"local function bind(lines, s, owner) core.bind(h, s or SESSION, LOAD, LOAD_FUNC, UNLOAD, UNLOAD_ALL, lines, owner) end\n"
"local bad = {}\n"
"for _, a in ipairs { 0, -8, 1.5, 2^60, 0/0 } do\n"
"  local okb, e = pcall(bind, true, a)\n"
"  if okb or not tostring(e):match('not an address') then bad[#bad + 1] = tostring(a) end\n"
"end\n"
"ok(#bad == 0, 'bind() refuses a session address of 0, -8, 1.5, 2^60, NaN (' .. table.concat(bad, ' ') .. ')')\n"
"ok(not pcall(core.bind, {}, SESSION), 'bind() refuses what new() did not make')\n"
"local c0 = { core.counts(h) }\n"
"ok(c0[1] == 0 and c0[2] == 0 and c0[3] == 0 and c0[4] == 0, 'a new hook counts nothing')\n"
"-- unbound: events do nothing\n"
"jit.attach(handler, 'trace')\n"
"local function warm(k) local s = 0; for i = 1, k do s = s + i % 7 end; return s end\n"
"warm(1000)\n"
"local n_load, n_func = calls()\n"
"ok(n_load == 0 and n_func == 0 and core.counts(h) == 0, 'unbound, a compiled trace is not announced')\n"
"-- bound: the hot loop's trace, one call with the parts of its name\n"
"bind(true)\n"
"local chunk = assert(loadstring([[\n"
"local function hot(k) local s = 0\n"
"  for i = 1, k do s = (s * 31 + i) % 1000003 end\n"
"  return s end\n"
"return hot]], '=t.lua'))\n"
"local hot = chunk()\n"
"hot(10000)\n"
"local nl, nf, _, _, name, fn, file, line, addr, size = calls()\n"
"local tr = tonumber(name:match('^TRACE_(%d+)$'))\n"
"local mc, maddr = jutil.tracemc(tr or 0)\n"
"ok(nf == 1 and nl == 0 and fn == 'hot' and file == 't.lua' and line == 2,\n"
"   ('the loop trace: one code_load_func(%s, %s, %s:%d)'):format(name, fn, file, line))\n"
"ok(tr and mc and addr == maddr and size == #mc, 'address and size are tracemc()\\'s')\n"
"ok(core.counts(h) == 1, 'counts: loaded 1')\n"
"-- flush: one unload_all for all; the same loop again asks funcinfo no more\n"
"local fi0 = nfi\n"
"jit.flush()\n"
"local _, _, _, nua = calls()\n"
"local c = { core.counts(h) }\n"
"ok(nua == 1 and c[2] == 1 and c[4] == 1, 'flush: one unload_all, unloaded 1, flushes 1')\n"
"hot(10000)\n"
"nl, nf, _, _, name, fn, file, line = calls()\n"
"ok(nf == 2 and line == 2 and nfi == fi0, 'compiled again: same line, from the cache (' .. (nfi - fi0) .. ' funcinfo calls)')\n"
"-- a trace number announced again (as after jit.flush(tr)) is unloaded first\n"
"local tr2 = tonumber(name:match('^TRACE_(%d+)$'))\n"
"local _, addr2 = jutil.tracemc(tr2 or 0)\n"
"local _, _, nu0 = calls()\n"
"handler('stop', tr2)\n"
"local nl2, _, nu, _, name2, _, _, _, _, _, ua = calls()\n"
"ok(tr2 and nu == nu0 + 1 and ua == addr2, 'a trace number announced again: its old address unloaded first')\n"
"ok(nl2 == nl + 1 and name2 == 'TRACE_' .. tostring(tr2), 'a trace with no start (found at start()): code_load(' .. name2 .. ')')\n"
"-- a failed load counts as an error, not as loaded\n"
"jit.flush()\n"
"fail_with(-5)\n"
"local c1 = { core.counts(h) }\n"
"hot(10000)\n"
"fail_with(0)\n"
"local c2 = { core.counts(h) }\n"
"ok(c2[3] > c1[3] and c2[1] == c1[1], 'a failed load: errors ' .. c1[3] .. ' -> ' .. c2[3] .. ', loaded stays ' .. c2[1])\n"
"local _, _, _, nua1 = calls()\n"
"jit.flush()\n"
"local _, _, _, nua2 = calls()\n"
"ok(nua2 == nua1, 'flush with nothing loaded: no unload_all')\n"
"-- trace numbers LuaJIT never gives (only a direct call can): ignored, nothing grown for\n"
"-- them (2^61 * 8 bytes wrapped to a block of 0)\n"
"local cb, nb = { core.counts(h) }, { calls() }\n"
"for _, t in ipairs { 2^61, 2^53, 65536, 1.5, -1, 0/0, 1/0 } do\n"
"  handler('abort', t); handler('start', t, hot, 0); handler('stop', t)\n"
"end\n"
"local ca, na = { core.counts(h) }, { calls() }\n"
"ok(ca[1] == cb[1] and ca[3] == cb[3] and na[1] == nb[1] and na[2] == nb[2],\n"
"   'trace numbers 2^61, 2^53, 65536, 1.5, -1, NaN, inf: ignored (errors ' .. cb[3] .. ' -> ' .. ca[3] .. ')')\n"
"for t = 1, 5000 do handler('start', t, hot, 0); handler('abort', t, hot, 0) end\n"
"hot(10000)\n"
"nl, nf, _, _, name, fn, file, line = calls()\n"
"-- (the loop above is traced too: its traces come first)\n"
"local cn = { core.counts(h) }\n"
"ok(fn == 'hot' and file == 't.lua' and line == 2 and nf - na[2] == cn[1] - ca[1] and cn[3] == ca[3],\n"
"   ('then trace numbers 1 to 5000, and real traces: %d announced, the last %s %s %s:%d'):format(cn[1] - ca[1], name, fn, file, line))\n"
"jit.flush()\n"
"-- lines=false: no line record, the name says where\n"
"bind(false)\n"
"hot(10000)\n"
"nl, nf, _, _, name = calls()\n"
"ok(name:match('^TRACE_%d+ hot t%.lua:2$'), 'lines=false: code_load(' .. name .. ')')\n"
"-- every trace's line, side traces too, is funcinfo's for its start (function, pc)\n"
"bind(true)\n"
"jit.flush()\n"
"-- (one handler per event: the spy passes each on, by a tail call, so the handler still\n"
"-- runs right above the function being recorded)\n"
"local want, seen, fi1 = {}, {}, nfi\n"
"local function spy(what, tr, func, pc, ...)\n"
"  if what == 'start' and type(func) == 'function' then seen[tr] = jutil.funcinfo(func, pc).currentline\n"
"  elseif what == 'stop' then want[tr] = seen[tr] end\n"
"  return handler(what, tr, func, pc, ...)\n"
"end\n"
"jit.attach(spy, 'trace')\n"
"local branchy = assert(loadstring([[\n"
"local function branchy(k) local s = 0\n"
"  for i = 1, k do\n"
"    if i % 3 == 0 then s = s + 1\n"
"    elseif i % 5 == 0 then\n"
"      s = s - 2\n"
"    else s = s * 2 % 65521 end\n"
"  end\n"
"  return s end\n"
"return branchy]], '@/some/dir/branchy.lua'))()\n"
"branchy(100000); hot(10000)\n"
"jit.attach(handler, 'trace')\n"
"local n, wrong, lines = 0, {}, {}\n"
"for tr, l in pairs(want) do\n"
"  n = n + 1; lines[#lines + 1] = tr .. ':' .. l\n"
"  if line_of(tr) ~= l then wrong[#wrong + 1] = tr .. ':' .. line_of(tr) .. '~=' .. l end\n"
"end\n"
"_, _, _, _, _, _, file = calls()\n"
"ok(n >= 3 and #wrong == 0, ('%d traces (root and side: %s) with funcinfo\\'s line%s'):format(n, table.concat(lines, ' '), #wrong > 0 and ', not: ' .. table.concat(wrong, ' ') or ''))\n"
"ok(nfi - fi1 < n, ('the root traces\\' lines from the stack, not funcinfo (%d funcinfo calls for %d traces)'):format(nfi - fi1, n))\n"
"-- unbound again: nothing more\n"
"nl, nf, _, nua2 = calls()\n"
"core.bind(h)\n"
"jit.flush()\n"
"local function cold(k) local s = 1; for i = 1, k do s = s * 3 % 65521 end; return s end\n"
"cold(10000)\n"
"local nl3, nf3, _, nua3 = calls()\n"
"ok(nl3 == nl and nf3 == nf and nua3 == nua2, 'bind(h) with no session: nothing announced or unloaded')\n"
"jit.attach(handler)\n"
"-- a start that came to nothing (aborted; or begun before an unbind) is forgotten: a\n"
"-- trace announced by number later (compiled while unbound, found at start()) takes no\n"
"-- location from it\n"
"local function A() end\n"
"local rt\n"
"for t = 1, 200 do if jutil.traceinfo(t) then rt = t end end\n"
"bind(true)\n"
"local nla, nfa = calls()\n"
"handler('start', rt, A, 0); handler('abort', rt, A, 0); handler('stop', rt)\n"
"local nlb, nfb, _, _, nameb = calls()\n"
"ok(rt and nlb == nla + 1 and nfb == nfa and nameb == 'TRACE_' .. rt, 'an aborted start, then a stop of its number: code_load(' .. nameb .. ')')\n"
"handler('start', rt, A, 0); core.bind(h); bind(true); handler('stop', rt)\n"
"local nlc, nfc, _, _, namec = calls()\n"
"ok(nlc == nlb + 1 and nfc == nfb and namec == 'TRACE_' .. rt, 'a start, unbound, bound, a stop of its number: code_load(' .. namec .. ')')\n"
"core.bind(h)\n"
"-- a string chunk (its source is its text) is named by its text, cut at a control\n"
"-- character or 40 bytes, from the stack (lines) or from funcinfo (no lines): not by a\n"
"-- prototype's address (funcinfo's loc for one of over 40 bytes)\n"
"jit.attach(handler, 'trace')\n"
"bind(true)\n"
"local long1 = assert(loadstring('local function long1(k) local s = 0\\n'\n"
"  .. '  for i = 1, k do s = (s + i) % 65521 end\\n  return s end return long1'))()\n"
"long1(10000)\n"
"nl, nf, _, _, name, fn, file, line = calls()\n"
"local L1 = '\"local function long1(k) local s = 0...\"'\n"
"ok(fn == 'long1' and file == L1 and line == 2, ('a string chunk of over 40 bytes: code_load_func(%s, %s, %s:%d)'):format(name, fn, file, line))\n"
"bind(false)\n"
"local src2 = 'local function long2(k) local s = 1 for i = 1, k do s = (s * 7 + i) % 65521 end return s end return long2'\n"
"local long2 = assert(loadstring(src2))()\n"
"long2(10000)\n"
"nl, nf, _, _, name = calls()\n"
"local L2 = '\"' .. src2:sub(1, 40) .. '...\"'\n"
"ok(name == name:match('^TRACE_%d+') .. ' long2 ' .. L2 .. ':1', 'and with no lines (from funcinfo): code_load(' .. name .. ')')\n"
"-- the names kept hold no chunk's text: 300 chunks of 20 KB, gone, leave no 6 MB behind\n"
"bind(true)\n"
"local pad = string.rep('-', 20000)\n"
"collectgarbage(); collectgarbage()\n"
"local kb0, nf0 = collectgarbage('count'), select(2, calls())\n"
"for k = 1, 300 do\n"
"  assert(loadstring(('local s = 0 for i = 1, 200 do s = s + i %% %d end return s --%s'):format(k + 1, pad)))()\n"
"end\n"
"collectgarbage(); collectgarbage()\n"
"local kb1, nf1 = collectgarbage('count'), select(2, calls())\n"
"ok(nf1 - nf0 >= 300 and kb1 - kb0 < 1000, ('%d traces of 300 string chunks of 20 KB: %.0f KB live after, %.0f before'):format(nf1 - nf0, kb1, kb0))\n"
"core.bind(h)\n"
"jit.attach(handler)\n"
"-- bound, the hook holds its owner (uevent.jit: the session's cdata, which the attached\n"
"-- handler, holding the hook, so keeps open); unbound or bound again, it lets go\n"
"local held = setmetatable({}, { __mode = 'k' })\n"
"local function owned() collectgarbage(); collectgarbage(); local n = 0; for _ in pairs(held) do n = n + 1 end; return n end\n"
"do local o = {}; held[o] = true; bind(true, nil, o) end\n"
"local n1 = owned()\n"
"do local o = {}; held[o] = true; bind(true, nil, o) end\n"
"local n2 = owned()\n"
"core.bind(h)\n"
"local n3 = owned()\n"
"ok(n1 == 1 and n2 == 1 and n3 == 0, ('bind() holds its owner until unbound or bound again (held: %d, %d, then %d)'):format(n1, n2, n3))\n";

int main(void)
{
	lua_State *L;

	if (access(JIT_CORE_SO, R_OK) != 0)
		plan_skip_all("bindings/lua/uevent/jit_core.so not built");
	plan(27);
	L = luaL_newstate();
	luaL_openlibs(L);
	lua_pushstring(L, JIT_CORE_SO);
	lua_setglobal(L, "CORE_SO");
	lua_register(L, "ok", l_ok);
	lua_register(L, "calls", l_calls);
	lua_register(L, "fail_with", l_fail);
	lua_register(L, "line_of", l_line_of);
	put_addr(L, "SESSION", &fake_session);
	put_addr(L, "LOAD", (const void *)(uintptr_t)stub_load);
	put_addr(L, "LOAD_FUNC", (const void *)(uintptr_t)stub_load_func);
	put_addr(L, "UNLOAD", (const void *)(uintptr_t)stub_unload);
	put_addr(L, "UNLOAD_ALL", (const void *)(uintptr_t)stub_unload_all);
	if (luaL_dostring(L, script))
		diag("the Lua part failed: %s", lua_tostring(L, -1));
	lua_close(L);
	return exit_status();
}
#else
int main(void)
{
	plan_skip_all("no LuaJIT headers (libluajit-5.1-dev): the hook's C part is not built");
	return 0;
}
#endif
