"""Settings files: ``[tool.train-audit]`` in pyproject.toml or ``train-audit.toml``, found by walking up (ruff's
rule), named by ``--config``, skipped with ``--isolated``; the command line overrides them; an unknown key or an
unusable value is an error naming the file and the key (exit 2)."""

from __future__ import annotations

import json
from pathlib import Path

import click
import pytest

from audit import settings
from conftest import run_cli

#: An accelerator not in the catalog is a warning (H001), whatever the tolerances: this claim's status is warn
#: (its compute is exactly 6 × 7e9 × 1e12 = 4.2e22, so C001 agrees).
WARN_CLAIM = {"id": "unknown-part", "params": "7B", "tokens": "1T", "compute_flops": "4.2e22", "hardware": "H1000"}
#: 7.00B parameters on 1.00T tokens claiming 6.3e22 FLOP: 6·N·D = 6 × 7e9 × 1e12 = 4.2e22, ratio 6.3 / 4.2 = 1.5.
RATIO_CLAIM = {"id": "compute-1.5x", "params": "7.00B", "tokens": "1.00T", "compute_flops": "6.3e22 FLOP"}


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty project folder as the current folder, with the warn-only claims file in it."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "claims.json").write_text(json.dumps([WARN_CLAIM]), encoding="utf-8")
    (tmp_path / "ratio.json").write_text(json.dumps([RATIO_CLAIM]), encoding="utf-8")
    return tmp_path


def test_no_settings_file_means_the_defaults(home: Path):
    assert settings.find(home) is None or not str(settings.find(home)).startswith(str(home))
    assert run_cli("check", "claims.json", "--isolated").exit_code == 0  # a warning does not reach --fail-on fail


def test_pyproject_table_is_read_and_the_command_line_overrides_it(home: Path):
    (home / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.train-audit]\nfail-on = "warn"\n')
    result = run_cli("check", "claims.json")
    assert result.exit_code == 1, result.output
    assert f"settings from {home / 'pyproject.toml'}" in result.stderr
    assert run_cli("check", "claims.json", "--fail-on", "fail").exit_code == 0
    assert run_cli("check", "claims.json", "--isolated").exit_code == 0
    assert run_cli("check", "claims.json", "-q").stderr == ""  # -q: no note about the settings file


def test_own_file_wins_over_pyproject_and_is_found_from_a_subfolder(home: Path, monkeypatch: pytest.MonkeyPatch):
    (home / "pyproject.toml").write_text('[tool.train-audit]\nfail-on = "never"\n')
    (home / "train-audit.toml").write_text('fail_on = "warn"\n')  # "_" spelling works as well
    sub = home / "a" / "b"
    sub.mkdir(parents=True)
    monkeypatch.chdir(sub)
    assert settings.find() == home / "train-audit.toml"
    assert run_cli("check", str(home / "claims.json")).exit_code == 1


def test_a_pyproject_without_the_table_is_passed_over(home: Path, monkeypatch: pytest.MonkeyPatch):
    (home / "train-audit.toml").write_text('fail-on = "warn"\n')
    sub = home / "pkg"
    sub.mkdir()
    (sub / "pyproject.toml").write_text('[project]\nname = "pkg"\n')
    monkeypatch.chdir(sub)
    assert settings.find() == home / "train-audit.toml"


def test_config_option_names_the_file(home: Path):
    (home / "strict.toml").write_text('fail-on = "warn"\n')
    assert run_cli("check", "claims.json", "--config", "strict.toml").exit_code == 1
    result = run_cli("check", "claims.json", "--config", "strict.toml", "--isolated")
    assert result.exit_code == 2 and "--isolated" in result.stderr


def test_tolerance_table_band_and_bytes_per_param(home: Path):
    # 1.5x is within C001=1.6:3 (ok), so the claim passes; bytes-per-param with an underscore.
    (home / "train-audit.toml").write_text('bytes_per_param = 18\nband = "0.1:0.7"\n\n'
                                           '[tolerance]\nC001 = [1.6, 3]\n')
    doc = run_cli("check", "ratio.json", "-f", "json").json()
    assert doc["claims"][0]["status"] == "pass"
    (home / "train-audit.toml").write_text('tolerance = ["C001=1.1:1.2"]\n')  # 1.5x beyond 1.2: an error
    doc = run_cli("check", "ratio.json", "-f", "json").json()
    assert doc["claims"][0]["status"] == "fail"
    # The command line wins over the file.
    doc = run_cli("check", "ratio.json", "-f", "json", "--tolerance", "C001=1.6:3").json()
    assert doc["claims"][0]["status"] == "pass"


def test_command_line_lists_add_to_the_files(home: Path):
    """--tolerance for another rule left out the file's C001 tolerance (1.5x beyond its 1.2: a fail passed as ok,
    a CI gate silently loosened), and --ignore R001 brought back the C001 the file ignored. They add to the
    file's lists, as ruff's --ignore does; for the same rule the command line wins (test above)."""
    (home / "train-audit.toml").write_text('tolerance = ["C001=1.1:1.2"]\n')
    doc = run_cli("check", "ratio.json", "-f", "json", "--tolerance", "C002=2:4").json()
    assert doc["claims"][0]["status"] == "fail"
    (home / "train-audit.toml").write_text('ignore = ["C001"]\n')
    doc = run_cli("check", "ratio.json", "-f", "json", "--ignore", "R001").json()
    assert doc["claims"][0]["findings"] == [] and doc["claims"][0]["status"] == "unchecked"


def test_output_and_findings_in_the_file_are_read_from_its_folder(home: Path, monkeypatch: pytest.MonkeyPatch):
    # As the column map is: run from a subfolder, they were written into the current folder instead.
    (home / "train-audit.toml").write_text('output = "report.txt"\nfindings = "findings.csv"\n')
    deeper = home / "a" / "b"
    deeper.mkdir(parents=True)
    monkeypatch.chdir(deeper)
    res = run_cli("check", str(home / "ratio.json"))
    assert res.exit_code in (0, 1), res.stderr
    assert (home / "report.txt").exists() and (home / "findings.csv").exists()
    assert not (deeper / "report.txt").exists()


def test_format_and_select_from_the_file(home: Path):
    (home / "train-audit.toml").write_text('format = "json"\nignore = ["C001"]\n')
    doc = json.loads(run_cli("check", "ratio.json").stdout)
    assert doc["claims"][0]["findings"] == []
    assert doc["claims"][0]["status"] == "unchecked"  # its only check was ignored: never a pass


@pytest.mark.parametrize("text, words", [
    ('fail_onn = "warn"\n', ["unknown setting 'fail_onn'", "did you mean 'fail-on'?", "train-audit.toml"]),
    ('tolerances = ["C001=1.1:2"]\n', ["unknown setting 'tolerances'", "did you mean 'tolerance'?"]),
    ('config = "other.toml"\n', ["unknown setting 'config'"]),
    ('[tool.train-audit]\nfail-on = "warn"\n', ["unknown setting 'tool'", "top-level keys"]),
    ('bytes-per-param = "lots"\n', ["train-audit.toml: bytes-per-param:", "lots"]),
    ('fail-on = "sometimes"\n', ["train-audit.toml: fail-on:", "sometimes"]),
    ('causal-halving = "yes"\n', ["causal-halving: expected true or false"]),
    ('select = [1.5, true]\n', ["select: expected a list of strings"]),
    ('fail-on = "warn"\nfail_on = "fail"\n', ["given twice"]),
    ('[tolerance]\nC001 = 2\n', ["tolerance.C001", "OK:WARN"]),
    ('fail-on = "warn\n', ["not valid TOML"]),
])
def test_bad_settings_are_errors_naming_file_and_key(home: Path, text: str, words: list[str]):
    (home / "train-audit.toml").write_text(text)
    result = run_cli("check", "claims.json")
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    line = result.stderr.strip()
    assert line.startswith("train-audit: error: ") and "\n" not in line
    for word in words:
        assert word in line, (word, line)


def test_pyproject_with_a_misspelt_table_named_by_config(home: Path):
    (home / "pyproject.toml").write_text('[tool.train_audit]\nfail-on = "warn"\n')
    assert settings.find(home) is None or settings.find(home).parent != home  # not a settings file
    result = run_cli("check", "claims.json", "--config", "pyproject.toml")
    assert result.exit_code == 2
    assert "did you mean [tool.train-audit]?" in result.stderr


def test_missing_config_file_is_an_error(home: Path):
    result = run_cli("check", "claims.json", "--config", "nope.toml")
    assert result.exit_code == 2 and "nope.toml" in result.stderr


def test_any_option_of_the_command_is_a_setting_and_paths_are_read_from_the_file_folder(tmp_path: Path):
    """Options other engineers add (a column map, a catalog) work in the file with no change here: a setting is a
    long option. A relative path is read from the settings file's folder, as ruff reads its own."""
    @click.command()
    @click.option("--columns", "columns_map", type=click.Path())
    @click.option("--catalog", multiple=True, type=click.Path())
    @click.option("--top", type=int)
    def command(columns_map: str | None, catalog: tuple[str, ...], top: int | None) -> None:
        pass

    folder = tmp_path / "project"
    found = settings.Settings(folder / "train-audit.toml", {"columns": "maps/epoch.toml",
                                                            "catalog": ["extra.csv", "/abs/other.csv"], "top": 3})
    with click.Context(command) as ctx:
        mapped = settings.default_map(found, command, ctx)
        assert mapped == {"columns_map": str(folder / "maps/epoch.toml"),
                          "catalog": [str(folder / "extra.csv"), "/abs/other.csv"], "top": 3}
        with pytest.raises(settings.SettingsError, match="top: 'three' is not a valid integer"):
            settings.default_map(settings.Settings(folder / "t.toml", {"top": "three"}), command, ctx)


def test_the_readme_example_settings_work(home: Path):
    """The ```toml block of the README's CI section, as a pyproject.toml, is read without error and applied."""
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    block = readme[readme.index("## In CI"):]
    block = block[block.index("```toml\n") + len("```toml\n"):]
    block = block[:block.index("```")]
    assert "[tool.train-audit]" in block
    (home / "pyproject.toml").write_text(block)
    result = run_cli("check", "claims.json")
    assert result.exit_code == 1, result.output  # fail-on = "warn": the unknown accelerator's warning fails
    assert result.stdout.startswith("claims.json:1: H001 warning: ")  # format = "concise"


def test_a_settings_file_can_read_every_sheet_and_json_inputs_still_read(home: Path):
    """``sheet = "all"`` in train-audit.toml: a workbook's second sheet, whose run claims ten times 6·N·D
    (6 × 7e9 × 1e12 = 4.2e22; 4.2e23 claimed), fails the run; a JSON input beside it is read as before."""
    openpyxl = pytest.importorskip("openpyxl")
    book = openpyxl.Workbook()
    book.active.append(["id", "params", "tokens", "compute_flops"])
    book.active.append(["fine", "7B", "1T", "4.2e22"])
    second = book.create_sheet("second")
    second.append(["id", "params", "tokens", "compute_flops"])
    second.append(["ten-x", "7B", "1T", "4.2e23"])
    book.save(home / "runs.xlsx")
    assert run_cli("check", "runs.xlsx").exit_code == 0  # the first sheet only
    (home / "train-audit.toml").write_text('sheet = "all"\n')
    result = run_cli("check", "runs.xlsx", "-f", "json")
    assert result.exit_code == 1
    assert [c["id"] for c in result.json()["claims"]] == ["fine", "ten-x"]
    assert run_cli("check", "ratio.json").exit_code == 0  # 1.5x is within the default tolerance; not a workbook
