"""MLP and Module: structure, forward against NumPy, gradients against PyTorch, modes, state and .npz files."""

from __future__ import annotations

import json

import numpy as np
import pytest

from autograd_lab import Engine, Parameter, Variable
from autograd_lab.nn import MLP, Dropout, LayerNorm, Linear, Module, ReLU, Tanh, cross_entropy, read_header


def numpy_forward(model: MLP, x: np.ndarray) -> np.ndarray:
    """The ReLU MLP written out with NumPy (the oracle)."""
    linears = [m for m in model.layers if isinstance(m, Linear)]
    h = x
    for i, layer in enumerate(linears):
        h = h @ layer.weight.data.T + layer.bias.data
        if i < len(linears) - 1:
            h = np.maximum(h, 0)
    return h


def test_layers_and_parameter_names_for_784_128_10():
    model = MLP([784, 128, 10], rng=0)
    assert [type(m) for m in model.layers] == [Linear, ReLU, Linear]
    assert [n for n, _ in model.named_parameters()] == [
        "layers.0.weight", "layers.0.bias", "layers.2.weight", "layers.2.bias"]
    assert all(p.name == n for n, p in model.named_parameters())
    assert model.num_parameters() == 784 * 128 + 128 + 128 * 10 + 10


def test_options_add_layer_norm_and_dropout_in_each_hidden_block():
    model = MLP([8, 6, 5, 2], activation="tanh", dropout=0.5, layer_norm=True, rng=0)
    assert [type(m) for m in model.layers] == [Linear, LayerNorm, Tanh, Dropout] * 2 + [Linear]
    assert model.init == "xavier"


def test_forward_matches_numpy():
    rng = np.random.default_rng(0)
    model = MLP([10, 7, 5, 3], rng=1)
    x = rng.standard_normal((4, 10)).astype(np.float32)
    np.testing.assert_allclose(model(Variable.from_numpy(x)).data, numpy_forward(model, x), rtol=1e-5, atol=1e-6)


def test_cross_entropy_gradients_match_pytorch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    model = MLP([12, 9, 4], rng=2)
    x = rng.standard_normal((6, 12)).astype(np.float32)
    y = rng.integers(0, 4, 6)
    Engine.backward(cross_entropy(model(Variable.from_numpy(x)), y))
    tp = [torch.tensor(p.data, requires_grad=True) for p in model.parameters()]
    h = torch.relu(torch.nn.functional.linear(torch.from_numpy(x), tp[0], tp[1]))
    torch.nn.functional.cross_entropy(torch.nn.functional.linear(h, tp[2], tp[3]), torch.from_numpy(y)).backward()
    for p, t in zip(model.parameters(), tp):
        np.testing.assert_allclose(p.grad, t.grad.numpy(), rtol=1e-5, atol=1e-7, err_msg=p.name)


def test_eval_mode_turns_dropout_off_and_train_mode_back_on():
    x = Variable.from_numpy(np.ones((3, 20), dtype=np.float32))
    model = MLP([20, 50, 4], dropout=0.5, rng=0)
    plain = MLP([20, 50, 4], rng=0)
    model.eval()
    assert not any(m.training for m in model.layers)
    np.testing.assert_array_equal(model(x).data, plain(x).data)
    model.train()
    assert all(m.training for m in model.layers)
    assert not np.array_equal(model(x).data, plain(x).data)


def test_state_dict_is_a_copy_and_load_state_dict_copies_in_place():
    a, b = MLP([5, 4, 3], rng=0), MLP([5, 4, 3], rng=1)
    state = a.state_dict()
    state["layers.0.bias"][:] = 7.0
    assert not np.any(a.layers[0].bias.data == 7.0)
    before = b.layers[0].weight.data.ctypes.data  # an address, not a reference (copy_ is copy-on-write)
    b.load_state_dict(a.state_dict())
    assert b.layers[0].weight.data.ctypes.data == before  # same array, updated through Parameter.copy_
    for (_, p), (_, q) in zip(a.named_parameters(), b.named_parameters()):
        np.testing.assert_array_equal(p.data, q.data)


def test_load_state_dict_names_missing_unexpected_and_misshapen_entries():
    model = MLP([5, 4, 3], rng=0)
    state = model.state_dict()
    del state["layers.2.bias"]
    state["extra"] = np.zeros(1)
    with pytest.raises(KeyError, match=r"missing \['layers.2.bias'\], unexpected \['extra'\]"):
        model.load_state_dict(state)
    bad = model.state_dict()
    bad["layers.0.weight"] = np.zeros((5, 4))
    with pytest.raises(ValueError, match=r"'layers.0.weight' has shape \(5, 4\), the model expects \(4, 5\)"):
        model.load_state_dict(bad)


def test_save_and_load_rebuild_the_same_model_from_an_npz_without_pickle(tmp_path):
    model = MLP([6, 5, 4, 3], activation="leaky_relu", layer_norm=True, dropout=0.25, rng=3)
    path = tmp_path / "model.npz"
    model.save(path, meta={"dataset": "mnist-bundled"})
    with np.load(path, allow_pickle=False) as archive:
        assert set(archive.files) == {"__config__", *model.state_dict()}
        header = json.loads(str(archive["__config__"]))
    assert header["class"] == "MLP" and header["config"] == model.config()
    assert read_header(path)["meta"] == {"dataset": "mnist-bundled"}
    loaded = MLP.load(path)
    assert loaded.config() == model.config()
    x = Variable.from_numpy(np.random.default_rng(0).standard_normal((2, 6)).astype(np.float32))
    np.testing.assert_array_equal(loaded.eval()(x).data, model.eval()(x).data)


def test_loading_a_file_without_config_or_of_another_class_is_refused(tmp_path):
    np.savez(tmp_path / "plain.npz", w=np.zeros(3))
    with pytest.raises(ValueError, match="not an autograd-lab model file"):
        MLP.load(tmp_path / "plain.npz")
    Linear(2, 3, rng=0).save(tmp_path / "linear.npz")
    with pytest.raises(ValueError, match="holds a Linear, not a MLP"):
        MLP.load(tmp_path / "linear.npz")


def test_a_module_without_config_cannot_be_saved(tmp_path):
    class Bare(Module):
        def __init__(self) -> None:
            super().__init__()
            self.w = Parameter(np.zeros(2))

    with pytest.raises(NotImplementedError, match="Bare cannot be saved"):
        Bare().save(tmp_path / "bare.npz")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"sizes": [784]}, "at least two positive widths"),
        ({"sizes": [784, 0, 10]}, "at least two positive widths"),
        ({"sizes": [4, 2], "activation": "gelu"}, "unknown activation 'gelu'"),
        ({"sizes": [4, 2], "init": "orthogonal"}, "unknown init 'orthogonal'"),
        ({"sizes": [4, 3, 2], "dropout": 1.0}, r"dropout is a drop probability in \[0, 1\)"),
    ],
)
def test_bad_arguments_say_what_is_wrong(kwargs, message):
    with pytest.raises(ValueError, match=message):
        MLP(**kwargs)
