"""The rules: every check train-audit makes, each with a stable code that is never reused.

A rule's docstring is its documentation: ``train-audit rules`` and the HTML report print it, and nothing repeats
it by hand. Codes: ``C`` relations among quantities (each can derive a missing quantity or check a claimed one),
``U`` utilization bounds, ``M`` memory, ``H`` hardware and catalog, ``V`` validity of the input.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import ClassVar

SEVERITIES: tuple[str, ...] = ("ok", "info", "warning", "error")
SEVERITY_RANK: dict[str, int] = {s: i for i, s in enumerate(SEVERITIES)}


@dataclass(frozen=True)
class Relation:
    """``subject = constant × Π term^exponent``, read in log space as Σ eᵢ·log xᵢ = log k.

    ``exponents`` holds every quantity with its exponent on the left-hand side form (subject +1, others
    negated), so each quantity can be solved for when the others are known.
    """

    exponents: tuple[tuple[str, float], ...]
    constant: float

    @property
    def quantities(self) -> tuple[str, ...]:
        return tuple(q for q, _ in self.exponents)


class Rule:
    """Base class: a check with a stable code, a name, a severity, a formula and a docstring."""

    code: ClassVar[str] = ""
    name: ClassVar[str] = ""
    quantity: ClassVar[str] = ""
    formula: ClassVar[str] = ""
    #: The worst severity the rule can give.
    severity: ClassVar[str] = "error"

    @classmethod
    def doc(cls) -> str:
        """The rule's documentation (its docstring, dedented)."""
        return inspect.cleandoc(cls.__doc__ or "")

    @classmethod
    def summary(cls) -> str:
        """First line of the documentation."""
        return cls.doc().splitlines()[0] if cls.doc() else cls.name


class RelationRule(Rule):
    """A rule made of one relation: derives the one unknown quantity or checks a fully known claim."""

    relation: ClassVar[Relation]
    #: Which quantity a finding is about, in order of preference: the first one the claim states.
    subjects: ClassVar[tuple[str, ...]]
    #: Symbols used in formulas, by quantity.
    symbols: ClassVar[dict[str, str]]


# ------------------------------------------------------------------------------------------------ relations


class ComputeSixND(RelationRule):
    """Training compute is about six FLOPs per parameter per token: C ≈ 6·N·D.

    **What it checks.** The claimed compute against 6 × parameters × tokens, with N the *active* parameters
    when a mixture-of-experts claim gives them. With one of the three missing, it derives it.

    **Why it matters.** It is the first consistency test of any training report: a unit slip (PF-days read as
    FLOP, millions for billions) or total parameters used for a mixture-of-experts model show up here first.
    6ND leaves out attention and embeddings, so agreement within about 25 % is expected (tolerance below).

    **Example.** GPT-3: 6 × 174.6e9 × 300e9 = 3.14e23 FLOP; Brown et al. report 3.64e3 PF-days = 3.14e23. Pass.

    **References.** Kaplan et al. 2020, *Scaling Laws for Neural Language Models*, Sec. 2.1 (C ≈ 6N per token);
    Hoffmann et al. 2022, *Training Compute-Optimal LLMs* (Chinchilla), Sec. 3.
    """

    code = "C001"
    name = "compute-6nd"
    quantity = "compute_flops"
    formula = "C = 6 · N · D"
    relation = Relation((("compute_flops", 1.0), ("n_eff", -1.0), ("tokens", -1.0)), 6.0)
    subjects = ("compute_flops", "tokens", "n_eff")
    symbols = {"compute_flops": "C", "n_eff": "N", "tokens": "D"}


class ChipHours(RelationRule):
    """Accelerator-hours are accelerators times wall-clock hours: chip_hours = chips × 24 × days.

    **What it checks.** Claimed GPU-/TPU-hours against the chip count and the training duration; with one of
    the three missing, it derives it.

    **Why it matters.** GPU-days written as GPU-hours (24x), or node-hours for GPU-hours (8x), are common slips,
    and an implied duration of years or minutes shows a figure is for a different run.

    **Example.** LLaMA-65B: 2,048 A100 × 24 × 21 days = 1,032,192 GPU-hours vs 1,022,362 reported (1 %). Pass.

    **References.** Touvron et al. 2023, *LLaMA*, Sec. 2.4 and Table 15.
    """

    code = "C002"
    name = "chip-hours"
    quantity = "chip_hours"
    formula = "chip_hours = chips · 24 · days"
    relation = Relation((("chip_hours", 1.0), ("chips", -1.0), ("wall_clock_days", -1.0)), 24.0)
    subjects = ("chip_hours", "wall_clock_days", "chips")
    symbols = {"chip_hours": "chip_hours", "chips": "chips", "wall_clock_days": "days"}


class ComputeFromHardware(RelationRule):
    """Compute equals chip-seconds times peak FLOP/s times utilization: C = chip_hours × 3600 × peak × MFU.

    **What it checks.** That the compute, the accelerator time, the accelerator's peak (from the catalog
    for the stated hardware and precision, unless claimed) and the MFU agree; with one missing (usually MFU),
    it derives it. An MFU derived this way is *end-to-end*: it includes downtime, restarts and evaluation.

    **Why it matters.** It ties the model arithmetic to the hardware: a compute figure the hardware could not
    have delivered, or an MFU that the stated GPU-hours contradict, is the heart of most misreports.

    **Example.** LLaMA-65B: 6 × 65.2e9 × 1.4e12 = 5.48e23 FLOP over 1,022,362 A100-hours at 312 TFLOP/s
    implies MFU = 5.48e23 / (1,022,362 × 3600 × 312e12) = 47.7 %.

    **References.** Chowdhery et al. 2022, *PaLM*, Sec. 4.1 and App. B (definition of MFU).
    """

    code = "C003"
    name = "compute-from-hardware"
    quantity = "mfu"
    formula = "C = chip_hours · 3600 · peak · MFU"
    relation = Relation((("compute_flops", 1.0), ("chip_hours", -1.0), ("peak_flops_per_chip", -1.0),
                         ("mfu", -1.0)), 3600.0)
    subjects = ("mfu", "compute_flops", "chip_hours")
    symbols = {"compute_flops": "C", "chip_hours": "chip_hours", "peak_flops_per_chip": "peak", "mfu": "MFU"}


class TokensFromThroughput(RelationRule):
    """Tokens processed equal throughput times training time: D = throughput × 86400 × days.

    **What it checks.** Claimed tokens against the whole-cluster tokens-per-second figure and the duration.

    **Why it matters.** A per-GPU throughput quoted as the cluster's, or a duration that excludes a phase, shows
    up as a ratio near the chip count or the phase's share.

    **Example.** LLaMA-65B: 380 tokens/s/GPU × 2,048 GPUs = 778,240 tokens/s; × 86400 × 21 days = 1.41e12
    tokens vs 1.4e12 reported. Pass.

    **References.** Touvron et al. 2023, *LLaMA*, Sec. 2.4.
    """

    code = "C004"
    name = "tokens-from-throughput"
    quantity = "tokens"
    formula = "D = throughput · 86400 · days"
    relation = Relation((("tokens", 1.0), ("throughput_tokens_per_s", -1.0), ("wall_clock_days", -1.0)), 86400.0)
    subjects = ("tokens", "throughput_tokens_per_s", "wall_clock_days")
    symbols = {"tokens": "D", "throughput_tokens_per_s": "throughput", "wall_clock_days": "days"}


class AchievedFromMFU(RelationRule):
    """Achieved FLOP/s per accelerator equal MFU times peak: achieved = MFU × peak.

    **What it checks.** A claimed sustained TFLOP/s per GPU against the MFU and the peak; with MFU missing it
    derives it from the achieved rate (steady-state MFU).

    **Why it matters.** Papers state one or the other; when they state both, the peak they divided by shows
    (a sparse peak halves MFU; an A100 peak used for an H100 inflates it 3x).

    **Example.** Llama 3.1 405B: 400 TFLOP/s per H100 / 989.4 = 40.4 %; the paper reports 41 %. Pass.

    **References.** Llama Team 2024, *The Llama 3 Herd of Models*, Table 4; Narayanan et al. 2021,
    *Efficient Large-Scale Language Model Training on GPU Clusters Using Megatron-LM*, Table 1.
    """

    code = "C005"
    name = "achieved-from-mfu"
    quantity = "achieved_flops_per_chip"
    formula = "achieved = MFU · peak"
    relation = Relation((("achieved_flops_per_chip", 1.0), ("mfu", -1.0), ("peak_flops_per_chip", -1.0)), 1.0)
    subjects = ("achieved_flops_per_chip", "mfu")
    symbols = {"achieved_flops_per_chip": "achieved", "mfu": "MFU", "peak_flops_per_chip": "peak"}


class PeakMatchesCatalog(RelationRule):
    """A claimed peak FLOP/s per accelerator matches the datasheet's dense figure for that precision.

    **What it checks.** ``peak_flops_per_chip`` when a claim states it, against the catalog's dense peak for
    the hardware and precision. Without a claimed peak, the catalog's figure is used (source: the datasheet).

    **Why it matters.** NVIDIA prints 2:4-sparse figures as headlines from A100 on (H100 SXM "1,979 TFLOPS"
    is 989.4 dense); MFU computed against a sparse peak is half the true value. A ratio of 2 is named as such.

    **Example.** A claim of 1,979 TFLOP/s for an H100 SXM in bf16: 1,979 / 989.4 = 2.0. Error (sparse peak).

    **References.** NVIDIA H100 Tensor Core GPU Architecture whitepaper v1.04, Table 1 (dense | sparse).
    """

    code = "C006"
    name = "peak-matches-catalog"
    quantity = "peak_flops_per_chip"
    formula = "peak = catalog peak (hardware, precision)"
    relation = Relation((("peak_flops_per_chip", 1.0), ("catalog_peak", -1.0)), 1.0)
    subjects = ("peak_flops_per_chip",)
    symbols = {"peak_flops_per_chip": "peak", "catalog_peak": "datasheet"}


class ComputeFromArchitecture(RelationRule):
    """Training compute equals the architecture's FLOPs per token times tokens: C = F · D.

    **What it checks.** When a claim gives the architecture (layers, width, heads, sequence length, vocabulary,
    FFN width, ...), F is counted by the most complete convention the fields allow (Megatron-LM's
    ``num_floating_point_operations`` with grouped-query attention, gated MLPs and top-k experts; else PaLM's
    6N + 12·L·H·Q·T). The compute is checked (or derived) with that F, and the quantity's derivation names the
    convention and lists the others side by side.

    **Why it matters.** 6ND leaves out attention, which grows with sequence length: at 8K-128K context the
    difference is 10-100 %, and an MFU computed with 6N understates the work done.

    **Example.** PaLM 540B: 6 × 540.35e9 + 12 × 118 × 48 × 256 × 2048 = 3.278e12 FLOPs per token
    (Chowdhery et al. 2022, App. B); × 780e9 tokens = 2.56e24 FLOP.

    **References.** Chowdhery et al. 2022 (PaLM), App. B; Narayanan et al. 2021 (Megatron-LM), Sec. 5.1;
    Megatron-LM ``training.py`` ``num_floating_point_operations``.
    """

    code = "C007"
    name = "compute-from-architecture"
    quantity = "compute_flops"
    formula = "C = F · D"
    relation = Relation((("compute_flops", 1.0), ("flops_per_token", -1.0), ("tokens", -1.0)), 1.0)
    subjects = ("compute_flops", "tokens")
    symbols = {"compute_flops": "C", "flops_per_token": "F", "tokens": "D"}


class HFUFromRecompute(RelationRule):
    """HFU is MFU times the recomputation factor: HFU = r · MFU.

    **What it checks.** A claimed HFU against the MFU and the activation recomputation the claim states
    (``activation_recompute``: none, selective or full). Full recomputation repeats every layer's forward pass:
    4 passes instead of 3, so r = 4/3 (slightly less with the logit layer, which is not recomputed, when the
    architecture is given); selective recomputation repeats only the attention core (r from the architecture).

    **Why it matters.** HFU quoted as MFU overstates useful work by r; an HFU/MFU pair whose ratio does not match
    the stated recomputation was computed with different FLOP counts or peaks.

    **Example.** Full recomputation, MFU 41.0 % → HFU 54.7 %.

    **References.** Narayanan et al. 2021, Sec. 5.1 (96 vs 72 coefficient); Korthikanti et al. 2022,
    *Reducing Activation Recomputation in Large Transformer Models*, Sec. 5; Chowdhery et al. 2022, App. B.
    """

    code = "C008"
    name = "hfu-from-recompute"
    quantity = "hfu"
    formula = "HFU = r · MFU"
    relation = Relation((("hfu", 1.0), ("recompute_factor", -1.0), ("mfu", -1.0)), 1.0)
    subjects = ("hfu", "mfu")
    symbols = {"hfu": "HFU", "recompute_factor": "r", "mfu": "MFU"}


class AchievedFromThroughput(RelationRule):
    """Throughput gives the sustained FLOP/s per accelerator: achieved = throughput · F / chips.

    **What it checks.** With the whole-cluster tokens per second, the FLOPs per token (from the architecture,
    else 6N) and the chip count, the steady-state FLOP/s per accelerator; with the peak (C005) this is the
    throughput-based MFU. Beside the end-to-end MFU implied by chip-hours (C003), the gap between the two is
    downtime, restarts and evaluation: steady-state MFU versus goodput.

    **Why it matters.** Papers quote steady-state MFU measured over good steps; chip-hours include everything.
    The two differ by 5-30 % on healthy runs; more means a phase or a restart is missing from one figure.

    **Example.** PaLM 540B: 238.3K tokens/s × 3.278e12 FLOP / 6144 chips = 127 TFLOP/s = 46.2 % of 275.

    **References.** Chowdhery et al. 2022 (PaLM), Sec. 4.1 and Table 3.
    """

    code = "C011"
    name = "achieved-from-throughput"
    quantity = "achieved_flops_per_chip"
    formula = "achieved = throughput · F / chips"
    relation = Relation((("achieved_flops_per_chip", 1.0), ("throughput_tokens_per_s", -1.0),
                         ("flops_per_token", -1.0), ("chips", 1.0)), 1.0)
    subjects = ("achieved_flops_per_chip", "throughput_tokens_per_s")
    symbols = {"achieved_flops_per_chip": "achieved", "throughput_tokens_per_s": "throughput",
               "flops_per_token": "F", "chips": "chips"}


class TokensFromEpochs(RelationRule):
    """Tokens processed are the dataset's tokens times the epochs: D = dataset_tokens · epochs.

    **What it checks.** Claimed training tokens against the dataset size and the number of passes over it.

    **Why it matters.** Reports give the dataset size where the tokens processed belong (or the reverse); older
    reports count words (about 1.3 tokens per English word) where tokens belong.

    **Example.** 300B tokens from a 180B-token corpus means 1.67 epochs.

    **References.** Epoch AI, *Data on Notable AI Models*, "Training dataset size" and "Epochs" columns.
    """

    code = "C012"
    name = "tokens-from-epochs"
    quantity = "tokens"
    formula = "D = dataset_tokens · epochs"
    relation = Relation((("tokens", 1.0), ("dataset_tokens", -1.0), ("epochs", -1.0)), 1.0)
    subjects = ("tokens", "dataset_tokens", "epochs")
    symbols = {"tokens": "D", "dataset_tokens": "dataset_tokens", "epochs": "epochs"}


class PhasesSum(Rule):
    """A multi-phase run's totals are the sums over its phases.

    **What it checks.** A claim with ``phases`` (each with its own hardware, chips, duration, precision, and
    optionally tokens and compute) is audited phase by phase; the phases' chip-hours, tokens and compute are
    summed, and their hardware capacity Σ chip_hours × peak gives the run's effective peak. A total the claim
    states is checked against the sum; a total it does not state is filled from it.

    **Why it matters.** Runs change cluster size or precision midway (PaLM: 6,144 chips, then 3,072); a total
    taken from one phase, or a phase left out, shows up here.

    **Example.** PaLM 540B: 6,144 chips × 1,200 h + 3,072 chips × 336 h = 8,404,992 chip-hours.

    **References.** Chowdhery et al. 2022 (PaLM), Sec. 4 and App. B.
    """

    code = "C010"
    name = "phases-sum"
    quantity = "chip_hours"
    formula = "total = Σ phases"


class Outlier(Rule):
    """Which single stated figure, if wrong, would make all the others agree.

    **What it checks.** For a claim whose relations disagree, each stated figure in turn is set aside and the
    relations are solved again from the rest. A figure whose removal leaves every remaining check within
    tolerance is the likely error; the finding gives the value the other figures imply for it.

    **Why it matters.** A report that states six figures where three would do can tell which one is off; a
    reader should look there first.

    **Example.** LLaMA-65B with 1,022,362/24 "GPU-hours": the GPU-hours figure is the outlier; chips and days
    imply 1,032,192.

    **References.** Over-determined linear systems: a single-outlier (leave-one-out) test.
    """

    code = "C009"
    name = "outlier"
    quantity = "claim"
    formula = "leave one stated figure out; the rest agree"
    severity = "info"


class TpuSliceCores(Rule):
    """TPU slice names count TensorCores, not chips: ``v4-2048`` is 1,024 chips.

    **What it checks.** When the hardware is written as a Cloud TPU slice (``v4-2048``, ``v5p-8960``), the chip
    count it implies (TensorCores / cores per chip: 2 on v2-v4 and v5p, 1 on v5e and v6e) against the claimed
    chips; without a claimed count, the chips are derived from it.

    **Why it matters.** The per-chip peak (275 TFLOP/s on v4) is per chip; counting cores as chips doubles the
    capacity and halves the implied MFU.

    **Example.** ``hardware: TPU v4-2048, chips: 2048``: warning, the slice has 1,024 chips.

    **References.** Google Cloud TPU documentation, "TPU v4" (v4-8 = 4 chips, each with 2 TensorCores).
    """

    code = "H003"
    name = "tpu-slice-cores"
    quantity = "chips"
    formula = "chips = cores / cores_per_chip"
    severity = "warning"


# ---------------------------------------------------------------------------------------------------- bounds


class MFUPlausible(Rule):
    """Model FLOPs utilization is at most 100 % and usually within a plausible band (15-65 %).

    **What it checks.** The MFU, claimed or derived. Above 100 % is impossible (error): the claim asks for more
    arithmetic than the hardware can do. Outside the band is a warning: above about 65 % is beyond what
    measured matrix-multiply ceilings allow on current GPUs; below about 15 % is unusual for a tuned run and
    often means the wrong peak or a partial time.

    **Why it matters.** An MFU is where every other error surfaces: PF-days read as FLOP, GPU-days as
    GPU-hours, total instead of active parameters, a sparse peak.

    **Example.** A claim of 46.2 written where a fraction belongs is 4,620 %: error, "46.2 % was meant?".

    **References.** Chowdhery et al. 2022 (PaLM), Sec. 4.1: 46.2 % MFU; stas00/ml-engineering, *Maximum
    Achievable Matmul FLOPS* (about 80 % of peak on H100).
    """

    code = "U001"
    name = "mfu-plausible"
    quantity = "mfu"
    formula = "0 < MFU ≤ 1; band 15 %-65 %"


class HFUPlausible(Rule):
    """Hardware FLOPs utilization is at most 100 %, within the plausible band, and never below MFU.

    **What it checks.** A claimed HFU: above 100 % is impossible; outside 15-65 % a warning; below the MFU an
    error, because HFU counts the recomputed FLOPs on top of the model FLOPs (HFU ≥ MFU by definition).

    **Why it matters.** HFU quoted as MFU flatters a run by the recomputation factor (4/3 with full
    activation recomputation).

    **Example.** PaLM 540B: MFU 46.2 %, HFU 57.8 % (Chowdhery et al. 2022, Table 3). Pass.

    **References.** Chowdhery et al. 2022 (PaLM), Sec. 4.1 and App. B; Korthikanti et al. 2022, *Reducing
    Activation Recomputation in Large Transformer Models*.
    """

    code = "U002"
    name = "hfu-plausible"
    quantity = "hfu"
    formula = "MFU ≤ HFU ≤ 1; band 15 %-65 %"


class AchievedBelowPeak(Rule):
    """Sustained FLOP/s per accelerator cannot exceed the accelerator's peak.

    **What it checks.** A claimed ``achieved_flops_per_chip`` against the peak for the hardware and precision.

    **Why it matters.** An achieved rate above the dense peak is impossible; between the dense and the
    2:4-sparse peak, it is usually the sparse figure taken for dense somewhere upstream.

    **Example.** 1,200 TFLOP/s claimed on an H100 SXM in bf16 (dense peak 989.4): error.

    **References.** NVIDIA H100 whitepaper v1.04, Table 1.
    """

    code = "U003"
    name = "achieved-below-peak"
    quantity = "achieved_flops_per_chip"
    formula = "achieved ≤ peak"


class MemoryFit(Rule):
    """The training state must fit in the accelerators' memory: chips × memory ≥ 16 bytes × parameters.

    **What it checks.** The fewest accelerators whose memory holds weights, gradients and Adam state at 16 bytes
    per parameter (mixed precision), before activations, against the claimed chip count.

    **Why it matters.** Too few chips for the model means a wrong chip count, a wrong model size, or an unusual
    technique (CPU/NVMe offloading, 8-bit optimizers): a warning that says how many chips it needs.

    **Example.** 70B parameters × 16 B = 1.12 TB; an 80 GB H100 holds 80 GB, so at least ⌈1.12e12/8e10⌉ = 14.

    **References.** Rajbhandari et al. 2020, *ZeRO: Memory Optimizations Toward Training Trillion Parameter
    Models*, Sec. 3.1 (2 + 2 + 12 bytes per parameter with Adam in mixed precision).
    """

    code = "M001"
    name = "memory-fit"
    quantity = "chips"
    formula = "chips ≥ ⌈16 · N / memory⌉"
    severity = "warning"


class UnknownAccelerator(Rule):
    """The hardware named is not in the accelerator catalog.

    **What it checks.** That the ``hardware`` text matches a catalog name or alias exactly (after dropping
    vendor words, case and punctuation). There is no loose matching: ``H1000`` is not an ``H100``.

    **Why it matters.** Without the accelerator there is no peak and no memory, so the hardware checks cannot
    run. The tool never falls back to a default accelerator; the finding lists the closest catalog names.

    **Example.** ``hardware: "H1000"``: warning, close matches NVIDIA H100 SXM5 80GB, NVIDIA H100 PCIe 80GB.

    **References.** The catalog: ``train-audit hardware``; its sources are per figure in
    ``audit/data/accelerators.csv``.
    """

    code = "H001"
    name = "unknown-accelerator"
    quantity = "hardware"
    formula = "hardware ∈ catalog"
    severity = "warning"


class NoPeakForPrecision(Rule):
    """The accelerator has no published peak for the stated precision.

    **What it checks.** That the catalog has a dense peak for the hardware in the claim's precision (or its
    usual one when the claim does not state it).

    **Why it matters.** A V100 has no bf16 tensor cores and an A100 no fp8: a claim of such a run is either a
    typo in the precision or the hardware, or the arithmetic ran emulated far below any tensor-core peak.

    **Example.** ``hardware: A100, precision: fp8``: warning, no fp8 peak for the A100.

    **References.** Vendor datasheets, per row of ``audit/data/accelerators.csv``.
    """

    code = "H002"
    name = "no-peak-for-precision"
    quantity = "precision"
    formula = "peak(hardware, precision) exists"
    severity = "warning"


class InvalidValue(Rule):
    """A field's value is not usable: unparseable, negative, zero, not finite, or a fraction of a chip.

    **What it checks.** Every input field: numbers in the field's unit or strings with units people write
    (``175B``, ``3640 PF-days``, ``46.2%``). Counts must be positive; chips whole.

    **Why it matters.** A bad value must not silently become a number: the claim is reported ``invalid`` with
    one finding per field, and the rest of the batch is still audited.

    **Example.** ``chips: 1.5`` (a fraction of an accelerator), ``params: "5 apples"`` (unknown unit).

    **References.** ``schemas/claims.schema.json``.
    """

    code = "V001"
    name = "invalid-value"
    quantity = "claim"
    formula = "value parses and is in range"


class DuplicateId(Rule):
    """Two claims in the input share an id.

    **What it checks.** That ids are unique across all input files. Both claims are kept and audited.

    **Why it matters.** Scripts join audit results by id; a duplicate usually means a row pasted twice or two
    sources of the same model that should be told apart.

    **Example.** Two rows with ``id: llama-65b``: the second is flagged.

    **References.** None.
    """

    code = "V002"
    name = "duplicate-id"
    quantity = "id"
    formula = "id unique"
    severity = "warning"


#: The order the engine applies relations in: the first relation able to derive a quantity derives it.
#: Architecture FLOPs (C007) come before 6ND (C001) so that compute derived from an architecture uses it;
#: throughput (C011) before hardware (C003) so MFU from end-to-end chip-hours is checked against the
#: steady-state achieved rate (C005), not derived from it.
RELATION_RULES: tuple[type[RelationRule], ...] = (
    PeakMatchesCatalog, TokensFromEpochs, ComputeFromArchitecture, ComputeSixND, ChipHours, TokensFromThroughput,
    AchievedFromThroughput, ComputeFromHardware, AchievedFromMFU, HFUFromRecompute,
)

ALL_RULES: tuple[type[Rule], ...] = (
    ComputeSixND, ChipHours, ComputeFromHardware, TokensFromThroughput, AchievedFromMFU, PeakMatchesCatalog,
    ComputeFromArchitecture, HFUFromRecompute, Outlier, PhasesSum, AchievedFromThroughput, TokensFromEpochs,
    MFUPlausible, HFUPlausible, AchievedBelowPeak, MemoryFit, UnknownAccelerator, NoPeakForPrecision, TpuSliceCores,
    InvalidValue, DuplicateId,
)

RULES: dict[str, type[Rule]] = {r.code: r for r in ALL_RULES}
