"""Tensor and model names become unique, valid C identifiers that compile."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from autograd_lab import Parameter, Variable
from autograd_lab.export import build as b
from autograd_lab.export import graph_from_root, graph_to_c, write_c
from autograd_lab.export.codegen import emitted_identifiers, model_identifier
from autograd_lab.export.names import C_KEYWORDS, RESERVED, NameTable, c_identifier
from autograd_lab.ops import AddOp, LayerNormOp, LeakyReLUOp, MatMulOp, ReLUOp, SigmoidOp, SoftmaxOp, TanhOp

NASTY = ["fc1.weight", "fc1_weight", "double", "2nd", "int", "", "é", "__x", "main", "fc1-weight"]


def test_identifiers_are_valid_and_not_keywords():
    for name in NASTY:
        ident = c_identifier(name)
        assert re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", ident), (name, ident)
        assert ident not in C_KEYWORDS


def test_clashing_names_get_distinct_identifiers():
    table = NameTable("m")
    idents = [table.unique(n) for n in NASTY + NASTY]
    assert len(set(idents)) == len(idents)
    assert idents[0] == "m_fc1_weight" and idents[1] == "m_fc1_weight_2"


def test_clashing_and_keyword_names_compile_and_compute(run_in_c):
    """Constants named 'fc1.weight', 'fc1_weight', 'double' and '2nd' in a model named 'double' (a C keyword)."""
    names = ["fc1.weight", "fc1_weight", "double", "2nd"]

    def build(x: Variable) -> Variable:
        for i, name in enumerate(names):
            x = AddOp()(x, Parameter(np.full(3, 10.0 ** i, dtype=np.float32), name=name))
        return x

    x = np.arange(6, dtype=np.float32).reshape(2, 1, 3)
    np.testing.assert_array_equal(run_in_c(build, x, name="double"), x.reshape(2, 3) + np.float32(1111))


# -- collisions with what the generator itself writes -----------------------------------------------------------------
def _chain(names: list[str], seed: int = 0):
    """A model that uses every float kernel and a constant per name in ``names``: adds of (4,) constants, then a
    dense layer (weight and bias named by the first names), leaky ReLU, sigmoid, tanh, layer norm, softmax; and
    its NumPy oracle (float32 adds in the same order, float64 for the rest)."""
    rng = np.random.default_rng(seed)
    values = [rng.normal(0, 1, 4).astype(np.float32) for _ in names]
    w = rng.normal(0, 0.5, (4, 4)).astype(np.float32)
    bias = rng.normal(0, 0.5, 4).astype(np.float32)
    gamma, beta = rng.normal(1, 0.1, 4).astype(np.float32), rng.normal(0, 0.1, 4).astype(np.float32)
    tensor_names = [*names, "w", "b", "gamma", "beta"]
    wn, bn, gn, btn = (names * 4)[:4] if names else tensor_names[-4:]

    def build(x: Variable) -> Variable:
        for name, v in zip(names, values):
            x = AddOp()(x, Parameter(v, name=name))
        x = ReLUOp()(AddOp()(MatMulOp(transpose_b=True)(x, Parameter(w, name=wn)), Parameter(bias, name=bn)))
        x = TanhOp()(SigmoidOp()(LeakyReLUOp(0.1)(x)))
        x = LayerNormOp(1e-5)(x, Parameter(gamma, name=gn), Parameter(beta, name=btn))
        return SoftmaxOp(axis=-1)(x)

    def oracle(x: np.ndarray) -> np.ndarray:
        for v in values:
            x = x + v  # float32, same order as the C
        z = np.maximum(x.astype(np.float64) @ w.T + bias, 0)
        z = np.tanh(1 / (1 + np.exp(-np.where(z > 0, z, 0.1 * z))))
        mu = z.mean(axis=-1, keepdims=True)
        z = (z - mu) / np.sqrt(((z - mu) ** 2).mean(axis=-1, keepdims=True) + 1e-5) * gamma + beta
        e = np.exp(z - z.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    return build, oracle


def _check(run_in_c, model: str, names: list[str]) -> None:
    build, oracle = _chain(names)
    x = np.random.default_rng(1).normal(0, 1, (3, 1, 4)).astype(np.float32)
    np.testing.assert_allclose(run_in_c(build, x, name=model), oracle(x).reshape(3, 4), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(("model", "tensor"), [("al", "relu_f32"), ("M", "OK"), ("NET", "INPUT_SIZE"), ("M", "H")])
def test_review_reproducers_compile_and_compute(run_in_c, model, tensor):
    """A kernel function (al_relu_f32), a status macro (M_OK), a size macro and the header guard (M_H)."""
    _check(run_in_c, model, [tensor])


def adversarial_names(model: str) -> list[str]:
    """Every spelling the generator emits for ``model`` with the model prefix taken off (so that
    ``<model>_<name>`` is exactly that spelling), kernel names without their ``al_``/``AL_`` prefix, keywords,
    standard-header names, and names differing only in case, punctuation, a leading digit or non-ASCII letters."""
    ident = model_identifier(model)
    own = set()
    for token in emitted_identifiers(ident):
        for prefix in (f"{ident}_", f"{ident.upper()}_", "al_", "AL_"):
            if token.startswith(prefix):
                own.add(token[len(prefix):])
    variants = ["fc1.weight", "fc1_weight", "FC1_WEIGHT", "fc1-weight", "fc1 weight", "Fc1.Weight", "2nd", "0", "_",
                "", "__x", "_X", "é", "ü.w", "权重", "*/", "/*", "??/", "a??=b", "x\\", "a\nb", "ok", "Ok", "h",
                "input_size", "Input.Size", "predict", "PREDICT", "argmax", "arena_f32", "ARENA_F32", "MAC"]
    return sorted(own) + sorted(C_KEYWORDS) + sorted(RESERVED) + variants


MODELS = ["al", "AL", "M", "m", "NET", "model", "double", "INT8", "math", "stddef", "2", "é", "samples"]


@pytest.mark.parametrize("model", MODELS)
def test_every_adversarial_name_at_once_compiles_and_computes(run_in_c, model):
    names = adversarial_names(model)
    assert len(names) > 150  # the sweep really covers the emitted spellings, keywords and library names
    _check(run_in_c, model, names)


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_property_random_adversarial_names_compile_and_compute(run_in_c, data):
    """Random models and random mixes of adversarial and arbitrary unicode names (repeats allowed)."""
    model = data.draw(st.sampled_from(MODELS) | st.text(min_size=0, max_size=6), label="model")
    pool = adversarial_names(model)
    names = data.draw(st.lists(st.sampled_from(pool) | st.text(max_size=8), min_size=1, max_size=30), label="names")
    _check(run_in_c, model, names)


def test_descriptions_and_names_cannot_break_out_of_comments(run_in_c):
    """Tensor names land in comments too; '*/' must not end the comment, '/*' must not warn, '??/' not splice."""
    _check(run_in_c, "m", ["*/ int x; /*", "??/", "a/*b", "\\", "\u2028"])


def test_model_identifier_never_meets_kernel_or_library_names():
    from autograd_lab.export.codegen import _own_identifiers, _template_identifiers

    for model in [*MODELS, "AL_MAC", "al_dense", "SIZE", "FP", "main", "startup", "stdio", ""]:
        ident = model_identifier(model)
        assert re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", ident)
        assert _own_identifiers(ident), ident  # the check below is not vacuous
        assert not _own_identifiers(ident) & (_template_identifiers() | RESERVED | C_KEYWORDS)


@pytest.mark.parametrize("model", ["model", "samples", "startup", "MODEL"])
def test_model_names_used_by_the_board_program_still_build(tmp_path, gcc, model):
    """examples/mcu/main.c with samples.h (its guard and MODEL_* aliases) for models called like them, compiled on
    the host with the strict flags; the printed float bits match NumPy."""
    w = np.random.default_rng(2).normal(0, 1, (3, 4)).astype(np.float32)
    x = Variable.from_numpy(np.zeros((1, 4), dtype=np.float32), name="input")
    gen = graph_to_c(graph_from_root(MatMulOp(transpose_b=True)(x, Parameter(w, name="w")), x), model)
    model_dir = tmp_path / "c"
    write_c(gen, model_dir)
    samples = np.random.default_rng(3).normal(0, 1, (2, 4)).astype(np.float32)
    b.write_samples_header(model_dir / "samples.h", model, samples)
    assert (model_dir / f"{gen.name}.h").read_text() == gen.header  # samples.h did not overwrite the model
    exe = tmp_path / "main_host"
    b.run(["gcc", *b.HOST_FLAGS, f"-I{model_dir}", str(b.MCU_DIR / "main.c"), str(model_dir / f"{gen.name}.c"),
           "-o", str(exe), "-lm"], "host build of main.c")
    text = b.run([str(exe)], "host run").stdout.decode()
    rows = [line.split(" bits ")[1].split() for line in text.splitlines() if line.startswith("sample")]
    printed = np.array([[int(h, 16) for h in row] for row in rows], dtype=np.uint32).view(np.float32)
    np.testing.assert_allclose(printed, samples @ w.T, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize(("model", "names"), [("al", ["dense", "pack_pair", "quantize", "hi_pair"]),
                                              ("AL", ["LO_PAIR", "NO_PRESCHEDULE", "DOT2", "GROUP"])])
def test_int8_constants_named_like_int8_kernels_and_macros(tmp_path, gcc, model, names):
    """Weights named so that <model>_<weight>_q8 is al_dense_q8 / al_quantize_q8, biases named like the int8
    helpers and macros (AL_NO_PRESCHEDULE expands to an attribute): the int8 C matches its NumPy simulation bit for
    bit, and the simulation stays close to the float model (NumPy float64)."""
    from autograd_lab.export.lower import lower
    from autograd_lab.export.quantize import quantize_steps
    from autograd_lab.export.simulate import predict

    rng = np.random.default_rng(4)
    w1, b1 = rng.normal(0, 0.4, (16, 8)).astype(np.float32), rng.normal(0, 0.1, 16).astype(np.float32)
    w2, b2 = rng.normal(0, 0.4, (4, 16)).astype(np.float32), rng.normal(0, 0.1, 4).astype(np.float32)
    x = Variable.from_numpy(np.zeros((1, 8), dtype=np.float32), name="input")
    h = ReLUOp()(AddOp()(MatMulOp(transpose_b=True)(x, Parameter(w1, name=names[0])), Parameter(b1, name=names[1])))
    y = AddOp()(MatMulOp(transpose_b=True)(h, Parameter(w2, name=names[2])), Parameter(b2, name=names[3]))
    graph = graph_from_root(y, x)
    calibration = rng.normal(0, 1, (64, 8)).astype(np.float32)
    gen = graph_to_c(graph, model, calibration=calibration)
    assert "dense_q8" in gen.source  # the int8 kernel is really in use
    write_c(gen, tmp_path)
    inputs = rng.normal(0, 1, (16, 8)).astype(np.float32)
    out = b.run_host(b.build_host(tmp_path, model, tmp_path / "build"), inputs, 4)
    simulated = predict(graph, quantize_steps(graph, lower(graph), calibration), inputs)
    np.testing.assert_array_equal(out, simulated)
    exact = np.maximum(inputs.astype(np.float64) @ w1.T + b1, 0) @ w2.T + b2
    np.testing.assert_allclose(out, exact, atol=0.1 * np.abs(exact).max())
