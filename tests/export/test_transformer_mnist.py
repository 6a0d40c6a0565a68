"""The shipped vision transformer (trained by the library, examples/mcu/train_cnn.py --model transformer) exported to
C: float32 against NumPy on the 2,000 held-out images, int8 accuracy and size goals, and (toolchain) the Cortex-M4
build bit-identical to the host on 500 held-out images."""

from __future__ import annotations

import numpy as np
import pytest

from autograd_lab import Variable
from autograd_lab.export import build as b
from autograd_lab.export import export_c, trace
from autograd_lab.export.lower import lower
from autograd_lab.export.pretrained import VIT_FILE, load_vit, provenance
from autograd_lab.export.quantize import accuracy_report, quantize_steps
from autograd_lab.export.simulate import predict
from autograd_lab.modes import eval_mode

pytestmark = pytest.mark.slow
CALIBRATION = 1000  # training images; 300 and 8,000 give the same accuracy to one image (2026-12-02)
BOARD_IMAGES = 500  # 1.5 MB of sample images: they fit the MPS2 board's 4 MB of flash


@pytest.fixture(scope="module")
def vit():
    return load_vit()


@pytest.fixture(scope="module")
def numpy_logits(vit, mnist):
    with eval_mode():
        return vit(Variable.from_numpy(mnist.x_test)).data


def test_the_shipped_transformer_records_how_it_was_made(mnist, numpy_logits):
    meta = provenance(VIT_FILE)
    assert meta["made_by"] == "examples/mcu/train_cnn.py"
    assert meta["command"] == "autograd-lab train --dataset mnist-bundled --model transformer --seed 0"
    assert float(np.mean(numpy_logits.argmax(axis=1) == mnist.y_test)) == pytest.approx(meta["held_out_accuracy"])


def test_float_transformer_in_c_agrees_with_numpy_on_the_held_out_set(tmp_path, gcc, mnist, vit, numpy_logits):
    gen = export_c(vit, (1, 784), tmp_path, "vit")
    out = b.run_host(b.build_host(tmp_path, "vit", tmp_path / "build"), mnist.x_test, 10)
    print(f"float ViT, C vs NumPy on 2,000 images: largest difference {np.abs(out - numpy_logits).max():.2e}")
    np.testing.assert_allclose(out, numpy_logits, rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(out.argmax(axis=1), numpy_logits.argmax(axis=1))
    assert gen.arena_bytes <= 48 * 1024


def test_int8_transformer_meets_the_accuracy_and_size_goals(tmp_path, gcc, mnist, vit):
    calibration = mnist.x_train[:CALIBRATION]
    gen = export_c(vit, (1, 784), tmp_path, "vit8", calibration=calibration)
    assert gen.flash_bytes <= 128 * 1024 and gen.arena_bytes <= 48 * 1024
    graph = trace(vit, (1, 784))
    float_steps = lower(graph)
    int8_steps = quantize_steps(graph, float_steps, calibration)
    report = accuracy_report(graph, float_steps, int8_steps, mnist.x_test, mnist.y_test)
    print(report)
    assert report.int8_accuracy >= report.float_accuracy - 0.005
    # the simulation that scored it is the C build, bit for bit
    x = mnist.x_test[:200]
    out = b.run_host(b.build_host(tmp_path, "vit8", tmp_path / "build"), x, 10)
    np.testing.assert_array_equal(out.view(np.uint32), predict(graph, int8_steps, x).view(np.uint32))


@pytest.mark.toolchain
@pytest.mark.parametrize("int8", [False, True])
def test_transformer_on_the_cortex_m4_is_bit_identical_to_the_host(tmp_path, arm_tools, gcc, mnist, vit, int8):
    name = "vit8" if int8 else "vitf"
    export_c(vit, (1, 784), tmp_path, name, calibration=mnist.x_train[:CALIBRATION] if int8 else None)
    b.write_samples_header(tmp_path / "samples.h", name, mnist.x_test[:BOARD_IMAGES])
    elf, _ = b.build_mcu(tmp_path, name, "m4f", tmp_path / "m4f", tmp_path / "samples.h")
    board = b.run_qemu(elf, "m4f", timeout=600)
    assert f"done {BOARD_IMAGES} samples" in board
    exe = tmp_path / "main_host"
    b.run(["gcc", *b.HOST_FLAGS, f"-I{tmp_path}", str(b.MCU_DIR / "main.c"), str(tmp_path / f"{name}.c"),
           "-o", str(exe), "-lm"], "host build of main.c")
    assert board == b.run([str(exe)], "host run").stdout.decode()
    model = b.model_sizes(tmp_path, name, "m4f", tmp_path / "sizes")
    assert model.bss <= 48 * 1024
    if int8:
        assert model.flash <= 128 * 1024  # code and constants of the model object
