"""The command line: exit codes, usage errors without tracebacks, the JSON output contract, and the helpers."""

from __future__ import annotations

import importlib.metadata
import json
import re
import subprocess
import sys

import pytest

from audit.rules import RULES
from conftest import DATA, PF_DAY, REPO, claim_by_id, one_finding

PUBLISHED = str(DATA / "published.json")
DOCTORED = str(DATA / "doctored.json")
WARN_ONLY = str(DATA / "warn_only.json")
BAD_FIELDS = str(DATA / "bad_fields.json")


# ---------------------------------------------------------------------------------------------- exit codes


def test_clean_file_exits_0(cli_run):
    res = cli_run("check", PUBLISHED, "--fail-on", "fail")
    assert res.exit_code == 0, res.output
    assert "gpt3-175b" in res.stdout and "llama-65b" in res.stdout


def test_bundled_corpus_exits_0(cli_run):
    res = cli_run("check")
    assert res.exit_code == 0, res.output
    assert "gpt3-175b" in res.stdout


def text_findings(stdout: str) -> dict[str, set[tuple[str, str]]]:
    """(severity, rule) of every finding line of a text report, by the claim whose detail block it is in (a block
    opens with the claim's id and ends its header line with ``[file:row]``)."""
    found: dict[str, set[tuple[str, str]]] = {}
    current = None
    for line in stdout.splitlines():
        header = re.match(r"^(\S+)  .*\[[^\]]+:\d+\]$", line)
        if header:
            current = header.group(1)
            found[current] = set()
            continue
        finding = re.match(r"^\s+(ok|info|warning|error)\s+([A-Z]\d{3})\s", line)
        if finding and current is not None:
            found[current].add((finding.group(1), finding.group(2)))
    return found


def problems(found: dict[str, set[tuple[str, str]]]) -> dict[str, set[str]]:
    return {cid: {rule for sev, rule in fs if sev in ("warning", "error")} for cid, fs in found.items()}


def test_doctored_file_exits_1(cli_run):
    res = cli_run("check", DOCTORED)
    assert res.exit_code == 1
    # Each doctored copy shows its own error, under its own claim: compute x1000 is C001 (3,640,000 PF-days against
    # 6 x 175e9 x 300e9); GPU-days as GPU-hours is C002 (1/24) and an MFU of 24 x 47.7 % = 1,144 % (U001); a
    # stated MFU of 146 % is U001.
    found = text_findings(res.stdout)
    assert problems(found) == {"gpt3-compute-x1000": {"C001"}, "llama-65b-gpu-days-as-hours": {"C002", "U001"},
                               "llama-65b-mfu-146": {"U001"}}
    assert ("error", "C001") in found["gpt3-compute-x1000"]
    assert {("error", "C002"), ("error", "U001")} <= found["llama-65b-gpu-days-as-hours"]
    assert ("error", "U001") in found["llama-65b-mfu-146"]


def test_invalid_claim_counts_as_failed(cli_run):
    assert cli_run("check", BAD_FIELDS).exit_code == 1


@pytest.mark.parametrize("fail_on, expected", [("warn", 1), ("fail", 0), ("never", 0)])
def test_warning_only_file_and_fail_on(cli_run, fail_on, expected):
    res = cli_run("check", WARN_ONLY, "--fail-on", fail_on)
    assert res.exit_code == expected, res.output
    # The one claim's row says warn, and its one problem is C001 at 1.26e23 / (6 x 7e9 x 1e12) = 3x, a warning.
    assert re.search(r"^warn\s+compute-3x\s", res.stdout, re.M), res.stdout
    assert problems(text_findings(res.stdout)) == {"compute-3x": {"C001"}}
    assert re.search(r"^\s+warning\s+C001\s.*\(ratio 3x\)$", res.stdout, re.M), res.stdout


def test_fail_on_never_with_a_failing_file_exits_0(cli_run):
    assert cli_run("check", DOCTORED, "--fail-on", "never").exit_code == 0


def test_fail_on_warn_with_a_clean_file_exits_0(cli_run):
    assert cli_run("check", str(DATA / "gpt3_175b.json"), "--fail-on", "warn").exit_code == 0


@pytest.mark.parametrize("args, needle", [
    (["check", "no-such-file.json"], "no-such-file.json"),
    (["check", PUBLISHED, "no-such-file.json"], "no-such-file.json"),
    (["check", str(REPO / "README.md")], "unknown file type"),
    (["check", str(DATA / "malformed.json")], "not valid JSON"),
    (["check", str(DATA)], "folder"),
    (["check", PUBLISHED, "--format", "nope"], "nope"),
    (["check", PUBLISHED, "--tolerance", "junk"], "junk"),
    (["check", PUBLISHED, "--tolerance", "C001=2:1"], "C001=2:1"),
    (["check", PUBLISHED, "--tolerance", "Z999=1.2:2"], "Z999"),
    (["check", PUBLISHED, "--band", "high:low"], "--band"),
    (["check", PUBLISHED, "--bytes-per-param", "-3"], "bytes-per-param"),
    # Issue 10: nan was accepted (and silently dropped the memory check); 0.15:65 silently became 0.0015-0.65.
    (["check", PUBLISHED, "--bytes-per-param", "nan"], "--bytes-per-param nan: need a positive number"),
    (["check", PUBLISHED, "--bytes-per-param", "inf"], "--bytes-per-param inf: need a positive number"),
    (["check", PUBLISHED, "--band", "0.15:65"], "read 0.15 as a fraction and 65 as a percentage; write both as "
                                                "fractions (0.15:0.65) or both as percentages (15:65)"),
    (["check", PUBLISHED, "--band", "15%:0.65"], "read 15% as a percentage and 0.65 as a fraction"),
    (["check", PUBLISHED, "--band", "nan:0.5"], "--band"),
    (["check", PUBLISHED, "-o", "reports-folder/"], "is a folder; give a file name"),
    (["check", PUBLISHED, "--fail-on", "sometimes"], "sometimes"),
    (["rules", "C999"], "C999"),
    (["hardware", "H1000"], "H1000"),
    (["frobnicate"], "frobnicate"),
])
def test_usage_errors_exit_2_without_a_traceback(cli_run, args, needle):
    res = cli_run(*args)   # cli_run fails the test on any traceback or uncaught exception
    assert res.exit_code == 2, res.output
    assert needle in res.stderr
    assert res.stdout == ""


def test_empty_and_binary_files_exit_2(cli_run, tmp_path):
    empty = tmp_path / "empty.json"
    empty.write_text("")
    binary = tmp_path / "blob.csv"
    binary.write_bytes(b"\x00\x01\x02" * 100)
    for path in (empty, binary):
        res = cli_run("check", str(path))
        assert res.exit_code == 2, res.output
        assert path.name in res.stderr


def test_json_scalar_document_exits_2(cli_run, tmp_path):
    path = tmp_path / "scalar.json"
    path.write_text("42")
    res = cli_run("check", str(path))
    assert res.exit_code == 2
    assert "scalar.json" in res.stderr


def test_output_file_and_refusal_to_overwrite_an_input(cli_run, tmp_path):
    out = tmp_path / "report.json"
    res = cli_run("check", PUBLISHED, "--format", "json", "-o", str(out))
    assert res.exit_code == 0, res.output
    assert json.loads(out.read_text())["summary"]["claims"] == 2
    src = tmp_path / "in.json"
    src.write_text((DATA / "gpt3_175b.json").read_text())
    before = src.read_text()
    res = cli_run("check", str(src), "-o", str(src))
    assert res.exit_code == 2
    assert src.read_text() == before


def test_tolerance_override_changes_the_verdict(cli_run):
    # 3 × 6ND is a C001 warning at the default 2:4; with C001=3.5:5 it is within the ok factor.
    assert cli_run("check", WARN_ONLY, "--fail-on", "warn").exit_code == 1
    assert cli_run("check", WARN_ONLY, "--fail-on", "warn", "--tolerance", "C001=3.5:5").exit_code == 0
    # And tighter: with C001=1.1:1.4 it is an error.
    assert cli_run("check", WARN_ONLY, "--tolerance", "C001=1.1:1.4").exit_code == 1


def test_the_goodput_side_of_a_tolerance_can_be_overridden(cli_run, tmp_path):
    # 6 x 7e9 x 1e12 = 4.2e22 FLOP on 64 H100 (989.4 TFLOP/s dense BF16) for 30.71 days is an MFU of
    # 4.2e22 / (64 x 30.71 x 86,400 x 989.4e12) = 25.0 %; a stated 45 % is 1.8x: a warning by the goodput side
    # (1.5:3), which --tolerance C003=... does not touch; C003-goodput=1.1:1.5 makes it an error.
    path = tmp_path / "gp.json"
    path.write_text(json.dumps({"id": "m", "params": 7e9, "tokens": 1e12, "hardware": "H100", "chips": 64,
                                "wall_clock_days": 30.71, "mfu": 0.45}))
    assert cli_run("check", str(path), "--fail-on", "warn").exit_code == 1
    assert cli_run("check", str(path)).exit_code == 0
    assert cli_run("check", str(path), "--tolerance", "C003-goodput=1.1:1.5").exit_code == 1
    bad = cli_run("check", str(path), "--tolerance", "C001-goodput=1.1:1.5")
    assert bad.exit_code == 2 and "C001 has no goodput side" in bad.output


def test_bytes_per_param_override(cli_run, tmp_path):
    # 70B on 14 H100-80GB: 16 B/param needs ceil(1.12e12 / 8e10) = 14 (fits); 18 B/param needs
    # ceil(1.26e12 / 8e10) = 16 (does not fit; the 140 GB of weights do: an M001 info).
    path = tmp_path / "mem.json"
    path.write_text(json.dumps({"id": "m", "params": "70B", "hardware": "H100", "chips": 14}))
    ok = claim_by_id(cli_run("check", str(path), "-f", "json").json(), "m")
    assert one_finding(ok, "M001")["severity"] == "ok"
    tight = claim_by_id(cli_run("check", str(path), "-f", "json", "--bytes-per-param", "18").json(), "m")
    m001 = one_finding(tight, "M001")
    assert m001["severity"] == "info"
    assert m001["expected"] == 16


# ------------------------------------------------------------------------------------------ JSON contract


FINDING_KEYS = {"rule", "severity", "quantity", "claimed", "expected", "ratio", "message", "formula"}


def test_check_json_shape(cli_run):
    res = cli_run("check", PUBLISHED, DOCTORED, BAD_FIELDS, "--format", "json", "--fail-on", "never")
    assert res.exit_code == 0
    doc = res.json()
    assert set(doc) >= {"claims", "summary"}
    assert len(doc["claims"]) == 7
    for claim in doc["claims"]:
        assert {"id", "name", "status", "quantities", "findings"} <= set(claim)
        assert claim["status"] in {"pass", "warn", "fail", "invalid", "unchecked"}
        for name, q in claim["quantities"].items():
            assert {"value", "source"} <= set(q), name
            assert q["source"] in {"claimed", "derived", "catalog"}, (name, q["source"])
            assert isinstance(q["value"], (int, float)), (name, q)
            if q["source"] == "claimed":
                assert "text" in q
        for f in claim["findings"]:
            assert FINDING_KEYS <= set(f), set(f)
            assert f["severity"] in {"ok", "info", "warning", "error"}
            assert isinstance(f["message"], str) and f["message"]
            assert isinstance(f["formula"], str) and f["formula"]
    s = doc["summary"]
    assert s["claims"] == 7
    # published.json: 2 pass; doctored.json: 3 fail; bad_fields.json: 1 invalid + "fine" (7B on 1T: nothing to
    # check) unchecked.
    assert s["status"] == {"pass": 2, "warn": 0, "fail": 3, "invalid": 1, "unchecked": 1}
    assert sum(s["status"].values()) == 7


def test_check_json_is_strict_json(cli_run):
    # NaN / Infinity are not JSON; a cell written "Infinity" must not leak into the output as a bare token.
    res = cli_run("check", "-", "--format", "json", "--fail-on", "never",
                  input=b'{"id": "inf", "params": Infinity, "tokens": NaN, "compute_flops": "3640 PF-days"}')
    assert res.exit_code == 0, res.output
    json.loads(res.stdout, parse_constant=lambda c: pytest.fail(f"non-standard JSON constant {c}"))
    claim = res.json()["claims"][0]
    assert claim["status"] == "invalid"
    assert claim["quantities"]["compute_flops"]["value"] == pytest.approx(3640 * PF_DAY)


def test_estimate_json_shape(cli_run):
    res = cli_run("estimate", "--params", "70B", "--tokens", "1.4T", "--hardware", "H100", "--chips", "4096",
                  "--mfu", "0.4", "-f", "json")
    assert res.exit_code == 0, res.output
    doc = res.json()
    assert "quantities" in doc
    q = doc["quantities"]
    assert q["compute_flops"]["value"] == pytest.approx(6 * 70e9 * 1.4e12, rel=1e-9)
    for name, rec in q.items():
        assert rec["source"] in {"claimed", "derived", "catalog"}
    for f in doc.get("findings", []):
        assert FINDING_KEYS <= set(f)


# ---------------------------------------------------------------------------------------- other formats


def test_csv_output_has_one_row_per_claim(cli_run):
    import csv
    import io

    res = cli_run("check", PUBLISHED, DOCTORED, "--format", "csv", "--fail-on", "never")
    rows = list(csv.DictReader(io.StringIO(res.stdout)))
    assert [r["id"] for r in rows] == ["gpt3-175b", "llama-65b", "gpt3-compute-x1000",
                                       "llama-65b-gpu-days-as-hours", "llama-65b-mfu-146"]
    assert [r["status"] for r in rows] == ["pass", "pass", "fail", "fail", "fail"]
    assert float(rows[0]["compute_flops"]) == pytest.approx(3640 * PF_DAY)


def test_findings_file(cli_run, tmp_path):
    import pandas as pd

    out = tmp_path / "findings.parquet"
    res = cli_run("check", DOCTORED, "--findings", str(out), "-o", str(tmp_path / "r.txt"))
    assert res.exit_code == 1
    frame = pd.read_parquet(out)
    errors = frame[frame["severity"] == "error"]
    assert {"C001", "C002", "U001"} <= set(errors["rule"])
    row = errors[(errors["rule"] == "C001") & (errors["claim_id"] == "gpt3-compute-x1000")].iloc[0]
    assert row["ratio"] == pytest.approx(3_640_000 * PF_DAY / (6 * 175e9 * 300e9), rel=1e-9)


def test_parquet_output_refuses_a_terminal_but_writes_a_file(cli_run, tmp_path):
    import pandas as pd

    out = tmp_path / "claims.parquet"
    res = cli_run("check", PUBLISHED, "--format", "parquet", "-o", str(out))
    assert res.exit_code == 0, res.output
    frame = pd.read_parquet(out)
    assert list(frame["id"]) == ["gpt3-175b", "llama-65b"]


def test_html_output_names_every_claim(cli_run, tmp_path):
    out = tmp_path / "r.html"
    res = cli_run("check", PUBLISHED, DOCTORED, "--format", "html", "-o", str(out), "--fail-on", "never")
    assert res.exit_code == 0, res.output
    html = out.read_text()
    assert html.lstrip().lower().startswith("<!doctype html")
    for claim_id in ("gpt3-175b", "llama-65b", "gpt3-compute-x1000", "llama-65b-gpu-days-as-hours"):
        assert claim_id in html


# -------------------------------------------------------------------------------------------- helpers


def test_hardware_reads_a_list_and_a_count_as_check_does(cli_run):
    res = cli_run("hardware", "256x A100 + 256x H100")
    assert res.exit_code == 0
    assert [line.split()[0] for line in res.stdout.splitlines()[1:3]] == ["a100-sxm4-80gb", "h100-sxm5-80gb"]
    assert "read as 256 × NVIDIA A100 SXM4 80GB + 256 × NVIDIA H100 SXM5 80GB: check uses their chip-weighted" \
        in res.stdout
    res = cli_run("hardware", "A100, H1000")
    assert res.exit_code == 2 and "unknown accelerator 'H1000' (in 'A100, H1000')" in res.stderr


def test_hardware_reads_a_tpu_slice_as_check_does(cli_run):
    """GPT-J's model card: "TPU v3-256 pod", 256 TensorCores = 128 chips of 2 (Google Cloud TPU docs); check read
    it (H003) while the hardware command said "unknown accelerator" (field test, session 23)."""
    res = cli_run("hardware", "TPU v3-256")
    assert res.exit_code == 0 and res.stdout.splitlines()[1].split()[0] == "tpu-v3"
    assert "'TPU v3-256' is read as 128 × Google TPU v3 (256 TensorCores, 2 per chip)" in res.stdout
    res = cli_run("hardware", "2048 TPU v3 cores")  # GShard's words: 1,024 chips
    assert res.exit_code == 0 and "read as 1,024 × Google TPU v3 (2,048 TensorCores, 2 per chip)" in res.stdout


def test_hardware_and_rules_commands(cli_run):
    res = cli_run("hardware")
    assert res.exit_code == 0 and "h100-sxm5-80gb" in res.stdout
    res = cli_run("hardware", "H100")
    assert res.exit_code == 0
    # H100 whitepaper v1.04 Table 1, dense: 989.4 TFLOP/s bf16 and fp16, 1,978.9 fp8; 80 GB HBM3.
    header = next(line for line in res.stdout.splitlines() if line.startswith("id "))
    assert header.split()[2:5] == ["bf16", "fp16", "fp8"]
    row = next(line for line in res.stdout.splitlines() if line.startswith("h100-sxm5-80gb "))
    assert re.search(r"\s989\.4\s+989\.4\s+1978\.9\s+80\s", row), row
    res = cli_run("rules")
    assert res.exit_code == 0
    for code, rule in RULES.items():  # one line per rule, opening with its code and name
        assert len(re.findall(rf"^{code}\s+{re.escape(rule.name)}\s", res.stdout, re.M)) == 1, code
    res = cli_run("rules", "C001")
    assert res.exit_code == 0
    # The rule's formula (Kaplan et al. 2020: C = 6·N·D) on a line of its own, and its reference.
    assert "C = 6 · N · D" in [line.strip() for line in res.stdout.splitlines()], res.stdout
    assert "Kaplan et al. 2020" in res.stdout
    res = cli_run("rules", "c002", "--format", "json")
    [rule] = res.json()
    # chip-hours = chips × 24 × days (README): 24 hours per day of every chip.
    assert rule["code"] == "C002" and rule["formula"] == "chip_hours = chips · 24 · days"


def test_fail_on_unchecked(cli_run, tmp_path):
    path = tmp_path / "nothing.json"
    path.write_text('[{"id": "only-size", "params": "7B"}]')
    assert cli_run("check", str(path)).exit_code == 0
    assert cli_run("check", str(path), "--fail-on", "fail,unchecked").exit_code == 1
    assert cli_run("check", str(path), "--fail-on", "unchecked").exit_code == 1
    assert cli_run("check", PUBLISHED, "--fail-on", "fail,unchecked").exit_code == 0


def test_version_and_help(cli_run):
    res = cli_run("--version")
    # The version is the installed distribution's (its metadata, not the code's own string).
    assert res.exit_code == 0
    assert res.stdout.strip() == f"train-audit, version {importlib.metadata.version('train-audit')}"
    res = cli_run("check", "--help")
    assert res.exit_code == 0 and "--fail-on" in res.stdout
    assert re.search(r"^\s+--fail-on LEVEL\[,unchecked\]", res.stdout, re.M), res.stdout


def test_python_dash_m_audit_help():
    proc = subprocess.run([sys.executable, "-m", "audit", "--help"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    # The commands listed are exactly these, each on its own line of the Commands section.
    section = proc.stdout[proc.stdout.index("Commands:"):].splitlines()[1:]
    listed = [line.split()[0] for line in section if line.startswith("  ") and line.strip()]
    assert listed == ["check", "diff", "estimate", "explain", "hardware", "rules", "schema"]
    assert "Traceback" not in proc.stderr


def test_python_dash_m_audit_reads_stdin():
    proc = subprocess.run([sys.executable, "-m", "audit", "check", "-", "--format", "json"],
                          input=(DATA / "gpt3_175b.json").read_bytes(), capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["claims"][0]["id"] == "gpt3-175b"
    assert doc["claims"][0]["input"]["file"] == "<stdin>"


def test_text_output_cannot_be_steered_by_control_characters(cli_run, tmp_path):
    # A claim file is untrusted: an ESC in an id must not reach the terminal as an ANSI sequence, and a newline
    # in a name must not forge an extra line of output.
    path = tmp_path / "evil.json"
    path.write_text(json.dumps({"id": "x\u001b[2Jy", "name": "ok\nerror   C001 forged line",
                                "params": "7B", "tokens": "1T", "compute_flops": "1e30"}))
    res = cli_run("check", str(path))
    assert res.exit_code == 1
    assert "\x1b" not in res.stdout
    assert not any(line.startswith("error   C001 forged") for line in res.stdout.splitlines())


@pytest.mark.parametrize("band, read", [("0.15:0.65", (0.15, 0.65)), ("15:65", (0.15, 0.65)),
                                        ("15%:65%", (0.15, 0.65)), ("0.5%:65%", (0.005, 0.65))])
def test_a_band_is_read_on_one_scale(band, read):
    from audit.cli import _config

    assert _config(band=band).band == pytest.approx(read)


def test_a_report_written_to_a_file_prints_its_verdict_on_stderr(cli_run, tmp_path):
    out = tmp_path / "r.json"
    res = cli_run("check", DOCTORED, "-f", "json", "-o", str(out))
    # doctored.json: three claims, each doctored to fail (tests/data/doctored.json).
    assert res.stdout == ""
    assert res.stderr.strip() == (f"3 claims: 0 pass, 0 warn, 3 fail, 0 invalid, 0 unchecked; report written to {out}")


def test_estimate_refuses_a_percentage_written_as_a_fraction_before_computing(cli_run):
    res = cli_run("estimate", "--mfu", "40", "--params", "70B", "--tokens", "1.4T")
    assert res.exit_code == 2 and res.stdout == ""
    assert "--mfu 40: a fraction of 1 is expected; 40 looks like a percentage: write 0.4 or 40%" in res.stderr


def test_estimate_gives_chip_days_beside_chip_hours_and_sources_on_request(cli_run):
    res = cli_run("estimate", "--chip-hours", "1,022,362", "--hardware", "A100 80GB")
    lines = res.stdout.splitlines()
    i = next(k for k, line in enumerate(lines) if line.startswith("Chip-hours"))
    # 1,022,362 / 24 = 42,598.4 chip-days.
    assert "42,598 chip-days" in lines[i + 1]
    assert "https://" not in res.stdout
    assert "https://" in cli_run("estimate", "--chip-hours", "1,022,362", "--hardware", "A100 80GB", "-v").stdout


@pytest.mark.parametrize("fmt", ["json", "text", "github"])
def test_reports_on_standard_output_are_utf8_whatever_its_encoding(fmt, tmp_path):
    """A CI runner whose standard output is cp1252 (Windows) or Latin-1: the JSON and text reports were lost
    ("cannot write the report: standard output is closed", exit 2: the encoding error was taken for a closed
    stream) and GitHub annotations came out in cp1252. Written as UTF-8, as files are; "≤" is a bound's mark."""
    path = tmp_path / "arctic.csv"
    path.write_text("id,params,active_params,tokens,hardware,chip_hours\n"
                    "arctic,480B,17B,3.5T,H100,less than 3K GPU weeks\n", encoding="utf-8")
    env = {**__import__("os").environ, "PYTHONIOENCODING": "cp1252"}
    proc = subprocess.run([sys.executable, "-m", "audit", "check", str(path), "-f", fmt], capture_output=True,
                          timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout.decode("utf-8")  # raises if it is not UTF-8
    assert "arctic" in text and ("≥" in text or fmt == "github")


def test_the_output_files_extension_gives_the_format_when_none_is_given(tmp_path, cli_run):
    # "-o audit.json" wrote the text report into a file named .json; an explicit --format still decides.
    out = tmp_path / "audit.json"
    res = cli_run("check", str(DATA / "gpt3_175b.json"), "-o", str(out))
    assert res.exit_code in (0, 1), res.stderr
    assert json.loads(out.read_text(encoding="utf-8"))["claims"]
    res = cli_run("check", str(DATA / "gpt3_175b.json"), "-f", "text", "-o", str(tmp_path / "a.txt"))
    assert res.exit_code in (0, 1) and (tmp_path / "a.txt").read_text(encoding="utf-8").startswith("status")


@pytest.mark.parametrize("epoch", ["abc", "-5", "99999999999999"])
def test_a_malformed_source_date_epoch_stops_the_html_report(epoch, tmp_path, monkeypatch, cli_run):
    # reproducible-builds.org: a malformed SOURCE_DATE_EPOCH should stop the build. "abc" and "-5" were ignored
    # (the current time, a report differing run to run unnoticed); 99999999999999 was an internal error.
    monkeypatch.setenv("SOURCE_DATE_EPOCH", epoch)
    out = tmp_path / "r.html"
    res = cli_run("check", str(DATA / "gpt3_175b.json"), "-o", str(out))
    assert res.exit_code == 2 and "SOURCE_DATE_EPOCH" in res.stderr and not out.exists()
