# demo/local.mk - the README tour's program to profile (demo/app), built by make, not
# installed: `uevent record -F 1000 -o /tmp/p.data -- demo/app`.
noinst_PROGRAMS += %reldir%/app
%canon_reldir%_app_SOURCES = %reldir%/app.c
# frame pointers and no inlining: the samples' callchains and names are the source's
%canon_reldir%_app_CFLAGS = $(AM_CFLAGS) -g -O1 -fno-omit-frame-pointer -fno-inline \
	-fno-optimize-sibling-calls
%canon_reldir%_app_LDADD = libuevent/libuevent.la
# no libtool wrapper script: demo/app is the program itself (RUNPATH the build tree)
%canon_reldir%_app_LDFLAGS = -no-install
