"""Chapter 02 (operators): correct answers of other designs than the solution's; each must pass every test."""

from ..spec import Alternative

ALTERNATIVES = [
    Alternative("sum_to_shape_code", "a loop that sums one axis at a time, returning a copy",
                source='''def sum_to_shape(grad: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Sum grad over the axes that broadcasting added or stretched, so that the result has exactly `shape`."""
    out = np.array(grad)
    while out.ndim > len(shape):
        out = out.sum(axis=0)
    for axis, n in enumerate(shape):
        if n == 1 and out.shape[axis] != 1:
            out = out.sum(axis=axis, keepdims=True)
    return np.asarray(out).reshape(tuple(shape))
'''),
]
