"""The built wheel works on its own: installed into a fresh virtual environment and run outside the repository.

One wheel is built per session (from a copy of the sources, so the checkout gets no build/ or egg-info), installed
with ``--no-deps`` into a venv that borrows the machine's site-packages for pandas & co., and run from a temporary
folder so nothing can be found by accident in the working directory.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO

# One worker builds the wheel and runs every test on it (pytest-xdist's loadgroup; pyproject.toml).
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("packaging")]

#: What a wheel needs from the checkout (pyproject.toml's package-dir maps schemas/ and templates/ into audit).
SOURCES = ("pyproject.toml", "README.md", "audit", "schemas", "templates")
CORPUS_IDS = ("gpt3-175b", "llama-65b", "palm-540b", "deepseek-v3")


def _run(cmd, cwd, **kw):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    env["PIP_NO_INPUT"] = "1"
    return subprocess.run([str(c) for c in cmd], cwd=cwd, capture_output=True, text=True, timeout=180, env=env, **kw)


def _can_build_wheels() -> str | None:
    """Why a wheel cannot be built without build isolation here, or None."""
    import setuptools

    major, minor = (int(x) for x in setuptools.__version__.split(".")[:2])
    if (major, minor) < (70, 1) and importlib.util.find_spec("wheel") is None:
        return (f"setuptools {setuptools.__version__} needs the 'wheel' package to build a wheel without "
                "isolation; add 'wheel' (or setuptools>=70.1) to the [test] extra in pyproject.toml")
    return None


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> dict:
    problem = _can_build_wheels()
    if problem:
        pytest.fail(problem)
    root = tmp_path_factory.mktemp("packaging")
    src = root / "src"
    src.mkdir()
    for name in SOURCES:
        path = REPO / name
        if path.is_dir():
            shutil.copytree(path, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy(path, src / name)
    dist = root / "dist"
    proc = _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", dist, src], cwd=root)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    [wheel] = list(dist.glob("train_audit-*.whl"))

    env_dir = root / "venv"
    # --system-site-packages: pandas, pyarrow, jsonschema, click and jinja2 come from the machine (no download);
    # no pip of its own: the machine's pip (visible through the system site) installs into the venv's prefix.
    proc = _run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", env_dir], cwd=root)
    assert proc.returncode == 0, proc.stderr
    python = env_dir / "bin" / "python"
    proc = _run([python, "-m", "pip", "install", "--no-deps", "--no-index", "--force-reinstall", wheel], cwd=root)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    work = root / "work"
    work.mkdir()
    site = _run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], cwd=work)
    return {"python": python, "bin": env_dir / "bin", "work": work, "site": Path(site.stdout.strip()),
            "wheel": wheel}


def _inside(path: Path, folder: Path) -> bool:
    return Path(path).resolve().is_relative_to(Path(folder).resolve())


def test_wheel_carries_data_schemas_and_templates(venv):
    import zipfile

    names = set(zipfile.ZipFile(venv["wheel"]).namelist())
    for member in ("audit/data/accelerators.csv", "audit/data/systems.csv", "audit/data/corpus.csv",
                   "audit/data/thresholds.json",
                   "audit/schemas/claims.schema.json", "audit/templates/report.html.j2"):
        assert member in names, member
    assert not any(n.startswith(("tests/", "reports/")) for n in names)


def test_installed_package_is_imported_from_the_venv(venv):
    proc = _run([venv["python"], "-c", "import audit, json; print(json.dumps(audit.__file__))"], cwd=venv["work"])
    assert proc.returncode == 0, proc.stderr
    location = Path(json.loads(proc.stdout))
    assert _inside(location, venv["site"]), location
    assert not _inside(location, REPO), location


def test_python_dash_m_audit_check_runs_outside_the_repo(venv):
    proc = _run([venv["python"], "-m", "audit", "check"], cwd=venv["work"])
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    for claim_id in CORPUS_IDS:
        assert claim_id in proc.stdout


def test_installed_templates_and_schemas_are_inside_the_package(venv):
    code = ("import json; from audit.resources import templates_dir, schema_path; "
            "print(json.dumps([str(templates_dir()), str(schema_path('claims.schema.json'))]))")
    proc = _run([venv["python"], "-c", code], cwd=venv["work"])
    assert proc.returncode == 0, proc.stderr
    templates, schema = (Path(p) for p in json.loads(proc.stdout))
    assert _inside(templates, venv["site"] / "audit"), templates
    assert _inside(schema, venv["site"] / "audit"), schema
    assert (templates / "report.html.j2").is_file()
    assert schema.is_file()


def test_console_script_writes_the_html_report(venv):
    proc = _run([venv["bin"] / "train-audit", "check", "--format", "html", "-o", "out.html"], cwd=venv["work"])
    assert proc.returncode == 0, proc.stderr[-2000:]
    html = (venv["work"] / "out.html").read_text(encoding="utf-8")
    for claim_id in CORPUS_IDS:
        assert claim_id in html


def test_console_script_reads_json_input(venv):
    claim = venv["work"] / "claim.json"
    claim.write_text(json.dumps({"id": "gpt3", "params": "175B", "tokens": "300B", "compute_flops": "3640 PF-days"}))
    proc = _run([venv["bin"] / "train-audit", "check", "claim.json", "--format", "json"], cwd=venv["work"])
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout)["claims"][0]["status"] == "pass"
