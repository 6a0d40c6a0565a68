"""Chapter 10 (recurrent networks): correct answers of other designs than the solution's; each must pass every
test."""

from ..spec import Alternative

ALTERNATIVES = [
    Alternative("unroll_code", "SliceOp and ReshapeOp to take a step, the last state read back from the list",
                source='''def unroll(cell, x, h0):
    """Apply ``cell`` to the steps of the Variable ``x`` (N, T, D), T >= 1, from the Variable ``h0`` (N, H).

    Returns (outputs, h_T): the states h_1..h_T stacked into a Variable (N, T, H), and the last state (N, H).
    """
    n, steps, d = x.shape
    states = [h0]
    for t in range(steps):
        x_t = autograd_lab.ops.ReshapeOp((n, d))(SliceOp(t, t + 1, axis=1)(x))
        states.append(cell(x_t, states[-1]))
    return StackOp(axis=1)(*states[1:]), states[-1]
'''),
    Alternative("unroll_code", "the steps selected first, then itertools.accumulate over them",
                source='''def unroll(cell, x, h0):
    """Apply ``cell`` to the steps of the Variable ``x`` (N, T, D), T >= 1, from the Variable ``h0`` (N, H).

    Returns (outputs, h_T): the states h_1..h_T stacked into a Variable (N, T, H), and the last state (N, H).
    """
    import itertools
    steps = [SelectOp(t, axis=1)(x) for t in range(x.shape[1])]
    states = tuple(itertools.accumulate(steps, lambda h, x_t: cell(x_t, h), initial=h0))[1:]
    return StackOp(axis=1)(*states), states[-1]
'''),
    Alternative("bptt_code", "NumPy arrays, dL/da_t from a reversed cumulative product",
                source='''def bptt(xs, w, u, h0):
    """Gradients (dL/dw, dL/du, dL/dh0) of L = h_T for h_t = tanh(w h_(t-1) + u x_t); xs is a list of T floats."""
    xs = np.asarray(xs, dtype=np.float64)
    hs = np.empty(len(xs) + 1)
    hs[0] = h0
    for t, x_t in enumerate(xs, start=1):
        hs[t] = np.tanh(w * hs[t - 1] + u * x_t)
    d = 1.0 - hs[1:] ** 2                      # tanh'(a_t), t = 1..T
    later = np.append(w * d[1:], 1.0)          # the factor that carries delta from step t + 1 back to step t
    da = d * np.cumprod(later[::-1])[::-1]     # dL/da_t = tanh'(a_t) * prod of the later factors
    return float(np.dot(da, hs[:-1])), float(np.dot(da, xs)), float(w * da[0])
'''),
    Alternative("bptt_code", "a backward loop that keeps every dL/da_t, sums taken with math.fsum",
                source='''def bptt(xs, w, u, h0):
    """Gradients (dL/dw, dL/du, dL/dh0) of L = h_T for h_t = tanh(w h_(t-1) + u x_t); xs is a list of T floats."""
    h = {0: h0}
    for t in range(1, len(xs) + 1):
        h[t] = math.tanh(w * h[t - 1] + u * xs[t - 1])
    da = {}
    dh = 1.0                      # dL/dh_T
    for t in reversed(range(1, len(xs) + 1)):
        da[t] = dh * (1 - h[t] ** 2)
        dh = w * da[t]            # dL/dh_(t-1)
    dw = math.fsum(da[t] * h[t - 1] for t in da)
    du = math.fsum(da[t] * xs[t - 1] for t in da)
    return (dw, du, dh)
'''),
    Alternative("lstm_cell_code", "the weights sliced per gate (four small products instead of one wide one)",
                source='''def lstm_cell(x, h, c, weight_ih, weight_hh, bias_ih, bias_hh):
    """One LSTM step: x (N, D), h and c (N, H), weights (4H, D) and (4H, H), biases (4H,) -> (h_next, c_next)."""
    H = h.shape[1]

    def block(k):
        rows = lambda w: SliceOp(k * H, (k + 1) * H, axis=0)(w)  # a new op for every use
        a = AddOp()(MatMulOp(transpose_b=True)(x, rows(weight_ih)), rows(bias_ih))
        b = AddOp()(MatMulOp(transpose_b=True)(h, rows(weight_hh)), rows(bias_hh))
        return AddOp()(a, b)

    i, f, o = SigmoidOp()(block(0)), SigmoidOp()(block(1)), SigmoidOp()(block(3))
    g = TanhOp()(block(2))
    c_next = AddOp()(MulOp()(i, g), MulOp()(f, c))
    h_next = MulOp()(TanhOp()(c_next), o)
    return h_next, c_next
'''),
    Alternative("lstm_cell_code", "[x, h] concatenated against [W_ih | W_hh], the two biases added first",
                source='''def lstm_cell(x, h, c, weight_ih, weight_hh, bias_ih, bias_hh):
    """One LSTM step: x (N, D), h and c (N, H), weights (4H, D) and (4H, H), biases (4H,) -> (h_next, c_next)."""
    H = h.shape[1]
    concat = lambda a, b: autograd_lab.ops.ConcatenateOp(axis=1)(a, b)  # one op per call
    z = MatMulOp(transpose_b=True)(concat(x, h), concat(weight_ih, weight_hh))
    z = AddOp()(z, AddOp()(bias_ih, bias_hh))
    i, f, g, o = (SliceOp(k * H, (k + 1) * H, axis=1)(z) for k in range(4))
    i, f, g, o = SigmoidOp()(i), SigmoidOp()(f), TanhOp()(g), SigmoidOp()(o)
    c_next = AddOp()(MulOp()(f, c), MulOp()(i, g))
    return MulOp()(o, TanhOp()(c_next)), c_next
'''),
    Alternative("hidden_gradient_norms_code", "restarting from each state as a fresh leaf (T backward passes)",
                source='''def hidden_gradient_norms(module, x):
    """||dL/dh_t|| for t = 1..T (NumPy array of T floats), L = sum of h_T, for an RNN or LSTM module and x (N, T, D)."""
    lstm = isinstance(module, LSTM)
    params = (module.weight_ih, module.weight_hh, module.bias_ih, module.bias_hh)
    n, steps = x.shape[0], x.shape[1]
    zeros = np.zeros((n, module.hidden_size), dtype=module.dtype)

    def run(h, c, start):
        for t in range(start, steps):
            x_t = Variable.from_numpy(x.data[:, t])
            if lstm:
                h, c = lstm_cell(x_t, h, c, *params)
            else:
                h = rnn_cell(x_t, h, *params)
        return h, c

    states = []
    h, c = Variable.from_numpy(zeros), Variable.from_numpy(zeros)
    for t in range(steps):  # the forward states, as values
        x_t = Variable.from_numpy(x.data[:, t])
        if lstm:
            h, c = lstm_cell(x_t, h, c, *params)
        else:
            h = rnn_cell(x_t, h, *params)
        states.append((h.numpy(), c.numpy()))
    norms = np.empty(steps, dtype=module.dtype)
    for t, (h_val, c_val) in enumerate(states):
        h_leaf = Variable.from_numpy(h_val)
        last, _ = run(h_leaf, Variable.from_numpy(c_val), t + 1)
        if last is h_leaf:
            norms[t] = np.sqrt(h_val.size)
            continue
        Engine.backward(SumOp()(last), inputs=[h_leaf])
        norms[t] = np.sqrt(np.sum(h_leaf.grad ** 2))
    return norms
'''),
    Alternative("hidden_gradient_norms_code", "one (T, N, H) probe leaf, a slice of it added at each step",
                source='''def hidden_gradient_norms(module, x):
    """||dL/dh_t|| for t = 1..T (NumPy array of T floats), L = sum of h_T, for an RNN or LSTM module and x (N, T, D)."""
    n, steps, H = x.shape[0], x.shape[1], module.hidden_size
    probe = Variable.from_numpy(np.zeros((steps, n, H), dtype=module.dtype))
    h = Variable.from_numpy(np.zeros((n, H), dtype=module.dtype))
    c = Variable.from_numpy(np.zeros((n, H), dtype=module.dtype))
    w = (module.weight_ih, module.weight_hh, module.bias_ih, module.bias_hh)
    for t in range(steps):
        x_t = SelectOp(t, axis=1)(x)
        if isinstance(module, LSTM):
            h, c = lstm_cell(x_t, h, c, *w)
        else:
            h = rnn_cell(x_t, h, *w)
        h = AddOp()(SelectOp(t, axis=0)(probe), h)
    Engine.backward(SumOp()(h), inputs=[probe])
    return np.linalg.norm(probe.grad.reshape(steps, -1), axis=1)
'''),
]
