"""Chapter 08 (regularisation and optimizers): correct answers of other designs than the solution's; each must pass
every test."""

from ..spec import Alternative

ALTERNATIVES = [
    Alternative("dropout_code", "a boolean mask and np.where, the scale applied in forward and backward",
                source='''class DropoutOp(Operator):
    # Training: y = x * m / (1 - p) with m = (rng.random(x.shape) >= p); evaluation: y = x. dx = gy * m / (1 - p).
    training_dependent = True  # forward reads Engine.is_training

    def __init__(self, p, rng):
        self.p = p
        self.rng = rng

    def forward(self, x):
        self.keep = None
        if Engine.is_training:
            self.keep = self.rng.random(x.shape) >= self.p
            return np.where(self.keep, x / x.dtype.type(1 - self.p), x.dtype.type(0))
        return x

    def backward(self, gy):
        if self.keep is None:
            return [gy]
        return [np.where(self.keep, gy / gy.dtype.type(1 - self.p), gy.dtype.type(0))]
'''),
    Alternative("dropout_code", "the mode saved as a flag, the mask built by np.multiply with dtype=",
                source='''class DropoutOp(Operator):
    # Training: y = x * m / (1 - p) with m = (rng.random(x.shape) >= p); evaluation: y = x. dx = gy * m / (1 - p).
    training_dependent = True  # forward reads Engine.is_training

    def __init__(self, p, rng):
        self.p = p
        self.rng = rng

    def forward(self, x):
        self.was_training = bool(Engine.is_training)
        if not self.was_training:
            return x
        draws = self.rng.random(x.shape)
        self.mask = np.multiply(draws >= self.p, 1.0 / (1.0 - self.p), dtype=x.dtype)
        return self.mask * x

    def backward(self, gy):
        return [self.mask * gy] if self.was_training else [gy]
'''),
    Alternative("layer_norm_code", "np.var, other attribute names, backward written with sums over D",
                source='''class LayerNormOp(Operator):
    # y = gamma * (x - mean) / sqrt(var + eps) + beta over the last axis, the variance taken of the centred values.

    def __init__(self, eps=1e-5):
        self.eps = eps

    def forward(self, x, gamma, beta):
        mu = np.mean(x, axis=-1, keepdims=True)
        self.r = 1 / np.sqrt(np.var(x, axis=-1, keepdims=True) + self.eps)
        self.x_hat = (x - mu) * self.r
        return gamma * self.x_hat + beta

    def backward(self, gy):
        x, gamma, beta = self.inputs
        d = x.shape[-1]
        g = gamma * gy
        s1 = np.sum(g, axis=-1, keepdims=True)
        s2 = np.sum(g * self.x_hat, axis=-1, keepdims=True)
        dx = (self.r / d) * (d * g - s1 - self.x_hat * s2)
        flat = lambda a: a.reshape(-1, d)
        return [dx, flat(gy * self.x_hat).sum(axis=0), flat(gy).sum(axis=0)]
'''),
    Alternative("layer_norm_code", "(var + eps) ** -0.5, a saved tuple, parameter gradients by einsum over rows",
                source='''class LayerNormOp(Operator):
    # y = gamma * (x - mean) / sqrt(var + eps) + beta over the last axis, the variance taken of the centred values.

    def __init__(self, eps=1e-5):
        self.eps = eps

    def forward(self, x, gamma, beta):
        c = x - x.mean(-1)[..., None]
        rstd = (np.mean(c ** 2, axis=-1, keepdims=True) + self.eps) ** -0.5
        xhat = c * rstd
        self.saved = (xhat, rstd)
        return xhat * gamma + beta

    def backward(self, gy):
        x, gamma, beta = self.inputs
        xhat, rstd = self.saved
        g = gy * gamma
        proj = (g * xhat).mean(-1, keepdims=True)
        dx = rstd * (g - g.mean(-1, keepdims=True)) - rstd * xhat * proj
        d = x.shape[-1]
        g2, xh2 = gy.reshape(-1, d), xhat.reshape(-1, d)
        return [dx, np.einsum("nd,nd->d", g2, xh2), np.einsum("nd->d", g2)]
'''),
    Alternative("adam_code", "Kingma and Ba's efficient form: corrected step size and eps * sqrt(1 - beta2**t)",
                source='''class Adam:
    # Kingma & Ba (2015), Algorithm 1: running means m of g and v of g^2, bias-corrected, p -= lr * m_hat / (sqrt(v_hat) + eps).

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        self.params = list(params)
        self.lr = lr
        self.betas = betas
        self.eps = eps
        self.m = [np.zeros(p.shape, p.dtype) for p in self.params]
        self.v = [np.zeros(p.shape, p.dtype) for p in self.params]
        self.t = 0

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    def step(self):
        b1, b2 = self.betas
        self.t += 1
        c2 = np.sqrt(1 - b2 ** self.t)
        alpha = self.lr * c2 / (1 - b1 ** self.t)
        for i, p in enumerate(self.params):
            if p.grad is None:
                continue
            g = p.grad
            self.m[i] = b1 * self.m[i] + (1 - b1) * g
            self.v[i] = b2 * self.v[i] + (1 - b2) * np.square(g)
            p.add_(-alpha * self.m[i] / (np.sqrt(self.v[i]) + self.eps * c2))
'''),
    Alternative("adam_code", "state kept lazily per parameter index in a dict, created at zero on the first gradient",
                source='''class Adam:
    # Kingma & Ba (2015), Algorithm 1: running means m of g and v of g^2, bias-corrected, p -= lr * m_hat / (sqrt(v_hat) + eps).

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        self.params = list(params)
        self.lr = lr
        self.betas = betas
        self.eps = eps
        self.state = {}
        self.steps = 0

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    def step(self):
        self.steps += 1
        beta1, beta2 = self.betas
        for i, p in enumerate(self.params):
            if p.grad is None:
                continue
            m, v = self.state.setdefault(i, (np.zeros_like(p.data), np.zeros_like(p.data)))
            m = beta1 * m + (1 - beta1) * p.grad
            v = beta2 * v + (1 - beta2) * p.grad ** 2
            self.state[i] = (m, v)
            m_hat = m / (1 - beta1 ** self.steps)
            v_hat = v / (1 - beta2 ** self.steps)
            p.add_(-(self.lr * m_hat) / (v_hat ** 0.5 + self.eps))
'''),
    Alternative("stalled_code", "an explicit loop with np.count_nonzero",
                source='''def stalled_parameters(model):
    # Names of the model's parameters that received no gradient (None) or an all-zero one.
    out = []
    for name, p in model.named_parameters():
        if p.grad is None:
            out.append(name)
        elif np.count_nonzero(p.grad) == 0:
            out.append(name)
    return out
'''),
    Alternative("stalled_code", "a helper predicate and np.all(grad == 0)",
                source='''def stalled_parameters(model):
    # Names of the model's parameters that received no gradient (None) or an all-zero one.
    def stalled(p):
        return p.grad is None or bool(np.all(p.grad == 0))

    return [name for name, p in model.named_parameters() if stalled(p)]
'''),
    Alternative("nan_op_code", "the name read from the class", source='''nan_op = ExpOp.__name__
'''),
    Alternative("nan_op_code", "the name built from an instance", source='''nan_op = type(ExpOp()).__name__
'''),
    Alternative("grad_norm_code", "np.linalg.norm of all gradients concatenated in float64",
                source='''def global_grad_norm(params):
    # sqrt of the sum of squares of every gradient entry over all parameters that have a gradient.
    flat = [np.ravel(p.grad).astype(np.float64) for p in params if p.grad is not None]
    if not flat:
        return 0.0
    return float(np.linalg.norm(np.concatenate(flat)))
'''),
    Alternative("grad_norm_code", "overflow-safe scaling by the largest entry (as BLAS nrm2 does), in float64",
                source='''def global_grad_norm(params):
    # sqrt of the sum of squares of every gradient entry over all parameters that have a gradient.
    grads = [np.abs(np.asarray(p.grad, dtype=np.float64)) for p in params if p.grad is not None]
    scale = max((float(g.max()) for g in grads if g.size), default=0.0)
    if scale == 0.0:
        return 0.0
    return scale * float(np.sqrt(sum(np.sum((g / scale) ** 2) for g in grads)))
'''),
    Alternative("graph_size_code", "breadth-first with a deque and a dict keyed by id",
                source='''def graph_size(root):
    # The number of distinct Variables reachable from root through .parents, root included.
    from collections import deque
    seen = {id(root): root}
    queue = deque([root])
    while queue:
        for parent in queue.popleft().parents:
            if id(parent) not in seen:
                seen[id(parent)] = parent
                queue.append(parent)
    return len(seen)
'''),
    Alternative("graph_size_code", "a growing list read by an index, membership by identity",
                source='''def graph_size(root):
    # The number of distinct Variables reachable from root through .parents, root included.
    order, ids, i = [root], {id(root)}, 0
    while i < len(order):
        new = [p for p in order[i].parents if id(p) not in ids]
        for p in new:
            if id(p) not in ids:
                ids.add(id(p))
                order.append(p)
        i += 1
    return int(len(order))
'''),
    Alternative("leaky_loop_code", "the name built from its parts", source='''leaky_loop = "loop_" + "b"
'''),
    Alternative("leaky_loop_code", "picked from the tuple of choices", source='''leaky_loop = ("loop_a", "loop_b")[1]
'''),
]
