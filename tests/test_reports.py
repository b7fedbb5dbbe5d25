"""The committed corpus reports are current, and the check that says so can fail."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys

from conftest import REPO

REGENERATE = REPO / "reports" / "regenerate.py"


def test_committed_reports_are_current():
    proc = subprocess.run([sys.executable, str(REGENERATE), "--check"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"{proc.stderr.strip()} (run: python reports/regenerate.py)"
    assert "Traceback" not in proc.stderr


def _load_regenerate(monkeypatch):
    spec = importlib.util.spec_from_file_location("regenerate_under_test", REGENERATE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "0")   # render_all sets it; monkeypatch restores it after the test
    return module


def test_check_detects_stale_and_missing_reports(tmp_path, monkeypatch, capsys):
    module = _load_regenerate(monkeypatch)
    rendered = module.render_all()                  # reads its inputs beside the real script
    assert {"corpus.html", "corpus.md", "corpus.json"} <= set(rendered)
    # From here on the reports folder is tmp_path and rendering returns the bytes above.
    monkeypatch.setattr(module, "HERE", tmp_path)
    monkeypatch.setattr(module, "render_all", lambda: rendered)

    assert module.main([]) == 0                      # writes every report into tmp_path
    assert {p.name for p in tmp_path.iterdir()} == set(rendered)
    assert module.main(["--check"]) == 0
    capsys.readouterr()

    changed, removed = "corpus.md", "corpus.json"
    (tmp_path / changed).write_bytes(rendered[changed] + b"\nedited by hand\n")
    assert module.main(["--check"]) == 1
    err = capsys.readouterr().err
    assert changed in err and not any(name in err for name in rendered if name != changed)

    (tmp_path / changed).write_bytes(rendered[changed])
    (tmp_path / removed).unlink()
    assert module.main(["--check"]) == 1
    err = capsys.readouterr().err
    assert removed in err and not any(name in err for name in rendered if name != removed)


def test_committed_reports_cover_the_corpus():
    doc = json.loads((REPO / "reports" / "corpus.json").read_text(encoding="utf-8"))
    ids = [c["id"] for c in doc["claims"]]
    assert len(ids) >= 25
    assert "gpt3-175b" in ids and "llama-65b" in ids
    html = (REPO / "reports" / "corpus.html").read_text(encoding="utf-8")
    md = (REPO / "reports" / "corpus.md").read_text(encoding="utf-8")
    for claim_id in ids:
        assert claim_id in html, claim_id
        # Markdown shows an id as text, its Markdown characters escaped (issue 10).
        assert re.sub(r"([\\`*_\[\](){}<>!|~&$#])", r"\\\1", claim_id) in md, claim_id
