"""The generated float and int8 C for an MNIST MLP, compiled on the host, against NumPy on real MNIST images."""

from __future__ import annotations

import numpy as np

from autograd_lab import Variable
from autograd_lab.export import build as b
from autograd_lab.export import export_c, trace
from autograd_lab.export.lower import lower
from autograd_lab.export.quantize import accuracy_report, quantize_steps
from autograd_lab.export.simulate import predict
from autograd_lab.nn import MLP


def test_float_mlp_matches_numpy_on_200_mnist_images(tmp_path, gcc, mnist):
    model = MLP([784, 128, 10], rng=0)
    gen = export_c(model, (1, 784), tmp_path, "mnist")
    exe = b.build_host(tmp_path, "mnist", tmp_path / "build")
    x = mnist.x_test[:200]
    out = b.run_host(exe, x, 10)
    w1, b1, w2, b2 = (p.data for p in model.parameters())
    expected = np.maximum(x @ w1.T + b1, 0) @ w2.T + b2  # NumPy float32, independent of the exporter
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(out.argmax(axis=1), expected.argmax(axis=1))
    assert gen.arena_bytes == 128 * 4  # one hidden layer; the output goes straight to the caller


def test_generated_object_needs_no_allocator_and_no_stdio(tmp_path, gcc):
    export_c(MLP([784, 32, 10], activation="sigmoid", rng=0), (1, 784), tmp_path, "m")
    obj = tmp_path / "m.o"
    b.run(["gcc", *b.HOST_FLAGS, "-c", str(tmp_path / "m.c"), "-o", str(obj)], "compile")
    undefined = b.undefined_symbols(obj)
    assert not {"malloc", "calloc", "realloc", "free", "printf", "puts", "putchar", "fprintf"} & set(undefined)
    assert set(undefined) <= {"expf"}  # sigmoid is the only op here that needs libm


def test_int8_object_needs_no_library_function_at_all(tmp_path, gcc, mnist):
    export_c(MLP([784, 32, 10], rng=0), (1, 784), tmp_path, "m", calibration=mnist.x_train[:100])
    obj = tmp_path / "m.o"
    b.run(["gcc", *b.HOST_FLAGS, "-c", str(tmp_path / "m.c"), "-o", str(obj)], "compile")
    assert b.undefined_symbols(obj) == []


def test_int8_mlp_is_small_and_matches_its_numpy_simulation_bit_for_bit(tmp_path, gcc, mnist, trained_mlp):
    gen = export_c(trained_mlp, (1, 784), tmp_path, "q", calibration=mnist.x_train[:500])
    assert gen.flash_bytes <= 110 * 1024 and gen.arena_bytes <= 2048
    graph = trace(trained_mlp, (1, 784))
    steps = quantize_steps(graph, lower(graph), mnist.x_train[:500])
    x = mnist.x_test[:200]
    out = b.run_host(b.build_host(tmp_path, "q", tmp_path / "build"), x, 10)
    np.testing.assert_array_equal(out, predict(graph, steps, x))


def test_int8_accuracy_stays_within_one_point_of_float(mnist, trained_mlp):
    graph = trace(trained_mlp, (1, 784))
    report = accuracy_report(graph, lower(graph), quantize_steps(graph, lower(graph), mnist.x_train[:500]),
                             mnist.x_test, mnist.y_test)
    logits = trained_mlp(Variable.from_numpy(mnist.x_test)).data
    float_direct = float(np.mean(logits.argmax(axis=1) == mnist.y_test))
    assert report.float_accuracy == float_direct
    assert report.float_accuracy > 0.85
    assert report.int8_accuracy >= report.float_accuracy - 0.01
