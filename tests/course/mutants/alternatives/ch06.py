"""Chapter 06 (nonlinearities and losses): correct answers of other designs than the solution's; each must pass
every test."""

from ..spec import Alternative

ALTERNATIVES = [
    Alternative("exp_log_code", "output times gy; LogOp's backward through np.reciprocal",
                source='''class ExpOp(Operator):
    # y = exp(x); dy/dx = exp(x) = y.

    def forward(self, x):
        return np.exp(x)

    def backward(self, gy):
        return [np.multiply(self.output, gy)]


class LogOp(Operator):
    # y = ln(x); dy/dx = 1/x.

    def forward(self, x):
        return np.log(x)

    def backward(self, gy):
        (x,) = self.inputs
        return [gy * np.reciprocal(x)]
'''),
    Alternative("exp_log_code", "LogOp's 1/x written as exp(-y) from the saved output",
                source='''class ExpOp(Operator):
    # y = exp(x); dy/dx = exp(x) = y.

    def forward(self, x):
        return np.exp(x)

    def backward(self, gy):
        y = self.output
        return [y * gy]


class LogOp(Operator):
    # y = ln(x); dy/dx = 1/x.

    def forward(self, x):
        return np.log(x)

    def backward(self, gy):
        return [gy * np.exp(-self.output)]
'''),
    Alternative("relu_code", "np.where with zeros_like on both sides",
                source='''class ReLUOp(Operator):
    # y = max(x, 0); dy/dx = 1 where x > 0, else 0 (0 at the kink x == 0).

    def forward(self, x):
        return np.where(x > 0, x, np.zeros_like(x))

    def backward(self, gy):
        (x,) = self.inputs
        return [np.where(x > 0, gy, np.zeros_like(gy))]
'''),
    Alternative("relu_code", "np.clip forward, the mask read from the saved output (y > 0 exactly where x > 0)",
                source='''class ReLUOp(Operator):
    # y = max(x, 0); dy/dx = 1 where x > 0, else 0 (0 at the kink x == 0).

    def forward(self, x):
        return np.clip(x, 0, None)

    def backward(self, gy):
        return [gy * (self.output > 0)]
'''),
    Alternative("sigmoid_code", "exp(-logaddexp(0, -x)); backward as z / (1 + z)^2 with z = exp(-|x|)",
                source='''class SigmoidOp(Operator):
    # y = sigmoid(x) elementwise, right and silent (no overflow, no warning) for every finite x.

    def forward(self, x):
        return np.exp(-np.logaddexp(0, -x)).astype(x.dtype, copy=False)

    def backward(self, gy):
        (x,) = self.inputs
        z = np.exp(-np.abs(x))
        return [gy * (z / ((1 + z) * (1 + z)))]
'''),
    Alternative("sigmoid_code", "two masked branches filled into a new array; backward y - y²",
                source='''class SigmoidOp(Operator):
    # y = sigmoid(x) elementwise, right and silent (no overflow, no warning) for every finite x.

    def forward(self, x):
        out = np.empty_like(x)
        pos = x >= 0
        out[pos] = 1 / (1 + np.exp(-x[pos]))
        ez = np.exp(x[~pos])
        out[~pos] = ez / (1 + ez)
        return out

    def backward(self, gy):
        y = self.output
        return [gy * (y - y * y)]
'''),
    Alternative("tanh_code", "backward as gy - gy·y²",
                source='''class TanhOp(Operator):
    # y = tanh(x); dy/dx = 1 - y^2.

    def forward(self, x):
        return np.tanh(x)

    def backward(self, gy):
        y = self.output
        return [gy - gy * y * y]
'''),
    Alternative("tanh_code", "backward as gy (1 - y)(1 + y)",
                source='''class TanhOp(Operator):
    # y = tanh(x); dy/dx = 1 - y^2.

    def forward(self, x):
        return np.tanh(x)

    def backward(self, gy):
        y = self.output
        return [gy * ((1 - y) * (1 + y))]
'''),
    # Not listed, refused by the hidden float32 case (all-equal logits near 1e7): z - logsumexp(z), whether as
    # z - (m + log(sum(exp(z - m)))) or z - np.logaddexp.reduce(z): in float32 m + log(2) rounds back to m, so the
    # result is 0 instead of -log(2). Keeping z - m is what the skeleton's comment asks for; see the report.
    Alternative("log_softmax_code", "the axis moved to the end and back; shifted values minus np.logaddexp.reduce",
                source='''def log_softmax(z, axis=-1):
    # log softmax of z along `axis`, computed as (z - max) - log(sum(exp(z - max))): finite for every finite z.
    last = np.moveaxis(z, axis, -1)
    shifted = last - np.amax(last, axis=-1, keepdims=True)
    out = shifted - np.logaddexp.reduce(shifted, axis=-1, keepdims=True)
    return np.moveaxis(out, -1, axis)
'''),
    Alternative("log_softmax_code", "np.subtract with the maximum, log of np.add.reduce of the exponentials",
                source='''def log_softmax(z, axis=-1):
    # log softmax of z along `axis`, computed as (z - max) - log(sum(exp(z - max))): finite for every finite z.
    shifted = np.subtract(z, np.max(z, axis=axis, keepdims=True))
    log_total = np.log(np.add.reduce(np.exp(shifted), axis=axis, keepdims=True))
    return np.subtract(shifted, log_total)
'''),
    Alternative("cross_entropy_code", "take_along_axis and a one-hot from np.eye",
                source='''class SoftmaxCrossEntropyOp(Operator):
    # Mean over the batch of -log softmax(logits)[label]; d/dlogits = (softmax(logits) - one_hot(labels)) / N.

    def forward(self, logits, labels):
        log_p = log_softmax(logits, axis=1)
        picked = np.take_along_axis(log_p, labels.astype(int)[:, None], axis=1)
        return np.asarray(-picked.mean(), dtype=logits.dtype)

    def backward(self, gy):
        logits, labels = self.inputs
        n, c = logits.shape
        one_hot = np.eye(c, dtype=logits.dtype)[labels.astype(int)]
        p = np.exp(log_softmax(logits, axis=1))
        return [(p - one_hot) * gy / n, np.zeros_like(labels)]
'''),
    Alternative("cross_entropy_code", "p kept from forward in a private attribute; np.subtract.at for the one-hot",
                source='''class SoftmaxCrossEntropyOp(Operator):
    # Mean over the batch of -log softmax(logits)[label]; d/dlogits = (softmax(logits) - one_hot(labels)) / N.

    def forward(self, logits, labels):
        rows = np.arange(logits.shape[0])
        log_p = log_softmax(logits, axis=1)
        self._p = np.exp(log_p)
        return np.asarray(-np.sum(log_p[rows, labels.astype(int)]) / len(rows), dtype=logits.dtype)

    def backward(self, gy):
        logits, labels = self.inputs
        n = logits.shape[0]
        grad = self._p.copy()
        np.subtract.at(grad, (np.arange(n), labels.astype(int)), 1)
        return [gy / n * grad, np.zeros(labels.shape, dtype=labels.dtype)]
'''),
]
