"""Attention and the vision transformer in the generated C: float against the model's NumPy forward, int8 and the
softmax against the exporter's NumPy simulation bit for bit, and what the kernels refuse."""

from __future__ import annotations

import numpy as np
import pytest

from autograd_lab import Parameter, Variable
from autograd_lab.export import ExportError, graph_from_root, graph_to_c, trace, write_c
from autograd_lab.export import build as b
from autograd_lab.export.lower import lower
from autograd_lab.export.quantize import quantize_steps
from autograd_lab.export.simulate import exp_values, predict
from autograd_lab.modes import eval_mode
from autograd_lab.nn.attention import MultiheadAttention
from autograd_lab.nn.transformer import VisionTransformer
from autograd_lab.ops import GELUOp, MatMulOp, MeanOp, MulOp, ReshapeOp, SliceOp, SoftmaxOp, TransposeOp

RNG = np.random.default_rng(23)


def param(*shape, name="w", scale=0.5):
    return Parameter((RNG.standard_normal(shape) * scale).astype(np.float32), name=name)


def expected_of(fn, x):
    with eval_mode():
        return np.concatenate([fn(Variable.from_numpy(xi)).data.reshape(1, -1) for xi in x])


def small_vit():
    """8x8 images as 4 patches of 4x4, width 16, 2 layers of 2 heads, feed-forward 24: every kernel of the ViT."""
    model = VisionTransformer(image_size=8, patch_size=4, dim=16, depth=2, heads=2, mlp_dim=24, rng=3)
    model.eval()
    return model


def self_attention(e, heads):
    attn = MultiheadAttention(e, heads, batch_first=True, rng=4)
    attn.in_proj_bias = param(3 * e, name="in_proj_bias", scale=0.1)
    return lambda x: attn(x, need_weights=False)[0]


CASES = {
    "a transformer: patches, projections, heads, softmax, layer norm, GELU, mean": (
        (1, 64), lambda: (lambda m: lambda x: m(x))(small_vit())),
    "self-attention, 3 heads of 4 over 6 tokens (tiles at the edges)": ((1, 6, 12), lambda: self_attention(12, 3)),
    "A^T A per batch (transpose_a, 3 x 3 outputs)": ((8, 3), lambda: (
        lambda: lambda x: MatMulOp(transpose_a=True)(ReshapeOp((2, 4, 3))(x), ReshapeOp((2, 4, 3))(x)))()),
    "a constant batched operand broadcast against the input's batch axis": ((2, 3, 4), lambda: (
        lambda w: lambda x: MatMulOp()(x, w))(param(1, 4, 5))),
    "a strided slice, transposed, as the model's output (a copy)": ((3, 6), lambda: (
        lambda: lambda x: TransposeOp()(SliceOp(1, 6, axis=1, step=2)(x)))()),
    "a mean over the middle axis, a broadcast product, GELU (tanh)": ((4, 5, 3), lambda: (
        lambda w: lambda x: GELUOp("tanh")(MulOp()(MeanOp(axis=1)(x), w)))(param(3, scale=2.0))),
    "a reshape of a transposed view (gathered once), then a dense layer": ((4, 6), lambda: (
        lambda w: lambda x: MatMulOp(transpose_b=True)(ReshapeOp((2, 12))(TransposeOp()(x)), w))(param(3, 12))),
}


@pytest.mark.parametrize("case", list(CASES))
def test_float_c_matches_numpy(case, run_in_c):
    shape, make = CASES[case]
    fn = make()
    x = RNG.standard_normal((5, *shape)).astype(np.float32)
    np.testing.assert_allclose(run_in_c(fn, x), expected_of(fn, x), rtol=2e-5, atol=2e-5)


def host_outputs(graph, name, x, tmp_path, calibration=None):
    gen = graph_to_c(graph, name, calibration=calibration)
    write_c(gen, tmp_path)
    exe = b.build_host(tmp_path, name, tmp_path / "build")
    return b.run_host(exe, x.reshape(len(x), -1), gen.output_size)


def test_int8_transformer_c_equals_the_simulation_bit_for_bit(tmp_path, gcc):
    model = small_vit()
    graph = trace(model, (1, 64))
    calibration = RNG.random((64, 64), dtype=np.float32)
    x = RNG.random((20, 64), dtype=np.float32)
    steps = quantize_steps(graph, lower(graph), calibration)
    assert {"quantize", "dense_q8", "bmm", "softmax", "layer_norm", "gelu", "mean"} <= {s.kind for s in steps}
    assert "dense" not in {s.kind for s in steps}  # every projection and feed-forward layer is int8
    out = host_outputs(graph, "q", x, tmp_path, calibration)
    np.testing.assert_array_equal(out.view(np.uint32), predict(graph, steps, x).view(np.uint32))
    np.testing.assert_allclose(out, expected_of(model, x[:, None]), atol=0.05)


def test_softmax_and_gelu_in_c_equal_the_simulation_bit_for_bit(tmp_path, gcc):
    """Scores from -900 to 900: exp underflows to 0 for most of them; GELU meets both tails of tanh."""
    x = Variable.from_numpy(np.zeros((4, 16), np.float32), name="input")
    y = GELUOp("tanh")(SoftmaxOp()(MulOp()(x, Parameter(np.float32(30.0), name="t"))))
    graph = graph_from_root(y, x)
    inputs = (RNG.standard_normal((50, 4, 16)) * np.geomspace(0.01, 30, 16)).astype(np.float32)
    out = host_outputs(graph, "s", inputs, tmp_path)
    np.testing.assert_array_equal(out.view(np.uint32), predict(graph, lower(graph), inputs).view(np.uint32))


def test_exp_twin_is_within_two_ulp_of_numpy():
    x = np.concatenate([np.linspace(-87.3, 88.7, 200_001, dtype=np.float32), np.float32([0, -1e-8, 1e-8])])
    want = np.exp(x.astype(np.float64))
    got = exp_values(x).astype(np.float64)
    ulp = np.spacing(want.astype(np.float32)).astype(np.float64)
    assert np.max(np.abs(got - want) / ulp) <= 2.0
    assert exp_values(np.float32([-100, 100, -np.inf])).tolist() == [0.0, np.inf, 0.0]


def test_heads_are_read_in_place_and_the_scale_is_fused():
    """The head split (slice, reshape, transpose) costs no step: the two products read the projection's buffer."""
    graph = trace(small_vit(), (1, 64))
    steps = lower(graph)
    kinds = [s.kind for s in steps]
    assert kinds.count("bmm") == 4 and kinds.count("copy") == 1  # the one copy is the patch rearrangement
    scores = next(s for s in steps if s.kind == "bmm")
    assert scores.params["alpha"] == pytest.approx(1 / np.sqrt(8)) and "MulOp" in scores.where
    assert scores.inputs[0] is scores.inputs[1]  # Q and K both in the fused (4, 48) projection
    assert scores.params["geom"]["sb0"] == 1 and scores.params["geom"]["sb1"] == 48  # K^T: K with swapped strides


def test_exact_gelu_is_refused_by_name():
    x = Variable.from_numpy(np.zeros((1, 4), np.float32), name="input")
    with pytest.raises(ExportError, match=r"GELUOp at node 1 .*approximate='none'.*tanh form"):
        lower(graph_from_root(GELUOp()(x), x))


def test_batch_axes_that_need_two_loops_are_refused():
    x = Variable.from_numpy(np.zeros((2, 3, 4, 4), np.float32), name="input")
    y = MatMulOp()(TransposeOp((1, 0, 2, 3))(x), param(4, 4))
    y2 = MatMulOp()(TransposeOp((1, 0, 2, 3))(x), y)
    with pytest.raises(ExportError, match=r"MatMulOp at node \d+ .*need 2 loop axes; the C kernel handles one"):
        lower(graph_from_root(y2, x))


def test_a_mean_over_axes_that_are_not_neighbours_is_refused():
    x = Variable.from_numpy(np.zeros((2, 3, 4), np.float32), name="input")
    with pytest.raises(ExportError, match=r"MeanOp at node 1 .*axes \(0, 2\).*not neighbours"):
        lower(graph_from_root(MeanOp(axis=(0, 2))(x), x))
