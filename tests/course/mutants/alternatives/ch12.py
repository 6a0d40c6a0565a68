"""Chapter 12 (to the microcontroller): correct answers of other designs than the solution's; each must pass every
test."""

from ..spec import Alternative

ALTERNATIVES = [
    Alternative("c_float_code", "%-formatting, the overflow warning silenced with the warnings module",
                source='''def c_float(value):
    # The C99 literal of float32(value) that the compiler reads back bit for bit, e.g. 1 -> "1.0f".
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        v = np.float32(value)
    if np.isnan(v) or np.isinf(v):
        raise ValueError(f"c_float: {value!r} has no finite float32 value, so no C literal")
    text = "%.9g" % v
    if not any(ch in text for ch in ".e"):
        text = text + ".0"
    return f"{text}f"
'''),
    Alternative("c_float_code", "format() with '.9g', the float32 reached through a 0-d array",
                source='''def c_float(value):
    # The C99 literal of float32(value) that the compiler reads back bit for bit, e.g. 1 -> "1.0f".
    with np.errstate(all="ignore"):
        v = float(np.asarray(value, dtype=np.float64).astype(np.float32))
    if v != v or v in (float("inf"), float("-inf")):
        raise ValueError(f"{value!r} becomes {v} as a float32: no C literal")
    text = format(v, ".9g")
    return text + ("f" if set(text) & {".", "e"} else ".0f")
'''),
    Alternative("budget_code", "explicit loops; the arena as the largest live set, singles and pairs",
                source='''def memory_budget(sizes):
    # (flash bytes, arena bytes) of a float32 MLP with these widths, under the memory model above.
    flash = 0
    for i in range(len(sizes) - 1):
        flash += 4 * (sizes[i] * sizes[i + 1] + sizes[i + 1])
    hidden = sizes[1:-1]
    live = [h for h in hidden] + [hidden[i] + hidden[i + 1] for i in range(len(hidden) - 1)]
    return flash, 4 * max(live, default=0)
'''),
    Alternative("budget_code", "NumPy arrays, converted back to Python ints",
                source='''def memory_budget(sizes):
    # (flash bytes, arena bytes) of a float32 MLP with these widths, under the memory model above.
    s = np.asarray(sizes, dtype=np.int64)
    flash = int(4 * np.sum(s[1:] * (s[:-1] + 1)))
    h = s[1:-1]
    if h.size == 0:
        return (flash, 0)
    arena = h.max() if h.size == 1 else (h[:-1] + h[1:]).max()
    return (flash, int(4 * arena))
'''),
    Alternative("quantize_code", "one row at a time, ties via trunc(t + copysign(0.5, t)) in float64",
                source='''def quantize_rows(w):
    # Symmetric per-row int8 quantization: w[r] ~ scales[r] * q[r], with scales[r] = max|w[r]| / 127 (float32) and
    # ties rounded away from zero.
    w = np.asarray(w, dtype=np.float32)
    q = np.zeros(w.shape, dtype=np.int8)
    scales = np.ones(w.shape[0], dtype=np.float32)
    for r, row in enumerate(w):
        peak = np.float32(np.max(np.abs(row)))
        if peak > 0:
            scales[r] = peak / np.float32(127)
        t = (row / scales[r]).astype(np.float64)
        q[r] = np.clip(np.trunc(t + np.copysign(0.5, t)), -127, 127)
    return q, scales
'''),
    Alternative("quantize_code", "np.where(floor(t + 0.5), ceil(t - 0.5)) and the scale by np.divide with dtype",
                source='''def quantize_rows(w):
    # Symmetric per-row int8 quantization: w[r] ~ scales[r] * q[r], with scales[r] = max|w[r]| / 127 (float32) and
    # ties rounded away from zero.
    w32 = np.array(w, dtype=np.float32)
    peak = np.max(np.abs(w32), axis=1, keepdims=True)
    scales = np.divide(peak, np.float32(127), dtype=np.float32)
    scales[peak == 0] = 1.0
    t = np.divide(w32, scales, dtype=np.float32).astype(np.float64)
    rounded = np.where(t >= 0, np.floor(t + 0.5), np.ceil(t - 0.5))
    return np.clip(rounded, -127, 127).astype(np.int8), scales[:, 0]
'''),
    Alternative("int8_dense_code", "einsum in int32 and a rounding helper",
                source='''def int8_dense(x, q, scales, bias):
    # y = s_x * scales[j] * sum_p xq[n, p] * q[j, p] + bias[j], with the sum in int32, x quantized by one float32
    # scale (ties away from zero), and the scaling in float32.
    def round_away(t):
        t = t.astype(np.float64)
        return np.where(t >= 0, np.floor(t + 0.5), np.ceil(t - 0.5))

    x = np.asarray(x, np.float32)
    peak = np.float32(np.max(np.abs(x), initial=0))
    s_x = np.float32(1) if peak == 0 else np.float32(peak / np.float32(127))
    xq = np.clip(round_away(x / s_x), -127, 127).astype(np.int8)
    acc = np.einsum("np,jp->nj", xq.astype(np.int32), np.asarray(q).astype(np.int32), dtype=np.int32)
    return acc.astype(np.float32) * (s_x * np.asarray(scales, np.float32)) + np.asarray(bias, np.float32)
'''),
    Alternative("int8_dense_code", "a loop over the output units, int32 sums per unit",
                source='''def int8_dense(x, q, scales, bias):
    # y = s_x * scales[j] * sum_p xq[n, p] * q[j, p] + bias[j], with the sum in int32, x quantized by one float32
    # scale (ties away from zero), and the scaling in float32.
    x = np.asarray(x, np.float32)
    q32 = np.asarray(q).astype(np.int32)
    scales = np.asarray(scales, np.float32)
    bias = np.asarray(bias, np.float32)
    peak = np.abs(x).max() if x.size else np.float32(0)
    s_x = np.float32(peak) / np.float32(127) if peak > 0 else np.float32(1.0)
    t = (x / s_x).astype(np.float64)
    xq = np.clip(np.sign(t) * np.floor(np.abs(t) + 0.5), -127, 127).astype(np.int32)
    y = np.empty((x.shape[0], q32.shape[0]), dtype=np.float32)
    for j in range(q32.shape[0]):
        acc = np.sum(xq * q32[j], axis=1, dtype=np.int32)
        y[:, j] = acc.astype(np.float32) * np.float32(s_x * scales[j]) + bias[j]
    return y
'''),
]
