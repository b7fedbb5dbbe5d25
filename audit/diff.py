"""What changed between two audits of two versions of a claims file or database (``train-audit diff OLD NEW``).

Claims are matched by a key: their ``id`` when every claim of both versions gives one, else their ``name`` when
every claim names one (Epoch AI's database has no ids: a model's row number moves when rows are added, its name
does not), else their row number; ``key`` asks for one. A key given twice in a version is told apart by its
occurrence (``GPT-3``, ``GPT-3 (2)``). The difference lists the claims added and removed, and for each matched
claim the figures that changed (a value that differs, shown as written in each version: ``1.4T`` -> ``1.5T``; a
figure rewritten without changing its value, ``1.4T`` -> ``1400B``, is not a change) and a verdict that changed
(its status, or its warnings and errors, by rule and quantity); a changed verdict lists the findings worse than
ok (infos included) that appeared or went away.

The result is a plain JSON-ready record (:func:`diff_results`), rendered as text by :func:`render_text`; the
exit status (:func:`exit_status`) is 1 when the new version brings a claim to the fail level that was not there
before (an added claim, or a matched claim whose status newly reaches it), as ``check`` does for one version.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from audit.findings import STATUSES, fail_levels
from audit.quantities import INPUT_QUANTITIES, TEXT_FIELDS
from audit.records import findings_by_row, summary
from audit.sheets import split_sheet
from audit.result import AuditResult
from audit.rounding import round_array, round_value

__all__ = ["KEYS", "diff_results", "exit_status", "render_text"]

#: How claims may be matched: ``auto`` (id, else name, else row), or one of them.
KEYS: tuple[str, ...] = ("auto", "id", "name", "row")

#: Text fields compared (``id`` is compared only when it is not the key; ``precision`` as written).
_TEXT_COMPARED: tuple[str, ...] = tuple(f for f in TEXT_FIELDS if f not in ("precision",)) + ("precision_text",)


def _key_kind(old: AuditResult, new: AuditResult, key: str) -> str:
    if key not in KEYS:
        raise ValueError(f"unknown key {key!r} (one of {', '.join(KEYS)})")
    if key != "auto":
        return key
    infos = (old.claims.info, new.claims.info)
    if all(bool(i["id_given"].all()) for i in infos):
        return "id"
    if all(bool(i["name"].notna().all()) and bool((i["name"].astype(str).str.strip() != "").all()) for i in infos):
        return "name"
    return "row"


def _keys(result: AuditResult, kind: str) -> pd.Index:
    """One key per claim, unique within the version (a repeated key gets its occurrence: ``GPT-3 (2)``)."""
    info = result.claims.info
    if kind == "row":
        base = "#" + info["row"].astype(int).astype(str)
        # Every sheet of a workbook (--sheet all): a row is matched in its own sheet ("[cluster-b]#2").
        sheets = pd.Series([split_sheet(f)[1] for f in info["file"].tolist()], index=info.index, dtype=object)
        if sheets.notna().any():
            base = ("[" + sheets.fillna("") + "]").where(sheets.notna(), "") + base
    else:
        base = info[kind].where(info[kind].notna(), info["id"]).astype(str)
    nth = base.groupby(base).cumcount().to_numpy()
    text = base.to_numpy(dtype=object).copy()
    again = nth > 0
    text[again] = base[again] + " (" + pd.Series(nth[again] + 1).astype(str).to_numpy() + ")"
    return pd.Index(text, dtype=object)


def _num(x: float) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else round_value(float(x))


def _figures(old: AuditResult, new: AuditResult, io: np.ndarray, jn: np.ndarray, kind: str
             ) -> dict[int, list[dict[str, Any]]]:
    """For each matched pair (by position in ``io``/``jn``), the figures whose value differs."""
    out: dict[int, list[dict[str, Any]]] = {}
    for name in INPUT_QUANTITIES:
        ov = old.claims.values[name].to_numpy(dtype=float)[io]
        nv = new.claims.values[name].to_numpy(dtype=float)[jn]
        ot = old.claims.text[name].to_numpy(dtype=object)[io]
        nt = new.claims.text[name].to_numpy(dtype=object)[jn]
        # Equal to the 12 significant digits every output is rounded to: a file written back by another program
        # ("9.618950880000001e+21" -> "9.61895088e+21") has not changed its figures.
        ov_r, nv_r = round_array(ov), round_array(nv)
        same = (ov_r == nv_r) | (np.isnan(ov) & np.isnan(nv) & (pd.isna(ot) == pd.isna(nt)))
        # An invalid figure (NaN) stays a change when its text changed ("12OB" -> "12OOB").
        same &= ~(np.isnan(ov) & np.isnan(nv) & pd.notna(ot) & pd.notna(nt) & (ot != nt))
        for k in np.flatnonzero(~same).tolist():
            out.setdefault(k, []).append({"field": name, "old": ot[k], "new": nt[k],
                                          "old_value": _num(ov[k]), "new_value": _num(nv[k])})
    for name in _TEXT_COMPARED:
        if name == kind:
            continue
        ot = old.claims.info[name].to_numpy(dtype=object)[io]
        nt = new.claims.info[name].to_numpy(dtype=object)[jn]
        oa, na = pd.isna(ot), pd.isna(nt)
        differs = (oa != na) | (~oa & ~na & (ot.astype(str) != nt.astype(str)))
        if name == "id":  # an id made up from the file and row ("v1.csv#9") is not a figure of the claim
            differs &= (old.claims.info["id_given"].to_numpy(dtype=bool)[io]
                        & new.claims.info["id_given"].to_numpy(dtype=bool)[jn])
        for k in np.flatnonzero(differs).tolist():
            shown = "precision" if name == "precision_text" else name
            out.setdefault(k, []).append({"field": shown, "old": ot[k], "new": nt[k]})
    return out


def _signatures(result: AuditResult) -> np.ndarray:
    """Per claim, its warnings and errors as one text (rule, severity and quantity of each, sorted)."""
    f = result.findings
    bad = f[f["severity"].astype(str).isin(["warning", "error"])]
    keys = bad["rule"].astype(str) + " " + bad["severity"].astype(str) + " " + bad["quantity"].astype(str)
    joined = keys.groupby(bad["row"].astype(int).to_numpy()).agg(lambda s: "\n".join(sorted(set(s))))
    return joined.reindex(np.arange(len(result))).fillna("").to_numpy(dtype=object)


def _finding_records(result: AuditResult, rows: list[int]) -> dict[int, dict[tuple[str, str, str], dict[str, str]]]:
    by_row = findings_by_row(result, np.asarray(rows, dtype=int), worse_than_ok=True)
    return {row: {(f.rule, f.severity, f.quantity): {"rule": f.rule, "severity": f.severity, "quantity": f.quantity,
                                                    "message": f.message} for f in fs}
            for row, fs in by_row.items()}


def _brief(result: AuditResult, rows: np.ndarray, keys: pd.Index) -> list[dict[str, Any]]:
    info = result.claims.info
    return [{"key": str(keys[r]), "id": str(info.at[r, "id"]),
             "name": None if pd.isna(info.at[r, "name"]) else str(info.at[r, "name"]),
             "status": str(result.status.iat[r])} for r in rows.tolist()]


def _version(result: AuditResult) -> dict[str, Any]:
    s = summary(result)
    files = list(dict.fromkeys(str(f) for f in result.claims.info["file"].tolist()))
    return {"files": files, "claims": s["claims"], "status": s["status"]}


def diff_results(old: AuditResult, new: AuditResult, key: str = "auto") -> dict[str, Any]:
    """The difference between two audits, as a JSON-ready record (see the module's documentation)."""
    kind = _key_kind(old, new, key)
    ok, nk = _keys(old, kind), _keys(new, kind)
    in_old = nk.isin(ok)
    jn = np.flatnonzero(in_old)  # matched, in the new version's order
    io = ok.get_indexer(nk[jn])
    added = np.flatnonzero(~in_old)
    removed = np.flatnonzero(~ok.isin(nk))

    figures = _figures(old, new, io, jn, kind)
    o_status = old.status.to_numpy(dtype=object)[io]
    n_status = new.status.to_numpy(dtype=object)[jn]
    o_sig, n_sig = _signatures(old)[io], _signatures(new)[jn]
    verdict = (o_status != n_status) | (o_sig != n_sig)
    touched = sorted(set(figures) | set(np.flatnonzero(verdict).tolist()))
    o_rec = _finding_records(old, [int(io[k]) for k in touched if verdict[k]])
    n_rec = _finding_records(new, [int(jn[k]) for k in touched if verdict[k]])

    changed: list[dict[str, Any]] = []
    for k in touched:  # the claims that changed: few, and each needs its own words
        i, j = int(io[k]), int(jn[k])
        entry: dict[str, Any] = {"key": str(nk[j]), "id": str(new.claims.info.at[j, "id"]),
                                 "name": None if pd.isna(new.claims.info.at[j, "name"])
                                 else str(new.claims.info.at[j, "name"]),
                                 "figures": figures.get(k, []),
                                 "status": {"old": str(o_status[k]), "new": str(n_status[k])}}
        if verdict[k]:
            before, after = o_rec.get(i, {}), n_rec.get(j, {})
            entry["findings"] = {"appeared": [after[s] for s in sorted(set(after) - set(before))],
                                 "resolved": [before[s] for s in sorted(set(before) - set(after))]}
        changed.append(entry)
    return {
        "matched_by": kind,
        "old": _version(old),
        "new": _version(new),
        "summary": {"added": int(len(added)), "removed": int(len(removed)), "matched": int(len(jn)),
                    "figures_changed": int(len(figures)), "verdicts_changed": int(verdict.sum()),
                    "unchanged": int(len(jn) - len(touched))},
        "added": _brief(new, added, nk),
        "removed": _brief(old, removed, ok),
        "changed": changed,
    }


def exit_status(record: dict[str, Any], fail_on: str = "fail") -> int:
    """1 when the new version brings a claim to the fail level that was not there before, else 0."""
    levels = fail_levels(fail_on)
    if any(c["status"] in levels for c in record["added"]):
        return 1
    return 1 if any(c["status"]["new"] in levels and c["status"]["old"] not in levels
                    for c in record["changed"]) else 0


def _shown(v: Any) -> str:
    return "(none)" if v is None else str(v)


def _claims(k: int) -> str:
    return f"{k} claim" if k == 1 else f"{k} claims"


def render_text(record: dict[str, Any]) -> str:
    """The difference as text: counts, then claims added, removed and changed."""
    s = record["summary"]
    o, n = record["old"], record["new"]
    lines = [f"old: {', '.join(o['files'])} ({_claims(o['claims'])})",
             f"new: {', '.join(n['files'])} ({_claims(n['claims'])})",
             f"matched by {record['matched_by']}: {_claims(s['matched'])} in both, {s['added']} added, "
             f"{s['removed']} removed, {s['figures_changed']} with changed figures, {s['verdicts_changed']} with "
             f"a changed verdict, {s['unchanged']} unchanged"]
    moves = [f"{st}: {o['status'].get(st, 0)} -> {n['status'].get(st, 0)}" for st in STATUSES
             if o["status"].get(st, 0) != n["status"].get(st, 0)]
    if moves:
        lines.append("status counts: " + ", ".join(moves))
    for title, items in (("added", record["added"]), ("removed", record["removed"])):
        if items:
            lines += ["", f"{title.capitalize()} ({len(items)}):"]
            lines += [f"  {'+' if title == 'added' else '-'} {c['key']}  [{c['status']}]" for c in items]
    if record["changed"]:
        lines += ["", f"Changed ({len(record['changed'])}):"]
    for c in record["changed"]:
        st = c["status"]
        head = f"  ~ {c['key']}"
        head += f"  [{st['old']} -> {st['new']}]" if st["old"] != st["new"] else f"  [{st['new']}]"
        lines.append(head)
        for fig in c["figures"]:
            lines.append(f"      {fig['field']}: {_shown(fig['old'])} -> {_shown(fig['new'])}")
        for f in c.get("findings", {}).get("appeared", []):
            lines.append(f"      + {f['rule']} {f['severity']}: {f['message']}")
        for f in c.get("findings", {}).get("resolved", []):
            lines.append(f"      - {f['rule']} {f['severity']} (gone): {f['message']}")
    return "\n".join(lines) + "\n"
