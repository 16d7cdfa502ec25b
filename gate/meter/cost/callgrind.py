"""Callgrind client requests from Python: valgrind.h's ``VALGRIND_DO_CLIENT_REQUEST`` for amd64, no compiler.

A client request is a marker instruction sequence that is a no-op on a real CPU and a call into the tool under
valgrind: rotate ``%rdi`` by 3, 13, 61 and 51 bits (128 in all: unchanged), then ``xchg %rbx,%rbx``, with
``%rax`` pointing at six words (request code, five arguments) and the answer in ``%rdx`` (the default when
not under valgrind). The 29 bytes below are that sequence as a C function
``uint64_t request(uint64_t *args, uint64_t default)``, placed in an executable page and called with ctypes.

Request codes are valgrind.h's and callgrind.h's (``VG_USERREQ_TOOL_BASE('C','T')``); both headers are stable
ABI, unchanged since valgrind 3.x. Natively every request returns its default and does nothing, so the same
code runs with and without valgrind.
"""

from __future__ import annotations

import ctypes
import mmap
import platform

_CODE = bytes.fromhex(
    "4889f8"  # mov %rdi,%rax      args
    "4889f2"  # mov %rsi,%rdx      default
    "48c1c703"
    "48c1c70d"
    "48c1c73d"
    "48c1c733"  # rol $3,$13,$61,$51 %rdi: valgrind's preamble
    "4887db"  # xchg %rbx,%rbx     %rdx = client_request(%rax)
    "4889d0"  # mov %rdx,%rax
    "c3"  # ret
)
_RUNNING_ON_VALGRIND = 0x1001
_CALLGRIND = (ord("C") << 24) | (ord("T") << 16)
DUMP_STATS, ZERO_STATS, TOGGLE_COLLECT, DUMP_STATS_AT, START_INSTRUMENTATION, STOP_INSTRUMENTATION = (
    _CALLGRIND + i for i in range(6)
)

_request = None
_page = None


class Unsupported(RuntimeError):
    """Client requests are written for amd64 here; another architecture has no cost signal."""


def _function():
    global _request, _page
    if _request is None:
        if platform.machine() not in ("x86_64", "AMD64"):
            raise Unsupported(
                f"callgrind client requests are implemented for x86_64 only, this is {platform.machine()}"
            )
        try:
            page = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
        except OSError as exc:  # e.g. SELinux's execmem denied
            raise Unsupported(
                f"cannot map an executable page for the client requests ({exc}); this host forbids writable "
                "executable memory, so it cannot measure the cost signal"
            ) from exc
        page.write(_CODE)
        address = ctypes.addressof(ctypes.c_char.from_buffer(page))
        _request = ctypes.CFUNCTYPE(ctypes.c_uint64, ctypes.c_void_p, ctypes.c_uint64)(address)
        _page = page  # kept alive with the function
    return _request


def request(code: int, *args: int, default: int = 0) -> int:
    words = (ctypes.c_uint64 * 6)(code, *args, *([0] * (5 - len(args))))
    return int(_function()(ctypes.addressof(words), default))


def running_on_valgrind() -> int:
    """How many valgrinds this process runs under (0 natively)."""
    return request(_RUNNING_ON_VALGRIND)


def start_instrumentation() -> None:
    request(START_INSTRUMENTATION)


def stop_instrumentation() -> None:
    request(STOP_INSTRUMENTATION)


def zero_stats() -> None:
    request(ZERO_STATS)


def dump_stats_at(label: str) -> None:
    """Write the costs since the last dump or zero to a new output file whose ``desc:`` line names ``label``."""
    text = ctypes.create_string_buffer(label.encode())
    request(DUMP_STATS_AT, ctypes.addressof(text))
