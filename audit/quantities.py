"""The canonical quantities of a training claim: one table, read by the loaders, the engine and every renderer.

The names are the public contract: input fields, ``estimate`` options (with dashes) and JSON output keys.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Quantity:
    """One canonical quantity.

    ``kind`` selects the unit parser (see :mod:`audit.units`); ``integer`` quantities must be whole numbers;
    ``positive`` ones must be > 0. ``derived_only`` quantities are never read from input.
    """

    name: str
    label: str
    unit: str
    kind: str
    description: str
    aliases: tuple[str, ...] = field(default=())
    integer: bool = False
    positive: bool = True
    derived_only: bool = False
    fraction: bool = False


QUANTITIES: tuple[Quantity, ...] = (
    Quantity("params", "Parameters", "", "count", "total parameters",
             ("n_params", "parameters", "num_params", "params_total", "total_params", "model_size",
              "parameter_count", "n_parameters", "size")),
    Quantity("active_params", "Active parameters", "", "count",
             "parameters used per token (mixture-of-experts)",
             ("params_active", "activated_params", "active_parameters", "n_active_params")),
    Quantity("tokens", "Tokens", "", "count", "training tokens processed",
             ("n_tokens", "training_tokens", "num_tokens", "train_tokens", "dataset_tokens_seen", "tokens_trained")),
    Quantity("compute_flops", "Compute", "FLOP", "flop", "total training compute",
             ("compute", "flops", "training_flops", "train_flops", "reported_compute_flops", "training_compute",
              "total_flops", "training_compute_flop")),
    Quantity("chips", "Accelerators", "", "count", "accelerators used at once",
             ("gpus", "num_gpus", "n_gpus", "gpu_count", "hardware_count", "num_chips", "n_chips", "devices",
              "accelerators", "tpus", "num_accelerators", "hardware_quantity"), integer=True),
    Quantity("wall_clock_days", "Wall-clock", "days", "days", "training duration",
             ("days", "duration_days", "training_days", "wall_clock", "duration", "training_time_days")),
    Quantity("chip_hours", "Chip-hours", "h", "hours", "accelerator-hours (GPU-hours, TPU-hours)",
             ("gpu_hours", "tpu_hours", "accelerator_hours", "device_hours", "gpu_hrs")),
    Quantity("mfu", "MFU", "", "fraction", "model FLOPs utilization", ("reported_mfu", "model_flops_utilization"),
             fraction=True),
    Quantity("hfu", "HFU", "", "fraction", "hardware FLOPs utilization",
             ("reported_hfu", "hardware_flops_utilization"), fraction=True),
    Quantity("throughput_tokens_per_s", "Throughput", "tokens/s", "tokens_rate", "tokens per second, whole cluster",
             ("throughput", "tokens_per_s", "tokens_per_second", "tok_per_s")),
    Quantity("achieved_flops_per_chip", "Achieved FLOP/s per chip", "FLOP/s", "flops_rate",
             "sustained FLOP/s per accelerator", ("achieved_flops", "flops_per_gpu", "achieved_flops_per_gpu")),
    Quantity("peak_flops_per_chip", "Peak FLOP/s per chip", "FLOP/s", "flops_rate",
             "peak for hardware + precision (from the catalog unless claimed)", ("peak_flops", "peak_flops_per_gpu")),
    Quantity("tokens_per_param", "Tokens per parameter", "", "count", "tokens / parameters", derived_only=True),
    Quantity("memory_per_chip", "Memory per chip", "bytes", "bytes", "accelerator memory (catalog)",
             derived_only=True),
    Quantity("min_chips_memory", "Min. chips for memory", "", "count",
             "fewest accelerators whose memory holds the training state", derived_only=True, integer=True),
)

#: Numeric quantities by name.
BY_NAME: dict[str, Quantity] = {q.name: q for q in QUANTITIES}

#: Text fields of a claim.
TEXT_FIELDS: tuple[str, ...] = ("id", "name", "source", "hardware", "precision")

TEXT_ALIASES: dict[str, tuple[str, ...]] = {
    "id": ("claim_id", "run_id", "key"),
    "name": ("model", "model_name", "run", "run_name", "title"),
    "source": ("reference", "citation", "url", "link", "paper"),
    "hardware": ("accelerator", "gpu", "gpu_type", "device", "hardware_type", "training_hardware", "chip"),
    "precision": ("dtype", "numerical_format", "numeric_format"),
}

#: Input quantities (everything a claim may state).
INPUT_QUANTITIES: tuple[str, ...] = tuple(q.name for q in QUANTITIES if not q.derived_only)

#: Precisions a peak can refer to.
PRECISIONS: tuple[str, ...] = ("bf16", "fp16", "fp8", "tf32", "fp32")

PRECISION_ALIASES: dict[str, str] = {
    "bf16": "bf16", "bfloat16": "bf16", "bfloat": "bf16",
    "fp16": "fp16", "float16": "fp16", "half": "fp16", "f16": "fp16",
    "fp8": "fp8", "float8": "fp8", "e4m3": "fp8", "e5m2": "fp8",
    "tf32": "tf32", "tensorfloat32": "tf32",
    "fp32": "fp32", "float32": "fp32", "single": "fp32", "f32": "fp32",
}


def _key(text: str) -> str:
    return "".join(ch for ch in text.lower() if ch.isalnum())


def column_map() -> dict[str, str]:
    """Map a normalized column name (lowercase, alphanumerics only) to its canonical field name."""
    mapping: dict[str, str] = {}
    for q in QUANTITIES:
        if q.derived_only:
            continue
        for name in (q.name, *q.aliases):
            mapping[_key(name)] = q.name
    for name, aliases in TEXT_ALIASES.items():
        for alias in (name, *aliases):
            mapping[_key(alias)] = name
    return mapping


def canonical_column(name: str) -> str | None:
    """The canonical field a column name stands for, or None when it is an extra field."""
    return _COLUMN_MAP.get(_key(str(name)))


_COLUMN_MAP = column_map()
