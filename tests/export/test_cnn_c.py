"""Conv, pooling, batch norm and flatten in the generated C: float against the ops' NumPy forward, int8 against the
exporter's NumPy simulation bit for bit, and the configurations the kernels refuse."""

from __future__ import annotations

import numpy as np
import pytest

from autograd_lab import Parameter, Variable
from autograd_lab.export import ExportError, graph_from_root, graph_to_c, write_c
from autograd_lab.export import build as b
from autograd_lab.export.lower import lower
from autograd_lab.export.quantize import quantize_steps, round_half_away
from autograd_lab.export.simulate import predict
from autograd_lab.modes import eval_mode
from autograd_lab.ops import (
    AddOp,
    AvgPool2DOp,
    BatchNormOp,
    Conv2DOp,
    LeakyReLUOp,
    MatMulOp,
    MaxPool2DOp,
    ReLUOp,
    ReshapeOp,
    RunningStats,
    SoftmaxOp,
)

RNG = np.random.default_rng(11)


def param(*shape, name="w", scale=0.5):
    return Parameter((RNG.standard_normal(shape) * scale).astype(np.float32), name=name)


def running_stats(mean, var):
    stats = RunningStats(len(mean))
    stats.mean, stats.var = np.asarray(mean, np.float32), np.asarray(var, np.float32)
    return stats


def batch_norm(c, name):
    stats = running_stats(RNG.normal(0, 0.3, c), RNG.uniform(0.5, 2, c))
    gamma, beta = param(c, name=f"{name}_g"), param(c, name=f"{name}_b")
    return lambda h: BatchNormOp(stats, 0.1, 1e-5)(h, gamma, beta)


def expected_of(fn, x):
    with eval_mode():
        return np.concatenate([fn(Variable.from_numpy(xi)).data.reshape(1, -1) for xi in x])


def images(n, c, h, w):
    return RNG.standard_normal((n, 1, c, h, w)).astype(np.float32)


CASES = {
    "stride 2, padding 1, 3 channels in": ((3, 9, 8), lambda: (
        lambda w: lambda x: Conv2DOp(stride=2, padding=1)(x, w))(param(4, 3, 3, 3))),
    "non-square kernel and input, bias, leaky ReLU": ((2, 7, 10), lambda: (
        lambda w, bias: lambda x: LeakyReLUOp(0.1)(AddOp()(Conv2DOp(stride=(1, 2), padding=(0, 1))(x, w), bias)))(
        param(5, 2, 2, 3), param(1, 5, 1, 1, name="bias"))),
    "conv, batch norm, ReLU, max pool fused": ((1, 12, 12), lambda: (
        lambda w, bn: lambda x: MaxPool2DOp(2, 2)(ReLUOp()(bn(Conv2DOp(padding=1)(x, w)))))(
        param(6, 1, 3, 3), batch_norm(6, "bn"))),
    "max pool before ReLU, overlapping 3x3 stride 2 window": ((2, 11, 11), lambda: (
        lambda w: lambda x: ReLUOp()(MaxPool2DOp(3, 2)(Conv2DOp()(x, w))))(param(4, 2, 3, 3))),
    "average pool, two convs, flatten, dense, softmax": ((1, 12, 12), lambda: (
        lambda w1, w2, fc: lambda x: SoftmaxOp()(MatMulOp(transpose_b=True)(ReshapeOp((1, -1))(ReLUOp()(
            Conv2DOp(padding=1)(AvgPool2DOp(2)(ReLUOp()(Conv2DOp(padding=1)(x, w1))), w2))), fc)))(
        param(4, 1, 3, 3), param(6, 4, 3, 3), param(3, 6 * 6 * 6, scale=0.1))),
    "pooling straight on the input": ((3, 8, 8), lambda: (lambda: lambda x: MaxPool2DOp(2)(x))()),
    "one channel, 3x3, 2x2 pool (the direct kernel): 12 channels, no padding, odd pooled sizes": ((1, 12, 10), lambda: (
        lambda w, bias: lambda x: ReLUOp()(MaxPool2DOp(2)(AddOp()(Conv2DOp()(x, w), bias))))(
        param(12, 1, 3, 3), param(1, 12, 1, 1, name="bias"))),
    "one channel, 3x3, padding 1, 2x2 pool, 8 channels": ((1, 10, 10), lambda: (
        lambda w: lambda x: MaxPool2DOp(2)(ReLUOp()(Conv2DOp(padding=1)(x, w))))(param(8, 1, 3, 3))),
    "leaky ReLU of negative slope before a max pool (not monotonic: not fused with it)": ((1, 8, 8), lambda: (
        lambda w: lambda x: MaxPool2DOp(2)(LeakyReLUOp(-0.5)(Conv2DOp(padding=1)(x, w))))(param(4, 1, 3, 3))),
    "four conv pixels at a time on channels-last input: 5 channels (one past a block of 4), 3x3 pools of 9": (
        (2, 11, 11), lambda: (lambda w1, w2: lambda x: MaxPool2DOp(3, 2)(ReLUOp()(Conv2DOp(padding=1)(
            ReLUOp()(Conv2DOp(padding=1)(x, w1)), w2))))(param(3, 2, 3, 3), param(5, 3, 3, 3))),
    "no pool: output pixels four at a time, a short last group, channels-last input": ((1, 9, 7), lambda: (
        lambda w1, w2: lambda x: Conv2DOp(padding=(1, 0))(MaxPool2DOp(1)(Conv2DOp(padding=1)(x, w1)), w2))(
        param(4, 1, 3, 3), param(3, 4, 2, 2))),
    "a small CNN: conv-ReLU-pool twice, flatten, dense": ((1, 12, 12), lambda: (
        lambda w1, w2, fc, bias: lambda x: AddOp()(MatMulOp(transpose_b=True)(ReshapeOp((1, -1))(
            MaxPool2DOp(2)(ReLUOp()(Conv2DOp(padding=1)(MaxPool2DOp(2)(ReLUOp()(Conv2DOp(padding=1)(x, w1))), w2)))),
            fc), bias))(param(4, 1, 3, 3), param(6, 4, 3, 3), param(3, 6 * 3 * 3, scale=0.2), param(3, name="b"))),
}


@pytest.mark.parametrize("case", CASES)
def test_float_cnn_layers_match_numpy(run_in_c, case):
    (c, h, w), make = CASES[case]
    fn = make()
    x = images(5, c, h, w)
    out = run_in_c(fn, x)
    np.testing.assert_allclose(out, expected_of(fn, x), rtol=1e-5, atol=2e-5)


@pytest.mark.parametrize("case", ["stride 2, padding 1, 3 channels in",
                                  "a small CNN: conv-ReLU-pool twice, flatten, dense",
                                  "max pool before ReLU, overlapping 3x3 stride 2 window"])
def test_int8_cnn_layers_match_their_simulation_bit_for_bit(tmp_path, gcc, case):
    (c, h, w), make = CASES[case]
    fn = make()
    x0 = Variable.from_numpy(np.zeros((1, c, h, w), np.float32), name="input")
    with eval_mode():
        graph = graph_from_root(fn(x0), x0)
    x = images(20, c, h, w).reshape(20, -1)
    # Calibrated on a sample that includes the test inputs, so no input is clipped and the error bound below holds.
    calibration = np.concatenate([x, images(44, c, h, w).reshape(44, -1)])
    steps = quantize_steps(graph, lower(graph), calibration)
    assert any(s.kind == "conv_q8" for s in steps)
    if case.startswith("a small CNN"):  # the first conv (3x3 on one channel) stays float and writes int8
        assert [s.kind for s in steps][:2] == ["conv_to_q8", "conv_q8"]
    gen = graph_to_c(graph, "q", calibration=calibration)
    write_c(gen, tmp_path)
    out = b.run_host(b.build_host(tmp_path, "q", tmp_path / "build"), x, gen.output_size)
    np.testing.assert_array_equal(out, predict(graph, steps, x))
    # ... and close to the float model: within a few int8 steps of the outputs' range
    ref = expected_of(fn, x.reshape(-1, 1, c, h, w))
    err = np.abs(out - ref).max()
    assert err <= 0.05 * np.abs(ref).max(), f"int8 differs from float by {err} on outputs up to {np.abs(ref).max()}"


def lowered(fn, c, h, w):
    x0 = Variable.from_numpy(np.zeros((1, c, h, w), np.float32), name="input")
    with eval_mode():
        return lower(graph_from_root(fn(x0), x0))


@pytest.mark.parametrize("case, direct", [
    ("conv, batch norm, ReLU, max pool fused", [1]),
    ("a small CNN: conv-ReLU-pool twice, flatten, dense", [1, 0]),  # the second conv has 4 input channels
    ("stride 2, padding 1, 3 channels in", [0]),
    ("leaky ReLU of negative slope before a max pool (not monotonic: not fused with it)", [0]),
])
def test_the_direct_kernel_takes_3x3_one_channel_convs_with_a_2x2_pool(case, direct):
    (c, h, w), make = CASES[case]
    convs = [s for s in lowered(make(), c, h, w) if s.kind == "conv"]
    assert [s.params["geom"]["direct"] for s in convs] == direct
    for s in convs:  # the direct kernel needs no scratch buffers
        assert (s.scratch == []) == bool(s.params["geom"]["direct"])


def test_a_leaky_relu_of_negative_slope_stays_out_of_the_pool_fusion():
    (c, h, w), make = CASES["leaky ReLU of negative slope before a max pool (not monotonic: not fused with it)"]
    steps = lowered(make(), c, h, w)
    assert [s.kind for s in steps][:2] == ["conv", "max_pool"]  # then the reorder of the output to NCHW
    assert steps[0].params["act"] == 2 and steps[0].params["geom"]["pkh"] == 0


def test_batch_norm_is_folded_into_the_conv_weights():
    w = param(3, 1, 3, 3)
    bn = batch_norm(3, "bn")
    x0 = Variable.from_numpy(np.zeros((1, 1, 6, 6), np.float32), name="input")
    with eval_mode():
        graph = graph_from_root(bn(Conv2DOp()(x0, w)), x0)
    step = lower(graph)[0]
    assert step.kind == "conv" and step.params["bias"] is not None and "BatchNormOp" in step.where


def test_round_half_away_from_zero_like_c_roundf():
    np.testing.assert_array_equal(round_half_away(np.array([0.5, 1.5, 2.5, -0.5, -2.5, 0.49999997], np.float32)),
                                  [1, 2, 3, -1, -3, 0])


class _Configured(Conv2DOp):  # the same op with settings the kernels do not implement
    pass


_Configured.__name__ = "Conv2DOp"


@pytest.mark.parametrize("attr, value", [("dilation", 2), ("groups", 3), ("padding", "full")])
def test_unsupported_conv_settings_name_the_layer(attr, value):
    x = Variable.from_numpy(np.zeros((1, 2, 6, 6), np.float32), name="input")
    op = _Configured()
    y = op(x, param(2, 2, 3, 3))
    setattr(op, attr, value)
    with pytest.raises(ExportError, match=rf"Conv2DOp at node \d+.*{attr}"):
        lower(graph_from_root(y, x))


def test_a_batch_of_images_is_refused_naming_the_layer():
    x = Variable.from_numpy(np.zeros((2, 1, 6, 6), np.float32), name="input")
    with pytest.raises(ExportError, match=r"Conv2DOp at node \d+.*one image \(1, C, H, W\)"):
        lower(graph_from_root(Conv2DOp()(x, param(2, 1, 3, 3)), x))


def test_a_nan_weight_is_refused_naming_it():
    value = np.ones((2, 1, 3, 3), np.float32)
    value[0, 0, 1, 1] = np.nan
    w = Parameter(value, name="conv1.weight")
    x = Variable.from_numpy(np.zeros((1, 1, 6, 6), np.float32), name="input")
    with pytest.raises(ExportError, match=r"conv1.weight.*NaN"):
        lower(graph_from_root(Conv2DOp()(x, w), x))


def test_a_nan_in_batch_norm_statistics_is_refused_naming_the_layer():
    stats = running_stats([0.0, np.nan], [1.0, 1.0])
    x = Variable.from_numpy(np.zeros((1, 1, 6, 6), np.float32), name="input")
    with eval_mode():
        y = BatchNormOp(stats, 0.1, 1e-5)(Conv2DOp()(x, param(2, 1, 3, 3)), param(2, name="g"), param(2, name="b"))
    with pytest.raises(ExportError, match=r"BatchNormOp at node \d+ after Conv2DOp.*running mean.*NaN"):
        lower(graph_from_root(y, x))


def test_a_batch_norm_not_after_a_conv_or_dense_is_refused():
    stats = running_stats([0.0], [1.0])
    x = Variable.from_numpy(np.zeros((1, 1, 4, 4), np.float32), name="input")
    with eval_mode():
        y = BatchNormOp(stats, 0.1, 1e-5)(ReLUOp()(x), param(1, name="g"), param(1, name="b"))
    with pytest.raises(ExportError, match=r"BatchNormOp at node \d+.*folds batch norm"):
        lower(graph_from_root(y, x))
