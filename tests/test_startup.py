"""Start-up stays quick: ``train-audit --help``, ``rules`` and ``hardware`` import neither pandas nor pyarrow
(together about 0.6 s of imports on the benchmark machine), checked in a fresh interpreter."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

_PROBE = """
import json, sys
from audit.cli import cli
try:
    cli(sys.argv[1:], prog_name="train-audit", standalone_mode=False)
except SystemExit:
    pass
sys.stdout.flush()
print(json.dumps(sorted(m for m in ("pandas", "pyarrow") if m in sys.modules)), file=sys.stderr)
"""


@pytest.mark.parametrize("args", [["--help"], ["rules"], ["rules", "C001"], ["rules", "-f", "json"], ["hardware"],
                                  ["hardware", "H100"], ["hardware", "-f", "json"]])
def test_light_commands_import_neither_pandas_nor_pyarrow(args):
    proc = subprocess.run([sys.executable, "-c", _PROBE, *args], capture_output=True, text=True, timeout=60)
    assert proc.stdout.strip(), proc.stderr  # the command did its work
    assert json.loads(proc.stderr.strip().splitlines()[-1]) == []


def test_the_catalog_read_without_pandas_is_the_one_pandas_reads():
    import pandas as pd

    from audit.catalog import load_catalog
    from audit.resources import data_path

    frame = pd.read_csv(data_path("accelerators.csv"), dtype=str, keep_default_na=False)
    pd.testing.assert_frame_equal(load_catalog().frame, frame)
