"""Chapter 04 (gradient checking): correct answers of other designs than the solution's; each must pass every
test."""

from ..spec import Alternative

ALTERNATIVES = [
    Alternative("numerical_grad_code", "np.ndindex over the shape, a fresh nudged copy (base ± h e_i) per evaluation",
                source='''def numerical_grad(f, x, eps: float = 1e-6) -> np.ndarray:
    """Central-difference gradient of the scalar function f at x, computed in float64 (same shape as x)."""
    base = np.asarray(x, dtype=np.float64).copy()
    grad = np.empty(base.shape, dtype=np.float64)
    for idx in np.ndindex(base.shape):
        e = np.zeros_like(base)
        e[idx] = eps
        grad[idx] = (float(f(base + e)) - float(f(base - e))) / (2 * eps)
    return grad
'''),
    Alternative("numerical_grad_code", "a flat view of the float64 copy, down before up, halved difference",
                source='''def numerical_grad(f, x, eps: float = 1e-6) -> np.ndarray:
    """Central-difference gradient of the scalar function f at x, computed in float64 (same shape as x)."""
    point = x.astype(np.float64, copy=True)
    flat = point.reshape(-1)  # a view of the copy
    out = np.zeros(point.size)
    for i in range(point.size):
        keep = flat[i]
        flat[i] = keep - eps
        down = f(point)
        flat[i] = keep + eps
        up = f(point)
        flat[i] = keep
        out[i] = 0.5 * (float(up) - float(down)) / eps
    return out.reshape(point.shape)
'''),
    Alternative("gradcheck_code", "a helper for the loss, its own elementwise tolerance test, class name in the "
                "message",
                source='''def gradcheck(op_factory, inputs, eps: float = 1e-6, atol: float = 1e-6, rtol: float = 1e-4, seed: int = 0) -> bool:
    """Compare an operator's backward with central differences of L = sum(r * y) for a random r.

    Raises:
        AssertionError: naming the operator, the input index and the largest absolute difference.
    """
    values = [np.asarray(a, dtype=np.float64) for a in inputs]
    leaves = [Variable.from_numpy(v) for v in values]
    op = op_factory()
    y = op(*leaves)
    r = np.random.default_rng(seed).standard_normal(y.shape)
    Engine.backward(y, grad=r)

    def make_loss(k):
        def loss(v):
            args = values[:k] + [v] + values[k + 1:]
            out = op_factory()(*[Variable.from_numpy(a) for a in args])
            return float((r * out.data).sum())
        return loss

    for k in range(len(values)):
        g = leaves[k].grad
        analytic = np.zeros(values[k].shape) if g is None else np.array(g, dtype=np.float64)
        numeric = numerical_grad(make_loss(k), values[k], eps)
        diff = np.abs(analytic - numeric)
        if (diff > atol + rtol * np.abs(numeric)).any() or np.isnan(diff).any():
            raise AssertionError(f"{type(op).__name__}: input {k} has a wrong gradient, largest absolute "
                                 f"difference {float(np.max(diff))}")
    return True
'''),
    Alternative("gradcheck_code", "all numerical gradients first (list comprehension), then one comparison pass",
                source='''def gradcheck(op_factory, inputs, eps: float = 1e-6, atol: float = 1e-6, rtol: float = 1e-4, seed: int = 0) -> bool:
    """Compare an operator's backward with central differences of L = sum(r * y) for a random r.

    Raises:
        AssertionError: naming the operator, the input index and the largest absolute difference.
    """
    xs = tuple(np.array(a, dtype=np.float64) for a in inputs)
    leaves = tuple(map(Variable.from_numpy, xs))
    op = op_factory()
    y = op(*leaves)
    rng_r = np.random.default_rng(seed)
    r = rng_r.standard_normal(y.shape)
    Engine.backward(y, grad=r)
    analytic = [np.zeros_like(x) if v.grad is None else v.grad.astype(np.float64) for x, v in zip(xs, leaves)]

    def rebuilt(k, value):
        nodes = [Variable.from_numpy(value) if j == k else Variable.from_numpy(x) for j, x in enumerate(xs)]
        return np.sum(r * op_factory()(*nodes).data)

    numeric = [numerical_grad(lambda v, k=k: rebuilt(k, v), xs[k], eps) for k in range(len(xs))]
    for k, (a, n) in enumerate(zip(analytic, numeric)):
        if not np.allclose(a, n, rtol=rtol, atol=atol):
            raise AssertionError(f"gradcheck failed for {type(op).__name__}, input {k}: largest absolute difference "
                                 f"{np.max(np.abs(a - n)):.3e}")
    return True
'''),
    Alternative("find_broken_code", "a set comprehension over a helper that answers whether the check raises",
                source='''def find_broken(candidates: dict) -> set:
    """Names of the candidates (name -> (op_factory, inputs)) whose gradient check raises any Exception."""
    def fails(op_factory, inputs):
        try:
            gradcheck(op_factory, inputs)
        except Exception:
            return True
        return False

    return {name for name, (op_factory, inputs) in candidates.items() if fails(op_factory, inputs)}
'''),
    Alternative("find_broken_code", "sorted names, a list, try/except/else, turned into a set at the end",
                source='''def find_broken(candidates: dict) -> set:
    """Names of the candidates (name -> (op_factory, inputs)) whose gradient check raises any Exception."""
    names = []
    for name in sorted(candidates):
        factory, inputs = candidates[name]
        try:
            ok = gradcheck(factory, inputs)
        except Exception as exc:  # noqa: F841 - the kind of failure does not matter
            names.append(name)
        else:
            if ok is not True:
                names.append(name)
    return set(names)
'''),
    Alternative("fixed_ops_code", "subclasses of Operator writing both methods, other formulas",
                source='''class FixedSubOp(Operator):
    """LabSubOp with a correct backward."""

    def forward(self, a, b):
        return np.subtract(a, b)

    def backward(self, gy):
        return [gy.copy(), np.negative(gy)]


class FixedDivOp(Operator):
    """LabDivOp with a correct backward."""

    def forward(self, a, b):
        return a / b

    def backward(self, gy):
        a, b = self.inputs
        inv = 1.0 / b
        return [gy * inv, -gy * self.output * inv]


class FixedSigmoidOp(Operator):
    """LabSigmoidOp with a correct backward."""

    def forward(self, x):
        return 1.0 / (1.0 + np.exp(-x))

    def backward(self, gy):
        (x,) = self.inputs
        s = 1.0 / (1.0 + np.exp(-x))
        return [gy * s * (1.0 - s)]


class FixedSquareOp(Operator):
    """LabSquareOp with a correct backward."""

    def forward(self, a):
        return a * a

    def backward(self, gy):
        (a,) = self.inputs
        return [gy * (a + a)]
'''),
    Alternative("fixed_ops_code", "the Lab subclasses with rearranged formulas (y - y², (gy/b)(a/b), 2·gy·a)",
                source='''class FixedSubOp(LabSubOp):
    """LabSubOp with a correct backward."""

    def backward(self, gy):
        return [gy * 1.0, gy * -1.0]


class FixedDivOp(LabDivOp):
    """LabDivOp with a correct backward."""

    def backward(self, gy):
        a, b = self.inputs
        ga = gy / b
        return [ga, -(ga * (a / b))]


class FixedSigmoidOp(LabSigmoidOp):
    """LabSigmoidOp with a correct backward."""

    def backward(self, gy):
        y = self.output
        return [gy * y - gy * y * y]


class FixedSquareOp(LabSquareOp):
    """LabSquareOp with a correct backward."""

    def backward(self, gy):
        (a,) = self.inputs
        return [2 * gy * a]
'''),
]
