"""The C allocator's settings for auditing large batches: keep the memory that is freed, for the next array.

An audit allocates and frees many arrays of a batch's length (a column of values, a mask, a findings column). With
glibc's defaults, an array above 128 KiB is its own ``mmap`` and goes back to the system when freed, and the heap
is trimmed whenever its free top exceeds 128 KiB: the next array of that size takes fresh pages from the kernel,
each zeroed on its first touch (a page fault every 4 KiB). Measured on this project's 2-core virtual machine
(``train-audit check`` of synthetic claims, Parquet to Parquet, GNU time, runs interleaved):

- 1,000,000 claims in batches of 100,000: 724,000-736,000 minor page faults → 414,000-425,000, system CPU
  4.8-5.1 s → 3.0-3.9 s, wall 37.9-39.6 s → 31.8-37.4 s, peak memory 1,133-1,179 MB → 1,172-1,187 MB;
- 100,000 claims audited by ``audit_claims`` in a fresh process: 2.7-3.1 s of CPU → 1.3-1.6 s (later batches of
  a process gained nothing: by then glibc's own threshold had risen);
- Arrow's buffers from the same heap (below), 300,000 claims in batches of 100,000: system CPU 1.4-1.8 s →
  0.9-1.0 s, wall 11.2-11.9 s → 9.9-10.6 s, the same bytes written.

:func:`keep_freed_memory` asks glibc (``mallopt``, ``man 3 mallopt``) to serve every allocation from its heap
(``M_MMAP_MAX`` 0), never to give the heap's free top back (``M_TRIM_THRESHOLD``) and to grow it 64 MiB at a time
(``M_TOP_PAD``), and has Arrow allocate from it too (``pyarrow.system_memory_pool``). The process's peak memory
is what it was; memory freed after the peak is kept for the process's life, so only the command line calls this,
for a ``check`` (a process that ends after the audit), never the library on its user's behalf. Elsewhere than
glibc (macOS, Windows, musl) it does nothing.
"""

from __future__ import annotations

import sys

#: ``mallopt`` parameters (glibc's ``malloc.h``).
_M_TRIM_THRESHOLD, _M_TOP_PAD, _M_MMAP_MAX = -1, -2, -4
#: Never trim the heap's free top (the largest value glibc accepts is the largest int).
_NEVER_TRIM = 2**31 - 1
#: Grow the heap by this much beyond each request: fewer growth calls, and room for the next array.
_TOP_PAD = 64 << 20


def keep_freed_memory() -> bool:
    """Ask glibc's allocator to keep freed memory for later allocations (see the module's documentation); True
    when it took the settings, False where there is no glibc or it refused."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # not glibc (musl has no mallopt)
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    kept = all(mallopt(param, value) == 1 for param, value in
               ((_M_MMAP_MAX, 0), (_M_TRIM_THRESHOLD, _NEVER_TRIM), (_M_TOP_PAD, _TOP_PAD)))
    if kept:
        # Arrow's buffers (reading a batch, writing a table) from the same heap: its default pool (mimalloc or
        # jemalloc) gives freed pages back to the system on its own schedule, and takes them again for the next
        # batch. pandas imports pyarrow already; the default pool is set before Arrow allocates anything.
        import pyarrow as pa

        pa.set_memory_pool(pa.system_memory_pool())
    return kept
