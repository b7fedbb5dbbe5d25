"""The README's Python examples run as written, and its example column map is a valid map."""

from __future__ import annotations

import re

import pytest

from audit.reading import load_column_map
from conftest import REPO

README = (REPO / "README.md").read_text(encoding="utf-8")
PYTHON_BLOCKS = re.findall(r"^```python\n(.*?)^```", README, flags=re.S | re.M)


def test_the_readme_has_python_examples():
    assert len(PYTHON_BLOCKS) >= 2


@pytest.mark.parametrize("code", PYTHON_BLOCKS, ids=[f"block{i + 1}" for i in range(len(PYTHON_BLOCKS))])
def test_a_python_example_runs(code, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the examples write their own files
    exec(compile(code, "README.md", "exec"), {"__name__": "readme_example"})


def test_the_example_column_map_is_valid(tmp_path):
    (block,) = [b for b in re.findall(r"^```toml\n(.*?)^```", README, flags=re.S | re.M)
                if b.startswith("# columns.toml")]
    path = tmp_path / "columns.toml"
    path.write_text(block, encoding="utf-8")
    cmap = load_column_map(path)
    assert cmap.lookup("GPU days") == ("chip_hours", "GPU-days")
    assert cmap.lookup("compute (ZFLOP)") == ("compute_flops", "ZFLOP")
    assert cmap.kept("owner")
