# _uevent.pyi - the CFFI extension built from uevent.h: its declarations are C, not Python.
from typing import Any

ffi: Any
lib: Any
