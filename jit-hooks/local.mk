# jit-hooks/local.mk - (placeholder, filled by its issue)
