# bindings/lua/local.mk - (placeholder, filled by its issue)
