"""The committed corpus reports are current, and the check that says so can fail."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys

from conftest import REPO

REGENERATE = REPO / "reports" / "regenerate.py"


def test_committed_reports_are_current():
    proc = subprocess.run([sys.executable, str(REGENERATE), "--check"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"{proc.stderr.strip()} (run: python reports/regenerate.py)"
    assert "Traceback" not in proc.stderr


def _regenerate_module(tmp_path, monkeypatch):
    """reports/regenerate.py loaded as a module whose reports folder is ``tmp_path``."""
    spec = importlib.util.spec_from_file_location("regenerate_under_test", REGENERATE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "HERE", tmp_path)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "0")   # render_all sets it; restored after the test
    return module


def test_check_detects_stale_and_missing_reports(tmp_path, monkeypatch, capsys):
    module = _regenerate_module(tmp_path, monkeypatch)
    first = module.render_all()
    assert set(first) == {"corpus.html", "corpus.md", "corpus.json"}
    assert module.render_all() == first, "rendering the corpus twice gave different bytes"
    monkeypatch.setattr(module, "render_all", lambda: first)

    assert module.main([]) == 0                      # writes the three reports into tmp_path
    assert {p.name for p in tmp_path.iterdir()} == set(first)
    assert module.main(["--check"]) == 0
    capsys.readouterr()

    md = tmp_path / "corpus.md"
    md.write_text(md.read_text(encoding="utf-8").replace("gpt3-175b", "gpt3-999b"), encoding="utf-8")
    assert module.main(["--check"]) == 1
    err = capsys.readouterr().err
    assert "corpus.md" in err and "corpus.json" not in err and "corpus.html" not in err

    md.write_bytes(first["corpus.md"])
    (tmp_path / "corpus.json").unlink()
    assert module.main(["--check"]) == 1
    err = capsys.readouterr().err
    assert "corpus.json" in err and "corpus.md" not in err


def test_committed_reports_cover_the_corpus():
    doc = json.loads((REPO / "reports" / "corpus.json").read_text(encoding="utf-8"))
    ids = [c["id"] for c in doc["claims"]]
    assert len(ids) >= 25
    assert "gpt3-175b" in ids and "llama-65b" in ids
    html = (REPO / "reports" / "corpus.html").read_text(encoding="utf-8")
    md = (REPO / "reports" / "corpus.md").read_text(encoding="utf-8")
    for claim_id in ids:
        assert claim_id in html, claim_id
        assert f"`{claim_id}`" in md, claim_id
