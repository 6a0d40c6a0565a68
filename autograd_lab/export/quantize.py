"""int8 post-training quantization of the dense and conv layers.

Symmetric quantization, q = round(v / s) clamped to [-127, 127], with zero mapped to zero (Jacob et al., "Quantization
and Training of Neural Networks for Efficient Integer-Arithmetic-Only Inference", CVPR 2018, use the affine form;
symmetric is the zero-point-free special case). Rounding is to the nearest integer with **ties away from zero**: for
weights here at export (:func:`round_half_away`, exactly C's ``roundf``), for activations in the C kernel
``al_quantize_one`` as ``(int32_t)(fabsf(t) + 0.5f)`` with the sign put back, and bit for bit the same in its NumPy
twin :func:`~autograd_lab.export.simulate.quantize_values`. That float32 sum differs from ``roundf`` only at
|t| = 0.49999997 (the largest float32 below 0.5), which it rounds to 1; host, board and simulation agree, so only
the comparison with ``roundf`` is affected.

* weights: one scale per output row (dense) or output channel (conv), s_w[j] = max_p |W[j, p]| / 127, float32;
  a conv's weights are used with batch norm already folded in;
* activations entering a dense or conv layer: one scale, s_x = max |x| / 127 over a calibration sample of training
  inputs (float32); x_q = round(x · (1 / s_x)), the product taken in float32;
* the layer sums x_q · q_w in **int32** (|sum| <= 127² · k, far inside int32 for k < 133,000) and *requantizes in
  float32*: v = float32(sum) · float32(s_x · s_w[j]) + b[j], then the activation (then a fused max pool), and, when
  the next layer reads int8, round(v · (1 / s_next)) clamped to [-127, 127]. Cortex-M4F/M7 have a single-precision
  FPU, so this costs a few instructions per output, not per MAC; IEEE float32 arithmetic gives the same bits on
  every target, so the NumPy simulation repeats it exactly.

When a dense layer feeds only another dense layer, or a conv feeds convs and dense layers (see
:func:`quantize_steps`), it writes its output already quantized with the next layer's scale, so float activations
between the two never need RAM. All other ops stay float32.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from autograd_lab.export.errors import ExportError
from autograd_lab.export.simulate import conv_groups, padded_rows, predict, run_steps
from autograd_lab.export.steps import Step
from autograd_lab.export.trace import Graph, Tensor

QMAX = 127
#: A conv with a float input and fewer patch values than this (a first layer, e.g. 3x3 on one channel) stays float32.
FLOAT_FIRST_PATCH = 16


def quantize_steps(graph: Graph, steps: list[Step], calibration: np.ndarray) -> list[Step]:
    """Replace every float dense and conv step by int8 steps, with activation scales from ``calibration`` inputs
    (N, size).

    A dense or conv step writes its output already quantized (int8 pairs) when every reader is an int8 layer that
    can take it that way: a dense layer after a dense layer, or a conv with an even channel count feeding convs
    and dense layers whose input length is a multiple of 16; otherwise it writes float32 and the reader quantizes.

    Raises:
        ExportError: if the calibration sample is empty or its rows do not have the model's input size.
    """
    x = np.asarray(calibration, dtype=np.float32)
    if len(x) == 0 or x.reshape(len(x), -1).shape[1] != graph.input.size:
        raise ExportError(f"calibration data of shape {x.shape} does not hold inputs of {graph.input.size} values")
    values = run_steps(graph, steps, x.reshape(len(x), -1))
    scales = {id(s): _scale(values[id(s.inputs[0])]) for s in steps if s.kind in ("dense", "conv")}
    readers: dict[int, list[Step]] = {}
    for s in steps:
        for t in s.inputs:
            readers.setdefault(id(t), []).append(s)
    out: list[Step] = []
    quantized: dict[int, Tensor] = {}  # float tensor id -> the int8 tensor its producer writes instead
    for s in steps:
        if s.kind not in ("dense", "conv"):
            out.append(s)
            continue
        users = readers.get(id(s.output), [])
        q_out = s.output is not graph.output and bool(users) and _takes_q16(s, users)
        out_inv = np.float32(1 / scales[id(users[0])]) if q_out else np.float32(0)
        if s.kind == "dense":
            k, m, rows = int(s.params["k"]), int(s.params["m"]), int(s.params.get("rows", 1))
            kp, mp = _round16(k), _round16(m)
            src = s.inputs[0]
            xq = quantized.get(id(src))
            if xq is None:
                xq = Tensor(f"{src.name}_q", (rows * kp // 2,), "act", dtype="q16")
                out.append(Step("quantize", [src], xq, {"rows": rows, "k": k, "kp": kp,
                                                        "inv_scale": np.float32(1 / scales[id(s)])},
                                f"quantize the input of {s.where}"))
            output = Tensor(f"{s.output.name}_q", (mp // 2,), "act", dtype="q16") if q_out else s.output
            out.append(_dense_q8(s, xq, output, scales[id(s)], kp, mp, out_inv))
        else:
            g = s.params["geom"]
            words = g["ph"] * g["pw"] * g["cout"] // 2
            output = Tensor(f"{s.output.name}_q", (words,), "act", dtype="q16") if q_out else s.output
            xq = quantized.get(id(s.inputs[0]))
            if xq is None and int(s.params["k"]) < FLOAT_FIRST_PATCH:
                # A conv reading floats through a small patch (a first layer) stays float32: quantizing each patch
                # would cost more instructions than int8 saves, and its few weights are a few hundred bytes.
                if q_out:
                    row = Tensor(f"{s.params['weight_name']}_row", (g["pw"] * g["cout"],), "act")
                    out.append(Step("conv_to_q8", s.inputs, output, dict(s.params, out_inv_scale=out_inv),
                                    s.where + " (float32, int8 output)", s.macs, scratch=[row, *s.scratch]))
                else:  # simulated in the C order, so that the int8 model's simulation stays bit-exact
                    out.append(Step("conv", s.inputs, s.output, dict(s.params, exact=True), s.where, s.macs,
                                    scratch=s.scratch))
            else:
                out.append(_conv_q8(s, xq, output, scales[id(s)], out_inv))
        if q_out:
            quantized[id(s.output)] = output
    return out


def _takes_q16(s: Step, users: list[Step]) -> bool:
    """Whether every reader of ``s``'s output can read it as int8 pairs written by ``s``."""
    if s.kind == "dense":  # one row each (a token sequence's rows are quantized by their reader)
        return (len(users) == 1 and users[0].kind == "dense"
                and s.params.get("rows", 1) == 1 and users[0].params.get("rows", 1) == 1)
    if s.params["geom"]["cout"] % 2:
        return False
    # al_patch_q16 gathers whole pixels: a grouped reader gathers floats instead
    return all((u.kind == "conv" and u.params["geom"]["cin"] % 2 == 0 and conv_groups(u.params["geom"]) == 1)
               or (u.kind == "dense" and u.params["k"] % 16 == 0) for u in users)


def round_half_away(t: np.ndarray) -> np.ndarray:
    """Round to the nearest integer, ties away from zero (C's ``roundf``; NumPy's ``np.round`` and ``np.rint``
    round ties to even instead). Exact for float32 ``t`` (the sum |t| + 0.5 is taken in float64). Returns float64."""
    a = np.asarray(t, dtype=np.float64)
    return np.sign(a) * np.floor(np.abs(a) + 0.5)


def quantize_weight_rows(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric per-row int8 weights: ``s[j] = max_p |w[j, p]| / 127`` (float32; 1.0 for a row of zeros) and
    ``q = clip(round_half_away(w / s), -127, 127)`` with the division in float32.

    Args:
        w: (m, k) float weights.

    Returns:
        (q, s): int32 (m, k) values in [-127, 127] and float32 (m,) scales.
    """
    w = np.asarray(w, dtype=np.float32)
    s_w = (np.abs(w).max(axis=1) / np.float32(QMAX)).astype(np.float32)
    s_w[s_w == 0] = 1.0
    q = np.clip(round_half_away(w / s_w[:, None]), -QMAX, QMAX).astype(np.int32)
    return q, s_w


def _dense_q8(s: Step, xq: Tensor, output: Tensor, s_x: float, kp: int, mp: int, out_inv: np.float32) -> Step:
    w = np.asarray(s.params["weight"], dtype=np.float32)
    m, k = w.shape
    q, s_w = quantize_weight_rows(w)
    wq = np.zeros((mp, kp), dtype=np.int32)
    wq[:m, :k] = q
    scale = np.zeros(mp, dtype=np.float32)
    scale[:m] = (np.float32(s_x) * s_w).astype(np.float32)
    bias = None
    if s.params["bias"] is not None:
        bias = np.zeros(mp, dtype=np.float32)
        bias[:m] = s.params["bias"]
    params = dict(s.params, kp=kp, mp=mp, wq=wq, words=pack_words(wq), scale=scale, bias=bias,
                  out_inv_scale=out_inv)
    return Step("dense_q8", [xq], output, params, s.where + " (int8)", s.macs)


def _conv_q8(s: Step, xq: Tensor | None, output: Tensor, s_x: float, out_inv: np.float32) -> Step:
    """The int8 conv: the patch times per-channel int8 weights in int32, requantized in float32 (see module doc)."""
    p = s.params
    k, m = int(p["k"]), int(p["m"])
    groups = conv_groups(p["geom"])
    # per group: al_dot_q8 takes 16 or 8 inputs per step, 4 rows per block; groups stored one after the other
    kp, mp = -(-k // 8) * 8, -(-(m // groups) // 4) * 4
    q, s_w = quantize_weight_rows(p["weight"])
    rows = padded_rows(m, groups, mp)
    wq = np.zeros((groups * mp, kp), dtype=np.int32)
    wq[rows, :k] = q
    scale = np.zeros(groups * mp, dtype=np.float32)
    scale[rows] = (np.float32(s_x) * s_w).astype(np.float32)
    bias = None
    if p["bias"] is not None:
        bias = np.zeros(groups * mp, dtype=np.float32)
        bias[rows] = p["bias"]
    name = p["weight_name"]
    scratch = [] if xq is not None else [Tensor(f"{name}_fpatch", (k,), "act")]
    # int8 patch (pair words), and the int32 sums: the pooling window's running maximum (mp words per group)
    scratch += [Tensor(f"{name}_qpatch", (kp // 2,), "act", dtype="q16"),
                Tensor(f"{name}_best", (groups * mp,), "act", dtype="q16")]
    params = dict(p, kp=kp, mp=mp, wq=wq, words=pack_words(wq), scale=scale, bias=bias, out_inv_scale=out_inv,
                  in_inv_scale=np.float32(1 / s_x))
    return Step("conv_q8", [xq if xq is not None else s.inputs[0]], output, params, s.where + " (int8)", s.macs,
                scratch=scratch)


def pack_words(wq: np.ndarray) -> np.ndarray:
    """Lay int8 weights (mp, kp) out for ``al_dense_q8``: blocks of 4 rows, groups of 4 inputs, one uint32 word per
    row and group holding the bytes (w0, w2, w1, w3) from the least significant byte up, two words to a uint64
    (the first in the low half)."""
    mp, kp = wq.shape
    blocks = wq.reshape(mp // 4, 4, kp // 4, 4).transpose(0, 2, 1, 3)[..., [0, 2, 1, 3]]
    b = (blocks.astype(np.int64) & 0xFF).astype(np.uint64)
    words = (b[..., 0] | (b[..., 1] << 8) | (b[..., 2] << 16) | (b[..., 3] << 24)).ravel()
    return words[0::2] | (words[1::2] << np.uint64(32))


@dataclass
class AccuracyReport:
    """Accuracy of the float and the int8 model on the same labelled inputs, and how often they agree."""

    n: int
    float_accuracy: float
    int8_accuracy: float
    agreement: float

    def __str__(self) -> str:
        return (f"{self.n} test inputs: float32 accuracy {self.float_accuracy:.2%}, int8 accuracy "
                f"{self.int8_accuracy:.2%} ({self.int8_accuracy - self.float_accuracy:+.2%}), same class on "
                f"{self.agreement:.2%}")


def accuracy_report(graph: Graph, float_steps: list[Step], int8_steps: list[Step], x: np.ndarray,
                    y: np.ndarray) -> AccuracyReport:
    """Compare float and int8 predictions (argmax of the outputs) with the labels ``y`` on inputs ``x``."""
    x2 = np.asarray(x, dtype=np.float32).reshape(len(x), -1)
    pf = predict(graph, float_steps, x2).argmax(axis=1)
    pq = predict(graph, int8_steps, x2).argmax(axis=1)
    return AccuracyReport(len(x2), float(np.mean(pf == y)), float(np.mean(pq == y)), float(np.mean(pf == pq)))


def _scale(v: np.ndarray) -> float:
    top = float(np.abs(v).max())
    return top / QMAX if top > 0 else 1.0


def _round16(n: int) -> int:
    return -(-n // 16) * 16
