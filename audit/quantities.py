"""The canonical quantities of a training claim: one table, read by the loaders, the engine and every renderer.

The names are the public contract: input fields, ``estimate`` options (with dashes) and JSON output keys.
"""

from __future__ import annotations

import re
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
              "parameter_count", "n_parameters", "model_params", "model_parameters")),
    Quantity("active_params", "Active parameters", "", "count",
             "parameters used per token (mixture-of-experts)",
             ("params_active", "activated_params", "active_parameters", "n_active_params", "activated")),
    Quantity("tokens", "Tokens", "", "count", "training tokens processed",
             ("n_tokens", "training_tokens", "num_tokens", "train_tokens", "dataset_tokens_seen", "tokens_trained",
              "tokens_seen", "tokens_processed")),
    Quantity("compute_flops", "Compute", "FLOP", "flop", "total training compute",
             ("compute", "flops", "training_flops", "train_flops", "reported_compute_flops", "training_compute",
              "total_flops", "training_compute_flop")),
    Quantity("chips", "Accelerators", "", "count", "accelerators used at once",
             ("gpus", "num_gpus", "n_gpus", "gpu_count", "hardware_count", "num_chips", "n_chips", "devices",
              "accelerators", "tpus", "num_accelerators", "hardware_quantity"), integer=True),
    Quantity("wall_clock_days", "Wall-clock", "days", "days", "training duration",
             ("days", "duration_days", "training_days", "wall_clock", "duration", "training_time_days",
              "training_time", "training_duration", "wall_time", "walltime", "wallclock", "wall_clock_time")),
    Quantity("chip_hours", "Chip-hours", "h", "hours", "accelerator-hours (GPU-hours, TPU-hours)",
             ("gpu_hours", "tpu_hours", "accelerator_hours", "device_hours", "gpu_hrs")),
    Quantity("mfu", "MFU", "", "fraction", "model FLOPs utilization",
             ("reported_mfu", "model_flops_utilization"),
             fraction=True),
    Quantity("hfu", "HFU", "", "fraction", "hardware FLOPs utilization",
             ("reported_hfu", "hardware_flops_utilization"), fraction=True),
    Quantity("throughput_tokens_per_s", "Throughput", "tokens/s", "tokens_rate", "tokens per second, whole cluster",
             ("throughput", "tokens_per_s", "tokens_per_second", "tok_per_s")),
    Quantity("achieved_flops_per_chip", "Achieved FLOP/s per chip", "FLOP/s", "flops_rate",
             "sustained FLOP/s per accelerator", ("achieved_flops", "flops_per_gpu", "achieved_flops_per_gpu")),
    Quantity("achieved_hardware_flops_per_chip", "Hardware FLOP/s per chip", "FLOP/s", "flops_rate",
             "sustained hardware FLOP/s per accelerator, recomputation included (Megatron-LM's TFLOP/s per GPU)",
             ("hardware_flops_per_chip", "achieved_hardware_flops", "hardware_flops_per_gpu")),
    Quantity("hardware_compute_flops", "Hardware compute", "FLOP", "flop",
             "total training compute counted as hardware FLOPs, the recomputed forward pass included (OPT-175B's "
             "4.3e23)", ("compute_hardware_flops", "hardware_flops_total", "total_hardware_flops")),
    Quantity("peak_flops_per_chip", "Peak FLOP/s per chip", "FLOP/s", "flops_rate",
             "peak for hardware + precision (from the catalog unless claimed)", ("peak_flops", "peak_flops_per_gpu")),
    # Architecture (optional): enables the FLOPs-per-token conventions of audit/flops.py.
    Quantity("layers", "Layers", "", "count", "transformer layers (L)",
             ("n_layers", "num_layers", "n_layer", "num_hidden_layers", "depth"), integer=True),
    Quantity("d_model", "Model width", "", "count", "hidden size (h)",
             ("hidden_size", "n_embd", "dim", "hidden_dim", "model_dim", "width"), integer=True),
    Quantity("heads", "Attention heads", "", "count", "attention heads (H)",
             ("n_heads", "num_attention_heads", "n_head", "num_heads", "attention_heads"), integer=True),
    Quantity("head_dim", "Head dimension", "", "count", "dimension per head (Q); default d_model / heads",
             ("kv_channels", "d_head", "head_size", "dim_head"), integer=True),
    Quantity("kv_heads", "KV heads", "", "count", "key/value heads (grouped-query attention); default heads",
             ("num_kv_heads", "num_query_groups", "n_kv_heads", "num_key_value_heads"), integer=True),
    Quantity("ffn_dim", "FFN width", "", "count", "MLP hidden size (per expert for mixture-of-experts)",
             ("ffn_hidden_size", "intermediate_size", "d_ff", "moe_ffn_hidden_size", "mlp_dim"), integer=True),
    Quantity("seq_len", "Sequence length", "", "count", "training sequence length (T)",
             ("seq_length", "context_length", "n_ctx", "max_seq_len", "sequence_length", "context_window"),
             integer=True),
    Quantity("vocab_size", "Vocabulary", "", "count", "vocabulary size (V)",
             ("padded_vocab_size", "n_vocab", "vocab"), integer=True),
    Quantity("experts", "Experts", "", "count", "experts per MoE layer", ("num_experts", "n_experts", "n_routed_experts"),
             integer=True),
    Quantity("experts_per_token", "Experts per token", "", "count", "experts each token is routed to (top-k)",
             ("moe_router_topk", "top_k", "num_experts_per_tok", "topk"), integer=True),
    Quantity("epochs", "Epochs", "", "count", "passes over the dataset", ("num_epochs", "n_epochs")),
    Quantity("dataset_tokens", "Dataset tokens", "", "count", "unique tokens in the dataset (tokens = dataset x epochs)",
             ("dataset_size_tokens", "unique_tokens", "dataset_size", "corpus_tokens")),
    Quantity("dataset_size", "Dataset size", "", "count",
             "training examples (datapoints) the dataset holds: tokens for a language model (with domain), "
             "images for a vision model", ("training_dataset_size",)),
    Quantity("finetune_compute_flops", "Fine-tune compute", "FLOP", "flop",
             "compute of the fine-tuning alone (the hardware figures of a fine-tune describe this part)",
             ("finetune_compute", "finetune_flops", "fine_tune_compute_flops")),
    Quantity("trainable_params", "Trainable parameters", "", "count",
             "parameters updated by the optimizer (adapter fine-tunes such as LoRA train a small share)",
             ("n_trainable_params", "trainable_parameters")),
    # Energy, emissions and cost (issue 13): energy = chip_hours · power · PUE, CO2 = energy · intensity,
    # cost = chip_hours · price, cluster power = chips · power · PUE (rules E001-E004).
    Quantity("power_w_per_chip", "Power per chip", "W", "power",
             "average power per accelerator (the catalog's TDP is only its ceiling, E005)",
             ("power_per_chip", "power_per_gpu", "gpu_power", "power_consumption", "power_consumption_w",
              "avg_power_w", "power_w")),
    Quantity("cluster_power_w", "Cluster power", "W", "power",
             "power drawn by the whole training cluster (Epoch AI's 'Training power draw (W)')",
             ("training_power_draw", "cluster_power", "power_draw", "training_power_draw_w")),
    Quantity("pue", "PUE", "", "ratio", "data-centre power usage effectiveness (1.0: chips only)",
             ("power_usage_effectiveness", "datacenter_pue", "data_center_pue")),
    Quantity("energy_mwh", "Energy", "MWh", "energy", "training energy",
             ("energy", "training_energy", "energy_consumption", "energy_mwh_total", "total_energy")),
    Quantity("grid_kgco2_per_kwh", "Carbon intensity", "kg CO2e/kWh", "intensity",
             "carbon intensity of the electricity",
             ("carbon_intensity", "grid_intensity", "grid_carbon_intensity", "kgco2_per_kwh", "co2_per_kwh")),
    Quantity("co2_tonnes", "Emissions", "t CO2e", "co2", "training emissions",
             ("co2", "co2_t", "co2_emissions", "carbon_emitted", "carbon_emissions", "tco2eq", "tco2e",
              "co2_eq_tonnes", "carbon_emitted_tco2eq", "emissions", "co2eq_emissions", "co2e_emissions",
              "co2_eq_emissions", "greenhouse_gas_emissions", "ghg_emissions")),
    Quantity("price_per_chip_hour", "Price per chip-hour", "USD/chip-h", "usd_rate", "rental price",
             ("price_per_gpu_hour", "gpu_hour_price", "price_per_hour", "usd_per_gpu_hour", "cost_per_gpu_hour",
              "price_per_chip_hour_usd")),
    Quantity("cost_usd", "Cost", "USD", "usd", "training cost (a 2023-USD figure such as Epoch AI's is "
             "compared as it is)",
             ("cost", "training_cost", "compute_cost", "training_cost_usd",
              "training compute cost (2023 USD)")),
    Quantity("flops_per_token", "FLOPs per token", "FLOP", "flop", "model FLOPs per token (forward + backward)",
             derived_only=True),
    Quantity("recompute_factor", "Recompute factor", "", "count", "hardware FLOPs / model FLOPs",
             derived_only=True),
    Quantity("tokens_per_param", "Tokens per parameter", "", "count", "tokens / parameters", derived_only=True),
    Quantity("throughput_per_chip", "Throughput per chip", "tokens/s", "tokens_rate",
             "tokens per second per accelerator: a throughput stated per GPU (TinyLlama's 24,000 tokens/s per "
             "A100), or tokens / (3600 · chip-hours)", derived_only=True),
    Quantity("memory_per_chip", "Memory per chip", "bytes", "bytes", "accelerator memory (catalog)",
             derived_only=True),
    Quantity("training_state_bytes", "Training state", "bytes", "bytes",
             "bytes of weights, gradients and optimizer state (16 per trained parameter with Adam in mixed "
             "precision; 2 per frozen parameter of an adapter fine-tune)", derived_only=True),
    Quantity("min_chips_memory", "Min. chips for memory", "", "count",
             "fewest accelerators whose memory holds the training state", derived_only=True, integer=True),
)

#: Numeric quantities by name.
BY_NAME: dict[str, Quantity] = {q.name: q for q in QUANTITIES}

#: Text fields of a claim.
TEXT_FIELDS: tuple[str, ...] = ("id", "name", "source", "hardware", "precision", "activation_recompute", "mlp",
                                "domain", "base_model", "finetune_method", "throughput_scope", "task",
                                "architecture", "params_notes", "dataset_notes",
                                "compute_notes", "time_notes", "confidence")

TEXT_ALIASES: dict[str, tuple[str, ...]] = {
    "id": ("claim_id", "run_id", "key"),
    "name": ("model", "model_name", "run", "run_name", "title"),
    "source": ("reference", "citation", "url", "link", "paper"),
    "hardware": ("accelerator", "gpu", "gpu_type", "device", "hardware_type", "training_hardware", "chip"),
    "precision": ("dtype", "numerical_format", "numeric_format"),
    "activation_recompute": ("recompute", "recompute_granularity", "activation_checkpointing", "remat",
                             "rematerialization"),
    "mlp": ("mlp_type", "activation", "hidden_act", "ffn_type"),
    "domain": ("modality", "task_domain"),
    "base_model": ("finetuned_from", "base", "parent_model"),
    "finetune_method": ("finetuning_method", "adapter", "peft_method"),
    "throughput_scope": ("throughput_per", "throughput_unit_scope"),
    # Epoch AI's "Task" ("Protein or nucleotide language model (pLM/nLM)"): what the datapoints are.
    "task": ("tasks", "task_type"),
    # "dense", "moe", "mixture-of-experts": with a sparse model, N in C = 6ND is the active count.
    "architecture": ("arch", "model_architecture", "architecture_type"),
    # Epoch AI's "Parameters notes": where it says that a model is a mixture of experts.
    "params_notes": ("parameters_notes", "parameter_notes", "param_notes"),
    # Epoch AI's "Dataset size notes": what the dataset size counts (tokens, words, examples), audit.datapoints.
    "dataset_notes": ("dataset_size_notes", "data_notes", "dataset_description"),
    # Epoch AI's "Training compute notes": whether the compute is a sum of several trainings, audit.notes.
    "compute_notes": ("training_compute_notes", "flops_notes", "compute_flops_notes"),
    # Epoch AI's "Training time notes": whether the training time is a count of accelerator-hours (V017), audit.notes.
    "time_notes": ("training_time_notes", "wall_clock_notes", "duration_notes"),
    # Epoch AI's "Confidence" in its compute estimate (Confident, Likely, Speculative): a "speculative" compute
    # is one its source does not vouch for, so two estimates of it that disagree are no news (V006).
    "confidence": ("compute_confidence", "confidence_level", "estimate_confidence"),
}

#: A throughput scope that says per accelerator ("per GPU", "/chip"): the rate of one accelerator, which the engine
#: multiplies by the chips; a throughput written so ("380 tokens/s/GPU") gets such a scope when reading.
PER_CHIP_SCOPE = re.compile(r"per\s*(?:gpu|chip|device|accelerator|tpu|core)|/\s*(?:gpu|chip|device|accelerator)",
                            re.IGNORECASE)

#: The fields a derivation that no rule makes reads, by the note it leaves on the values it fills (their ``how``):
#: the "From" of such a value in the HTML report. Filled by :func:`noted` where each note is defined, so a note and
#: what it read cannot part.
NOTE_READS: dict[str, tuple[str, ...]] = {}


def noted(how: str, *reads: str) -> str:
    """``how``, the note of a derivation, recorded as reading the fields ``reads`` (:data:`NOTE_READS`)."""
    NOTE_READS[how] = reads
    return how


#: How the cluster's throughput is noted (its ``how``) when it is a throughput stated per accelerator times the chips.
CLUSTER_FROM_CHIP = noted("throughput per chip × chips", "throughput_per_chip", "chips")

#: A mixture-of-experts model, as its architecture field or its parameter notes say it (Epoch AI's notes:
#: "Mixture-of-Experts", "MoE", "22 billion activated parameters", "36B parameters active per inference",
#: "sparse architecture"). A mention of another paper's MoE layer may match too; that only turns C = 6ND into
#: the bound C ≤ 6·N_total·D, which still flags any compute above it.
SPARSE_PATTERN: str = (r"mixture[- ]of[- ]experts|\bmoe\b|\bactivated? param|\bparam\w* (?:active|activated)\b"
                       r"|sparse architecture|\bactive per\b|\bsparse(?:ly)?[- ]gated\b")

#: Fine-tuning methods that train adapters only: the frozen weights hold no gradients or optimizer state.
ADAPTER_METHODS: frozenset[str] = frozenset({"lora", "qlora", "adapter", "adapters", "prefix", "prefix-tuning",
                                             "prompt-tuning", "ia3", "peft", "dora"})

#: Recomputation modes (Korthikanti et al. 2022): none, selective (attention core only), full (every layer).
RECOMPUTE_ALIASES: dict[str, str] = {
    "none": "none", "no": "none", "false": "none", "off": "none", "0": "none",
    "selective": "selective", "partial": "selective",
    "full": "full", "yes": "full", "true": "full", "on": "full", "all": "full", "1": "full",
}

#: MLP kinds: gated MLPs (SwiGLU, GeGLU) have three weight matrices instead of two.
GATED_MLP: frozenset[str] = frozenset({"swiglu", "geglu", "glu", "gated", "silu", "swish", "reglu"})

#: Input quantities (everything a claim may state).
INPUT_QUANTITIES: tuple[str, ...] = tuple(q.name for q in QUANTITIES if not q.derived_only)

#: Precisions a peak can refer to. ``16bit`` is a report's "16-bit" or "mixed precision" without the format: the
#: part's 16-bit tensor format (bf16 where it has one, else fp16; :meth:`audit.catalog.Accelerator.resolve_precision`).
#: ``fp4``, ``int8`` and ``fp64`` are read so that a claim stating them is not checked against another format's peak;
#: the catalog has no column for them (the claim gets "no peak for this precision").
PRECISIONS: tuple[str, ...] = ("bf16", "fp16", "fp8", "tf32", "fp32", "16bit", "fp4", "int8", "fp64")

#: Exact spellings (lowercase, letters and digits only) of each precision; ``_precision_of`` in
#: :mod:`audit.reading.normalize` also reads longer texts ("FP16/FP32 mixed", "bfloat16 (parameters)").
PRECISION_ALIASES: dict[str, str] = {
    "bf16": "bf16", "bfloat16": "bf16", "bfloat": "bf16", "brainfloat16": "bf16", "brainfloat": "bf16",
    "fp16": "fp16", "float16": "fp16", "half": "fp16", "f16": "fp16", "halfprecision": "fp16", "binary16": "fp16",
    "fp8": "fp8", "float8": "fp8", "e4m3": "fp8", "e5m2": "fp8", "mxfp8": "fp8", "nvfp8": "fp8", "fp8e4m3": "fp8",
    "fp8e5m2": "fp8",
    "tf32": "tf32", "tensorfloat32": "tf32", "tensorfloat": "tf32",
    "fp32": "fp32", "float32": "fp32", "single": "fp32", "f32": "fp32", "singleprecision": "fp32",
    "fullprecision": "fp32", "binary32": "fp32", "32bit": "fp32",
    "16bit": "16bit", "mixed": "16bit", "mixedprecision": "16bit", "amp": "16bit", "automaticmixedprecision": "16bit",
    "fp4": "fp4", "nvfp4": "fp4", "mxfp4": "fp4", "float4": "fp4", "e2m1": "fp4",
    "int8": "int8", "uint8": "int8",
    "fp64": "fp64", "float64": "fp64", "double": "fp64", "doubleprecision": "fp64", "64bit": "fp64",
}


#: Labels of the text fields a derivation reads (:data:`NOTE_READS`).
TEXT_LABELS: dict[str, str] = {"params_notes": "Parameter notes", "dataset_notes": "Dataset notes",
                               "compute_notes": "Compute notes", "time_notes": "Time notes"}


def label(name: str) -> str:
    """A quantity's display label (also for the engine's internal ``n_eff`` and ``catalog_peak``, and the notes
    fields of :data:`TEXT_LABELS`)."""
    if name == "n_eff":
        return "Parameters (N)"
    if name == "catalog_peak":
        return "Datasheet peak"
    q = BY_NAME.get(name)
    return q.label if q else TEXT_LABELS.get(name, name)


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


#: A unit in brackets at the end of a header: "Training time (hours)"; written with "in" ("Training time (in hours)",
#: "Params (in billions)", DeepSeek-V3's "(in H800 GPU Hours)"), the "in" is no part of the unit.
UNIT_HINT = re.compile(r"^(?P<base>.*?)\s*[(\[]\s*(?:in\s+)?(?P<unit>[^()\[\]]+?)\s*[)\]]\s*$",
                       re.IGNORECASE)


def canonical_column(name: str) -> str | None:
    """The canonical field a column name stands for, or None when it is an extra field."""
    return canonical_column_and_unit(name)[0]


def canonical_column_and_unit(name: str) -> tuple[str | None, str | None]:
    """The canonical field of a column, and the unit its header names for bare numbers, if any.

    ``"Training time (hours)"`` -> ``("wall_clock_days", "hours")``; ``"gpu_hours"`` -> ``("chip_hours", None)``.
    The whole header is matched first, so an alias that contains brackets wins over a unit hint.
    """
    text = str(name)
    canon = _COLUMN_MAP.get(_key(text))
    m = UNIT_HINT.match(text)
    if canon is not None:
        # "MFU (%)" and "MFU %" are the alias "mfu" once their signs are dropped: the unit still applies.
        if m and m.group("base") and _COLUMN_MAP.get(_key(m.group("base"))) == canon and not _key(m.group("unit")):
            return canon, m.group("unit")
        if text.rstrip().endswith("%") and not _key(text.rstrip()[-1]):
            return canon, "%"
        return canon, None
    if m and m.group("base"):
        # "Params (Activated)", "Parameters (active)", "Params (Total)" (Llama 4's card): a word of which count, not a
        # unit: the header read with it first ("Activated Params"), when that names a field.
        if _key(m.group("unit")) in _WHICH_COUNT and (
                qualified := _COLUMN_MAP.get(_key(m.group("unit") + m.group("base")))) is not None:
            return qualified, None
        return _COLUMN_MAP.get(_key(m.group("base"))), m.group("unit")
    return None, None


#: Words in a header's brackets that say which of two counts it is, not a unit (mixture-of-experts parameters).
_WHICH_COUNT = frozenset({"active", "activated", "total"})


_COLUMN_MAP = column_map()
