# bindings/python/local.mk - (placeholder, filled by its issue)
