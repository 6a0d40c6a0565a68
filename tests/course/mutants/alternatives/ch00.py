"""Chapter 00 (welcome): correct answers of other designs than the solution's; each must pass every test."""

from ..spec import Alternative

ALTERNATIVES = [
    Alternative("broadcast_shape_code", "zip_longest over the reversed shapes, result built right to left",
                source='''def broadcast_shape(shape_a: tuple[int, ...], shape_b: tuple[int, ...]) -> tuple[int, ...]:
    """Return the broadcast shape of two shapes, or raise ValueError naming both shapes."""
    from itertools import zip_longest

    out = []
    for p, q in zip_longest(reversed(shape_a), reversed(shape_b), fillvalue=1):
        if p != q and p != 1 and q != 1:
            raise ValueError(f"cannot broadcast {tuple(shape_a)} with {tuple(shape_b)}")
        out.append(q if p == 1 else p)
    return tuple(reversed(out))
'''),
    Alternative("broadcast_shape_code", "recursion on the shapes without their last axis",
                source='''def broadcast_shape(shape_a: tuple[int, ...], shape_b: tuple[int, ...]) -> tuple[int, ...]:
    """Return the broadcast shape of two shapes, or raise ValueError naming both shapes."""
    def rule(a, b):
        if not a or not b:
            return tuple(a) + tuple(b)
        p, q = a[-1], b[-1]
        if p == q or q == 1:
            last = p
        elif p == 1:
            last = q
        else:
            raise ValueError(f"shapes {tuple(shape_a)} and {tuple(shape_b)} are incompatible")
        return rule(a[:-1], b[:-1]) + (last,)

    return rule(tuple(shape_a), tuple(shape_b))
'''),
    Alternative("standardize_columns_code", "computed in float64 with np.divide(where=), np.ptp for constant columns, "
                "cast back at the end",
                source='''def standardize_columns(X: np.ndarray) -> np.ndarray:
    """Shift and scale every column of X (shape (n, m)) to mean 0 and std 1; constant columns become 0."""
    out_dtype = X.dtype if X.dtype.kind == "f" else np.dtype(np.float64)
    X64 = np.asarray(X, dtype=np.float64)
    varies = np.ptp(X64, axis=0) != 0
    centred = X64 - X64.mean(axis=0, keepdims=True)
    std = np.sqrt((centred ** 2).mean(axis=0, keepdims=True))
    Z = np.divide(centred, std, out=np.zeros_like(centred), where=varies[None, :])
    return Z.astype(out_dtype)
'''),
    Alternative("standardize_columns_code", "mean and variance from sums in the input's floating dtype, masked "
                "multiply by the inverse std",
                source='''def standardize_columns(X: np.ndarray) -> np.ndarray:
    """Shift and scale every column of X (shape (n, m)) to mean 0 and std 1; constant columns become 0."""
    dt = X.dtype if np.issubdtype(X.dtype, np.floating) else np.float64
    Y = np.array(X, dtype=dt)
    n = Y.shape[0]
    mu = Y.sum(axis=0) / n
    d = Y - mu
    sd = np.sqrt((d * d).sum(axis=0) / n)
    same = Y.min(axis=0) == Y.max(axis=0)
    inv = np.ones_like(sd)
    inv[~same] = 1 / sd[~same]
    inv[same] = 0
    return (d * inv).astype(dt)
'''),
    Alternative("views_quiz_code", "the same four expressions in another order",
                source='VIEWS = ("a.reshape(4, 3)", "a.T", "a[:, 1:3]", "a[1]")\n'),
    Alternative("views_quiz_code", "computed with np.shares_memory inside a helper function",
                source='''def _which_are_views():
    a = np.arange(12.0).reshape(3, 4)
    exprs = ["a[1]", "a[:, 1:3]", "a.T", "a.reshape(4, 3)", "a[[0, 2]]", "a[a > 5]", "a * 1",
             "a.astype(np.float32)"]
    return tuple(e for e in exprs if np.shares_memory(eval(e, {"np": np, "a": a}), a))


VIEWS = _which_are_views()
'''),
    Alternative("relu_copy_code", "np.where with a zeros_like branch",
                source='''def relu_copy(x: np.ndarray) -> np.ndarray:
    """max(x, 0) elementwise, as a new array with x's shape and dtype; x is never written."""
    return np.where(x < 0, np.zeros_like(x), x)
'''),
    Alternative("relu_copy_code", "copy first, then write zeros into the copy through a mask",
                source='''def relu_copy(x: np.ndarray) -> np.ndarray:
    """max(x, 0) elementwise, as a new array with x's shape and dtype; x is never written."""
    y = np.array(x, copy=True)
    y[y < 0] = 0
    return y
'''),
    Alternative("machine_epsilon_code", "remember the last eps for which 1 + eps > 1 (halve until it fails)",
                source='''def machine_epsilon(dtype) -> float:
    """The gap between 1 and the next larger number of the floating dtype, found by experiment."""
    t = np.dtype(dtype).type
    one = t(1)
    eps = t(1)
    last = eps
    while one + eps > one:
        last = eps
        eps = t(eps * t(0.5))
    return float(last)
'''),
    Alternative("machine_epsilon_code", "Moler's trick: |3 (4/3 - 1) - 1| in the dtype",
                source='''def machine_epsilon(dtype) -> float:
    """The gap between 1 and the next larger number of the floating dtype, found by experiment."""
    t = np.dtype(dtype).type
    x = t(4) / t(3)
    return float(abs((x - t(1)) * t(3) - t(1)))
'''),
]
