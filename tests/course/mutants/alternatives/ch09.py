"""Chapter 09 (convolution): correct answers of other designs than the solution's; each must pass every test."""

from ..spec import Alternative

ALTERNATIVES = [
    Alternative("im2col_code", "a loop over the output pixels, one flattened patch per column",
                source='''def im2col(xp, kh, kw, stride=1):
    # (N, C, Hp, Wp) -> (N, C*kh*kw, H_out*W_out): every kh x kw patch as a column, with a loop over offsets only.
    n, c, hp, wp = xp.shape
    ho, wo = (hp - kh) // stride + 1, (wp - kw) // stride + 1
    out = np.empty((n, c * kh * kw, ho * wo), dtype=xp.dtype)
    for p in range(ho):
        for q in range(wo):
            patch = xp[:, :, p * stride:p * stride + kh, q * stride:q * stride + kw]
            out[:, :, p * wo + q] = patch.reshape(n, c * kh * kw)
    return out
'''),
    Alternative("im2col_code", "sliding_window_view, a transpose and a contiguous copy",
                source='''def im2col(xp, kh, kw, stride=1):
    # (N, C, Hp, Wp) -> (N, C*kh*kw, H_out*W_out): every kh x kw patch as a column, with a loop over offsets only.
    n, c = xp.shape[:2]
    win = np.lib.stride_tricks.sliding_window_view(xp, (kh, kw), axis=(2, 3))[:, :, ::stride, ::stride]
    ho, wo = win.shape[2], win.shape[3]
    return np.ascontiguousarray(win.transpose(0, 1, 4, 5, 2, 3)).reshape(n, c * kh * kw, ho * wo)
'''),
    Alternative("conv2d_code", "np.pad and einsum, col2im adding one patch per output pixel",
                source='''def col2im(cols, padded_shape, kh, kw, stride=1):
    # Adjoint of im2col: (N, C*kh*kw, H_out*W_out) -> (N, C, Hp, Wp), ADDING each entry where it was copied from.
    n, c, hp, wp = padded_shape
    ho, wo = (hp - kh) // stride + 1, (wp - kw) // stride + 1
    out = np.zeros(padded_shape, dtype=cols.dtype)
    for p in range(ho):
        for q in range(wo):
            out[:, :, p * stride:p * stride + kh, q * stride:q * stride + kw] += \\
                cols[:, :, p * wo + q].reshape(n, c, kh, kw)
    return out


class Conv2DOp(Operator):
    # Cross-correlation in NCHW: x (N, C_in, H, W), w (C_out, C_in, kH, kW) -> (N, C_out, H_out, W_out).

    def __init__(self, stride=1, padding=0):
        self.stride = stride
        self.padding = padding

    def forward(self, x, w):
        c_out, c_in, kh, kw = w.shape
        if x.shape[1] != c_in:
            raise ValueError(f"input channels {x.shape[1]} != filter input channels {c_in}")
        p = self.padding
        xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)))
        self.xp_shape = xp.shape
        self.x_cols = im2col(xp, kh, kw, self.stride)
        ho = (xp.shape[2] - kh) // self.stride + 1
        wo = (xp.shape[3] - kw) // self.stride + 1
        y = np.einsum("ok,nkl->nol", w.reshape(c_out, -1), self.x_cols)
        return y.reshape(x.shape[0], c_out, ho, wo)

    def backward(self, gy):
        x, w = self.inputs
        c_out, _, kh, kw = w.shape
        g = gy.reshape(gy.shape[0], c_out, -1)
        dw = np.einsum("nol,nkl->ok", g, self.x_cols).reshape(w.shape)
        dcols = np.einsum("ok,nol->nkl", w.reshape(c_out, -1), g)
        dxp = col2im(dcols, self.xp_shape, kh, kw, self.stride)
        p, h, wd = self.padding, x.shape[2], x.shape[3]
        return [dxp[:, :, p:p + h, p:p + wd].copy(), dw]
'''),
    Alternative("conv2d_code", "tensordot and a per-sample loop for dw, col2im by np.add.at with index arrays",
                source='''def col2im(cols, padded_shape, kh, kw, stride=1):
    # Adjoint of im2col: (N, C*kh*kw, H_out*W_out) -> (N, C, Hp, Wp), ADDING each entry where it was copied from.
    n, c, hp, wp = padded_shape
    ho, wo = (hp - kh) // stride + 1, (wp - kw) // stride + 1
    rows = (np.arange(kh)[:, None, None, None] + stride * np.arange(ho)[None, None, :, None])
    cols_ = (np.arange(kw)[None, :, None, None] + stride * np.arange(wo)[None, None, None, :])
    rows, cols_ = np.broadcast_arrays(rows, cols_)  # (kh, kw, ho, wo)
    out = np.zeros(padded_shape, dtype=cols.dtype)
    vals = cols.reshape(n, c, kh, kw, ho, wo)
    np.add.at(out, (slice(None), slice(None), rows, cols_), vals)
    return out


class Conv2DOp(Operator):
    # Cross-correlation in NCHW: x (N, C_in, H, W), w (C_out, C_in, kH, kW) -> (N, C_out, H_out, W_out).

    def __init__(self, stride=1, padding=0):
        self.stride = stride
        self.padding = padding

    def forward(self, x, w):
        if x.shape[1] != w.shape[1]:
            raise ValueError(f"Conv2DOp: x has C_in = {x.shape[1]}, w has C_in = {w.shape[1]}")
        n, c, h, wd = x.shape
        p, s = self.padding, self.stride
        xp = np.zeros((n, c, h + 2 * p, wd + 2 * p), x.dtype)
        xp[:, :, p:h + p, p:wd + p] = x
        self.saved = (xp.shape, im2col(xp, w.shape[2], w.shape[3], s))
        ho, wo = (h + 2 * p - w.shape[2]) // s + 1, (wd + 2 * p - w.shape[3]) // s + 1
        y = np.tensordot(self.saved[1], w.reshape(w.shape[0], -1), axes=([1], [1]))  # (N, L, C_out)
        return y.transpose(0, 2, 1).reshape(n, w.shape[0], ho, wo)

    def backward(self, gy):
        x, w = self.inputs
        shape, cols = self.saved
        g = gy.reshape(gy.shape[0], gy.shape[1], -1)
        wm = w.reshape(w.shape[0], -1)
        dw = np.zeros_like(wm)
        for i in range(g.shape[0]):
            dw += g[i] @ cols[i].T
        dcols = np.stack([wm.T @ g[i] for i in range(g.shape[0])])
        dxp = col2im(dcols, shape, w.shape[2], w.shape[3], self.stride)
        p = self.padding
        return [dxp[:, :, p:shape[2] - p, p:shape[3] - p], dw.reshape(w.shape)]
'''),
    Alternative("max_pool_code", "windows reshaped to a last axis of size*size, argmax and put_along_axis",
                source='''class MaxPool2DOp(Operator):
    # Max over non-overlapping size x size windows; the gradient goes to the first maximum (row-major) of each window.

    def __init__(self, size):
        self.size = size

    def _windows(self, a):
        n, c, h, w = a.shape
        k = self.size
        return a.reshape(n, c, h // k, k, w // k, k).transpose(0, 1, 2, 4, 3, 5).reshape(n, c, h // k, w // k, k * k)

    def forward(self, x):
        win = self._windows(x)
        self.arg = np.argmax(win, axis=-1)[..., None]  # argmax returns the first maximum
        return np.take_along_axis(win, self.arg, axis=-1)[..., 0]

    def backward(self, gy):
        (x,) = self.inputs
        n, c, h, w = x.shape
        k = self.size
        win = np.zeros((n, c, h // k, w // k, k * k), dtype=x.dtype)
        np.put_along_axis(win, self.arg, gy[..., None], axis=-1)
        gx = win.reshape(n, c, h // k, w // k, k, k).transpose(0, 1, 2, 4, 3, 5).reshape(n, c, h, w)
        return [gx]
'''),
    Alternative("max_pool_code", "max over reshaped axes, the winner found by a reverse scan of the offsets",
                source='''class MaxPool2DOp(Operator):
    # Max over non-overlapping size x size windows; the gradient goes to the first maximum (row-major) of each window.

    def __init__(self, size):
        self.size = size

    def forward(self, x):
        n, c, h, w = x.shape
        k = self.size
        self.best = x.reshape(n, c, h // k, k, w // k, k).max(axis=(3, 5))
        return self.best

    def backward(self, gy):
        (x,) = self.inputs
        k = self.size
        winner = np.full(self.best.shape, -1)
        for idx in reversed(range(k * k)):  # the last write is the first offset in row-major order
            i, j = divmod(idx, k)
            winner = np.where(x[:, :, i::k, j::k] == self.best, idx, winner)
        gx = np.zeros(x.shape, dtype=x.dtype)
        for idx in range(k * k):
            i, j = divmod(idx, k)
            gx[:, :, i::k, j::k] = np.where(winner == idx, gy, 0)
        return [gx]
'''),
    Alternative("running_stats_code", "channels moved last and flattened, np.var with ddof=1, r + m (b - r)",
                source='''def update_running_stats(running_mean, running_var, x, momentum=0.1):
    # New (running_mean, running_var) after one training batch x; the inputs are never written.
    flat = np.moveaxis(x, 1, -1).reshape(-1, x.shape[1])
    mean = flat.mean(axis=0)
    var = flat.var(axis=0, ddof=1)
    return running_mean + momentum * (mean - running_mean), running_var + momentum * (var - running_var)
'''),
    Alternative("running_stats_code", "explicit sums over the non-channel axes and a list returned as a tuple",
                source='''def update_running_stats(running_mean, running_var, x, momentum=0.1):
    # New (running_mean, running_var) after one training batch x; the inputs are never written.
    axes = tuple(a for a in range(x.ndim) if a != 1)
    m = np.prod([x.shape[a] for a in axes])
    mean = x.sum(axis=axes, keepdims=True) / m
    dev = x - mean
    var = np.sum(dev * dev, axis=axes) / (m - 1)
    out = [momentum * mean.reshape(-1) + (1 - momentum) * running_mean,
           momentum * var + (1 - momentum) * running_var]
    return tuple(out)
'''),
]
