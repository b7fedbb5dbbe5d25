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


#: The README's shown runs (a text block opening with "$ train-audit ..."), with what they show.
SHOWN_RUNS = [(m.group(1), m.group(2)) for m in
              re.finditer(r"^```text\n\$ train-audit (.*?)\n(.*?)^```", README, flags=re.S | re.M)]


def _runnable(args: list[str]) -> bool:
    """Whether every file the command names is in the repository (``diff v1.csv v2.csv`` shows your own files)."""
    return all((REPO / a).exists() for a in args if re.search(r"\.(json|jsonl|csv|parquet|xlsx)$", a))


RUNNABLE = [r for r in SHOWN_RUNS if _runnable(r[0].split())]


def test_the_readme_shows_runs_of_its_own_files():
    assert len(RUNNABLE) >= 2


@pytest.mark.parametrize("command,shown", RUNNABLE, ids=[r[0].split()[0] for r in RUNNABLE])
def test_a_shown_run_prints_what_the_readme_shows(command, shown, monkeypatch):
    """Each line the README shows of a run is printed, in order (a shown '...' stands for lines left out, and a run
    may print more than is shown): the example of --statistics showed the counts of an older example report."""
    from conftest import run_cli

    monkeypatch.chdir(REPO)
    args = command.split()
    result = run_cli(*args, *(["--isolated"] if args[0] == "check" else []))
    printed = [" ".join(line.split()) for line in (result.stdout + result.stderr).splitlines()]
    at = 0
    for line in shown.splitlines():
        want = " ".join(line.split())
        if not want or want == "...":
            continue
        assert want in printed[at:], f"README shows {line!r} for `train-audit {command}`; not printed in order"
        at = printed.index(want, at) + 1
