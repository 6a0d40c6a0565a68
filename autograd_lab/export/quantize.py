"""int8 post-training quantization of the dense layers.

Symmetric quantization, q = round(v / s) clamped to [-127, 127], with zero mapped to zero (Jacob et al., "Quantization
and Training of Neural Networks for Efficient Integer-Arithmetic-Only Inference", CVPR 2018, use the affine form;
symmetric is the zero-point-free special case):

* weights: one scale per output row (per output channel), s_w[j] = max_p |W[j, p]| / 127;
* activations entering a dense layer: one scale, s_x = max |x| / 127 over a calibration sample of training inputs;
* the layer sums q_x · q_w in int32 and returns float32 ``sum · (s_x · s_w[j]) + b[j]``, then the activation.

When a dense layer feeds only another dense layer, it writes its output already quantized with the next layer's
scale, so the float activations between the two never need RAM. All other ops stay float32.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from autograd_lab.export.errors import ExportError
from autograd_lab.export.lower import Step
from autograd_lab.export.simulate import predict, run_steps
from autograd_lab.export.trace import Graph, Tensor

QMAX = 127


def quantize_steps(graph: Graph, steps: list[Step], calibration: np.ndarray) -> list[Step]:
    """Replace every float dense step by int8 steps, with activation scales from ``calibration`` inputs (N, size).

    Raises:
        ExportError: if the calibration sample is empty or its rows do not have the model's input size.
    """
    x = np.asarray(calibration, dtype=np.float32)
    if len(x) == 0 or x.reshape(len(x), -1).shape[1] != graph.input.size:
        raise ExportError(f"calibration data of shape {x.shape} does not hold inputs of {graph.input.size} values")
    values = run_steps(graph, steps, x.reshape(len(x), -1))
    scales = {id(s): _scale(values[id(s.inputs[0])]) for s in steps if s.kind == "dense"}
    consumers = {id(t): [s for s in steps if any(u is t for u in s.inputs)] for s in steps for t in [s.output]}
    out: list[Step] = []
    q_input: dict[int, Tensor] = {}  # dense step id -> its already quantized input
    for s in steps:
        if s.kind != "dense":
            out.append(s)
            continue
        k, m = int(s.params["k"]), int(s.params["m"])
        kp, mp = _round16(k), _round16(m)
        src = s.inputs[0]
        xq = q_input.get(id(s))
        if xq is None:
            xq = Tensor(f"{src.name}_q", (kp // 2,), "act", dtype="q16")
            out.append(Step("quantize", [src], xq, {"k": k, "kp": kp, "inv_scale": np.float32(1 / scales[id(s)])},
                            f"quantize the input of {s.where}"))
        users = consumers.get(id(s.output), [])
        nxt = users[0] if len(users) == 1 and users[0].kind == "dense" and s.output is not graph.output else None
        output = s.output
        out_inv = np.float32(0)
        if nxt is not None:
            output = Tensor(f"{s.output.name}_q", (mp // 2,), "act", dtype="q16")
            out_inv = np.float32(1 / scales[id(nxt)])
            q_input[id(nxt)] = output
        out.append(_dense_q8(s, xq, output, scales[id(s)], kp, mp, out_inv))
    return out


def _dense_q8(s: Step, xq: Tensor, output: Tensor, s_x: float, kp: int, mp: int, out_inv: np.float32) -> Step:
    w = np.asarray(s.params["weight"], dtype=np.float32)
    m, k = w.shape
    s_w = np.abs(w).max(axis=1) / QMAX
    s_w[s_w == 0] = 1.0
    wq = np.zeros((mp, kp), dtype=np.int32)
    wq[:m, :k] = np.clip(np.round(w / s_w[:, None]), -QMAX, QMAX)
    scale = np.zeros(mp, dtype=np.float32)
    scale[:m] = (np.float32(s_x) * s_w).astype(np.float32)
    bias = None
    if s.params["bias"] is not None:
        bias = np.zeros(mp, dtype=np.float32)
        bias[:m] = s.params["bias"]
    params = dict(s.params, kp=kp, mp=mp, wq=wq, words=pack_words(wq), scale=scale, bias=bias,
                  out_inv_scale=out_inv)
    return Step("dense_q8", [xq], output, params, s.where + " (int8)", s.macs)


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
