# t/local.mk - the TAP suite.
EXTRA_DIST += %reldir%/tap.h
