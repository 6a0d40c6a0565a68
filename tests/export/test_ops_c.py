"""Every supported op, compiled with the strict host flags, against NumPy float32 on the same inputs."""

from __future__ import annotations

import numpy as np
import pytest

from autograd_lab import Parameter, Variable
from autograd_lab.export import build as b
from autograd_lab.export import graph_from_root, graph_to_c, write_c
from autograd_lab.ops import (
    AddOp,
    DropoutOp,
    LayerNormOp,
    LeakyReLUOp,
    LogSoftmaxOp,
    MatMulOp,
    ReLUOp,
    SigmoidOp,
    SoftmaxOp,
    TanhOp,
)

RNG = np.random.default_rng(42)
X = RNG.normal(0, 2, (6, 3, 4)).astype(np.float32)  # 6 inputs of shape (3, 4)


def close(actual: np.ndarray, expected: np.ndarray) -> None:
    np.testing.assert_allclose(actual, np.asarray(expected, dtype=np.float32).reshape(actual.shape),
                               rtol=1e-5, atol=1e-6)


def const(shape, name="w"):
    return Parameter(RNG.normal(0, 1, shape).astype(np.float32), name=name)


@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("tb", [False, True])
def test_matmul_activation_times_constant_both_flags(run_in_c, ta, tb):
    w = const((5, 4) if tb else (4, 5))
    x = X[:, :1, :]  # (1, 4) rows
    if ta:
        x = np.swapaxes(x, 1, 2)  # (4, 1), transposed back by the op
    out = run_in_c(lambda v: MatMulOp(transpose_a=ta, transpose_b=tb)(v, w), x)
    xs = np.swapaxes(x, 1, 2) if ta else x
    close(out, xs @ (w.data.T if tb else w.data))


@pytest.mark.parametrize("ta", [False, True])
def test_matmul_constant_times_activation(run_in_c, ta):
    w = const((4, 5) if ta else (5, 4))
    x = np.swapaxes(X[:, :1, :], 1, 2)  # (4, 1)
    out = run_in_c(lambda v: MatMulOp(transpose_a=ta)(w, v), x)
    close(out, (w.data.T if ta else w.data) @ x)


@pytest.mark.parametrize(("ta", "tb"), [(False, True), (True, False)])
def test_matmul_of_two_activations(run_in_c, ta, tb):
    """x x^T and x^T x for x of shape (3, 4): both operands computed at run time (the general strided kernel)."""
    out = run_in_c(lambda v: MatMulOp(transpose_a=ta, transpose_b=tb)(v, v), X)
    xt = np.swapaxes(X, 1, 2)
    close(out, (xt if ta else X) @ (xt if tb else X))


@pytest.mark.parametrize("shape", [(4,), (1, 4), (3, 1), (3, 4)])
def test_add_broadcasts_a_constant(run_in_c, shape):
    c = const(shape, "bias")
    close(run_in_c(lambda v: AddOp()(v, c), X), X + c.data)


def test_add_of_two_activations(run_in_c):
    close(run_in_c(lambda v: AddOp()(v, ReLUOp()(v)), X), X + np.maximum(X, 0))


def test_dense_layer_fuses_matmul_bias_and_relu(run_in_c):
    w, bias = const((20, 4)), const((20,), "b")
    x = X[:, :1, :]
    out = run_in_c(lambda v: ReLUOp()(AddOp()(MatMulOp(transpose_b=True)(v, w), bias)), x)
    close(out, np.maximum(x @ w.data.T + bias.data, 0))


def test_relu(run_in_c):
    close(run_in_c(lambda v: ReLUOp()(v), X), np.maximum(X, 0))


def test_leaky_relu(run_in_c):
    close(run_in_c(lambda v: LeakyReLUOp(0.1)(v), X), np.where(X > 0, X, X * np.float32(0.1)))


def test_sigmoid(run_in_c):
    x = X * 20  # reaches the saturated tails
    close(run_in_c(lambda v: SigmoidOp()(v), x), 1 / (1 + np.exp(-x.astype(np.float64))))


def test_tanh(run_in_c):
    close(run_in_c(lambda v: TanhOp()(v), X), np.tanh(X.astype(np.float64)))


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_softmax(run_in_c, axis):
    x = X.astype(np.float64) * 10
    e = np.exp(x - x.max(axis=axis + 1 if axis >= 0 else axis, keepdims=True))
    ax = axis + 1 if axis >= 0 else axis
    close(run_in_c(lambda v: SoftmaxOp(axis=axis)(v), x.astype(np.float32)), e / e.sum(axis=ax, keepdims=True))


@pytest.mark.parametrize("axis", [0, -1])
def test_log_softmax(run_in_c, axis):
    x = X.astype(np.float64) * 10
    ax = axis + 1 if axis >= 0 else axis
    m = x.max(axis=ax, keepdims=True)
    expected = x - m - np.log(np.exp(x - m).sum(axis=ax, keepdims=True))
    close(run_in_c(lambda v: LogSoftmaxOp(axis=axis)(v), x.astype(np.float32)), expected)


@pytest.mark.parametrize("affine", [False, True])
def test_layer_norm(run_in_c, affine):
    gamma, beta = const((4,), "gamma"), const((4,), "beta")
    x = X.astype(np.float64)
    mu = x.mean(axis=-1, keepdims=True)
    expected = (x - mu) / np.sqrt(((x - mu) ** 2).mean(axis=-1, keepdims=True) + 1e-5)
    if affine:
        expected = expected * gamma.data + beta.data
        out = run_in_c(lambda v: LayerNormOp(1e-5)(v, gamma, beta), X)
    else:
        out = run_in_c(lambda v: LayerNormOp(1e-5)(v), X)
    close(out, expected)


def test_dropout_is_the_identity(run_in_c):
    from autograd_lab import eval_mode

    with eval_mode():
        out = run_in_c(lambda v: ReLUOp()(DropoutOp(0.5)(v)), X)
    close(out, np.maximum(X, 0))


def test_argmax_helper_matches_numpy_first_maximum(tmp_path, gcc):
    """<name>_argmax over the outputs, including a tie (the first maximum wins, as np.argmax)."""
    x = Variable.from_numpy(np.zeros(5, dtype=np.float32), name="input")
    gen = graph_to_c(graph_from_root(ReLUOp()(x), x), "m")
    write_c(gen, tmp_path)
    (tmp_path / "arg.c").write_text(
        '#include <stdio.h>\n#include "m.h"\nint main(void)\n{\n    float v[5];\n'
        '    while (fread(v, sizeof v[0], 5, stdin) == 5) {\n        printf("%d\\n", m_argmax(v));\n    }\n'
        "    return m_predict(v, v) == M_OK ? 0 : 1;\n}\n")
    cases = np.array([[0, 3, 1, 3, 2], [-5, -4, -4, -9, -1], [7, 0, 0, 0, 0], [0, 0, 0, 0, 1]], dtype=np.float32)
    exe = tmp_path / "arg"
    b.run(["gcc", *b.HOST_FLAGS, f"-I{tmp_path}", str(tmp_path / "arg.c"), str(tmp_path / "m.c"), "-o", str(exe),
           "-lm"], "argmax build")
    printed = b.run([str(exe)], "argmax run", input=cases.tobytes()).stdout.decode().split()
    assert [int(s) for s in printed] == list(np.argmax(cases, axis=1))
