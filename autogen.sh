#!/bin/sh
# autogen.sh - regenerate configure and Makefile.in from a git checkout.
set -e
cd "$(dirname "$0")"
autoreconf -fi
