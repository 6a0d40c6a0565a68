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

ALTERNATIVES += [
    Alternative("sum_to_shape_code", "one sum over every added or stretched axis, then reshape (a copy always)",
                source='''def sum_to_shape(grad: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Sum grad over the axes that broadcasting added or stretched, so that the result has exactly `shape`."""
    shape = tuple(shape)
    lead = grad.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(shape) if n == 1 and grad.shape[lead + i] != 1)
    return np.asarray(np.add.reduce(grad, axis=axes)).reshape(shape)
'''),
    Alternative("add_op_code", "np.add forward, a copy of gy for each input",
                source='''class AddOp(Operator):
    """y = a + b (same shapes).  dy/da = 1, dy/db = 1."""

    def forward(self, a, b):
        return np.add(a, b)

    def backward(self, gy):
        return [gy.copy(), gy.copy()]
'''),
    Alternative("add_op_code", "b + a, and None for an input whose gradient is not wanted (needs_grad)",
                source='''class AddOp(Operator):
    """y = a + b (same shapes).  dy/da = 1, dy/db = 1."""

    def forward(self, a, b):
        return b + a

    def backward(self, gy):
        return [gy if self.needs_grad(i) else None for i in range(2)]
'''),
    Alternative("neg_op_code", "np.negative on both sides",
                source='''class NegOp(Operator):
    """y = -a.  dy/da = -1."""

    def forward(self, a):
        return np.negative(a)

    def backward(self, gy):
        return [np.negative(gy)]
'''),
    Alternative("neg_op_code", "0 - a and 0 - gy (a signed zero becomes +0)",
                source='''class NegOp(Operator):
    """y = -a.  dy/da = -1."""

    def forward(self, a):
        return 0 - a

    def backward(self, gy):
        return [0 - gy]
'''),
    Alternative("mul_op_code", "np.multiply, inputs read by position, gy last",
                source='''class MulOp(Operator):
    """y = a * b (same shapes).  dy/da = b, dy/db = a."""

    def forward(self, a, b):
        return np.multiply(a, b)

    def backward(self, gy):
        return [np.multiply(self.inputs[1], gy), np.multiply(self.inputs[0], gy)]
'''),
    Alternative("mul_op_code", "a loop over (own, other) pairs, None where needs_grad says the gradient is not wanted",
                source='''class MulOp(Operator):
    """y = a * b (same shapes).  dy/da = b, dy/db = a."""

    def forward(self, a, b):
        return b * a

    def backward(self, gy):
        a, b = self.inputs
        grads = []
        for i, other in enumerate((b, a)):
            grads.append(other * gy if self.needs_grad(i) else None)
        return grads
'''),
    Alternative("sub_op_code", "a + (-b) forward, np.negative for b",
                source='''class SubOp(Operator):
    """y = a - b (same shapes).  dy/da = 1, dy/db = -1.  Input order matters."""

    def forward(self, a, b):
        return a + (-b)

    def backward(self, gy):
        return [gy, np.negative(gy)]
'''),
    Alternative("sub_op_code", "np.subtract forward, gradients as gy times the signs (+1, -1)",
                source='''class SubOp(Operator):
    """y = a - b (same shapes).  dy/da = 1, dy/db = -1.  Input order matters."""

    def forward(self, a, b):
        return np.subtract(a, b)

    def backward(self, gy):
        return [gy * sign for sign in (1, -1)]
'''),
    Alternative("div_op_code", "textbook formula: gy / b and -gy * a / b**2",
                source='''class DivOp(Operator):
    """y = a / b elementwise (same shapes, b never 0).  Input order matters."""

    def forward(self, a, b):
        return a / b

    def backward(self, gy):
        a, b = self.inputs
        return [gy / b, -gy * a / (b * b)]
'''),
    Alternative("div_op_code", "multiplication by the reciprocal, forward and backward",
                source='''class DivOp(Operator):
    """y = a / b elementwise (same shapes, b never 0).  Input order matters."""

    def forward(self, a, b):
        return a * np.reciprocal(b)

    def backward(self, gy):
        a, b = self.inputs
        r = np.reciprocal(b)
        return [gy * r, -(gy * a) * r * r]
'''),
    Alternative("broadcast_mul_op_code", "a loop over (own, other) input pairs",
                source='''class BroadcastMulOp(Operator):
    """y = a * b with NumPy broadcasting.  dy/da = b, dy/db = a, each summed back to its input's shape."""

    def forward(self, a, b):
        return np.multiply(a, b)

    def backward(self, gy):
        a, b = self.inputs
        return [sum_to_shape(np.multiply(gy, other), own.shape) for own, other in ((a, b), (b, a))]
'''),
    Alternative("broadcast_mul_op_code", "the product computed in the other order, None for unwanted gradients",
                source='''class BroadcastMulOp(Operator):
    """y = a * b with NumPy broadcasting.  dy/da = b, dy/db = a, each summed back to its input's shape."""

    def forward(self, a, b):
        return b * a

    def backward(self, gy):
        a, b = self.inputs
        ga = sum_to_shape(b * gy, a.shape) if self.needs_grad(0) else None
        gb = sum_to_shape(a * gy, b.shape) if self.needs_grad(1) else None
        return [ga, gb]
'''),
]
