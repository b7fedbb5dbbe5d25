"""``--catalog FILE`` (issue 13): your own accelerators, validated against schemas/catalog.schema.json, added to
the bundled catalog or overriding its figures; errors name the file, the row and the field."""

from __future__ import annotations

import json

import pytest

from audit.api import check_records, estimate, estimate_json
from audit.catalog_file import CatalogFileError, load_catalog_file


def write(tmp_path, name: str, text: str):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_a_new_accelerator_is_added_and_found_by_its_aliases(tmp_path):
    path = write(tmp_path, "mine.csv", "id,name,aliases,memory_gb,bf16_tflops,tdp_w\n"
                                       "acme-x1,ACME X1,X1;ACME-X1,96,800,600\n")
    catalog = load_catalog_file(path)
    x1 = catalog.lookup("X1")
    assert x1 is not None and x1.peaks_tflops == {"bf16": 800.0} and x1.memory_gb == 96 and x1.tdp_w == 600
    assert catalog.lookup("H100 SXM") is not None  # the bundled rows stay
    # 1e24 FLOP on 1,000 X1 at MFU 0.5: 1e24 / (3600 x 800e12 x 0.5) = 694,444 chip-hours.
    q = estimate_json(estimate({"compute_flops": "1e24", "hardware": "X1", "chips": 1000, "mfu": 0.5},
                               catalog=catalog))["quantities"]
    assert q["chip_hours"]["value"] == pytest.approx(1e24 / (3600 * 800e12 * 0.5))


def test_a_row_overrides_the_bundled_figures_it_gives(tmp_path):
    path = write(tmp_path, "json.json", json.dumps({"accelerators": [
        {"id": "h100-sxm5-80gb", "price_per_chip_hour": 1.85, "avg_power_w": 520, "source_price": "our 2025 rate"}]}))
    catalog = load_catalog_file(path)
    h100 = catalog.lookup("H100 SXM")
    assert h100.peaks_tflops["bf16"] == 989.4  # untouched
    # The negotiated price checks a stated cost: 100,000 h x USD 1.85 = USD 185,000 (E003 ok); USD 1.85M fails.
    ok = check_records([{"id": "ok", "hardware": "H100 SXM", "chip_hours": 100000, "cost_usd": "$185,000"}],
                       catalog=catalog)
    f = ok.findings[ok.findings["rule"] == "E003"]
    assert list(f["severity"].astype(str)) == ["ok"] and "our 2025 rate" in str(ok.how.at[0, "price_per_chip_hour"])
    bad = check_records([{"id": "bad", "hardware": "H100 SXM", "chip_hours": 100000, "cost_usd": "$1.85M"}],
                        catalog=catalog)
    assert str(bad.status.iat[0]) == "fail"
    # The measured power checks a stated energy: 100,000 h x 520 W = 52 MWh.
    e = check_records([{"id": "e", "hardware": "H100 SXM", "chip_hours": 100000, "energy_mwh": "52 MWh"}],
                      catalog=catalog)
    assert list(e.findings[e.findings["rule"] == "E001"]["severity"].astype(str)) == ["ok"]


def test_check_frame_uses_your_catalogs_price_as_check_records_does(tmp_path):
    """The DataFrame entry point took the catalog's peaks but not its price or power: 100,000 h x USD 1.85 = USD
    185,000 was checked against a price derived from the cost itself (a helper's field test of the API)."""
    import pandas as pd

    from audit.api import check_frame

    path = write(tmp_path, "json.json", json.dumps({"accelerators": [
        {"id": "h100-sxm5-80gb", "price_per_chip_hour": 1.85, "source_price": "our 2025 rate"}]}))
    catalog = load_catalog_file(path)
    claim = {"id": "bad", "hardware": "H100 SXM", "chip_hours": 100000, "cost_usd": "$1.85M"}
    framed = check_frame(pd.DataFrame([claim]), catalog=catalog)
    assert "our 2025 rate" in str(framed.how.at[0, "price_per_chip_hour"])
    assert str(framed.status.iat[0]) == str(check_records([claim], catalog=catalog).status.iat[0]) == "fail"


@pytest.mark.parametrize("text, words", [
    ("id,name,bf16_tflops\nacme,ACME,fast\n", "row 1 (id 'acme'): field 'bf16_tflops'"),
    ("id,name,bf16_tflops\nacme,ACME,-5\n", "row 1 (id 'acme'): field 'bf16_tflops'"),
    ("id,name,bf16_tflops\nacme,ACME,100\nbad id,B,100\n", "row 2 (id 'bad id'): field 'id'"),
    ("id,name,colour\nacme,ACME,red\n", "field 'colour': unknown"),
    ("name,bf16_tflops\nACME,100\n", "row 1: field 'id'"),
    ("id,bf16_tflops\nacme-new,100\n", "field 'name': required"),
    ("id,name\nacme-new,ACME\n", "needs at least one figure"),
    ("id,name,aliases,bf16_tflops\nacme,ACME,H100,100\n", "field 'aliases'"),
])
def test_bad_rows_are_named_with_file_row_and_field(tmp_path, text, words):
    path = write(tmp_path, "bad.csv", text)
    with pytest.raises(CatalogFileError) as err:
        load_catalog_file(path)
    assert str(path) in str(err.value) and words in str(err.value), str(err.value)


def test_the_cli_takes_catalog_for_check_estimate_and_hardware(cli_run, tmp_path):
    path = write(tmp_path, "mine.csv", "id,name,memory_gb,bf16_tflops\nacme-x1,ACME X1,96,800\n")
    res = cli_run("hardware", "ACME X1", "--catalog", str(path))
    assert res.exit_code == 0 and "acme-x1" in res.stdout, res.output
    res = cli_run("estimate", "--compute-flops", "1e24", "--hardware", "ACME X1", "--chips", "1000", "--mfu", "0.5",
                  "--catalog", str(path), "--format", "json")
    assert res.exit_code == 0, res.output
    assert res.json()["quantities"]["chip_hours"]["value"] == pytest.approx(1e24 / (3600 * 800e12 * 0.5))
    claims = write(tmp_path, "claims.json", json.dumps([{"id": "a", "hardware": "ACME X1", "chips": 1000,
                                                         "wall_clock_days": 10, "compute_flops": 3e23}]))
    res = cli_run("check", str(claims), "--catalog", str(path), "--format", "json")
    assert res.exit_code == 0, res.output
    assert res.json()["claims"][0]["hardware"]["accelerator"] == "acme-x1"


def test_the_cli_refuses_a_bad_catalog_with_exit_2(cli_run, tmp_path):
    path = write(tmp_path, "bad.csv", "id,name,bf16_tflops\nacme,ACME,fast\n")
    for args in (("hardware",), ("estimate", "--params", "7B"), ("check", "--format", "json")):
        res = cli_run(*args, "--catalog", str(path))
        assert res.exit_code == 2 and "field 'bf16_tflops'" in res.output and "Traceback" not in res.output, res.output
    res = cli_run("hardware", "--catalog", str(tmp_path / "missing.csv"))
    assert res.exit_code == 2 and "no such file" in res.output


def test_every_format_renders_a_claim_on_your_own_accelerator(cli_run, tmp_path):
    path = write(tmp_path, "mine.csv", "id,name,memory_gb,bf16_tflops\nacme-x1,ACME X1,96,800\n")
    claims = write(tmp_path, "claims.json", json.dumps([{"id": "a", "hardware": "ACME X1", "chips": 1000,
                                                         "wall_clock_days": 10, "compute_flops": 3e23}]))
    for fmt in ("html", "markdown", "text", "json"):
        out = tmp_path / f"out.{fmt}"
        res = cli_run("check", str(claims), "--catalog", str(path), "--format", fmt, "-o", str(out))
        assert res.exit_code == 0, (fmt, res.output)
        if fmt != "markdown":  # the Markdown table lists problem claims' findings only
            assert "ACME X1" in out.read_text(encoding="utf-8"), fmt
