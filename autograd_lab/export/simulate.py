"""A NumPy interpreter of kernel steps, batch by batch: the model as the C code will compute it.

Used to calibrate int8 scales (the float activations at each quantization point) and to measure the accuracy of the
int8 model on a test set without compiling anything. For int8 steps it repeats the C arithmetic exactly: integer
sums, then float32 scale, bias, activation and rounding in the same order. Float steps use NumPy's own summation
order, so they match the C code to rounding (the tests compare the two).
"""

from __future__ import annotations

import numpy as np

from autograd_lab.export.steps import Step
from autograd_lab.export.trace import Graph, Tensor

F32 = np.float32


def run_steps(graph: Graph, steps: list[Step], inputs: np.ndarray) -> dict[int, np.ndarray]:
    """Evaluate ``steps`` on a batch of inputs (N, input size).

    Returns:
        Every computed tensor by ``id``: float32 (N, size) for float tensors; for int8 (``q16``) tensors the
        quantized integers (N, padded size), int32.
    """
    x = np.asarray(inputs, dtype=F32).reshape(len(inputs), -1)
    values: dict[int, np.ndarray] = {id(graph.input): x}

    def get(t: Tensor) -> np.ndarray:
        if t.kind == "const":
            return np.asarray(t.value, dtype=F32).reshape(1, -1)
        return values[id(t)]

    for s in steps:
        values[id(s.output)] = _step(s, [get(t) for t in s.inputs], len(x))
    return values


def predict(graph: Graph, steps: list[Step], inputs: np.ndarray) -> np.ndarray:
    """The model's outputs (N, output size) as :func:`run_steps` computes them."""
    return run_steps(graph, steps, inputs)[id(graph.output)]


def quantize_values(v: np.ndarray, inv_scale: np.float32) -> np.ndarray:
    """``al_quantize_one`` of the C code: round v·inv_scale to the nearest integer, ties away from zero, clamped to
    [-127, 127]; float32 arithmetic throughout. Returns int32."""
    t = np.asarray(v, dtype=F32) * F32(inv_scale)
    a = np.where(np.abs(t) < F32(127), np.abs(t), F32(127))
    q = np.trunc(a + F32(0.5)).astype(np.int32)
    return np.where(t < 0, -q, q)


def activate(v: np.ndarray, act: int, slope: float) -> np.ndarray:
    """``al_activate``: 0 none, 1 ReLU, 2 leaky ReLU (float32)."""
    if act == 1:
        return np.where(v > 0, v, F32(0))
    if act == 2:
        return np.where(v > 0, v, v * F32(slope))
    return v


def _step(s: Step, xs: list[np.ndarray], n: int) -> np.ndarray:
    p = s.params
    if s.kind == "dense":
        rows = int(p.get("rows", 1))
        y = xs[0].reshape(n, rows, -1) @ np.asarray(p["weight"], dtype=F32).T
        if p["bias"] is not None:
            y = y + np.asarray(p["bias"], dtype=F32)
        return activate(y, int(p["act"]), float(p["slope"])).reshape(n, -1)
    if s.kind == "bmm":
        return _bmm(s, xs, n)
    if s.kind == "copy":
        idx = p["offset"] + sum(np.arange(d).reshape((-1,) + (1,) * (3 - a)) * st
                                for a, (d, st) in enumerate(zip(p["dims"], p["strides"])))
        return xs[0][:, idx.ravel()]
    if s.kind == "mean":
        v = xs[0].reshape(n, p["outer"], p["n"], p["inner"])
        total = np.zeros((n, p["outer"], p["inner"]), F32)
        for j in range(p["n"]):  # in order, as the C loop
            total = total + v[:, :, j]
        return (total / F32(p["n"])).reshape(n, -1)
    if s.kind == "gelu":
        return gelu_tanh(xs[0])
    if s.kind == "matmul":
        a = _gather(xs[0], p["n"], p["k"], p["sa0"], p["sa1"], n)
        b = _gather(xs[1], p["k"], p["m"], p["sb0"], p["sb1"], n)
        return np.matmul(a, b).reshape(n, -1)
    if s.kind in ("add", "mul"):
        d, sa, sb = p["dims"], p["sa"], p["sb"]
        grid = np.indices(d).reshape(3, -1)
        ia, ib = (np.asarray(st) @ grid for st in (sa, sb))
        a = np.broadcast_to(xs[0], (n, xs[0].shape[1]))[:, ia]
        b = np.broadcast_to(xs[1], (n, xs[1].shape[1]))[:, ib]
        return a + b if s.kind == "add" else a * b
    if s.kind == "relu":
        return np.maximum(xs[0], F32(0))
    if s.kind == "leaky_relu":
        return np.where(xs[0] > 0, xs[0], xs[0] * F32(p["slope"]))
    if s.kind == "sigmoid":
        z = np.exp(-np.abs(xs[0]))
        return np.where(xs[0] >= 0, F32(1), z) / (F32(1) + z)
    if s.kind == "tanh":
        return np.tanh(xs[0])
    if s.kind in ("softmax", "log_softmax"):  # al_softmax_f32's order: sums in order, al_exp_f32
        v = xs[0].reshape(n, p["outer"], p["n"], p["inner"])
        z = v - v.max(axis=2, keepdims=True)
        e = exp_values(z)
        total = _sum_in_order(e, axis=2)
        out = z - np.log(total).astype(F32) if p["log"] else e / total
        return out.reshape(n, -1)
    if s.kind == "layer_norm":  # al_layer_norm_f32's order
        x_rows = xs[0].reshape(n, p["rows"], p["n"])
        count = F32(p["n"])
        centred = x_rows - _sum_in_order(x_rows, axis=2) / count
        rstd = F32(1) / np.sqrt(_sum_in_order(centred * centred, axis=2) / count + F32(p["eps"]))
        normed = centred * rstd
        if len(xs) > 1:
            normed = normed * xs[1].reshape(p["n"])
        if len(xs) > 2:
            normed = normed + xs[2].reshape(p["n"])
        return normed.reshape(n, -1)
    if s.kind == "quantize":
        rows = int(p.get("rows", 1))
        q = quantize_values(xs[0].reshape(n, rows, p["k"]), p["inv_scale"])
        return np.pad(q, ((0, 0), (0, 0), (0, p["kp"] - p["k"]))).reshape(n, -1)
    if s.kind == "dense_q8":
        rows = int(p.get("rows", 1))
        v = _int_matmul(xs[0].reshape(n * rows, p["kp"]), p["wq"]).astype(F32) * np.asarray(p["scale"], dtype=F32)
        if p["bias"] is not None:
            v = v + np.asarray(p["bias"], dtype=F32)
        v = activate(v, int(p["act"]), float(p["slope"]))
        if s.output.dtype == "q16":
            return quantize_values(v, p["out_inv_scale"]).reshape(n, -1)
        return v[:, :p["m"]].reshape(n, -1)
    if s.kind in ("conv", "conv_q8", "conv_to_q8", "max_pool", "avg_pool", "to_chw"):
        return _conv_family(s, xs[0])
    raise AssertionError(f"no simulation for step kind {s.kind}")


def exp_values(x: np.ndarray) -> np.ndarray:
    """``al_exp_f32`` of the C code, bit for bit: the same float32 operations in the same order (see
    templates/exp_f32.c): n = round(x / ln 2) half away from zero, r = (x - n ln2_hi) - n ln2_lo, a degree-7
    Taylor polynomial in Horner form, times 2^n; 0 below -87.3365479, inf above 88.7228394."""
    x = np.asarray(x, dtype=F32)
    with np.errstate(invalid="ignore"):  # outside the range (or NaN) the result is replaced below
        e = (x * F32(1.44269502) + np.where(x < 0, F32(-0.5), F32(0.5))).astype(np.int32)  # truncates, as C does
    e = np.clip(e, -126, 128)
    nf = e.astype(F32)
    r = (x - nf * F32(0.693359375)) - nf * F32(-0.000212194442)
    p = np.full(r.shape, F32(0.000198412701))
    for coefficient in (0.00138888892, 0.00833333377, 0.0416666679, 0.166666672, 0.5, 1.0, 1.0):
        p = F32(coefficient) + r * p
    big = e > 127
    p = np.where(big, p * F32(2), p)
    scale = ((np.where(big, e - 1, e) + 127).astype(np.uint32) << np.uint32(23)).view(F32)
    with np.errstate(over="ignore"):
        y = p * scale
    return np.where(x < F32(-87.3365479), F32(0), np.where(x > F32(88.7228394), F32(np.inf), y)).astype(F32)


def gelu_tanh(x: np.ndarray) -> np.ndarray:
    """``al_gelu_f32``: GELUOp's tanh form in its order of operations, tanh(u) = 1 - 2 / (exp(2u) + 1) with
    :func:`exp_values`; float32."""
    x = np.asarray(x, dtype=F32)
    u = F32(0.797884583) * (x + F32(0.0447149985) * x * x * x)
    t = F32(1) - F32(2) / (exp_values(u + u) + F32(1))
    return x * (F32(0.5) * (F32(1) + t))


def _sum_in_order(v: np.ndarray, axis: int) -> np.ndarray:
    """The float32 sum along ``axis`` from 0, one element after another (the C loops' order), keeping the axis."""
    terms = np.ascontiguousarray(np.moveaxis(v, axis, 0))  # each term one contiguous block
    total = np.zeros(terms.shape[1:], F32)
    for term in terms:
        total = total + term
    return np.expand_dims(total, axis)


def _bmm(s: Step, xs: list[np.ndarray], n: int) -> np.ndarray:
    """``al_bmm_f32``: each sum over p in order from 0, then times alpha, written through the output strides."""
    g, (oa, ob) = s.params["geom"], s.params["offsets"]
    q = np.arange(g["batch"])[:, None, None]
    i = np.arange(g["n"])[None, :, None]
    j = np.arange(g["m"])[None, None, :]
    acc = np.zeros((n, g["batch"], g["n"], g["m"]), F32)
    a, b = (np.broadcast_to(x, (n, x.shape[1])) for x in xs)
    for p in range(g["k"]):
        acc = acc + a[:, oa + q * g["sab"] + i * g["sa0"] + p * g["sa1"]] * b[:, ob + q * g["sbb"] + p * g["sb0"]
                                                                             + j * g["sb1"]]
    y = np.zeros((n, s.output.size), F32)
    y[:, (q * g["syb"] + i * g["sy0"] + j * g["sy1"]).ravel()] = (acc * F32(s.params["alpha"])).reshape(n, -1)
    return y


def conv_groups(geom: dict) -> int:
    """The number of channel groups of a conv geometry (1 when absent)."""
    return max(int(geom.get("groups", 1)), 1)


def padded_rows(m: int, groups: int, mp: int) -> np.ndarray:
    """Where each of a conv's m output channels sits among the padded int8 weight rows: group q's m / groups
    channels start at row q * mp (al_conv_q8's layout)."""
    c = np.arange(m)
    per = m // groups
    return (c // per) * mp + c % per


def patch_index(g: dict, size: int, group: int = 0) -> np.ndarray:
    """Element indices (oh, ow, kh*kw*cin/G) of every conv pixel's patch in group ``group`` of G = g["groups"], in
    the order of ``al_patch_f32``; padding points at index ``size`` (a zero appended to the input)."""
    cin = g["cin"] // conv_groups(g)
    oy = np.arange(g["oh"])[:, None, None, None, None] * g["sy"] - g["py"]
    ox = np.arange(g["ow"])[None, :, None, None, None] * g["sx"] - g["px"]
    iy = oy + np.arange(g["kh"])[None, None, :, None, None]
    ix = ox + np.arange(g["kw"])[None, None, None, :, None]
    c = group * cin + np.arange(cin)[None, None, None, None, :]
    idx = c * g["sc"] + iy * g["sh"] + ix * g["sw"]
    inside = (iy >= 0) & (iy < g["h"]) & (ix >= 0) & (ix < g["w"])
    return np.where(inside, idx, size).reshape(g["oh"], g["ow"], -1)


def _patches(x: np.ndarray, g: dict, group: int = 0) -> np.ndarray:
    ext = np.concatenate([x, np.zeros((len(x), 1), dtype=x.dtype)], axis=1)
    return ext[:, patch_index(g, x.shape[1], group)]


def _grouped(x: np.ndarray, g: dict, per_group) -> np.ndarray:
    """Conv pixels (N, oh, ow, cout): ``per_group(patches, q)`` gives group q's channels from its patches
    (N, oh, ow, kh*kw*cin/G), as al_conv_f32 and al_conv_q8 compute them, group by group."""
    return np.concatenate([per_group(_patches(x, g, q), q) for q in range(conv_groups(g))], axis=-1)


def _max_over_windows(y: np.ndarray, g: dict) -> np.ndarray:
    """Fused max pool of conv pixels y (N, oh, ow, cout), window positions in row-major order, as the C loop."""
    acc = None
    for dy in range(g["pkh"]):
        for dx in range(g["pkw"]):
            t = y[:, dy:dy + g["psy"] * (g["ph"] - 1) + 1:g["psy"], dx:dx + g["psx"] * (g["pw"] - 1) + 1:g["psx"]]
            acc = t if acc is None else np.where(t > acc, t, acc)
    assert acc is not None
    return acc


def _int_matmul(q: np.ndarray, wq: np.ndarray) -> np.ndarray:
    """Exact integer products q @ wq.T for int8-range values, through float64 BLAS: every partial sum is an integer
    below 2**53 in magnitude (127 * 127 * k for k < 5e11), so float64 holds it exactly; returned as float64."""
    return np.asarray(q, dtype=np.float64) @ np.asarray(wq, dtype=np.float64).T


def _conv_family(s: Step, x: np.ndarray) -> np.ndarray:
    if len(x) > 256 and s.kind in ("conv", "conv_q8", "conv_to_q8"):  # bound the memory of the patch arrays
        return np.concatenate([_conv_family(s, x[i:i + 256]) for i in range(0, len(x), 256)])
    p = s.params
    n = len(x)
    if s.kind == "to_chw":
        return x.reshape(n, p["h"] * p["w"], p["c"]).transpose(0, 2, 1).reshape(n, -1)
    g = p["geom"]
    if s.kind in ("max_pool", "avg_pool"):
        return _pool(x, g, s.kind == "avg_pool")
    if s.kind == "conv_to_q8" or (s.kind == "conv" and p.get("exact")):
        # the C order exactly: each sum over the patch in order, float32 products and sums (never fused); the
        # direct 3x3 kernel starts from the first product, al_dense4_f32 from 0 (only the sign of a zero sum
        # can differ)
        per_group = np.split(np.asarray(p["weight"], dtype=F32), conv_groups(g))

        def in_c_order(patches: np.ndarray, q: int) -> np.ndarray:
            w = per_group[q]
            y = (patches[..., 0, None] * w[:, 0] if g.get("direct") == 1
                 else np.zeros((*patches.shape[:3], w.shape[0]), F32))
            for col in range(1 if g.get("direct") == 1 else 0, w.shape[1]):
                y = y + patches[..., col, None] * w[:, col]
            return y

        y = _grouped(x, g, in_c_order)
        if p["bias"] is not None:
            y = y + np.asarray(p["bias"], dtype=F32)
        y = activate(y, int(p["act"]), float(p["slope"]))
    elif s.kind == "conv":
        weights = np.split(np.asarray(p["weight"], dtype=F32), conv_groups(g))
        y = _grouped(x, g, lambda patches, q: patches @ weights[q].T)
        if p["bias"] is not None:
            y = y + np.asarray(p["bias"], dtype=F32)
        y = activate(y, int(p["act"]), float(p["slope"]))
    else:
        m, k = g["cout"], p["k"]  # the padding rows and columns of wq are zero: leave them out
        groups = conv_groups(g)
        rows = padded_rows(m, groups, p["mp"])
        wq = np.asarray(p["wq"])[rows, :k].reshape(groups, m // groups, k)

        def int_sums(patches: np.ndarray, group: int) -> np.ndarray:
            q = patches if s.inputs[0].dtype == "q16" else quantize_values(patches, p["in_inv_scale"])
            return _int_matmul(q, wq[group])

        y = _grouped(x, g, int_sums).astype(F32) * np.asarray(p["scale"], dtype=F32)[rows]
        if p["bias"] is not None:
            y = y + np.asarray(p["bias"], dtype=F32)[rows]
        y = activate(y, int(p["act"]), float(p["slope"]))
    if g["pkh"]:
        y = _max_over_windows(y, g)
    y = y.reshape(n, -1)
    if s.kind in ("conv_q8", "conv_to_q8") and s.output.dtype == "q16":
        return quantize_values(y, p["out_inv_scale"])
    return y


def _pool(x: np.ndarray, g: dict, avg: bool) -> np.ndarray:
    """al_pool_f32: taps in the padding or past the input left out, the maximum from the first tap on the input,
    the average's sum from 0 in row-major window order divided by the count of taps (see the C kernel)."""
    oy = np.arange(g["oh"])[:, None, None] * g["sy"] - g["py"]
    ox = np.arange(g["ow"])[None, :, None] * g["sx"] - g["px"]
    c = np.arange(g["cin"])[None, None, :]
    acc = np.zeros((len(x), g["oh"], g["ow"], g["cin"]), dtype=F32)
    have = np.zeros(acc.shape[1:], dtype=bool)
    for i in range(g["kh"]):
        for j in range(g["kw"]):
            iy, ix = oy + i * g.get("dy", 1), ox + j * g.get("dx", 1)
            inside = (iy >= 0) & (iy < g["h"]) & (ix >= 0) & (ix < g["w"])
            v = x[:, np.where(inside, c * g["sc"] + iy * g["sh"] + ix * g["sw"], 0)]
            if avg:
                acc = np.where(inside, acc + v, acc)
            else:
                acc = np.where(inside & (~have | (v > acc)), v, acc)
            have = have | inside
    if avg:
        counts = []
        for o, n, k, st, pad in ((g["oh"], g["h"], g["kh"], g["sy"], g["py"]), (g["ow"], g["w"], g["kw"], g["sx"],
                                                                              g["px"])):
            start = np.arange(o) * st - pad
            end = np.minimum(start + k, n + pad)
            if not g.get("pad_in", 1):
                start, end = np.maximum(start, 0), np.minimum(end, n)
            counts.append(end - start)
        acc = acc / np.outer(*counts).astype(F32)[:, :, None]
    return acc.reshape(len(x), -1)


def _gather(flat: np.ndarray, rows: int, cols: int, s0: int, s1: int, n: int) -> np.ndarray:
    idx = np.arange(rows)[:, None] * s0 + np.arange(cols)[None, :] * s1
    return np.broadcast_to(flat, (n, flat.shape[1]))[:, idx]
