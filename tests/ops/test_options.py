"""Issue 22's options: bad values raise a clear error naming the op and what was wrong; each option's right value on
a small case written out. (The differential suite, ``tests/ops/peers``, compares every option with PyTorch.)"""

from __future__ import annotations

import numpy as np
import pytest

from autograd_lab import Engine, ShapeError, Variable, eval_mode
from autograd_lab import nn as N
from autograd_lab import ops as O


def v(values) -> Variable:
    return Variable.from_numpy(np.asarray(values, dtype=np.float64))


@pytest.mark.parametrize(
    ("make", "error", "match"),
    [
        (lambda: O.ClipOp(None, None), TypeError, r"ClipOp\(low, high\): give at least one bound"),
        (lambda: O.ClipOp("0", 1), TypeError, r"ClipOp\(low, high\): low must be a real number or None"),
        (lambda: O.VarOp(correction=-1), ValueError, r"VarOp: correction must be an integer ≥ 0, got -1"),
        (lambda: O.StdOp(correction=0.5), ValueError, r"StdOp: correction must be an integer ≥ 0, got 0.5"),
        (lambda: O.SoftmaxCrossEntropyOp(label_smoothing=1.5), ValueError, r"label_smoothing must be in \[0, 1\]"),
        (lambda: O.SliceOp(0, 4, step=0), ValueError, r"SliceOp: step must be a positive integer, got 0"),
        (lambda: O.IndexOp((0, [1, 2])), TypeError, r"IndexOp: an index entry must be an int, a slice, None"),
        (lambda: O.Conv2DOp(groups=0), ValueError, r"Conv2DOp: groups must be a positive integer, got 0"),
        (lambda: O.Conv2DOp(stride=2, padding="same"), ValueError, r"padding='same' needs stride 1"),
        (lambda: O.Conv2DOp(padding=(1, 2, 3)), TypeError, r"Conv2DOp padding must be an integer or a pair"),
        (lambda: O.BatchNormOp(None, momentum=2.0), ValueError, r"momentum must be in \[0, 1\] or None"),
        (lambda: N.RNN(3, 4, nonlinearity="sigmoid"), ValueError, r"RNN: nonlinearity must be 'tanh' or 'relu'"),
        (lambda: N.LSTM(3, 4, nonlinearity="relu"), ValueError, r"LSTM has no option nonlinearity='relu'"),
        (lambda: N.RNNCell(3, 4, num_layers=2), ValueError, r"RNNCell has no option num_layers=2"),
        (lambda: N.RNN(3, 4, num_layers=0), ValueError, r"RNN: num_layers must be a positive integer, got 0"),
        (lambda: N.Conv2d(4, 6, 3, groups=4), ValueError, r"groups=4 must divide in_channels \(4\) and out_channels"),
    ],
)
def test_a_bad_option_raises_a_clear_error_naming_the_op(make, error, match):
    with pytest.raises(error, match=match):
        make()


@pytest.mark.parametrize(
    ("op", "inputs", "match"),
    [
        (lambda: O.MaxPool2DOp(2, padding=2), [np.zeros((1, 1, 4, 4))], r"padding \(2, 2\) must be at most half"),
        (lambda: O.MaxPool2DOp(3, dilation=3), [np.zeros((1, 1, 4, 4))], r"does not fit the input 4x4"),
        (lambda: O.Conv2DOp(groups=2), [np.zeros((1, 3, 4, 4)), np.zeros((2, 1, 1, 1))],
         r"x has 3 channels but the filters expect 2 \(2 groups of 1\)"),
        (lambda: O.Conv2DOp(groups=2), [np.zeros((1, 2, 4, 4)), np.zeros((3, 1, 1, 1))],
         r"3 output channels do not split into 2 groups"),
        (lambda: O.Conv2DOp(dilation=4), [np.zeros((1, 1, 4, 4)), np.zeros((1, 1, 2, 2))],
         r"kernel 2x2 \(dilation \(4, 4\): it spans 5x5\) is larger than the padded input 4x4"),
        (lambda: O.ConcatenateOp(1), [np.zeros((2, 3)), np.zeros((3, 3))],
         r"same shape except along axis 1, got \(2, 3\), \(3, 3\)"),
        (lambda: O.IndexOp((0, 5)), [np.zeros((2, 3))], r"IndexOp: index \(0, 5\) does not fit an input of shape"),
        (lambda: O.SoftmaxCrossEntropyOp(), [np.zeros((2, 3, 4)), np.zeros(2)],
         r"labels must have shape \(2, 4\) \(class indices\) or \(2, 3, 4\)"),
    ],
)
def test_bad_input_for_an_option_raises_a_shape_error_naming_the_op(op, inputs, match):
    with pytest.raises(ShapeError, match=match):
        op()(*[v(a) for a in inputs])


def test_cross_entropy_reduction_none_gives_one_loss_per_example_and_sum_their_total():
    """Logits [0, 0] against labels 0 and 1: each loss is ln 2."""
    logits, labels = [[0.0, 0.0], [0.0, 0.0]], [0.0, 1.0]
    np.testing.assert_allclose(O.SoftmaxCrossEntropyOp(reduction="none")(v(logits), v(labels)).data,
                               [np.log(2), np.log(2)], rtol=1e-15)
    assert O.SoftmaxCrossEntropyOp(reduction="sum")(v(logits), v(labels)).item() == pytest.approx(2 * np.log(2))


def test_cross_entropy_ignore_index_leaves_the_example_out_of_loss_gradient_and_mean():
    z = v([[0.0, 0.0], [9.0, -9.0]])
    loss = O.SoftmaxCrossEntropyOp(ignore_index=-1)(z, v([1.0, -1.0]))
    Engine.backward(loss)
    assert loss.item() == pytest.approx(np.log(2), rel=1e-15)  # the mean over the one example kept
    np.testing.assert_allclose(z.grad, [[0.5, -0.5], [0.0, 0.0]], rtol=1e-15)


def test_cross_entropy_label_smoothing_1_is_the_uniform_target():
    """ε = 1: t' = 1/C for every class, so the loss of logits [0, 0] is ln 2 whatever the label."""
    assert O.SoftmaxCrossEntropyOp(label_smoothing=1.0)(v([[0.0, 0.0]]), v([0.0])).item() == pytest.approx(np.log(2))


def test_cross_entropy_with_a_spatial_axis_is_the_mean_over_every_position():
    """(N, C, d) = (1, 2, 2): two positions, labels 0 and 1, logits [0, 0] at both: loss ln 2."""
    loss = O.SoftmaxCrossEntropyOp()(v(np.zeros((1, 2, 2))), v([[0.0, 1.0]]))
    assert loss.item() == pytest.approx(np.log(2), rel=1e-15)


def test_index_op_takes_steps_none_and_ellipsis_and_routes_the_gradient_back():
    x = v(np.arange(6.0).reshape(2, 3))
    y = O.IndexOp((Ellipsis, slice(None, None, 2), None))(x)
    np.testing.assert_array_equal(y.data, [[[0.0], [2.0]], [[3.0], [5.0]]])
    Engine.backward(y, grad=np.ones((2, 2, 1)))
    np.testing.assert_array_equal(x.grad, [[1.0, 0.0, 1.0], [1.0, 0.0, 1.0]])


def test_slice_op_with_a_step():
    x = v(np.arange(6.0))
    y = O.SliceOp(1, 6, axis=0, step=2)(x)
    np.testing.assert_array_equal(y.data, [1.0, 3.0, 5.0])
    Engine.backward(y, grad=np.ones(3))
    np.testing.assert_array_equal(x.grad, [0.0, 1.0, 0.0, 1.0, 0.0, 1.0])


def test_concatenate_gives_each_input_its_block_of_the_gradient():
    a, b = v([[1.0], [2.0]]), v([[3.0, 4.0], [5.0, 6.0]])
    y = O.ConcatenateOp(axis=1)(a, b)
    np.testing.assert_array_equal(y.data, [[1.0, 3.0, 4.0], [2.0, 5.0, 6.0]])
    Engine.backward(y, grad=np.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(a.grad, [[0.0], [3.0]])
    np.testing.assert_array_equal(b.grad, [[1.0, 2.0], [4.0, 5.0]])


def test_where_sends_no_nan_from_the_branch_not_taken():
    a, b = v([np.inf, 1.0]), v([2.0, np.nan])
    y = O.WhereOp()(v([0.0, 1.0]), a, b)
    np.testing.assert_array_equal(y.data, [2.0, 1.0])
    Engine.backward(y, grad=np.ones(2))
    np.testing.assert_array_equal(a.grad, [0.0, 1.0])
    np.testing.assert_array_equal(b.grad, [1.0, 0.0])


def test_var_with_correction_0_and_1():
    x = v([1.0, 2.0, 3.0, 4.0])  # mean 2.5, squared deviations sum 5
    assert O.VarOp(correction=0)(x).item() == 1.25
    y = O.VarOp()(x)
    assert y.item() == pytest.approx(5 / 3)
    Engine.backward(y)
    np.testing.assert_allclose(x.grad, [-1.0, -1 / 3, 1 / 3, 1.0], rtol=1e-15)  # 2(x - μ)/3


def test_avg_pool_without_the_padding_in_the_count_divides_by_the_real_inputs_only():
    """A 2x2 input of ones, 3x3 windows, padding 1, stride 2: each window holds 1 to 4 real ones."""
    x = v(np.ones((1, 1, 2, 2)))
    np.testing.assert_array_equal(O.AvgPool2DOp(3, 2, padding=1, count_include_pad=False)(x).data, [[[[1.0]]]])
    np.testing.assert_allclose(O.AvgPool2DOp(3, 2, padding=1)(x).data, [[[[4 / 9]]]], rtol=1e-15)


def test_max_pool_ceil_mode_adds_a_last_partial_window():
    x = v(np.arange(5.0).reshape(1, 1, 1, 5))
    assert O.MaxPool2DOp((1, 2))(x).shape == (1, 1, 1, 2)
    np.testing.assert_array_equal(O.MaxPool2DOp((1, 2), ceil_mode=True)(x).data, [[[[1.0, 3.0, 4.0]]]])


def test_max_pool_return_indices_from_the_layer():
    y, indices = N.MaxPool2d(2, return_indices=True)(v(np.array([[[[1.0, 5.0], [7.0, 2.0]]]])))
    np.testing.assert_array_equal(indices, [[[[2]]]])
    assert y.item() == 7.0


def test_depthwise_convolution_filters_each_channel_alone():
    x = v(np.stack([np.ones((2, 2)), 2 * np.ones((2, 2))])[None])  # (1, 2, 2, 2)
    w = v(np.array([10.0, 100.0]).reshape(2, 1, 1, 1))
    np.testing.assert_array_equal(O.Conv2DOp(groups=2)(x, w).data[0, :, 0, 0], [10.0, 200.0])


def test_same_padding_keeps_the_size_with_the_odd_padding_at_the_bottom_right():
    op = O.Conv2DOp(padding="same")
    y = op(v(np.ones((1, 1, 3, 3))), v(np.ones((1, 1, 2, 2))))
    assert y.shape == (1, 1, 3, 3)
    np.testing.assert_array_equal(y.data[0, 0], [[4.0, 4.0, 2.0], [4.0, 4.0, 2.0], [2.0, 2.0, 1.0]])
    assert op.padding == "same"


def test_batch_norm_without_running_statistics_uses_the_batch_in_evaluation_too():
    bn = N.BatchNorm1d(1, track_running_stats=False, dtype=np.float64).eval()
    with eval_mode():
        np.testing.assert_allclose(bn(v([[1.0], [3.0]])).data, [[-1.0], [1.0]], rtol=1e-5)
    assert bn.stats is None


def test_batch_norm_momentum_none_keeps_the_cumulative_average():
    bn = N.BatchNorm1d(1, momentum=None, dtype=np.float64)
    for batch in ([[0.0], [2.0]], [[4.0], [6.0]]):
        bn(v(batch))
    assert bn.stats.mean[0] == 3.0  # the mean of the batch means 1 and 5
    assert bn.stats.var[0] == 2.0   # the mean of the unbiased batch variances 2 and 2


def test_recurrent_bias_false_leaves_the_biases_out_and_num_layers_names_layer_k_with_a_suffix():
    rnn = N.RNN(3, 4, bias=False, num_layers=2, nonlinearity="relu", rng=0)
    assert rnn.bias_ih is None and rnn.bias_hh_l1 is None
    assert [name for name, _ in rnn.named_parameters()] == ["weight_ih", "weight_hh", "weight_ih_l1", "weight_hh_l1"]
    outputs, h = rnn(v(np.ones((2, 5, 3))))
    assert outputs.shape == (2, 5, 4) and h.shape == (2, 2, 4)
    assert (outputs.data >= 0).all()  # ReLU
    assert repr(rnn) == "RNN(3, 4, bias=False, nonlinearity='relu', num_layers=2)"
