# bindings/rust/local.mk - uevent-sys (committed bindgen output) and the safe uevent crate.
# cargo runs --offline --locked with its target dir in the build tree: the source tree
# stays untouched (distcheck makes it read-only).
rust_env = CARGO_TARGET_DIR=$(abs_top_builddir)/%reldir%/target \
	UEVENT_LIB_DIR=$(abs_top_builddir)/libuevent/.libs
rust_cargo = $(rust_env) $(CARGO)
rust_manifest = --manifest-path $(abs_top_srcdir)/%reldir%/Cargo.toml
rust_sources = %reldir%/Cargo.toml %reldir%/Cargo.lock \
	%reldir%/uevent-sys/Cargo.toml %reldir%/uevent-sys/build.rs \
	%reldir%/uevent-sys/src/lib.rs %reldir%/uevent-sys/src/bindings.rs \
	%reldir%/uevent/Cargo.toml %reldir%/uevent/build.rs %reldir%/uevent/src/lib.rs \
	%reldir%/uevent/src/perf.rs %reldir%/uevent/src/perf/records.rs %reldir%/uevent/src/perf/notes.rs \
	%reldir%/uevent/src/perf/batch.rs %reldir%/uevent/tests/batch.rs \
	%reldir%/uevent/src/symbolize.rs %reldir%/uevent/tests/symbolize.rs \
	%reldir%/uevent/examples/mark.rs \
	%reldir%/uevent/examples/bench.rs %reldir%/uevent/examples/session.rs \
	%reldir%/uevent/examples/columns.rs \
	%reldir%/uevent/tests/golden.rs %reldir%/uevent/tests/emit.rs \
	%reldir%/uevent/tests/perfdata.rs %reldir%/uevent/tests/session.rs \
	%reldir%/uevent/tests/spawn.rs %reldir%/uevent/tests/common/mod.rs \
	%reldir%/uevent/tests/context.rs

# The crates and the example, built with `make` so `make check` and `make bench` find them.
%reldir%/.built: $(rust_sources) libuevent/libuevent.la
	$(AM_V_GEN)$(rust_cargo) build -q --offline --locked $(rust_manifest) --examples && \
	$(rust_cargo) build -q --offline --locked --release $(rust_manifest) --examples && \
	touch $@

if HAVE_CARGO
rust_all = %reldir%/.built
else
rust_all =
endif
all-local: $(rust_all)
clean-local: clean-local-rust
clean-local-rust:
	rm -rf %reldir%/target %reldir%/.built %reldir%/cargo-test.out %reldir%/clippy.out
.PHONY: clean-local-rust rust-bindings

# bindings.rs is committed (cargo builds without bindgen); make regenerates it when
# uevent.h is newer and bindgen is there, and bindgen.test fails when it is stale.
%reldir%/uevent-sys/src/bindings.rs: $(top_srcdir)/libuevent/uevent.h
	$(AM_V_GEN)if test -n '$(BINDGEN)'; then \
		BINDGEN='$(BINDGEN)' sh $(srcdir)/%reldir%/regen-bindings.sh $(top_srcdir) \
			> $(srcdir)/$@.tmp && mv $(srcdir)/$@.tmp $(srcdir)/$@; \
	else touch -c $(srcdir)/$@; fi

# records.rs likewise, from gen_records.py (`make records` forces it, with the CLI's).
%reldir%/uevent/src/perf/records.rs: $(top_srcdir)/libuevent/uevent.h $(RECORDS_MODEL) \
		%reldir%/gen_records.py
	$(AM_V_GEN)if test -n '$(PYTHON)'; then \
		$(PYTHON) $(srcdir)/%reldir%/gen_records.py \
			$(top_srcdir)/libuevent/uevent.h > $(srcdir)/$@.tmp && \
		mv $(srcdir)/$@.tmp $(srcdir)/$@; else touch -c $(srcdir)/$@; fi
records_files += %reldir%/uevent/src/perf/records.rs

# Regenerate the committed bindgen output, through the rule above, whatever the dates.
rust-bindings:
	@test -n '$(BINDGEN)' || { echo "make rust-bindings: no bindgen (./configure BINDGEN=...)" >&2; exit 1; }
	$(MAKE) $(AM_MAKEFLAGS) -W $(top_srcdir)/libuevent/uevent.h %reldir%/uevent-sys/src/bindings.rs

TESTS += %reldir%/cargo.test %reldir%/bindgen.test %reldir%/clippy.test %reldir%/outside.test
EXTRA_DIST += $(rust_sources) %reldir%/cargo.test %reldir%/bindgen.test %reldir%/clippy.test \
	%reldir%/outside.test \
	%reldir%/regen-bindings.sh %reldir%/gen_records.py %reldir%/README.md
