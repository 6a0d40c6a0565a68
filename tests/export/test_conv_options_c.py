"""Grouped / depthwise convolution and padded, ceil-mode pooling in the generated C: float32 against the ops' NumPy
forward, int8 against the exporter's NumPy simulation bit for bit, and the Cortex-M4 on QEMU against the host bit
for bit."""

from __future__ import annotations

import numpy as np
import pytest

from autograd_lab import Parameter, Variable
from autograd_lab.export import ExportError, graph_from_root, graph_to_c, write_c
from autograd_lab.export import build as b
from autograd_lab.export.lower import lower
from autograd_lab.export.quantize import quantize_steps
from autograd_lab.export.simulate import predict
from autograd_lab.modes import eval_mode
from autograd_lab.ops import AddOp, AvgPool2DOp, Conv2DOp, MatMulOp, MaxPool2DOp, ReLUOp, ReshapeOp

RNG = np.random.default_rng(23)


def param(*shape, name="w", scale=0.5):
    return Parameter((RNG.standard_normal(shape) * scale).astype(np.float32), name=name)


def images(n, c, h, w):
    return RNG.standard_normal((n, 1, c, h, w)).astype(np.float32)


def expected_of(fn, x):
    with eval_mode():
        return np.concatenate([fn(Variable.from_numpy(xi)).data.reshape(1, -1) for xi in x])


def conv(groups, **kw):
    return lambda x, w: Conv2DOp(groups=groups, **kw)(x, w)


CASES = {
    "depthwise 3x3 on the NCHW input, padding 1": ((4, 7, 9), lambda: (
        lambda w: lambda x: conv(4, padding=1)(x, w))(param(4, 1, 3, 3))),
    "depthwise, channel multiplier 2, stride 2, bias, ReLU": ((3, 9, 8), lambda: (
        lambda w, bias: lambda x: ReLUOp()(AddOp()(conv(3, stride=2, padding=1)(x, w), bias)))(
        param(6, 1, 3, 3), param(1, 6, 1, 1, name="bias"))),
    "two groups of 3 channels in, 5 out each, fused 2x2 max pool": ((6, 8, 8), lambda: (
        lambda w: lambda x: MaxPool2DOp(2)(ReLUOp()(conv(2, padding=1)(x, w))))(param(10, 3, 3, 3))),
    "depthwise-separable block on channels-last input, flatten, dense": ((1, 10, 10), lambda: (
        lambda w1, dw, pw, fc: lambda x: MatMulOp(transpose_b=True)(ReshapeOp((1, -1))(MaxPool2DOp(2)(ReLUOp()(
            Conv2DOp()(ReLUOp()(conv(8, padding=1)(ReLUOp()(Conv2DOp(padding=1)(x, w1)), dw)), pw)))), fc))(
        param(8, 1, 3, 3), param(8, 1, 3, 3), param(6, 8, 1, 1), param(3, 6 * 5 * 5, scale=0.2))),
    "groups of 2 on channels-last input, 4 groups, 2x2 kernel": ((1, 8, 7), lambda: (
        lambda w1, w2: lambda x: conv(4, padding=(0, 1))(ReLUOp()(Conv2DOp(padding=1)(x, w1)), w2))(
        param(8, 1, 3, 3), param(8, 2, 2, 2))),
    "depthwise kernel (channels last, no pool): 6 channels, stride (2, 1), padding (1, 2), 3x4 window": (
        (1, 9, 13), lambda: (lambda w1, dw, bias: lambda x: ReLUOp()(AddOp()(conv(6, stride=(2, 1), padding=(1, 2))(
            Conv2DOp(padding=1)(x, w1), dw), bias)))(param(6, 1, 3, 3), param(6, 1, 3, 4), param(1, 6, 1, 1))),
    "depthwise 5x5, stride 2, 2x2 pool, on channels-last input (25 inputs a patch: int8)": ((1, 13, 12), lambda: (
        lambda w1, dw, bias: lambda x: MaxPool2DOp(2)(ReLUOp()(AddOp()(conv(6, stride=(1, 2), padding=2)(
            ReLUOp()(Conv2DOp(padding=1)(x, w1)), dw), bias))))(
        param(6, 1, 3, 3), param(6, 1, 5, 5, scale=0.3), param(1, 6, 1, 1, name="bias"))),
    "max pool, padding 1, ceil mode, dilation 2, after a conv (channels last)": ((2, 9, 10), lambda: (
        lambda w: lambda x: MaxPool2DOp(3, 2, padding=1, dilation=(2, 1), ceil_mode=True)(
            ReLUOp()(Conv2DOp(padding=1)(x, w))))(param(4, 2, 3, 3))),
    "max pool 3x3 stride 2 padding 1 on the NCHW input": ((3, 8, 7), lambda: (
        lambda: lambda x: MaxPool2DOp(3, 2, padding=1)(x))()),
    "average pool, padding 1, ceil mode, counting the padding": ((2, 9, 8), lambda: (
        lambda: lambda x: AvgPool2DOp(3, 2, padding=1, ceil_mode=True)(x))()),
    "average pool, padding (1, 0), ceil mode, not counting the padding, then a conv": ((1, 10, 9), lambda: (
        lambda w1, w2: lambda x: Conv2DOp(padding=1)(AvgPool2DOp((2, 3), 2, padding=(1, 0), ceil_mode=True,
                                                                 count_include_pad=False)(
            ReLUOp()(Conv2DOp(padding=1)(x, w1))), w2))(param(6, 1, 3, 3), param(4, 6, 3, 3))),
    "padding 'same' (even kernel: the odd row and column at the bottom / right), then four-sided padding": (
        (2, 9, 8), lambda: (lambda w1, w2: lambda x: Conv2DOp(stride=(2, 1), padding=(0, 2, 1, 0))(
            ReLUOp()(Conv2DOp(padding="same")(x, w1)), w2))(param(8, 2, 4, 2), param(4, 8, 3, 3))),
}
INT8_CASES = ["padding 'same' (even kernel: the odd row and column at the bottom / right), then four-sided padding",
              "max pool, padding 1, ceil mode, dilation 2, after a conv (channels last)",
              "average pool, padding (1, 0), ceil mode, not counting the padding, then a conv",
              "two groups of 3 channels in, 5 out each, fused 2x2 max pool",
              "depthwise 5x5, stride 2, 2x2 pool, on channels-last input (25 inputs a patch: int8)",
              "depthwise-separable block on channels-last input, flatten, dense",
              "groups of 2 on channels-last input, 4 groups, 2x2 kernel"]


def graph_of(fn, c, h, w):
    x0 = Variable.from_numpy(np.zeros((1, c, h, w), np.float32), name="input")
    with eval_mode():
        return graph_from_root(fn(x0), x0)


@pytest.mark.parametrize("case", CASES)
def test_float_layers_match_numpy(run_in_c, case):
    (c, h, w), make = CASES[case]
    fn = make()
    x = images(5, c, h, w)
    np.testing.assert_allclose(run_in_c(fn, x), expected_of(fn, x), rtol=1e-5, atol=2e-5)


def int8_export(tmp_path, case, n=20):
    (c, h, w), make = CASES[case]
    fn = make()
    graph = graph_of(fn, c, h, w)
    x = images(n, c, h, w).reshape(n, -1)
    calibration = np.concatenate([x, images(44, c, h, w).reshape(44, -1)])
    gen = graph_to_c(graph, "q", calibration=calibration)
    write_c(gen, tmp_path)
    return fn, graph, x, calibration, gen


@pytest.mark.parametrize("case", INT8_CASES)
def test_int8_layers_match_their_simulation_bit_for_bit(tmp_path, gcc, case):
    fn, graph, x, calibration, gen = int8_export(tmp_path, case)
    steps = quantize_steps(graph, lower(graph), calibration)
    if "int8" in case or case.startswith(("two groups", "padding")) or "pool," in case:
        grouped_or_new = "pool," in case or "padding" in case
        assert any(s.kind == "conv_q8" and (s.params["geom"]["groups"] > 1 or grouped_or_new) for s in steps)
    out = b.run_host(b.build_host(tmp_path, "q", tmp_path / "build"), x, gen.output_size)
    np.testing.assert_array_equal(out, predict(graph, steps, x))
    ref = expected_of(fn, x.reshape(len(x), 1, *CASES[case][0]))
    assert np.abs(out - ref).max() <= 0.05 * np.abs(ref).max()


def test_grouped_weights_are_stored_group_by_group():
    (c, h, w), make = CASES["two groups of 3 channels in, 5 out each, fused 2x2 max pool"]
    (step,) = [s for s in lower(graph_of(make(), c, h, w)) if s.kind == "conv"]
    assert step.params["geom"]["groups"] == 2 and step.params["k"] == 27 and step.macs == 8 * 8 * 10 * 27


def printed(text):
    rows = [line.split(" bits ")[1].split() for line in text.splitlines() if line.startswith("sample")]
    return np.array([[int(v, 16) for v in row] for row in rows], dtype=np.uint32)


SAME_CASE = "padding 'same' (even kernel: the odd row and column at the bottom / right), then four-sided padding"
ON_BOARD = [("depthwise-separable block on channels-last input, flatten, dense", False),
            ("depthwise kernel (channels last, no pool): 6 channels, stride (2, 1), padding (1, 2), 3x4 window", False),
            ("depthwise 5x5, stride 2, 2x2 pool, on channels-last input (25 inputs a patch: int8)", True),
            ("average pool, padding (1, 0), ceil mode, not counting the padding, then a conv", False),
            ("average pool, padding (1, 0), ceil mode, not counting the padding, then a conv", True),
            ("max pool, padding 1, ceil mode, dilation 2, after a conv (channels last)", True),
            (SAME_CASE, True)]


@pytest.mark.slow
@pytest.mark.toolchain
@pytest.mark.parametrize("case, int8", ON_BOARD)
def test_the_cortex_m4_is_bit_identical_to_the_host(tmp_path, arm_tools, gcc, case, int8):
    if int8:
        _, _, x, _, _ = int8_export(tmp_path, case, n=3)
    else:
        (c, h, w), make = CASES[case]
        x = images(3, c, h, w).reshape(3, -1)
        graph = graph_of(make(), c, h, w)
        write_c(graph_to_c(graph, "q"), tmp_path)
    b.write_samples_header(tmp_path / "samples.h", "q", x)
    elf, _ = b.build_mcu(tmp_path, "q", "m4f", tmp_path / "m4f", tmp_path / "samples.h")
    board = b.run_qemu(elf, "m4f", timeout=120)
    host = b.run_host(b.build_host(tmp_path, "q", tmp_path / "host"), x, printed(board).shape[1])
    np.testing.assert_array_equal(printed(board), host.view(np.uint32))


def test_a_pooling_geometry_that_disagrees_with_the_op_is_refused_naming_the_layer():
    x = Variable.from_numpy(np.zeros((1, 1, 4, 4), np.float32), name="input")
    op = MaxPool2DOp(2, 1, padding=1)
    y = op(x)
    op.dilation, op.padding = (3, 1), (3, 0)  # changed after the forward pass
    with pytest.raises(ExportError, match=r"MaxPool2DOp at node \d+.*the op says"):
        lower(graph_from_root(y, x))


def test_grouped_convs_read_float_input_in_an_int8_export():
    (c, h, w), make = CASES["depthwise-separable block on channels-last input, flatten, dense"]
    graph = graph_of(make(), c, h, w)
    steps = quantize_steps(graph, lower(graph), images(8, c, h, w).reshape(8, -1))
    grouped = [s for s in steps if s.params.get("geom", {}).get("groups", 1) > 1]
    assert grouped and all(s.inputs[0].dtype == "f32" for s in grouped)


@pytest.mark.parametrize("case, kernel", [
    ("depthwise kernel (channels last, no pool): 6 channels, stride (2, 1), padding (1, 2), 3x4 window", 2),
    ("depthwise-separable block on channels-last input, flatten, dense", 2),
    ("depthwise 3x3 on the NCHW input, padding 1", 0),
    ("depthwise 5x5, stride 2, 2x2 pool, on channels-last input (25 inputs a patch: int8)", 0)])
def test_the_depthwise_kernel_takes_channels_last_depthwise_convs_without_a_pool(case, kernel):
    (c, h, w), make = CASES[case]
    steps = [s for s in lower(graph_of(make(), c, h, w)) if s.kind == "conv" and s.params["geom"]["groups"] > 1]
    assert [s.params["geom"]["direct"] for s in steps] == [kernel]
