"""Real-world accuracy benchmark: the tool's verdicts against rows judged by hand (issue 9, "Measured, not asserted").

    python bench/accuracy.py                 # measure and print
    python bench/accuracy.py --json out.json # also write the figures as JSON (for a before/after comparison)
    python bench/accuracy.py --draw          # print the Epoch rows the seeded draws select, and exit

Labels live in ``bench/labels/`` (``epoch_sample.csv``, ``papers.csv``; how they were drawn and judged is in
``bench/labels/README.md``). The tool is run through its library API (``audit.api.check``) on Epoch AI's database,
the bundled corpus and ``published_claims.csv``, and each verdict is joined with its label by claim id (then by
input row, then by name, should ids change).

A row is *flagged* when its status is ``warn``, ``fail`` or ``invalid``; ``pass`` and ``unchecked`` are not
flags. Printed per set: labelled rows; precision of the flags (flagged rows judged inconsistent / flagged rows);
recall (inconsistent rows flagged / inconsistent rows); ``fail`` and ``invalid`` verdicts on rows judged
consistent; and every disagreement. For Epoch's file also: precision and recall on the random samples alone (the
flagged rows were added to the labels, which favours recall), all draws together (seeds 2026, 2027, 2028 and 2029,
320 rows) and each draw alone, recall on inconsistencies visible from the row's own columns,
precision without flags raised only by the hardware-catalog rules (H001-H003), and the share of rows naming
hardware that resolve to a catalog accelerator.

Nothing is asserted: the script prints the measured figures beside the issue's targets and exits 0.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
LABELS = ROOT / "bench" / "labels"
EPOCH = ROOT.parent / "shared" / "data" / "epoch" / "notable_ai_models.csv"
PUBLISHED = ROOT.parent / "shared" / "reference" / "published_claims.csv"

#: The seeded draws of the Epoch sample (see bench/labels/README.md): the first (seed 2026), then a second and a third,
#: each independent and from the eligible rows the earlier ones did not draw (seeds 2027, 2028 and 2029).
SEED = 2026
SAMPLE_SIZE = 80
SEED2 = 2027
SAMPLE_SIZE2 = 80
SEED3 = 2028
SAMPLE_SIZE3 = 80
SEED4 = 2029
SAMPLE_SIZE4 = 80
DRAWS = ((SEED, SAMPLE_SIZE), (SEED2, SAMPLE_SIZE2), (SEED3, SAMPLE_SIZE3),
         (SEED4, SAMPLE_SIZE4))

FLAGGED = {"warn", "fail", "invalid"}
NOT_FLAGGED = {"pass", "unchecked"}
FAIL_LEVEL = ("fail", "invalid")
CATALOG_RULES = {"H001", "H002", "H003"}

TARGETS = {
    "fails_on_consistent_papers": "0 fail on a consistent published run",
    "precision_epoch": ">= 90 % of warnings and errors on Epoch's file are real inconsistencies",
    "recall_epoch": ">= 80 % of the inconsistencies found by hand are flagged",
    "hardware_resolution": "every row naming a real accelerator resolves (100 %)",
}


def eligible_positions(path: Path = EPOCH) -> np.ndarray:
    """Positions (0-based data rows, in file order) of the rows with enough figures for a check.

    Eligible: parameters + compute + dataset size (the 6·N·D check), or compute + hardware + training time +
    hardware quantity (the chip-hours check).
    """
    df = pd.read_csv(path)

    def num(col: str) -> pd.Series:
        return pd.to_numeric(df[col], errors="coerce")

    six_nd = num("Parameters").notna() & num("Training compute (FLOP)").notna() \
        & num("Training dataset size (gradients)").notna()
    hardware = num("Training compute (FLOP)").notna() & df["Training hardware"].notna() \
        & num("Training time (hours)").notna() & num("Hardware quantity").notna()
    return np.flatnonzero((six_nd | hardware).to_numpy())


def draw_epoch_sample(path: Path = EPOCH, seed: int = SEED, size: int = SAMPLE_SIZE,
                      exclude: frozenset[int] | set[int] = frozenset()) -> list[int]:
    """Positions (0-based data rows) of a seeded random sample of the eligible rows, leaving out ``exclude``.

    ``numpy.random.default_rng(seed).choice(candidates, size, replace=False)`` where ``candidates`` are the eligible
    positions in file order without those in ``exclude``; returned sorted.
    """
    eligible = eligible_positions(path)
    candidates = np.array([i for i in eligible if int(i) not in exclude], dtype=eligible.dtype)
    rng = np.random.default_rng(seed)
    return sorted(int(i) for i in rng.choice(candidates, size=size, replace=False))


def draw_epoch_samples(path: Path = EPOCH) -> dict[int, list[int]]:
    """Every seeded draw, by seed: the first (seed 2026) from all eligible rows, each later one from the eligible rows
    no earlier draw selected (so the draws are disjoint, and the first is unchanged by the later ones)."""
    draws: dict[int, list[int]] = {}
    taken: set[int] = set()
    for seed, size in DRAWS:
        draws[seed] = draw_epoch_sample(path, seed, size, exclude=frozenset(taken))
        taken.update(draws[seed])
    return draws


def draw_seed(drawn: str) -> int | None:
    """The seed of the random draw a label's ``drawn`` names: ``random``/``random+…`` (first draw, seed 2026),
    ``random-2027``/``random-2027+…``; None for rows not drawn at random."""
    head = str(drawn).split("+", 1)[0].strip()
    if head == "random":
        return SEED
    if head.startswith("random-") and head[len("random-"):].isdigit():
        return int(head[len("random-"):])
    return None


def read_labels(name: str) -> pd.DataFrame:
    labels = pd.read_csv(LABELS / name, dtype={"id": str, "class": str, "reason": str}, keep_default_na=False)
    labels["consistent"] = labels["consistent"].astype(str).str.strip().str.lower().map({"true": True, "false": False})
    if labels["consistent"].isna().any():
        bad = labels.loc[labels["consistent"].isna(), "id"].tolist()
        raise SystemExit(f"{name}: 'consistent' must be true or false (rows {bad})")
    labels["row"] = pd.to_numeric(labels["row"], errors="coerce")
    return labels


@dataclass
class Verdicts:
    """The tool's verdict on every claim of one input, as plain columns."""

    frame: pd.DataFrame  # id, row, name, status, top (first non-ok finding), rules (non-ok rule codes)
    hardware: pd.DataFrame = field(default_factory=pd.DataFrame)


def run_tool(paths: list[str]) -> Verdicts:
    from audit.api import check
    from audit.records import to_json

    result = check(paths)
    info = result.claims.info
    records = to_json(result)["claims"]
    tops, rules = [], []
    for claim in records:
        bad = [f for f in claim.get("findings", []) if f.get("severity") not in ("ok", "info")]
        bad.sort(key=lambda f: 0 if f.get("severity") == "error" else 1)
        tops.append(f"{bad[0]['rule']} {bad[0]['message']}" if bad else "")
        rules.append(frozenset(f["rule"] for f in bad))
    frame = pd.DataFrame({
        "id": info["id"].astype(str).to_numpy(),
        "row": pd.to_numeric(info["row"], errors="coerce").to_numpy(),
        "name": info["name"].to_numpy(),
        "status": np.asarray(result.status, dtype=object),
        "top": tops,
        "rules": rules,
    })
    hardware = pd.DataFrame({
        "hardware_text": result.hardware["hardware_text"].to_numpy(),
        "accelerator": result.hardware["accelerator"].to_numpy(),
        "mix": result.hardware["mix"].to_numpy() if "mix" in result.hardware else None,
    })
    return Verdicts(frame, hardware)


def join(labels: pd.DataFrame, verdicts: pd.DataFrame) -> tuple[pd.DataFrame, list]:
    """Each label with its verdict: by id, else by input row, else by (unique) name."""
    by_id = {k: i for i, k in enumerate(verdicts["id"])}
    by_row = {int(r): i for i, r in enumerate(verdicts["row"]) if not pd.isna(r)}
    names = verdicts["name"].value_counts()
    by_name = {n: i for i, n in enumerate(verdicts["name"]) if names.get(n, 0) == 1}
    rows, missing = [], []
    for _, label in labels.iterrows():
        pos = by_id.get(label["id"])
        if pos is None and not pd.isna(label["row"]):
            pos = by_row.get(int(label["row"]))
        if pos is None:
            pos = by_name.get(label["model"])
        if pos is None:
            missing.append(label["id"])
            continue
        verdict = verdicts.iloc[pos]
        if str(verdict["name"]) != str(label["model"]):
            missing.append(f"{label['id']} (name differs: label {label['model']!r}, claim {verdict['name']!r})")
            continue
        rows.append({**label.to_dict(), "status": verdict["status"], "top": verdict["top"],
                     "rules": verdict["rules"], "pos": pos})
    return pd.DataFrame(rows), missing


def ratio(num: int, den: int) -> str:
    return f"{num}/{den} = {100 * num / den:.1f} %" if den else f"{num}/{den} = n/a"


def share(num: int, den: int) -> float | None:
    return num / den if den else None


def metrics(joined: pd.DataFrame) -> dict:
    status = joined["status"]
    flagged = status.isin(FLAGGED) | ~status.isin(FLAGGED | NOT_FLAGGED)
    bad = ~joined["consistent"]
    tp = int((flagged & bad).sum())
    return {
        "labelled": len(joined),
        "consistent": int((~bad).sum()),
        "inconsistent": int(bad.sum()),
        "flagged": int(flagged.sum()),
        "true_flags": tp,
        "precision": share(tp, int(flagged.sum())),
        "recall": share(tp, int(bad.sum())),
        "fail_on_consistent": int(((status == "fail") & ~bad).sum()),
        "invalid_on_consistent": int(((status == "invalid") & ~bad).sum()),
        "statuses": {str(k): int(v) for k, v in status.value_counts().items()},
        "unknown_statuses": sorted(set(status) - FLAGGED - NOT_FLAGGED),
    }


def print_set(title: str, joined: pd.DataFrame, m: dict, missing: list, extra: list[str]) -> None:
    print(f"\n== {title} ==")
    print(f"labelled rows joined     {m['labelled']}  ({m['consistent']} consistent, {m['inconsistent']} inconsistent)")
    if missing:
        more = " ..." if len(missing) > 8 else ""
        print(f"labels without a claim   {len(missing)}: {', '.join(map(str, missing[:8]))}{more}")
    print(f"verdicts                 {', '.join(f'{k} {v}' for k, v in sorted(m['statuses'].items()))}")
    if m["unknown_statuses"]:
        print(f"unknown statuses (counted as flags): {m['unknown_statuses']}")
    print(f"precision of flags       {ratio(m['true_flags'], m['flagged'])}  (flagged rows judged inconsistent)")
    print(f"recall                   {ratio(m['true_flags'], m['inconsistent'])}  (inconsistent rows flagged)")
    print(f"fail on consistent rows  {m['fail_on_consistent']}   "
          f"invalid on consistent rows {m['invalid_on_consistent']}")
    for line in extra:
        print(line)
    status = joined["status"]
    flagged = status.isin(FLAGGED) | ~status.isin(FLAGGED | NOT_FLAGGED)
    false_alarms = joined[flagged & joined["consistent"]]
    misses = joined[~flagged & ~joined["consistent"]]
    catalog_only = false_alarms["rules"].map(lambda r: bool(r) and not (r - CATALOG_RULES)).astype(bool)
    print(f"disagreements            {len(false_alarms)} false alarms "
          f"({int(catalog_only.sum())} raised only by H001-H003), {len(misses)} misses")
    order = {"fail": 0, "invalid": 1, "warn": 2}
    for kind, part in (("false alarm", false_alarms[~catalog_only]), ("miss", misses)):
        part = part.assign(_o=part["status"].map(lambda s: order.get(s, 3))).sort_values(["_o", "pos"])
        for _, r in part.iterrows():
            label = "consistent" if r["consistent"] else f"inconsistent [{r['class']}]"
            print(f"  {kind:<11} {r['id']:<30} {str(r['model'])[:34]:<34} verdict {r['status']:<8} label {label}")
            if r["top"]:
                print(f"      tool:  {shorten(r['top'])}")
            print(f"      label: {shorten(r['reason'])}")
    caught = joined[flagged & ~joined["consistent"]].sort_values("pos")
    if len(caught):
        print(f"  inconsistent rows flagged ({len(caught)}; is the tool's reason the label's?):")
        for _, r in caught.iterrows():
            print(f"    {r['id']:<30} {str(r['model'])[:30]:<30} {r['status']:<5} [{r['class']}] "
                  f"tool: {shorten(r['top'], 80)}")
    if catalog_only.any():
        print("  false alarms raised only by the catalog rules (the row's figures are consistent; the tool did not"
              " know the hardware):")
        for _, r in false_alarms[catalog_only].sort_values("pos").iterrows():
            print(f"    {r['id']:<30} {str(r['model'])[:40]:<40} {shorten(r['top'], 90)}")


def shorten(text: str, width: int = 170) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[: width - 1] + "…"


def engine_identity() -> str:
    import audit

    where = Path(audit.__file__).resolve().parent
    try:
        head = subprocess.run(["git", "-C", str(where), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(where), "status", "--porcelain", "--", "."], capture_output=True,
                               text=True, timeout=10).stdout.strip()
        rev = f"{head}{' + uncommitted changes in audit/' if dirty else ''}" if head else "not a git checkout"
    except (OSError, subprocess.SubprocessError):
        rev = "git not available"
    return f"audit package {where} ({rev})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--epoch", default=str(EPOCH), help="Epoch AI's notable_ai_models.csv")
    parser.add_argument("--published", default=str(PUBLISHED), help="published_claims.csv")
    parser.add_argument("--json", metavar="PATH", help="also write the measured figures as JSON")
    parser.add_argument("--draw", action="store_true", help="print the seeded Epoch sample and exit")
    args = parser.parse_args(argv)

    if args.draw:
        df = pd.read_csv(args.epoch)
        for n, (seed, positions) in enumerate(draw_epoch_samples(Path(args.epoch)).items(), 1):
            label = "random" if seed == SEED else f"random-{seed}"
            print(f"# draw {n}: seed {seed}, {len(positions)} rows (labels: drawn = {label} or {label}+...)")
            for pos in positions:
                print(f"notable_ai_models.csv#{pos + 2}\t{df['Model'].iloc[pos]}\tseed {seed}")
        return 0

    print("train-audit accuracy benchmark (bench/accuracy.py)")
    print(engine_identity())
    report: dict = {"engine": engine_identity(), "targets": TARGETS}

    # ---- Epoch AI's database
    epoch_labels = read_labels("epoch_sample.csv")
    epoch = run_tool([args.epoch])
    joined, missing = join(epoch_labels, epoch.frame)
    m = metrics(joined)

    flagged_all = epoch.frame["status"].isin(FLAGGED)
    labelled_pos = set(joined["pos"])
    unlabelled_flags = epoch.frame[flagged_all & ~epoch.frame.index.isin(labelled_pos)]

    status = joined["status"]
    flagged = status.isin(FLAGGED) | ~status.isin(FLAGGED | NOT_FLAGGED)
    bad = ~joined["consistent"]
    numeric = flagged & joined["rules"].map(lambda r: bool(r - CATALOG_RULES))
    seeds = joined["drawn"].map(draw_seed)
    random = seeds.notna()
    detectable = bad & (joined["detectable_from_columns"] == "yes")
    draws = draw_epoch_samples(Path(args.epoch))

    def sample_figures(rows: pd.Series) -> dict:
        return {
            "rows": int(rows.sum()),
            "inconsistent": int((rows & bad).sum()),
            "flagged": int((rows & flagged).sum()),
            "true_flags": int((rows & bad & flagged).sum()),
            "precision": share(int((rows & bad & flagged).sum()), int((rows & flagged).sum())),
            "recall": share(int((rows & bad & flagged).sum()), int((rows & bad).sum())),
            "visible": int((rows & detectable).sum()),
            "visible_flagged": int((rows & detectable & flagged).sum()),
        }

    both = sample_figures(random)
    by_seed = {seed: sample_figures(seeds == seed) for seed in draws}
    m.update({
        "numeric_recall": share(int((numeric & bad).sum()), int(bad.sum())),
        "numeric_flagged": int(numeric.sum()),
        "numeric_precision": share(int((numeric & bad).sum()), int(numeric.sum())),
        # all random draws together (seeds 2026 + 2027 + 2028 + 2029); each draw alone under random_by_seed
        "random_sample": int(random.sum()),
        "random_inconsistent": int((random & bad).sum()),
        "random_recall": share(int((random & bad & flagged).sum()), int((random & bad).sum())),
        "random_precision": share(int((random & bad & flagged).sum()), int((random & flagged).sum())),
        "random_by_seed": {str(seed): figures for seed, figures in by_seed.items()},
        "detectable_recall": share(int((detectable & flagged).sum()), int(detectable.sum())),
        "unlabelled_flagged": len(unlabelled_flags),
    })
    extra = [
        "  without flags raised only by the catalog rules H001-H003:",
        f"    precision              {ratio(int((numeric & bad).sum()), int(numeric.sum()))}",
        f"    recall                 {ratio(int((numeric & bad).sum()), int(bad.sum()))}"
        f"  (inconsistent rows flagged by a numeric rule)",
        f"  random samples alone, all draws ({m['random_sample']} rows, seeds "
        f"{' + '.join(str(seed) for seed in draws)}; {m['random_inconsistent']} inconsistent):",
        f"    precision              {ratio(both['true_flags'], both['flagged'])}",
        f"    recall                 {ratio(both['true_flags'], both['inconsistent'])}"
        f"  (visible from the columns: {ratio(both['visible_flagged'], both['visible'])})",
    ]
    for seed, f in by_seed.items():
        extra += [
            f"  random draw seed {seed} alone ({f['rows']} rows, {f['inconsistent']} inconsistent):",
            f"    precision              {ratio(f['true_flags'], f['flagged'])}",
            f"    recall                 {ratio(f['true_flags'], f['inconsistent'])}"
            f"  (visible from the columns: {ratio(f['visible_flagged'], f['visible'])})",
        ]
    extra += [
        "  recall on inconsistencies visible from the row's own columns:",
        f"                           {ratio(int((detectable & flagged).sum()), int(detectable.sum()))}",
    ]
    for seed, positions in draws.items():
        drawn_now = {f"notable_ai_models.csv#{p + 2}" for p in positions}
        drawn_labelled = set(joined.loc[seeds == seed, "id"])
        if drawn_now != drawn_labelled:
            extra.append(f"  NOTE: the seeded draw (seed {seed}) and its labelled random sample differ "
                         f"({len(drawn_now - drawn_labelled)} drawn rows unlabelled, "
                         f"{len(drawn_labelled - drawn_now)} labelled rows not drawn): has the Epoch file changed?")
    stray = sorted(set(seeds.dropna().astype(int)) - set(draws))
    if stray:
        extra.append(f"  NOTE: labels name random draws this script does not make: seeds {stray}")
    if len(unlabelled_flags):
        extra.append(f"  flagged rows with no label: {len(unlabelled_flags)} (not in the figures above; label them in "
                     f"bench/labels/epoch_sample.csv):")
        for r in unlabelled_flags.itertuples():
            extra.append(f"    {r.id:<30} {str(r.name)[:34]:<34} {r.status:<8} {shorten(r.top, 100)}")
    print_set(f"Epoch AI, notable_ai_models.csv ({len(epoch.frame)} rows, labels: bench/labels/epoch_sample.csv)",
              joined, m, missing, extra)

    hw = epoch.hardware
    names = hw["hardware_text"].notna() & (hw["hardware_text"].astype(str).str.strip() != "")
    # A cell listing several accelerators, each of them known, resolves to a mix (issue 9: "read as a mix and
    # said so"); it counts as resolved, and is shown apart.
    one = names & hw["accelerator"].notna()
    mixed = names & hw["mix"].notna()
    resolved = one | mixed
    unresolved = hw.loc[names & ~resolved, "hardware_text"].value_counts()
    in_labels = hw.index.isin(labelled_pos)
    m["hardware_resolution"] = share(int(resolved.sum()), int(names.sum()))
    m["hardware_resolution_labelled"] = share(int((resolved & in_labels).sum()), int((names & in_labels).sum()))
    print("\n== Hardware named in Epoch's file ==")
    print(f"rows naming hardware that resolve to a catalog accelerator or a mix of them: "
          f"{ratio(int(resolved.sum()), int(names.sum()))} ({int(one.sum())} one accelerator, {int(mixed.sum())} a mix)")
    print(f"  among the labelled rows: {ratio(int((resolved & in_labels).sum()), int((names & in_labels).sum()))}")
    if len(unresolved):
        print(f"  unresolved names ({len(unresolved)} distinct, most frequent first):")
        for text, count in unresolved.head(20).items():
            print(f"    {count:>3}  {text}")
    report["epoch"] = m

    # ---- published papers: the bundled corpus and published_claims.csv
    paper_labels = read_labels("papers.csv")
    corpus = run_tool([])
    published = run_tool([args.published])
    corpus_labels = paper_labels[paper_labels["file"].str.contains("corpus.csv")]
    published_labels = paper_labels[~paper_labels["file"].str.contains("corpus.csv")]
    j1, miss1 = join(corpus_labels, corpus.frame)
    j2, miss2 = join(published_labels, published.frame)
    joined_p = pd.concat([j1, j2], ignore_index=True)
    mp = metrics(joined_p)
    mp["unlabelled_claims"] = (len(corpus.frame) - len(j1)) + (len(published.frame) - len(j2))
    extra = [f"  corpus.csv: {len(j1)} of {len(corpus.frame)} claims labelled; "
             f"published_claims.csv: {len(j2)} of {len(published.frame)}"]
    print_set("Published papers (audit/data/corpus.csv + published_claims.csv, labels: bench/labels/papers.csv)",
              joined_p, mp, miss1 + miss2, extra)
    report["papers"] = mp

    # ---- against the targets
    def pct(x: float | None) -> str:
        return "n/a" if x is None else f"{100 * x:.1f} %"

    print("\n== Against the issue's targets (measured, not asserted) ==")
    rows = [
        (TARGETS["fails_on_consistent_papers"],
         f"{mp['fail_on_consistent']} fail, {mp['invalid_on_consistent']} invalid"),
        (TARGETS["precision_epoch"], f"{pct(m['precision'])} (numeric flags only: {pct(m['numeric_precision'])}; "
                                     f"random samples ({m['random_sample']} rows): {pct(m['random_precision'])})"),
        (TARGETS["recall_epoch"], f"{pct(m['recall'])} (by a numeric rule: {pct(m['numeric_recall'])}; "
                                  f"random samples ({m['random_sample']} rows): {pct(m['random_recall'])}; "
                                  f"visible from the columns: {pct(m['detectable_recall'])})"),
        (TARGETS["hardware_resolution"], f"{pct(m['hardware_resolution'])} of rows naming hardware"),
    ]
    for target, measured in rows:
        print(f"  {target:<74} {measured}")

    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        print(f"\nfigures written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
