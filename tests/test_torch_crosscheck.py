"""Cross-check values and gradients against PyTorch (an independent implementation), when it is installed.

Every case runs the same float64 inputs through our op and the PyTorch equivalent, seeds both backwards with the same
random upstream gradient, and compares the outputs and all input gradients.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from autograd_lab import Engine, Operator, Variable
from autograd_lab import ops as O

torch = pytest.importorskip("torch", reason="PyTorch is an optional extra (pip install -e '.[torch]')")
F = torch.nn.functional

RNG = np.random.default_rng(2024)


def normal(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape)


def positive(*shape: int) -> np.ndarray:
    return RNG.uniform(0.3, 2.0, size=shape)


def away_from_zero(*shape: int) -> np.ndarray:
    return RNG.uniform(0.1, 2.0, size=shape) * RNG.choice([-1.0, 1.0], size=shape)


def compare(
    op: Operator,
    torch_fn: Callable[..., torch.Tensor],
    *arrays: np.ndarray,
    differentiable: tuple[int, ...] | None = None,
) -> None:
    """Run ``op`` and ``torch_fn`` on the same inputs and compare outputs and gradients (rtol 1e-10)."""
    differentiable = tuple(range(len(arrays))) if differentiable is None else differentiable
    ours = [Variable.from_numpy(a) for a in arrays]
    y = op(*ours)
    theirs = [torch.tensor(a, requires_grad=i in differentiable) for i, a in enumerate(arrays)]
    t = torch_fn(*theirs)
    np.testing.assert_allclose(y.data, t.detach().numpy(), rtol=1e-10, atol=1e-12)
    gy = RNG.standard_normal(y.shape)
    Engine.backward(y, grad=gy)
    t.backward(torch.tensor(gy))
    for i in differentiable:
        np.testing.assert_allclose(ours[i].grad, theirs[i].grad.numpy(), rtol=1e-10, atol=1e-12, err_msg=f"input {i}")


BINARY = [
    (O.AddOp, torch.add, normal(3, 4), normal(4)),
    (O.SubOp, torch.sub, normal(2, 1, 4), normal(3, 1)),
    (O.MulOp, torch.mul, normal(3, 1), normal(1, 5)),
    (O.DivOp, torch.div, normal(2, 3), away_from_zero(3)),
    (O.AddOp, torch.add, normal(), normal(2, 2)),
]


@pytest.mark.parametrize(("op", "torch_fn", "a", "b"), BINARY)
def test_binary_ops_with_broadcasting(op, torch_fn, a, b):
    compare(op(), torch_fn, a, b)


def test_pow_constant_and_variable_exponent():
    compare(O.PowOp(2.5), lambda a: a**2.5, positive(3, 2))
    compare(O.PowOp(), torch.pow, positive(3, 2), normal(2))


@pytest.mark.parametrize(
    ("shape_a", "shape_b", "ta", "tb"),
    [((2, 3), (3, 4), False, False), ((3, 2), (4, 3), True, True), ((3,), (5, 3, 4), False, False),
     ((5, 2, 3), (3,), False, False), ((4, 1, 2, 3), (5, 3, 2), False, False)],
)
def test_matmul(shape_a, shape_b, ta, tb):
    def reference(a, b):
        return torch.matmul(a.transpose(-1, -2) if ta else a, b.transpose(-1, -2) if tb else b)

    compare(O.MatMulOp(transpose_a=ta, transpose_b=tb), reference, normal(*shape_a), normal(*shape_b))


@pytest.mark.parametrize(
    ("op", "torch_fn", "x"),
    [
        (O.ExpOp, torch.exp, normal(3, 4)),
        (O.LogOp, torch.log, positive(3, 4)),
        (O.SqrtOp, torch.sqrt, positive(3, 4)),
        (O.SigmoidOp, torch.sigmoid, 20 * normal(3, 4)),
        (O.TanhOp, torch.tanh, 5 * normal(3, 4)),
        (O.ReLUOp, torch.relu, np.array([-1.0, 0.0, 2.0, -0.0])),
        (O.NegOp, torch.neg, normal(4)),
    ],
)
def test_elementwise(op, torch_fn, x):
    compare(op(), torch_fn, x)


def test_leaky_relu_including_zero():
    compare(O.LeakyReLUOp(0.1), lambda x: F.leaky_relu(x, 0.1), np.array([-2.0, 0.0, 3.0]))


@pytest.mark.parametrize("x", [np.array([-1000.0, 0.0, 1000.0]), np.array([-745.5, -30.0, 710.0])])
def test_sigmoid_and_tanh_at_extremes(x):
    compare(O.SigmoidOp(), torch.sigmoid, x)
    compare(O.TanhOp(), torch.tanh, x)


@pytest.mark.parametrize(
    ("axis", "keepdims"), [(None, False), (0, False), (1, True), ((0, 2), False), ((-1, 0), True)]
)
def test_reductions(axis, keepdims):
    x = normal(2, 3, 4)
    dims = tuple(range(3)) if axis is None else axis
    compare(O.SumOp(axis, keepdims), lambda t: torch.sum(t, dim=dims, keepdim=keepdims), x)
    compare(O.MeanOp(axis, keepdims), lambda t: torch.mean(t, dim=dims, keepdim=keepdims), x)
    compare(O.MaxOp(axis, keepdims), lambda t: torch.amax(t, dim=dims, keepdim=keepdims), x)


def test_max_ties_split_like_torch_amax():
    x = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]])
    compare(O.MaxOp(axis=1), lambda t: torch.amax(t, dim=1), x)
    compare(O.MaxOp(), torch.amax, x)


def test_shape_ops():
    x = normal(2, 3, 4)
    compare(O.ReshapeOp((4, -1)), lambda t: t.reshape(4, -1), x)
    compare(O.TransposeOp((2, 0, 1)), lambda t: t.permute(2, 0, 1), x)
    compare(O.TransposeOp(), lambda t: t.permute(2, 1, 0), x)
    compare(O.BroadcastToOp((5, 2, 3, 4)), lambda t: t.expand(5, 2, 3, 4), x)


@pytest.mark.parametrize("axis", [-1, 0])
def test_softmax_and_log_softmax(axis):
    x = 10 * normal(3, 5)
    compare(O.SoftmaxOp(axis), lambda t: torch.softmax(t, dim=axis), x)
    compare(O.LogSoftmaxOp(axis), lambda t: torch.log_softmax(t, dim=axis), x)


def test_cross_entropy_with_index_labels():
    logits = 30 * normal(6, 4)
    labels = np.array([0, 3, 1, 1, 2, 0])
    compare(O.SoftmaxCrossEntropyOp(), lambda z, t: F.cross_entropy(z, t.long()), logits, labels.astype(float),
            differentiable=(0,))


def test_cross_entropy_with_probability_targets():
    logits = normal(4, 3)
    targets = RNG.dirichlet(np.ones(3), size=4)
    compare(O.SoftmaxCrossEntropyOp(), F.cross_entropy, logits, targets)


def test_cross_entropy_issue_cases():
    for logits in ([[1000.0, 0.0]], [[0.0, 1000.0]], [[-431.0, 279.0, 427.0]]):
        compare(O.SoftmaxCrossEntropyOp(), lambda z, t: F.cross_entropy(z, t.long()), np.array(logits),
                np.array([0.0]), differentiable=(0,))


def test_mse():
    compare(O.MSELossOp(), F.mse_loss, normal(4, 3), normal(4, 3))


@pytest.mark.parametrize("n_params", [0, 2])
def test_layer_norm(n_params):
    x = normal(3, 2, 6) + 5
    params = [normal(6), normal(6)][:n_params]

    def reference(t, *p):
        return F.layer_norm(t, (6,), *p, eps=1e-5)

    compare(O.LayerNormOp(eps=1e-5), reference, x, *params)


def test_two_layer_perceptron_graph():
    """The course's MLP: logits = relu(x W1ᵀ + b1) W2ᵀ + b2, mean cross-entropy; all parameter gradients."""
    x, w1, b1, w2, b2 = normal(8, 5), normal(7, 5), normal(7), normal(3, 7), normal(3)
    labels = RNG.integers(0, 3, size=8)
    ours = [Variable.from_numpy(a) for a in (x, w1, b1, w2, b2)]
    h = O.ReLUOp()(O.AddOp()(O.MatMulOp(transpose_b=True)(ours[0], ours[1]), ours[2]))
    logits = O.AddOp()(O.MatMulOp(transpose_b=True)(h, ours[3]), ours[4])
    loss = O.SoftmaxCrossEntropyOp()(logits, Variable.from_numpy(labels))
    Engine.backward(loss)
    theirs = [torch.tensor(a, requires_grad=True) for a in (x, w1, b1, w2, b2)]
    t_logits = torch.relu(theirs[0] @ theirs[1].T + theirs[2]) @ theirs[3].T + theirs[4]
    t_loss = F.cross_entropy(t_logits, torch.tensor(labels))
    t_loss.backward()
    assert loss.item() == pytest.approx(t_loss.item(), rel=1e-12)
    for v, t in zip(ours, theirs):
        np.testing.assert_allclose(v.grad, t.grad.numpy(), rtol=1e-10, atol=1e-12)
