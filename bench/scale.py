"""Scale benchmark: a million claims, Parquet in and Parquet out, against pandas reading and writing the same file.

    python bench/scale.py generate N OUT.parquet [--parts K]   # write N synthetic claims (K files: a dataset)
    python bench/scale.py run [--rows 1000000] [--dataset-factor 10] [--words-rows 10000] [--json-rows 100000]

Every case runs in a subprocess of its own under GNU time (``/usr/bin/time``), so its wall and CPU seconds and
its peak memory (maximum resident set) are its own and not the benchmark's. The baseline is measured in the same
run on the same file: pandas reading the Parquet file and writing it back.
Nothing is asserted: read the ratios against the targets of issue 12.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent

#: Hardware names as reports write them, with the dense bf16/fp16 peak of each (datasheets; the catalog's
#: figures are in audit/data/accelerators.csv). Mixed spellings on purpose: the loader matches each once.
HARDWARE = ("H100", "NVIDIA H100 SXM", "A100 80GB", "A100", "TPU v4", "TPU v5p", "MI300X", "H800", "V100",
            "v4-2048", "Gaudi 2", "B200")
PRECISIONS = (None, "bf16", "fp16", "fp8")
DOMAINS = ("Language", "Vision", "Multimodal", None)
ARCHITECTURES = ({"layers": 32, "d_model": 4096, "heads": 32, "ffn_dim": 11008, "seq_len": 4096,
                  "vocab_size": 32000, "mlp": "swiglu"},                                        # Llama 2 7B
                 {"layers": 80, "d_model": 8192, "heads": 64, "kv_heads": 8, "ffn_dim": 28672,
                  "seq_len": 4096, "vocab_size": 32000, "mlp": "swiglu"},                        # Llama 2 70B
                 {"layers": 96, "d_model": 12288, "heads": 96, "ffn_dim": 49152, "seq_len": 2048,
                  "vocab_size": 50257})                                                          # GPT-3 175B


def synthetic(n: int, seed: int = 0) -> pd.DataFrame:
    """n plausible claims of about ten columns: most consistent (C = 6ND, chip-hours = C / (peak · MFU)), a tenth
    doctored (compute 1000x, GPU-days written as GPU-hours), some with unit strings, a precision, a domain, and
    one in fifty with an architecture; one in a hundred is a two-phase run (pre-training then fine-tuning, JSON
    text in a ``phases`` column). Hardware, precision and domain are drawn from short lists, as a fleet's are."""
    rng = np.random.default_rng(seed)
    peak_of = {"H100": 989.4e12, "NVIDIA H100 SXM": 989.4e12, "A100 80GB": 312e12, "A100": 312e12,
               "TPU v4": 275e12, "TPU v5p": 459e12, "MI300X": 1307.4e12, "H800": 989.4e12, "V100": 125e12,
               "v4-2048": 275e12, "Gaudi 2": 432e12, "B200": 2250e12}
    params = 10 ** rng.uniform(8, 11.5, n)
    tokens = params * rng.uniform(5, 2000, n)
    chips = (2 ** rng.integers(3, 14, n)).astype(float)
    mfu = rng.uniform(0.2, 0.55, n)
    hw = rng.integers(0, len(HARDWARE), n)
    hw_names = np.array(HARDWARE, dtype=object)[hw]
    peak = np.array([peak_of[h] for h in HARDWARE])[hw]
    compute = 6 * params * tokens
    hours = compute / (chips * 3600 * peak * mfu)
    doctored = rng.random(n) < 0.1
    compute = np.where(doctored & (rng.random(n) < 0.5), compute * 1000, compute)
    chip_hours = np.where(doctored, chips * hours / 24, chips * hours)
    chips = np.where(hw_names == "v4-2048", np.nan, chips)  # a slice name gives the chips itself
    # A fifth of the chip-hours as text with a unit, from a few hundred distinct strings (as reports round).
    text_hours = rng.random(n) < 0.2
    hours_text = np.array([f"{h / 1e6:.3g}M GPU-hours" if h >= 1e6 else f"{h:,.0f} GPU-hours"
                           for h in chip_hours], dtype=object)
    chip_hours_col = np.where(text_hours, hours_text, np.array([f"{h:.6g}" for h in chip_hours], dtype=object))
    precision = np.array(PRECISIONS, dtype=object)[rng.integers(0, len(PRECISIONS), n)]
    domain = np.array(DOMAINS, dtype=object)[rng.integers(0, len(DOMAINS), n)]
    frame = pd.DataFrame({
        "id": [f"run-{i}" for i in range(n)],
        "params": [f"{p / 1e9:.3g}B" for p in params],
        "tokens": tokens, "compute_flops": compute, "hardware": hw_names, "precision": precision,
        "chips": chips, "wall_clock_days": hours / 24, "chip_hours": chip_hours_col,
        "mfu": [f"{m * 100:.1f}%" for m in mfu], "domain": domain,
    })
    # One claim in fifty states an architecture (the layers, width, heads of a known model).
    arch = rng.random(n) < 0.02
    pick = rng.integers(0, len(ARCHITECTURES), n)
    for key in ("layers", "d_model", "heads", "kv_heads", "ffn_dim", "seq_len", "vocab_size"):
        values = np.array([a.get(key, np.nan) for a in ARCHITECTURES], dtype=float)[pick]
        frame[key] = np.where(arch, values, np.nan)
    frame["mlp"] = np.where(arch, np.array([a.get("mlp") for a in ARCHITECTURES], dtype=object)[pick], None)
    # One in a hundred: two phases, 95 % of the tokens in pre-training and 5 % in fine-tuning, at the same rate.
    two = np.flatnonzero(rng.random(n) < 0.01)
    phases = np.full(n, None, dtype=object)
    for i in two:
        share = (0.95, 0.05)
        phases[i] = json.dumps([{"name": name, "hardware": str(hw_names[i]), "chips": float(chips[i]) if
                                 chips[i] == chips[i] else None, "tokens": float(tokens[i] * f),
                                 "chip_hours": float(chip_hours[i] * f)}
                                for name, f in zip(("pre-training", "fine-tuning"), share)])
    frame["phases"] = phases
    return frame


def write_dataset(n: int, out: Path, parts: int = 1, seed: int = 0) -> None:
    """Write n claims to ``out`` (one Parquet file) or, with ``parts`` > 1, to ``parts`` files in folder ``out``."""
    if parts <= 1:
        synthetic(n, seed).to_parquet(out, index=False)
        return
    out.mkdir(parents=True, exist_ok=True)
    per = -(-n // parts)
    for k in range(parts):
        m = min(per, n - k * per)
        if m <= 0:
            break
        frame = synthetic(m, seed + k)
        frame["id"] = [f"run-{k}-{i}" for i in range(m)]
        frame.to_parquet(out / f"part-{k:04d}.parquet", index=False)


#: Every child, the pandas baseline included, runs as ``train-audit`` runs itself: without numpy's transparent
#: huge pages (audit/cli.py says why); the baseline too, so that the ratio compares like with like (it is faster
#: so: 4.5-4.7 s instead of 5.6-6.2 s for a million claims on this machine).
CHILD_ENV = {**os.environ, "NUMPY_MADVISE_HUGEPAGE": "0"}


def measure(args: list[str], env: dict[str, str] | None = None) -> tuple[float, float, float, int]:
    """Wall seconds, CPU seconds (user + system) and peak MiB (maximum resident set) of a command run in a
    subprocess of its own (GNU time's ``%M``: the child's own peak, not the largest child's so far), and its
    exit code. ``env``: the child's environment (default :data:`CHILD_ENV`)."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as out:
        proc = subprocess.run(["/usr/bin/time", "-f", "%e %U %S %M", "-o", out.name, *args],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=ROOT, env=env or CHILD_ENV)
        wall, user, system, kib = (float(x) for x in out.read().split()[-4:])
    if proc.returncode not in (0, 1):
        sys.stderr.write(proc.stderr.decode("utf-8", "replace")[-2000:])
    return wall, user + system, kib / 1024, proc.returncode


def _processes(root: int) -> list[int]:
    """``root`` and every process descended from it (Linux: /proc)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    parent = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry))
    out = [root]
    for pid in out:
        out.extend(children.get(pid, []))
    return out


def _pss_kib(pid: int) -> int:
    """A process's proportional set size: its private memory and its share of pages shared with others (a worker
    forked from a server shares the server's imported modules), so that the sizes of processes add up."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def measure_tree(args: list[str], every: float = 0.1) -> tuple[float, float, float, int]:
    """As :func:`measure`, for a command that starts processes of its own (``--jobs``): wall seconds and GNU time's
    CPU seconds (the command's, and not its workers': they are children of multiprocessing's fork server, which is
    not waited for; the table leaves them out) of one run, and the peak of the proportional set sizes of the whole
    process tree added up, sampled every ``every`` seconds in a second run. Two runs, because reading a process's
    proportional set size walks its pages: about 40 ms of CPU for a 1.2 GiB tree here (measured), so that sampling
    every 50 ms, as this function once did in the timed run itself, took half a core from the command it timed."""
    import threading
    import time

    wall, cpu, _, code = measure(args)
    peak = [0]
    done = threading.Event()

    def sample(root: int) -> None:
        while not done.is_set():
            peak[0] = max(peak[0], sum(_pss_kib(p) for p in _processes(root)))
            time.sleep(every)

    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT, env=CHILD_ENV)
    thread = threading.Thread(target=sample, args=(proc.pid,), daemon=True)
    thread.start()
    proc.wait()
    done.set()
    thread.join()
    return wall, cpu, peak[0] / 1024, code


def _python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="cmd", required=True)
    gen = sub.add_parser("generate")
    gen.add_argument("n", type=int)
    gen.add_argument("out", type=Path)
    gen.add_argument("--parts", type=int, default=1)
    run = sub.add_parser("run")
    run.add_argument("--rows", type=int, default=1_000_000)
    run.add_argument("--batch-size", type=int, default=100_000)
    run.add_argument("--dataset-factor", type=int, default=10, help="the partitioned dataset is this many times "
                     "larger, streamed (0: skip)")
    run.add_argument("--words-rows", type=int, default=10_000, help="claims for the cases that write words "
                     "(--findings, JSON)")
    run.add_argument("--json-rows", type=int, default=100_000, help="claims for the JSON cases (issue 12: JSON of "
                     "100,000 claims within 3x of the standard json module; 0: skip)")
    run.add_argument("--json", type=Path, default=None, help="also write the table's figures here")
    run.add_argument("--jobs", type=int, nargs="*", default=[1], help="the Parquet → Parquet case again with "
                     "check --jobs J for each J given (default 1: one process, against the default of one worker "
                     "per core)")
    a = parser.parse_args(argv)
    if a.cmd == "generate":
        write_dataset(a.n, a.out, a.parts)
        return
    run_cases(a.rows, a.batch_size, a.dataset_factor, a.words_rows, a.json, a.json_rows, tuple(a.jobs))


Row = tuple[str, int, float, float, float, "float | None"]


def _default_jobs() -> int:
    """The worker processes ``check`` starts by default for a large table on this machine."""
    from audit.cli import default_jobs

    return default_jobs("parquet", "out.parquet", True)


def run_cases(n: int, batch: int, factor: int, words_rows: int, json_path: Path | None,
              json_rows: int = 100_000, jobs_list: tuple[int, ...] = (1,)) -> None:
    """Every case of issue 12, each in its own subprocess, and the table (ratios: to the pandas read + write of
    the same number of rows, measured in the same run)."""
    cli = [sys.executable, "-m", "audit"]
    rows: list[Row] = []
    # The baseline (pandas reading and writing with Arrow's threads on every core) slows more than the check when
    # other work shares the machine, which shrinks the ratio: say how busy the machine was (session 14: 3.39 s idle
    # against 5.96-6.16 s on a loaded machine, the check's own time unchanged).
    load_before = os.getloadavg()

    def baseline(data: Path, out: Path) -> tuple[float, float]:
        wall, cpu, mib, _ = measure(_python(
            f"import pandas as pd; f = pd.read_parquet({str(data)!r}); f.to_parquet({str(out)!r}, index=False)"))
        return wall, cpu, mib

    with tempfile.TemporaryDirectory() as tmp:
        tmpd = Path(tmp)
        data, out = tmpd / "claims.parquet", tmpd / "out.parquet"
        write_dataset(n, data)
        # The baseline and the main case, alternated twice and the faster of each kept: this virtual machine's
        # speed drifts within minutes (the baseline's page faults: its system time alone has moved 1-6 s).
        # As a user runs it: a Parquet file of more than 100,000 claims is audited in batches, by one worker process
        # per core (at most 4; audit.cli.default_jobs), batches of 100,000 / workers. Memory: all the processes;
        # CPU: not shown (the workers' is not counted by GNU time).
        base_runs, check_runs = [], []
        for _ in range(2):
            base_runs.append(baseline(data, out))
            check_runs.append(measure_tree([*cli, "check", str(data), "--format", "parquet", "-o", str(out)])[:3])
        b_wall, b_cpu, b_mib = min(base_runs)
        wall, _cpu, mib = min(check_runs)
        rows.append(("pandas read + write Parquet (baseline, faster of 2)", n, b_wall, b_cpu, b_mib, 1.0))
        # Up to 100,000 claims a file is one batch, audited in one process.
        how = f"{_default_jobs()} worker processes" if n > 100_000 else "one batch, one process"
        rows.append((f"check: Parquet → Parquet (default: {how}, faster of 2; memory: all processes)", n, wall,
                     float("nan"), mib, wall / b_wall))
        for jobs in jobs_list:
            args = [*cli, "check", str(data), "--format", "parquet", "-o", str(out), "--jobs", str(jobs)]
            if jobs == 1:
                wall, cpu, mib, _ = measure(args)
                rows.append(("check --jobs 1 (one process, batches of 100,000)", n, wall, cpu, mib, wall / b_wall))
            else:
                wall, cpu, mib, _ = measure_tree(args)
                rows.append((f"check --jobs {jobs} (batches in {jobs} worker processes; memory: all processes)", n,
                             wall, float("nan"), mib, wall / b_wall))
        wall, cpu, mib, _ = measure([*cli, "check", str(data), "--format", "parquet", "-o", str(out),
                                     "--batch-size", str(max(n, 1))])
        rows.append((f"check --batch-size {n:,} (one piece)", n, wall, cpu, mib, wall / b_wall))
        if batch != 100_000:
            wall, cpu, mib, _ = measure_tree([*cli, "check", str(data), "--format", "parquet", "-o", str(out),
                                              "--batch-size", str(batch)])
            rows.append((f"check --batch-size {batch:,} (memory: all processes)", n, wall, float("nan"), mib,
                         wall / b_wall))
        # The engine alone: claims already read, timed in the child; every finding with its explanations (as the
        # words of a report need), and what the claims table needs (words=False: no outlier search, no
        # explanations).
        for words, label in ((True, "engine alone (audit_claims on claims read)"),
                             (False, "engine alone, for the claims table (audit_claims(words=False))")):
            code = ("import sys, time; from audit.reading import load; from audit.pipeline import audit_claims; "
                    f"c = load([{str(data)!r}]); t = time.perf_counter(); p = time.process_time(); "
                    f"audit_claims(c, words={words}); "
                    "print(time.perf_counter() - t, time.process_time() - p, file=sys.stderr)")
            proc = subprocess.run(_python(code), capture_output=True, cwd=ROOT, env=CHILD_ENV)
            e_wall, e_cpu = (float(x) for x in proc.stderr.decode().strip().splitlines()[-1].split())
            rows.append((label, n, e_wall, e_cpu, float("nan"), None))
        # The engine as check runs it: the claims read in batches of 100,000 (audit.stream.claim_batches, not
        # timed), each audited as it comes (timed, added up); the allocator as the command line sets it.
        for words, label in ((True, "engine alone, in batches of 100,000 (as check runs it)"),
                             (False, "engine alone, in batches of 100,000, for the claims table (words=False)")):
            code = "\n".join([
                "import sys, time",
                "from audit.allocator import keep_freed_memory",
                "from audit.pipeline import audit_claims",
                "from audit.stream import claim_batches",
                "keep_freed_memory()",
                "wall = cpu = 0.0",
                f"for c in claim_batches([{str(data)!r}], 100_000):",
                "    t, p = time.perf_counter(), time.process_time()",
                f"    audit_claims(c, words={words})",
                "    wall, cpu = wall + time.perf_counter() - t, cpu + time.process_time() - p",
                "print(wall, cpu, file=sys.stderr)"])
            proc = subprocess.run(_python(code), capture_output=True, cwd=ROOT, env=CHILD_ENV)
            e_wall, e_cpu = (float(x) for x in proc.stderr.decode().strip().splitlines()[-1].split())
            rows.append((label, n, e_wall, e_cpu, float("nan"), None))
        if factor:
            big = tmpd / "dataset"
            write_dataset(n * factor, big, parts=factor * 4)
            # As a user runs it (the batches check chooses: 100,000 shared out among its workers) unless
            # --batch-size says.
            sized = [] if batch == 100_000 else ["--batch-size", str(batch)]
            wall, cpu, mib, _ = measure_tree([*cli, "check", str(big), "--format", "parquet", "-o", str(out), *sized])
            rows.append((f"check of a {factor}x dataset ({factor * 4} files; default: {_default_jobs()} worker "
                         f"processes; memory: all processes)", n * factor, wall, float("nan"), mib,
                         wall / b_wall / factor))
        words = tmpd / "words.parquet"
        write_dataset(words_rows, words)
        w_wall, w_cpu, w_mib = baseline(words, tmpd / "w.parquet")
        rows.append(("pandas read + write Parquet (baseline)", words_rows, w_wall, w_cpu, w_mib, 1.0))
        wall, cpu, mib, _ = measure([*cli, "check", str(words), "--format", "parquet", "-o", str(out),
                                     "--findings", str(tmpd / "findings.parquet")])
        rows.append(("check with --findings (a message and formula per finding)", words_rows, wall, cpu, mib,
                     wall / w_wall))
        if json_rows:
            # JSON: the records as the report makes them, a chunk of claims at a time (audit.records.claim_chunks),
            # against the standard json module writing the very same records (json.dumps of each chunk), timed
            # chunk by chunk in one child (wall and CPU seconds, added up); the ratio is of the CPU seconds. Then
            # the command itself, which writes each chunk as it is made: its peak memory.
            data_json = tmpd / "json.parquet"
            write_dataset(json_rows, data_json)
            code = "\n".join([
                "import json, sys, time",
                "from audit.api import check",
                "from audit.records import claim_chunks",
                f"r = check([{str(data_json)!r}])",
                "wall = cpu = dump_wall = dump_cpu = 0.0",
                "chunks = claim_chunks(r)",
                "while True:",
                "    t, p = time.perf_counter(), time.process_time()",
                "    records = next(chunks, None)",
                "    if records is None:",
                "        break",
                "    t1, p1 = time.perf_counter(), time.process_time()",
                "    json.dumps(records, ensure_ascii=False, allow_nan=False)",
                "    t2, p2 = time.perf_counter(), time.process_time()",
                "    wall, cpu = wall + t1 - t, cpu + p1 - p",
                "    dump_wall, dump_cpu = dump_wall + t2 - t1, dump_cpu + p2 - p1",
                "print(wall, cpu, dump_wall, dump_cpu, file=sys.stderr)"])
            proc = subprocess.run(_python(code), capture_output=True, cwd=ROOT, env=CHILD_ENV)
            r_wall, r_cpu, d_wall, d_cpu = (float(x) for x in proc.stderr.decode().strip().splitlines()[-1].split())
            rows.append(("JSON: the records, a chunk of claims at a time (claim_chunks)", json_rows, r_wall, r_cpu,
                         float("nan"), r_cpu / d_cpu))
            rows.append(("JSON: stdlib json.dumps of the same records", json_rows, d_wall, d_cpu, float("nan"), 1.0))
            # As run by default: two worker processes here (audit.cli.default_jobs); then in one process.
            wall, _, mib, _ = measure_tree([*cli, "check", str(data_json), "--format", "json", "-o",
                                            str(tmpd / "out.json")])
            rows.append(("check --format json -o FILE, as run (default: a worker per core, batches of 5,000; "
                         "memory: all processes)", json_rows, wall, float("nan"), mib, None))
            wall, cpu, mib, _ = measure([*cli, "check", str(data_json), "--format", "json", "-o",
                                         str(tmpd / "out1.json"), "--jobs", "1"])
            rows.append(("check --format json -o FILE --jobs 1 (one process, written a chunk of claims at a time)",
                         json_rows, wall, cpu, mib, None))
        small = tmpd / "one.json"
        small.write_text(json.dumps([{"id": "gpt3", "params": "175B", "tokens": "300B", "compute_flops": 3.14e23}]))
        wall, cpu, mib, _ = measure([*cli, "--help"])
        rows.append(("train-audit --help", 0, wall, cpu, mib, None))
        wall, cpu, mib, _ = measure([*cli, "check", str(small)])
        rows.append(("check of one claim (text)", 1, wall, cpu, mib, None))
        # As an installed package runs: its modules' bytecode cached (pip compiles it when installing). A sandbox
        # that sets PYTHONDONTWRITEBYTECODE compiles every module of the package at each start (the row above).
        # One run writes the cache, then the median of three.
        cached = {k: v for k, v in CHILD_ENV.items() if k != "PYTHONDONTWRITEBYTECODE"}
        measure([*cli, "check", str(small)], env=cached)
        runs = sorted((measure([*cli, "check", str(small)], env=cached) for _ in range(3)), key=lambda r: r[0])
        wall, cpu, mib, _ = runs[1]
        rows.append(("check of one claim (text), bytecode cached (median of 3)", 1, wall, cpu, mib, None))
    print(f"load average (1, 5, 15 min) before the run: {', '.join(f'{x:.2f}' for x in load_before)}; after: "
          f"{', '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} cores). Above about 0.5 before it, "
          f"other work slows the baseline and the ratios read low.\n")
    print("| case | rows | wall s | CPU s | claims/s | peak MiB | ratio |\n|---|---:|---:|---:|---:|---:|---:|")
    for name, r, t, c, m, ratio in rows:
        rate = f"{r / t:,.0f}" if r > 1 else ""
        cpu = "" if c != c else f"{c:.2f}"
        mem = "" if m != m else f"{m:,.0f}"
        rat = "" if ratio is None else f"{ratio:.2f}"
        print(f"| {name} | {r:,} | {t:.2f} | {cpu} | {rate} | {mem} | {rat} |")
    if json_path:
        json_path.write_text(json.dumps([dict(zip(("case", "rows", "wall_s", "cpu_s", "peak_mib", "ratio"), r))
                                         for r in rows], indent=1))


if __name__ == "__main__":
    main()
