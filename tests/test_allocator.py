"""The allocator settings a check runs with (audit/allocator.py)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


def _page_faults(keep: bool) -> int:
    """Minor page faults while a 64 MiB array is made and freed 40 times, in a process of its own (the settings
    last for the process's life). mallopt returns 1 for each parameter it accepts: a wrong parameter number or a
    value out of range makes keep_freed_memory() False, and the child fails."""
    code = (
        "import resource, numpy as np\n"
        "from audit.allocator import keep_freed_memory\n"
        f"assert keep_freed_memory() is True if {keep} else True\n"
        "import pyarrow as pa\n"  # Arrow's buffers from the same heap, or its own pool when not kept
        f"assert (pa.default_memory_pool().backend_name == 'system') is {keep}\n"
        "a = np.ones(8 << 20); del a\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt\n"
        "for _ in range(40):\n"
        "    a = np.ones(8 << 20); del a\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)\n"
    )
    # Pages of 4 KiB, as the command line runs (audit/cli.py turns numpy's transparent huge pages off).
    env = {**os.environ, "NUMPY_MADVISE_HUGEPAGE": "0"}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    return int(proc.stdout)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt: Linux only")
def test_freed_memory_is_kept_for_the_next_array():
    # 64 MiB is 16,384 pages of 4 KiB. With glibc's defaults an array that large is an mmap of its own, returned
    # to the kernel when freed: every one of the 40 arrays takes fresh pages, each a fault on first touch (about
    # 40 x 16,384 = 655,360). Kept, the second array onwards reuses the first one's pages: (almost) no fault.
    assert _page_faults(keep=False) > 30 * 16_384
    assert _page_faults(keep=True) < 2 * 16_384


def test_does_nothing_where_there_is_no_glibc(monkeypatch):
    from audit import allocator

    monkeypatch.setattr(allocator.sys, "platform", "darwin")
    assert allocator.keep_freed_memory() is False
