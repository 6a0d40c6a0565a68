"""Chapter 05 (tensors): correct answers of other designs than the solution's; each must pass every test."""

from ..spec import Alternative

ALTERNATIVES = [
    Alternative("matmul_code", "einsum with subscripts chosen by the flags; gradients straight in the stored layout",
                source='''class MatMulOp(Operator):
    # y = op(a) @ op(b) for 2-D arrays, where op transposes its operand when the matching flag is set.

    def __init__(self, transpose_a=False, transpose_b=False):
        self.transpose_a = transpose_a
        self.transpose_b = transpose_b

    def _subscripts(self):
        return ("ki" if self.transpose_a else "ik"), ("jk" if self.transpose_b else "kj")

    def forward(self, a, b):
        sa, sb = self._subscripts()
        return np.einsum(f"{sa},{sb}->ij", a, b)

    def backward(self, gy):
        a, b = self.inputs
        sa, sb = self._subscripts()
        return [np.einsum(f"ij,{sb}->{sa}", gy, b), np.einsum(f"{sa},ij->{sb}", a, gy)]
'''),
    Alternative("matmul_code", "four explicit cases with np.matmul, contiguous copies of the gradients",
                source='''class MatMulOp(Operator):
    # y = op(a) @ op(b) for 2-D arrays, where op transposes its operand when the matching flag is set.

    def __init__(self, transpose_a=False, transpose_b=False):
        self.transpose_a = transpose_a
        self.transpose_b = transpose_b

    def forward(self, a, b):
        return np.matmul(np.transpose(a) if self.transpose_a else a, np.transpose(b) if self.transpose_b else b)

    def backward(self, gy):
        a, b = self.inputs
        ta, tb = self.transpose_a, self.transpose_b
        if not ta and not tb:      # y = a b
            ga, gb = np.matmul(gy, b.T), np.matmul(a.T, gy)
        elif ta and not tb:        # y = a^T b
            ga, gb = np.matmul(b, gy.T), np.matmul(a, gy)
        elif not ta and tb:        # y = a b^T
            ga, gb = np.matmul(gy, b), np.matmul(gy.T, a)
        else:                      # y = a^T b^T
            ga, gb = np.matmul(b.T, gy.T), np.matmul(gy.T, a.T)
        return [np.ascontiguousarray(ga), np.ascontiguousarray(gb)]
'''),
    Alternative("unbroadcast_code", "a loop: sum leading axes away one at a time, then the stretched ones",
                source='''def unbroadcast(grad, shape):
    # Sum `grad` over the axes that broadcasting added or stretched, so that the result has exactly `shape`.
    out = grad
    while out.ndim > len(shape):
        out = out.sum(axis=0)
    for axis, n in enumerate(shape):
        if n == 1 and out.shape[axis] != 1:
            out = out.sum(axis=axis, keepdims=True)
    return np.asarray(out).reshape(tuple(shape))
'''),
    Alternative("unbroadcast_code", "pad the shape with leading 1s, one keepdims sum, then reshape",
                source='''def unbroadcast(grad, shape):
    # Sum `grad` over the axes that broadcasting added or stretched, so that the result has exactly `shape`.
    shape = tuple(shape)
    padded = (1,) * (grad.ndim - len(shape)) + shape
    axes = tuple(i for i, (p, g) in enumerate(zip(padded, grad.shape)) if p == 1 and g != 1)
    summed = np.sum(grad, axis=axes, keepdims=True) if axes else grad
    return np.reshape(summed, shape)
'''),
    Alternative("broadcast_to_code", "a read-only broadcast view as the output (views are allowed)",
                source='''class BroadcastToOp(Operator):
    # y = x copied to `shape` by NumPy broadcasting; dx = gy summed back to x's shape.

    def __init__(self, shape):
        self.shape = tuple(shape)

    def forward(self, x):
        return np.broadcast_to(x, self.shape)

    def backward(self, gy):
        return [unbroadcast(gy, np.shape(self.inputs[0]))]
'''),
    Alternative("broadcast_to_code", "np.tile of x padded with leading axes",
                source='''class BroadcastToOp(Operator):
    # y = x copied to `shape` by NumPy broadcasting; dx = gy summed back to x's shape.

    def __init__(self, shape):
        self.shape = tuple(shape)

    def forward(self, x):
        padded = (1,) * (len(self.shape) - x.ndim) + x.shape
        reps = tuple(s if p == 1 else 1 for p, s in zip(padded, self.shape))
        if any(p != 1 and p != s for p, s in zip(padded, self.shape)):
            raise ValueError(f"cannot broadcast {x.shape} to {self.shape}")
        return np.tile(x.reshape(padded), reps)

    def backward(self, gy):
        (x,) = self.inputs
        return [unbroadcast(gy, x.shape)]
'''),
    Alternative("sum_code", "np.add.reduce over normalised axes; backward multiplies gy (kept dims) by ones",
                source='''def normalize_axes(axis, ndim):
    # The reduced axes as a sorted tuple of non-negative ints (axis=None means every axis).
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (int, np.integer)):
        axis = (axis,)
    return tuple(sorted(int(a) % ndim for a in axis))


class SumOp(Operator):
    # y = x summed over `axis` (None: all axes); keepdims as in np.sum. dx = gy broadcast back to x's shape.

    def __init__(self, axis=None, keepdims=False):
        self.axis = axis
        self.keepdims = keepdims

    def forward(self, x):
        return np.add.reduce(x, axis=normalize_axes(self.axis, x.ndim), keepdims=self.keepdims)

    def backward(self, gy):
        (x,) = self.inputs
        axes = normalize_axes(self.axis, x.ndim)
        kept = tuple(1 if i in axes else n for i, n in enumerate(x.shape))
        return [np.reshape(gy, kept) * np.ones_like(x)]
'''),
    Alternative("sum_code", "one axis at a time from the last, keepdims, reshaped at the end; backward by adding "
                "gy to zeros",
                source='''def normalize_axes(axis, ndim):
    # The reduced axes as a sorted tuple of non-negative ints (axis=None means every axis).
    if axis is None:
        return tuple(range(ndim))
    axes = [axis] if np.ndim(axis) == 0 else list(axis)
    return tuple(sorted({int(a) + ndim if int(a) < 0 else int(a) for a in axes}))


class SumOp(Operator):
    # y = x summed over `axis` (None: all axes); keepdims as in np.sum. dx = gy broadcast back to x's shape.

    def __init__(self, axis=None, keepdims=False):
        self.axis = axis
        self.keepdims = keepdims

    def forward(self, x):
        axes = normalize_axes(self.axis, x.ndim)
        out = x
        for a in reversed(axes):
            out = out.sum(axis=a, keepdims=True)
        if not self.keepdims:
            out = out.reshape(tuple(n for i, n in enumerate(x.shape) if i not in axes))
        return out

    def backward(self, gy):
        (x,) = self.inputs
        axes = normalize_axes(self.axis, x.ndim)
        g = gy if self.keepdims else gy.reshape(tuple(1 if i in axes else n for i, n in enumerate(x.shape)))
        return [np.zeros(x.shape, dtype=x.dtype) + g]
'''),
    Alternative("mean_code", "sum divided by the count in forward, gy times 1/count on a full array in backward",
                source='''class MeanOp(Operator):
    # y = the mean of x over `axis` (None: every axis), keepdims as in SumOp; dx has x's shape.

    def __init__(self, axis=None, keepdims=False):
        self.axis = axis
        self.keepdims = keepdims

    def _count(self, x):
        n = 1
        for a in normalize_axes(self.axis, x.ndim):
            n *= x.shape[a]
        return n

    def forward(self, x):
        return np.sum(x, axis=normalize_axes(self.axis, x.ndim), keepdims=self.keepdims) / self._count(x)

    def backward(self, gy):
        (x,) = self.inputs
        axes = normalize_axes(self.axis, x.ndim)
        kept = tuple(1 if i in axes else n for i, n in enumerate(x.shape))
        return [np.ones_like(x) * (np.reshape(gy, kept) * (1.0 / self._count(x)))]
'''),
    Alternative("mean_code", "the mean accumulated in float64 and cast back; backward divides the broadcast view",
                source='''class MeanOp(Operator):
    # y = the mean of x over `axis` (None: every axis), keepdims as in SumOp; dx has x's shape.

    def __init__(self, axis=None, keepdims=False):
        self.axis = axis
        self.keepdims = keepdims

    def forward(self, x):
        axes = normalize_axes(self.axis, x.ndim)
        return np.asarray(x.mean(axis=axes, keepdims=self.keepdims, dtype=np.float64)).astype(x.dtype)

    def backward(self, gy):
        (x,) = self.inputs
        axes = normalize_axes(self.axis, x.ndim)
        count = x.size // max(1, int(np.prod([n for i, n in enumerate(x.shape) if i not in axes])))
        g = gy if self.keepdims else np.expand_dims(gy, axes)
        return [np.broadcast_to(g, x.shape) / count]
'''),
    Alternative("reshape_transpose_code", "copies instead of views; the inverse permutation built by a loop",
                source='''class ReshapeOp(Operator):
    # y = x.reshape(shape); dx = gy.reshape(x.shape).

    def __init__(self, shape):
        self.shape = tuple(shape)

    def forward(self, x):
        return np.reshape(x, self.shape).copy()

    def backward(self, gy):
        (x,) = self.inputs
        return [np.array(gy).reshape(x.shape)]


class TransposeOp(Operator):
    # y = np.transpose(x, axes) (axes=None reverses the axes); dx = gy transposed by the inverse permutation.

    def __init__(self, axes=None):
        self.axes = None if axes is None else tuple(axes)

    def forward(self, x):
        return np.ascontiguousarray(x.transpose(self.axes))

    def backward(self, gy):
        n = gy.ndim
        axes = tuple(range(n))[::-1] if self.axes is None else self.axes
        inverse = [0] * n
        for i, a in enumerate(axes):
            inverse[a % n] = i
        return [np.ascontiguousarray(gy.transpose(inverse))]
'''),
    Alternative("reshape_transpose_code", "ravel then reshape; transpose through np.moveaxis-free argsort of "
                "np.mod(axes), explicit reversal for axes=None",
                source='''class ReshapeOp(Operator):
    # y = x.reshape(shape); dx = gy.reshape(x.shape).

    def __init__(self, shape):
        self.shape = tuple(shape)

    def forward(self, x):
        return np.ravel(x).reshape(self.shape)

    def backward(self, gy):
        return [np.ravel(gy).reshape(self.inputs[0].shape)]


class TransposeOp(Operator):
    # y = np.transpose(x, axes) (axes=None reverses the axes); dx = gy transposed by the inverse permutation.

    def __init__(self, axes=None):
        self.axes = None if axes is None else tuple(axes)

    def forward(self, x):
        perm = tuple(reversed(range(x.ndim))) if self.axes is None else self.axes
        return np.transpose(x, perm)

    def backward(self, gy):
        (x,) = self.inputs
        if self.axes is None:
            return [np.transpose(gy, tuple(reversed(range(gy.ndim))))]
        return [np.transpose(gy, tuple(int(i) for i in np.argsort(np.mod(self.axes, x.ndim))))]
'''),
]
