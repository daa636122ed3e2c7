#!/bin/sh
# regen-bindings.sh - runs bindgen on uevent.h exactly as uevent-sys/src/bindings.rs was made.
# usage: regen-bindings.sh TOP_SRCDIR > bindings.rs   (BINDGEN, RUSTFMT from the environment)
top=${1:?usage: regen-bindings.sh TOP_SRCDIR}
: "${BINDGEN:=bindgen}"
[ -n "$RUSTFMT" ] || RUSTFMT=$(command -v rustfmt || echo "$HOME/.cargo/bin/rustfmt")
export RUSTFMT
exec "$BINDGEN" "$top/libuevent/uevent.h" --rustfmt-bindings --no-prepend-enum-name \
	--allowlist-function 'uevent_.*' --allowlist-type 'uevent_.*' \
	--allowlist-var '(uevent|UEVENT)_.*' -- -I"$top/kernel/include/uapi"
