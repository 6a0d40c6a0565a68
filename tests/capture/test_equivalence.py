"""Replay gives bit-identical results to the eager engine: a whole epoch of training, per model builder.

To add a model, add a builder to MODELS: a function of a generator returning a Module that maps
(N, 784) float32 images to (N, 10) logits, with its dropout / normalisation switched on. The recurrent models
(RECURRENT) unroll 28 steps, so their epoch is a short slice of the bundled MNIST subset instead.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from autograd_lab.data import load_bundled_mnist
from autograd_lab.nn import CNN, MLP, SequenceClassifier, VisionTransformer
from autograd_lab.nn.module import Module
from autograd_lab.optim import SGD, Adam
from autograd_lab.training.loop import fit, seeded_generators, train_epoch, training_step

MODELS: dict[str, Callable[[np.random.Generator], Module]] = {
    "mlp-dropout-layernorm": lambda rng: MLP([784, 32, 16, 10], dropout=0.2, layer_norm=True, rng=rng),
    "mlp-plain": lambda rng: MLP([784, 24, 10], rng=rng),
    "cnn-batchnorm-dropout": lambda rng: CNN(channels=(4, 8), dropout=0.2, rng=rng),
    "vit-dropout": lambda rng: VisionTransformer(dim=16, depth=2, heads=2, mlp_dim=32, dropout=0.1, rng=rng),
}

RECURRENT: dict[str, Callable[[np.random.Generator], Module]] = {
    "lstm": lambda rng: SequenceClassifier("lstm", 28, 16, 10, rng=rng),
    "rnn": lambda rng: SequenceClassifier("rnn", 28, 16, 10, rng=rng),
}


def digits(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Learnable synthetic 'images': one random template per class plus noise, (n, 784) float32 in [0, 1]."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 10, n)
    templates = rng.random((10, 784), dtype=np.float32)
    x = np.clip(templates[y] + 0.3 * rng.standard_normal((n, 784), dtype=np.float32), 0, 1)
    return x.astype(np.float32), y


def bundled(n: int) -> tuple[np.ndarray, np.ndarray]:
    """The first ``n`` images of the bundled MNIST subset, (n, 784) float32, and their labels."""
    data = load_bundled_mnist()
    return data.x_train[:n], data.y_train[:n]


def one_epoch(build: Callable[[np.random.Generator], Module], engine: str, make_opt: Callable, n: int = 600,
              augment_shift: int = 0, data: Callable[[int], tuple[np.ndarray, np.ndarray]] = digits,
              ) -> tuple[list[np.ndarray], tuple[float, float], object]:
    init_rng, order_rng = seeded_generators(7)
    model = build(init_rng)
    opt = make_opt(model.parameters())
    x, y = data(n)
    plan = training_step(model, opt.params) if engine == "plan" else "eager"
    scores = train_epoch(model, opt, x, y, 64, order_rng, engine=plan, augment_shift=augment_shift)
    # Parameters, then batch norm's running statistics (updated inside forward, so replay must update them too).
    state = [p.numpy() for p in model.parameters()] + [getattr(h, a) for _, h, a in model.named_buffers()]
    return state, scores, plan


@pytest.mark.parametrize("name", sorted(MODELS))
def test_a_whole_epoch_is_bit_identical_to_eager(name):
    """600 images in batches of 64: 9 full batches and a last one of 24, which captures again."""
    sgd = lambda params: SGD(params, lr=0.05, momentum=0.9)  # noqa: E731
    eager, eager_scores, _ = one_epoch(MODELS[name], "eager", sgd)
    plan_params, plan_scores, plan = one_epoch(MODELS[name], "plan", sgd)
    assert plan_scores == eager_scores
    for a, b in zip(eager, plan_params):
        assert a.dtype == b.dtype and np.array_equal(a, b)
    # Shape (64, 784): captured twice (the structure check), then replayed 7 times; shape (24, 784): captured once.
    assert plan.captures == 3
    assert plan.program.values[plan.program.inputs[0]].shape == (24, 784)
    assert not np.array_equal(eager[0], one_epoch(MODELS[name], "eager", sgd, n=640)[0][0])  # training moved them


@pytest.mark.parametrize("name", sorted(RECURRENT))
def test_a_recurrent_epoch_is_bit_identical_to_eager(name):
    """200 bundled MNIST images read row by row (28 steps), Adam as the recurrent models train: 3 batches of
    64 (captured twice, replayed once) and a last one of 8, which captures again."""
    adam = lambda params: Adam(params, lr=3e-3)  # noqa: E731
    eager, eager_scores, _ = one_epoch(RECURRENT[name], "eager", adam, n=200, data=bundled)
    plan_params, plan_scores, plan = one_epoch(RECURRENT[name], "plan", adam, n=200, data=bundled)
    assert plan_scores == eager_scores
    assert len(eager) == len(plan_params) == 6  # weight_ih, weight_hh, bias_ih, bias_hh, head weight and bias
    for a, b in zip(eager, plan_params):
        assert a.dtype == b.dtype == np.float32 and np.array_equal(a, b)
    assert plan.captures == 3
    assert plan.program.values[plan.program.inputs[0]].shape == (8, 784)
    start = RECURRENT[name](seeded_generators(7)[0]).parameters()
    assert all(not np.array_equal(a, p.numpy()) for a, p in zip(eager, start))  # training moved every parameter


def test_adam_clipping_and_augmentation_are_unchanged_by_the_plan():
    """The optimizer API does not change: Adam and clip_grad_norm read the .grad the replay leaves behind."""
    results = []
    for engine in ("eager", "plan"):
        init_rng, order_rng = seeded_generators(3)
        model = MODELS["mlp-dropout-layernorm"](init_rng)
        opt = Adam(model.parameters(), lr=1e-3)
        x, y = digits(400, seed=1)
        history = fit(model, opt, x, y, epochs=2, batch_size=50, rng=order_rng, clip_norm=0.5, augment_shift=1,
                      x_val=x[:100], y_val=y[:100], engine=engine)
        results.append(([p.numpy() for p in model.parameters()], history))
    (eager, h_eager), (plan, h_plan) = results
    assert h_eager == h_plan
    assert all(np.array_equal(a, b) for a, b in zip(eager, plan))


def test_an_unknown_engine_is_refused():
    model = MLP([784, 10], rng=0)
    x, y = digits(64)
    with pytest.raises(ValueError, match="engine must be one of"):
        train_epoch(model, SGD(model.parameters(), lr=0.1), x, y, 64, np.random.default_rng(0), engine="jit")


def test_replayed_gradients_match_pytorch_and_central_differences():
    """Independent oracles for the replayed step (float64): PyTorch autograd, and central differences of the loss."""
    torch = pytest.importorskip("torch", reason="PyTorch is an optional extra")
    from autograd_lab.capture import Plan
    from autograd_lab.nn.losses import cross_entropy

    rng = np.random.default_rng(11)
    model = MLP([5, 4, 3], rng=rng, dtype=np.float64)
    params = model.parameters()
    plan = Plan(lambda x, y: cross_entropy(model(x), y), wrt=params, verify=False)
    plan(rng.standard_normal((6, 5)), rng.integers(0, 3, 6))  # the capture
    x, y = rng.standard_normal((6, 5)), rng.integers(0, 3, 6)
    for p in params:
        p.grad = None
    loss = plan(x, y)  # a replay

    t_params = [torch.tensor(p.data.copy(), requires_grad=True) for p in params]
    w1, b1, w2, b2 = t_params
    z = torch.relu(torch.from_numpy(x) @ w1.T + b1) @ w2.T + b2
    t_loss = torch.nn.functional.cross_entropy(z, torch.from_numpy(y))
    t_loss.backward()
    assert loss == pytest.approx(t_loss.item(), rel=1e-12)
    for p, t in zip(params, t_params):
        np.testing.assert_allclose(p.grad, t.grad.numpy(), rtol=1e-10, atol=1e-12)

    forward_only = Plan(lambda x, y: cross_entropy(model(x), y), backward=False, verify=False)
    w = params[2]
    for index in [(0, 0), (2, 3)]:
        h = 1e-6
        base = w.numpy()
        values = []
        for sign in (1, -1):
            shifted = base.copy()
            shifted[index] += sign * h
            w.copy_(shifted)
            values.append(float(forward_only(x, y)))
        w.copy_(base)
        assert (values[0] - values[1]) / (2 * h) == pytest.approx(w.grad[index], rel=1e-6, abs=1e-9)
