# bindings/rust/local.mk - (placeholder, filled by its issue)
