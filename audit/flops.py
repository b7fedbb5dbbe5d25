"""FLOPs per token by the established conventions, vectorized (numpy arrays or scalars).

Each convention counts one training step's forward and backward passes (backward = 2x forward), per token:

- ``6N`` (Kaplan et al. 2020, Sec. 2.1; Chinchilla's "6ND"): 6 FLOPs per parameter per token.
- ``palm`` (Chowdhery et al. 2022, PaLM, App. B): 6N + 12·L·H·Q·T, adding attention's score and value
  products (L layers, H heads, Q head dim, T sequence length). nanoGPT's ``estimate_mfu`` and torchtitan count
  the same way.
- ``megatron`` (Narayanan et al. 2021, Megatron-LM, Sec. 5.1 / App.): 72·B·s·l·h²·(1 + s/6h + V/12lh) model
  FLOPs per iteration of B sequences of s tokens, i.e. 72·l·h²·(1 + s/6h + V/12lh) per token, for a GPT with a
  4h MLP and multi-head attention.
- ``megatron-general`` (Megatron-LM ``training.py``, ``num_floating_point_operations``): the same count with
  grouped-query attention (kv_heads), any head dim, gated (SwiGLU) MLPs (3 matrices: x3/2) and mixture-of-experts
  top-k routing: 12·l·h²·[(1 + g/a + s/h)·(q/h) + (f/h)·k·m + V/(2lh)], q = a·Q.

``causal=True`` halves the attention score/value term, as some codebases do because a causal mask makes half the
scores unused. Hardware FLOPs add recomputation: full activation recomputation repeats the forward pass of every
layer (4 passes instead of 3, Narayanan et al. 2021: 96·B·s·l·h²·(1 + s/6h + V/16lh)), so HFU = 4/3 MFU apart
from the logit layer, which is not recomputed; selective recomputation (Korthikanti et al. 2022) repeats only the
attention core.
"""

from __future__ import annotations

from typing import Any

import numpy as np

CONVENTIONS: dict[str, str] = {
    "6N": "6·N (Kaplan et al. 2020; Chinchilla's 6ND)",
    "palm": "6·N + 12·L·H·Q·T (PaLM, Chowdhery et al. 2022, App. B; nanoGPT, torchtitan)",
    "megatron": "72·l·h²·(1 + s/6h + V/12lh) (Narayanan et al. 2021)",
    "megatron-general": "Megatron-LM num_floating_point_operations (GQA, SwiGLU, MoE top-k)",
}

#: How each convention is shown beside the others, in order of completeness (``auto`` takes the first that the
#: claim's fields allow, among those in :data:`AUTO_ORDER`).
CONVENTION_LABELS: dict[str, str] = {
    "megatron-general": "Megatron-LM (GQA, gated MLP, MoE)",
    "megatron": "Narayanan et al. 2021",
    "palm": "PaLM 6N + 12·L·H·Q·T",
    "6N": "6N",
}

#: The conventions ``auto`` chooses among, most complete first (``megatron`` is shown, never chosen: on a
#: plain GPT it equals ``megatron-general``).
AUTO_ORDER: tuple[str, ...] = ("megatron-general", "palm", "6N")

#: Conventions a user may choose (``--convention``).
CHOICES: tuple[str, ...] = ("auto", *AUTO_ORDER)

#: Conventions that count from an architecture (with 6N, C = F·D is C = 6·N·D again).
ARCHITECTURE_CONVENTIONS: frozenset[str] = frozenset({"megatron-general", "palm"})

Array = Any  # a float or a numpy array of floats


def _f(x: Any) -> Array:
    return np.asarray(x, dtype=float) if x is not None else np.nan


def six_n(n: Array) -> Array:
    """6·N FLOPs per token."""
    return 6.0 * _f(n)


def palm(n: Array, layers: Array, heads: Array, head_dim: Array, seq_len: Array, causal: bool = False) -> Array:
    """PaLM's model FLOPs per token: 6·N + 12·L·H·Q·T (halved attention term with ``causal``)."""
    attn = 12.0 * _f(layers) * _f(heads) * _f(head_dim) * _f(seq_len)
    return 6.0 * _f(n) + (attn / 2 if causal else attn)


def megatron(layers: Array, d_model: Array, seq_len: Array, vocab_size: Array, causal: bool = False) -> Array:
    """Narayanan et al. 2021 model FLOPs per token: 72·l·h²·(1 + s/6h + V/12lh)."""
    l, h, s, v = _f(layers), _f(d_model), _f(seq_len), _f(vocab_size)
    s_term = s / (6 * h) / (2 if causal else 1)
    return 72.0 * l * h * h * (1 + s_term + v / (12 * l * h))


def megatron_hardware(layers: Array, d_model: Array, seq_len: Array, vocab_size: Array) -> Array:
    """Narayanan et al. 2021 hardware FLOPs per token with full recomputation: 96·l·h²·(1 + s/6h + V/16lh)."""
    l, h, s, v = _f(layers), _f(d_model), _f(seq_len), _f(vocab_size)
    return 96.0 * l * h * h * (1 + s / (6 * h) + v / (16 * l * h))


def megatron_general_terms(layers: Array, d_model: Array, heads: Array, head_dim: Array, kv_heads: Array,
                           ffn_dim: Array, seq_len: Array, vocab_size: Array, experts_per_token: Array = 1.0,
                           gated: Array = False, causal: bool = False) -> dict[str, Array]:
    """Megatron-LM's count split into its terms, per token (each already x3 for forward + backward):
    ``projections`` (QKV and output), ``attention`` (scores and values), ``mlp`` and ``logits``."""
    l, h, a, qd = _f(layers), _f(d_model), _f(heads), _f(head_dim)
    g = np.where(np.isnan(_f(kv_heads)), a, _f(kv_heads))
    f, s, v = _f(ffn_dim), _f(seq_len), _f(vocab_size)
    k = np.where(np.isnan(_f(experts_per_token)), 1.0, _f(experts_per_token))
    m = np.where(np.asarray(gated, dtype=bool), 1.5, 1.0)
    q = a * qd
    base = 12.0 * l * h * h
    attn = base * (s / h) * (q / h) / (2 if causal else 1)
    return {
        "projections": base * (1 + g / a) * (q / h),
        "attention": attn,
        "mlp": base * (f / h) * k * m,
        "logits": base * v / (2 * l * h),
    }


def megatron_general(layers: Array, d_model: Array, heads: Array, head_dim: Array, kv_heads: Array,
                     ffn_dim: Array, seq_len: Array, vocab_size: Array, experts_per_token: Array = 1.0,
                     gated: Array = False, causal: bool = False) -> Array:
    """Megatron-LM ``num_floating_point_operations`` / (batch · seq): model FLOPs per token."""
    terms = megatron_general_terms(layers, d_model, heads, head_dim, kv_heads, ffn_dim, seq_len, vocab_size,
                                   experts_per_token, gated, causal)
    return terms["projections"] + terms["attention"] + terms["mlp"] + terms["logits"]


def recompute_factor(recompute: Array, terms: dict[str, Array] | None = None) -> Array:
    """Hardware FLOPs / model FLOPs for a recomputation mode (``none``, ``selective``, ``full``).

    Full recomputation repeats each layer's forward pass (one more of the three passes) but not the logit
    layer: (model + (model - logits)/3) / model; without the terms, 4/3. Selective recomputation repeats the
    attention core's forward pass only: (model + attention/3) / model; unknown without the terms.
    """
    mode = np.asarray(recompute, dtype=object)
    if terms is None:
        return np.where(mode == "full", 4.0 / 3.0, np.where(mode == "none", 1.0, np.nan))
    model = terms["projections"] + terms["attention"] + terms["mlp"] + terms["logits"]
    full = (model + (model - terms["logits"]) / 3.0) / model
    selective = (model + terms["attention"] / 3.0) / model
    return np.where(mode == "full", full, np.where(mode == "selective", selective,
                                                   np.where(mode == "none", 1.0, np.nan)))
