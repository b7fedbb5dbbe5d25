"""Output is deterministic: the same input gives the same bytes, whatever the key order of the input objects,
the locale, the hash seed or the run; so reports diff cleanly.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from audit.cli import cli
from conftest import DATA

FORMATS = ("json", "markdown", "csv", "text", "html", "parquet")
#: Fixed environment for byte-comparable output: no colour, a fixed "generated" date in HTML.
STABLE_ENV = {"NO_COLOR": "1", "SOURCE_DATE_EPOCH": "1700000000"}

CLAIMS = [
    {"id": "ünïcode-1", "name": "Modèle «α» 日本", "params": "70B", "tokens": "1.4T", "hardware": "H100",
     "chips": 2048, "wall_clock_days": "21 days", "mfu": "41%", "notes": "first", "zeta": 1, "alpha": [1, 2]},
    {"id": "doctored", "params": "175B", "tokens": "300B", "compute_flops": "3640 PF-days", "hardware": "V100",
     "chips": 10000, "wall_clock_days": 14.8, "chip_hours": "3.55M GPU-hours", "mfu": 2.13, "source": "x"},
    {"id": "doctored", "params": -1, "tokens": "5 apples", "hardware": "H1000", "extra": {"b": 1, "a": 2}},
]


def render_all(inputs: list[str]) -> dict[str, bytes]:
    """One audit of ``inputs`` rendered in every format, as the command line renders them for ``-o FILE``."""
    from audit.api import check
    from audit.cli import _render
    from audit.report import table

    result = check(inputs)
    out = {}
    for fmt in FORMATS:
        data = _render(result, fmt, "train-audit report", False, f"report.{fmt}")
        out[fmt] = data.encode("utf-8") if isinstance(data, str) else data
    out["findings.csv"] = table.findings_bytes(result, "findings.csv")
    return out


@pytest.fixture(autouse=True)
def stable_env(monkeypatch):
    for key, value in STABLE_ENV.items():
        monkeypatch.setenv(key, value)


@pytest.fixture
def claims_file(tmp_path) -> Path:
    path = tmp_path / "claims.json"
    path.write_text(json.dumps(CLAIMS, ensure_ascii=False), encoding="utf-8")
    return path


def test_the_same_input_twice_gives_the_same_bytes(claims_file, tmp_path):
    inputs = [str(claims_file), str(DATA / "runs_spreadsheet.csv")]
    first, second = render_all(inputs), render_all(inputs)
    for fmt in first:
        assert first[fmt] == second[fmt], fmt
    assert all(len(v) > 100 for v in first.values())
    # and through the command line, written to files
    runs = []
    for i in (1, 2):
        out = tmp_path / f"run{i}.json"
        res = CliRunner().invoke(cli, ["check", *inputs, "--format", "json", "-o", str(out), "--fail-on", "never"])
        assert res.exit_code == 0, res.output
        runs.append(out.read_bytes())
    assert runs[0] == runs[1] == first["json"]


def test_the_key_order_of_input_objects_does_not_change_any_output(tmp_path, monkeypatch):
    reversed_keys = [dict(reversed(list(c.items()))) for c in CLAIMS]
    reversed_keys[2]["extra"] = {"a": 2, "b": 1}
    outputs = []
    for folder, claims in (("given", CLAIMS), ("reversed", reversed_keys)):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "claims.json").write_text(json.dumps(claims, ensure_ascii=False), encoding="utf-8")
        monkeypatch.chdir(tmp_path / folder)  # the same relative name, so the reports name the same input
        outputs.append(render_all(["claims.json"]))
    for fmt in outputs[0]:
        assert outputs[0][fmt] == outputs[1][fmt], fmt
    doc = json.loads(outputs[0]["json"])
    assert list(doc["claims"][0]["extra"]) == sorted(doc["claims"][0]["extra"])  # extras in name order


_RENDER_IN_SUBPROCESS = r"""
import sys
from pathlib import Path
from audit.api import check
from audit.cli import _render
out = Path(sys.argv[1]); result = check(sys.argv[2:])
for fmt in ("json", "markdown", "csv", "text", "html"):
    data = _render(result, fmt, "train-audit report", False, f"r.{fmt}")
    (out / f"r.{fmt}").write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
"""


def test_locale_and_hash_seed_do_not_change_any_output(claims_file, tmp_path):
    """Fresh interpreters under different locales and hash seeds (set iteration order) write the same bytes."""
    inputs = [str(claims_file), str(DATA / "runs_spreadsheet.csv"), str(DATA / "published.json")]
    envs = [
        {"LC_ALL": "C", "LANG": "C", "PYTHONHASHSEED": "0"},
        {"LC_ALL": "C.UTF-8", "LANG": "C.UTF-8", "PYTHONHASHSEED": "12345"},
        # A locale with a decimal comma and other collation; when it is not installed the C library falls
        # back to C, and the run must still match.
        {"LC_ALL": "de_DE.UTF-8", "LANG": "de_DE.UTF-8", "LC_NUMERIC": "de_DE.UTF-8", "PYTHONHASHSEED": "987"},
    ]
    results = []
    for i, extra in enumerate(envs):
        env = {k: v for k, v in os.environ.items() if not k.startswith("LC_") and k != "LANG"}
        env.update(STABLE_ENV, **extra)
        out = tmp_path / f"run{i}"
        out.mkdir()
        proc = subprocess.run([sys.executable, "-c", _RENDER_IN_SUBPROCESS, str(out), *inputs], env=env,
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        results.append({p.name: p.read_bytes() for p in sorted(out.iterdir())})
    assert set(results[0]) == {"r.json", "r.markdown", "r.csv", "r.text", "r.html"}
    for other in results[1:]:
        for name in results[0]:
            assert other[name] == results[0][name], name


def test_claims_keep_the_input_order_across_files(claims_file):
    res = CliRunner().invoke(cli, ["check", str(DATA / "published.json"), str(claims_file), "--format", "json",
                                   "--fail-on", "never"], env=STABLE_ENV)
    doc = json.loads(res.stdout)
    published = json.loads((DATA / "published.json").read_text())
    n = len(published["claims"] if isinstance(published, dict) else published)
    assert [c["input"]["file"] for c in doc["claims"]] == [str(DATA / "published.json")] * n + \
        [str(claims_file)] * len(CLAIMS)
    assert [c["input"]["row"] for c in doc["claims"][n:]] == [1, 2, 3]


def test_json_report_of_an_infinite_extra_value(tmp_path):
    path = tmp_path / "inf.json"
    path.write_text('{"id": "a", "params": "7B", "notes": [1e400, {"x": -Infinity}]}')
    res = CliRunner().invoke(cli, ["check", str(path), "--format", "json"])
    assert res.exit_code == 0, res.stderr
    assert json.loads(res.stdout)["claims"][0]["extra"]["notes"] is not None


def test_markdown_lists_failures_first_counts_rules_and_says_what_it_left_out():
    from audit.api import check_records
    from audit.report import markdown

    records = [{"id": f"bad-{i}", "chips": 1.5} for i in range(5)]  # invalid
    records += [{"id": "fails", "params": "175B", "tokens": "300B", "compute_flops": 3.15e26}]  # 1000x 6ND
    records += [{"id": f"ok-{i}", "params": "175B", "tokens": "300B", "compute_flops": "3.14e23"} for i in range(3)]
    page = markdown.render(check_records(records), limit=2)
    table = [line for line in page.splitlines() if line.startswith("| ")]
    assert table[table.index("| status | id | name | findings |") + 1].startswith("| ❌ fail | fails")
    assert "| `V001` invalid-value | 5 | 5 | 0 |" in page and "| `C001` compute-6nd | 1 | 1 | 0 |" in page
    assert "7 more claims not listed (4 invalid, 3 pass)" in page
    assert "likely cause: unit prefix" in page


@pytest.mark.parametrize("fmt", ["json", "html", "markdown", "text"])
def test_a_date_column_is_kept_as_iso_text_in_every_report(tmp_path, fmt):
    """A spreadsheet's date cells (a datetime64 column: openpyxl's dates, Parquet timestamps) are extra fields: the
    JSON report writes them as ISO 8601 text (numpy's tolist() of a datetime64[ns] is nanoseconds since 1970, an
    int, which the record maker once iterated: an internal error, exit 2, for --format json and html). The date
    1 March 2024 is 1,709,251,200 s after 1970-01-01 (19,783 days × 86,400 s), the int it would have been."""
    import pandas as pd

    path = tmp_path / "runs.parquet"
    pd.DataFrame({"id": ["a", "b"], "params": ["7B", "7B"], "tokens": ["1.4T", "1.4T"],
                  "Date": pd.to_datetime(["2024-03-01", None])}).to_parquet(path, index=False)
    out = tmp_path / f"out.{fmt}"
    res = CliRunner().invoke(cli, ["check", str(path), "--format", fmt, "-o", str(out)])
    assert res.exit_code == 0, res.output
    if fmt == "json":
        extra = [c["extra"] for c in json.loads(out.read_text())["claims"]]
        assert extra == [{"Date": "2024-03-01T00:00:00"}, {}]  # a missing cell is left out, as any extra is
        assert 19_783 * 86_400 == 1_709_251_200  # the nanoseconds' seconds, not what the report shows
        assert "1709251200" not in out.read_text()
