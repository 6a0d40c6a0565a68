"""Chapter 07 (training an MLP): correct answers of other designs than the solution's; each must pass every test."""

from ..spec import Alternative

ALTERNATIVES = [
    Alternative("linear_code", "unnamed parameters, math.sqrt scale via np.multiply, the product kept in a local",
                source='''class Linear(Module):
    # y = x W^T + b with W (out_features, in_features) drawn from N(0, 2 / in_features) and b = 0 (out_features,).

    def __init__(self, in_features, out_features, rng):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        draw = rng.standard_normal(size=(out_features, in_features))
        self.weight = Parameter(np.multiply(draw, math.sqrt(2 / in_features)).astype(np.float32))
        self.bias = Parameter(np.zeros((out_features,), np.float32))

    def forward(self, x):
        product = MatMulOp(transpose_b=True)(x, self.weight)
        return AddOp()(product, self.bias)
'''),
    Alternative("linear_code", "in-place float64 scaling, np.asarray cast, bias reshaped to a row before the add",
                source='''class Linear(Module):
    # y = x W^T + b with W (out_features, in_features) drawn from N(0, 2 / in_features) and b = 0 (out_features,).

    def __init__(self, in_features, out_features, rng):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        w = rng.standard_normal((out_features, in_features))
        w *= (2.0 / in_features) ** 0.5
        self.weight = Parameter(np.asarray(w, dtype=np.float32), name="W")
        self.bias = Parameter(np.zeros(out_features).astype(np.float32), name="b")

    def forward(self, x):
        row = autograd_lab.ops.ReshapeOp((1, self.out_features))(self.bias)
        return AddOp()(MatMulOp(transpose_b=True)(x, self.weight), row)
'''),
    Alternative("sgd_code", "all()-style validation, np.linalg.norm in float64 (the clipped gradient comes back float64)",
                source='''class SGD:
    # p <- p - lr * g for every Parameter p with gradient g; with clip = c, a g longer than c is scaled to length c.

    def __init__(self, params, lr, clip=None):
        params = list(params)
        bad = [p for p in params if not isinstance(p, Parameter)]
        if bad:
            raise TypeError(f"SGD takes Parameters only, got {bad[0]!r}")
        self.params, self.lr, self.clip = params, lr, clip

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    def step(self):
        for p in (q for q in self.params if q.grad is not None):
            if self.clip is not None:
                norm = np.linalg.norm(p.grad.astype(np.float64).ravel())
                if norm > self.clip:
                    p.grad = p.grad * (self.clip / norm)
            p.add_(-self.lr * p.grad)
'''),
    Alternative("sgd_code", "vdot norm of the float64 copy, a local gradient divided and written back, update lr-scaled after",
                source='''class SGD:
    # p <- p - lr * g for every Parameter p with gradient g; with clip = c, a g longer than c is scaled to length c.

    def __init__(self, params, lr, clip=None):
        self.params = []
        for p in params:
            if not isinstance(p, Parameter):
                raise TypeError(f"{type(p).__name__} {p!r} is not a Parameter")
            self.params.append(p)
        self.lr = lr
        self.clip = clip

    def zero_grad(self):
        for i in range(len(self.params)):
            self.params[i].grad = None

    def step(self):
        for p in self.params:
            g = p.grad
            if g is None:
                continue
            if self.clip is not None:
                g64 = g.astype(np.float64)
                norm = float(np.sqrt(np.vdot(g64, g64)))
                if norm > self.clip:
                    g = g / (norm / self.clip)
                    p.grad = g
            p.add_(g * -self.lr)
'''),
    Alternative("train_epoch_code", "losses and sizes collected in lists, weighted with np.dot at the end",
                source='''def train_epoch(model, optimizer, x, y, batch_size, rng):
    # One epoch of mini-batch training; returns the mean training loss per example (each batch measured before its step).
    losses, sizes = [], []
    for xb, yb in iterate_minibatches(x, y, batch_size, rng):
        optimizer.zero_grad()
        loss = SoftmaxCrossEntropyOp()(model(Variable.from_numpy(xb)), Variable.from_numpy(yb))
        losses.append(loss.item())
        Engine.backward(loss)
        optimizer.step()
        sizes.append(xb.shape[0])
    return float(np.dot(losses, sizes) / np.sum(sizes))
'''),
    Alternative("train_epoch_code", "gradients cleared once before the loop and again after every step",
                source='''def train_epoch(model, optimizer, x, y, batch_size, rng):
    # One epoch of mini-batch training; returns the mean training loss per example (each batch measured before its step).
    total, count = 0.0, 0
    optimizer.zero_grad()
    for xb, yb in iterate_minibatches(x, y, batch_size, rng):
        logits = model(Variable.from_numpy(xb))
        loss = SoftmaxCrossEntropyOp()(logits, Variable.from_numpy(yb))
        batch_loss = float(loss.numpy())
        Engine.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
        total += batch_loss * len(yb)
        count += len(yb)
    return total / count
'''),
    Alternative("evaluate_code", "the loss computed in NumPy (float64 log-softmax) from the logits, nested contexts",
                source='''def evaluate(model, x, y, batch_size=500):
    # (mean cross-entropy per example, accuracy in [0, 1]) of `model` on x (N, D), y (N,), without recording a graph.
    n = len(x)
    loss_sum, right = 0.0, 0
    with eval_mode():
        with no_grad():
            start = 0
            while start < n:
                stop = min(start + batch_size, n)
                z = model(Variable.from_numpy(x[start:stop])).numpy().astype(np.float64)
                z = z - z.max(axis=1, keepdims=True)
                log_p = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
                yb = y[start:stop]
                loss_sum += float(-log_p[np.arange(stop - start), yb].sum())
                right += int((z.argmax(axis=1) == yb).sum())
                start = stop
    return (loss_sum / n, right / n)
'''),
    Alternative("evaluate_code", "np.array_split into ceil(N / batch_size) chunks, predictions concatenated",
                source='''def evaluate(model, x, y, batch_size=500):
    # (mean cross-entropy per example, accuracy in [0, 1]) of `model` on x (N, D), y (N,), without recording a graph.
    chunks = -(-len(x) // batch_size)
    weighted, predictions = [], []
    with no_grad(), eval_mode():
        for xb, yb in zip(np.array_split(x, chunks), np.array_split(y, chunks)):
            logits = model(Variable.from_numpy(xb))
            weighted.append(SoftmaxCrossEntropyOp()(logits, Variable.from_numpy(yb)).item() * len(yb))
            predictions.append(np.argmax(logits.data, axis=-1))
    accuracy = np.mean(np.concatenate(predictions) == y)
    return float(sum(weighted) / len(y)), float(accuracy)
'''),
]
