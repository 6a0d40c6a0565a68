"""The pretrained small CNN (trained by the library, examples/mcu/train_cnn.py) exported to C: float against
NumPy on 200 held-out images, int8 accuracy and size goals, and (toolchain) the Cortex-M4 build bit-identical to
the host."""

from __future__ import annotations

import re

import numpy as np
import pytest

from autograd_lab import Variable
from autograd_lab.export import build as b
from autograd_lab.export import export_c, trace
from autograd_lab.export.lower import lower
from autograd_lab.export.pretrained import load_cnn, provenance
from autograd_lab.export.quantize import accuracy_report, quantize_steps
from autograd_lab.export.simulate import predict
from autograd_lab.modes import eval_mode


@pytest.fixture(scope="module")
def cnn():
    return load_cnn()


def test_the_shipped_cnn_records_how_it_was_made(mnist, cnn):
    meta = provenance()
    assert meta["made_by"] == "examples/mcu/train_cnn.py"
    assert meta["trained_with"].startswith("autograd-lab") and meta["command"].startswith("autograd-lab train")
    with eval_mode():
        logits = cnn(Variable.from_numpy(mnist.x_test)).data
    assert float(np.mean(logits.argmax(axis=1) == mnist.y_test)) == pytest.approx(meta["held_out_accuracy"])


def macro(header: str, name: str) -> int:
    return int(re.search(rf"#define {name} (\d+)", header).group(1))


def test_float_cnn_in_c_matches_numpy_on_200_images(tmp_path, gcc, mnist, cnn):
    gen = export_c(cnn, (1, 784), tmp_path, "cnn")
    x = mnist.x_test[:200]
    out = b.run_host(b.build_host(tmp_path, "cnn", tmp_path / "build"), x, 10)
    with eval_mode():
        expected = cnn(Variable.from_numpy(x)).data  # the ops' own forward, batch norm unfolded
    print(f"float CNN, C vs NumPy on 200 images: largest difference {np.abs(out - expected).max():.2e}")
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(out.argmax(axis=1), expected.argmax(axis=1))
    assert macro(gen.header, "CNN_ARENA_BYTES") == gen.arena_bytes <= 16 * 1024


@pytest.mark.slow
def test_int8_cnn_meets_the_accuracy_and_size_goals(tmp_path, gcc, mnist, cnn):
    # float 98.55%, int8 98.50-98.60% for calibration samples of 300 to 8,000 training images (2026-12-02, the
    # library-trained model); the test says which sample it uses
    calibration = mnist.x_train[:2000]
    gen = export_c(cnn, (1, 784), tmp_path, "cnn8", calibration=calibration)
    assert macro(gen.header, "CNN8_FLASH_BYTES") <= 32 * 1024
    assert macro(gen.header, "CNN8_ARENA_BYTES") <= 16 * 1024
    graph = trace(cnn, (1, 784))
    float_steps = lower(graph)
    int8_steps = quantize_steps(graph, float_steps, calibration)
    report = accuracy_report(graph, float_steps, int8_steps, mnist.x_test, mnist.y_test)
    print(report)
    assert round(report.int8_accuracy * report.n) >= 0.98 * report.n
    assert report.int8_accuracy >= report.float_accuracy - 0.003
    # the simulation that scored it is the C build, bit for bit
    x = mnist.x_test[:200]
    out = b.run_host(b.build_host(tmp_path, "cnn8", tmp_path / "build"), x, 10)
    np.testing.assert_array_equal(out, predict(graph, int8_steps, x))


@pytest.mark.slow
@pytest.mark.toolchain
@pytest.mark.parametrize("int8", [False, True])
def test_cnn_on_the_cortex_m4_is_bit_identical_to_the_host(tmp_path, arm_tools, gcc, mnist, cnn, int8):
    name = "cnn8" if int8 else "cnnf"
    export_c(cnn, (1, 784), tmp_path, name, calibration=mnist.x_train[:500] if int8 else None)
    b.write_samples_header(tmp_path / "samples.h", name, mnist.x_test[:4])
    elf, _ = b.build_mcu(tmp_path, name, "m4f", tmp_path / "m4f", tmp_path / "samples.h", "small_part.ld")
    board = b.run_qemu(elf, "m4f", timeout=120)
    assert "done 4 samples" in board
    exe = tmp_path / "main_host"
    b.run(["gcc", *b.HOST_FLAGS, f"-I{tmp_path}", str(b.MCU_DIR / "main.c"), str(tmp_path / f"{name}.c"),
           "-o", str(exe), "-lm"], "host build of main.c")
    assert board == b.run([str(exe)], "host run").stdout.decode()
