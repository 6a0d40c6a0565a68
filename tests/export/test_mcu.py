"""Cross builds for Cortex-M3/M4F/M7 and runs on QEMU's MPS2 boards: the board prints the very bits the host does."""

from __future__ import annotations

import numpy as np
import pytest

from autograd_lab.export import build as b
from autograd_lab.export import export_c
from autograd_lab.export.errors import ExportError
from autograd_lab.nn import MLP

pytestmark = [pytest.mark.toolchain, pytest.mark.slow]
SAMPLES = 6


def host_main_output(model_dir, name, tmp_path):
    """Build examples/mcu/main.c with the host compiler and return what it prints."""
    exe = tmp_path / f"{name}_main_host"
    b.run(["gcc", *b.HOST_FLAGS, f"-I{model_dir}", str(b.MCU_DIR / "main.c"), str(model_dir / f"{name}.c"),
           "-o", str(exe), "-lm"], "host build of main.c")
    return b.run([str(exe)], "host run").stdout.decode()


def printed_outputs(text):
    rows = [line.split(" bits ")[1].split() for line in text.splitlines() if line.startswith("sample")]
    return np.array([[int(h, 16) for h in row] for row in rows], dtype=np.uint32).view(np.float32)


@pytest.fixture(scope="module")
def float_model(tmp_path_factory, mnist):
    model = MLP([784, 128, 10], rng=0)
    out = tmp_path_factory.mktemp("float_model")
    export_c(model, (1, 784), out, "mnist")
    b.write_samples_header(out / "samples.h", "mnist", mnist.x_test[:SAMPLES])
    return model, out


@pytest.mark.parametrize("target", ["m4f", "m7", "m3"])
def test_float_model_on_the_board_is_bit_identical_to_the_host(target, float_model, tmp_path, arm_tools, gcc, mnist):
    model, model_dir = float_model
    elf, sizes = b.build_mcu(model_dir, "mnist", target, tmp_path, model_dir / "samples.h")
    board = b.run_qemu(elf, target, timeout=120)
    assert f"done {SAMPLES} samples" in board
    assert board == host_main_output(model_dir, "mnist", tmp_path)
    x = mnist.x_test[:SAMPLES]
    w1, b1, w2, b2 = (p.data for p in model.parameters())
    np.testing.assert_allclose(printed_outputs(board), np.maximum(x @ w1.T + b1, 0) @ w2.T + b2, rtol=1e-5, atol=1e-5)
    assert sizes.flash > 407_000 and sizes.ram >= 512 and 0 < sizes.stack < 512
    model_undefined = set(b.undefined_symbols(tmp_path / f"2_mnist_{target}.o", nm="arm-none-eabi-nm"))
    assert not {"malloc", "free", "printf", "puts", "putchar"} & model_undefined


def test_int8_model_fits_a_small_part_and_matches_the_host(tmp_path, arm_tools, gcc, mnist, trained_mlp):
    gen = export_c(trained_mlp, (1, 784), tmp_path, "q", calibration=mnist.x_train[:500])
    # Two sample images (3 KB each) leave room in 128 KB next to the model, newlib's printf and the start-up code.
    b.write_samples_header(tmp_path / "samples.h", "q", mnist.x_test[:2])
    elf, program = b.build_mcu(tmp_path, "q", "m4f", tmp_path / "m4f", tmp_path / "samples.h", "small_part.ld")
    board = b.run_qemu(elf, "m4f", timeout=120)
    assert board == host_main_output(tmp_path, "q", tmp_path)
    assert program.flash <= 128 * 1024
    model = b.model_sizes(tmp_path, "q", "m4f", tmp_path / "sizes")
    assert model.flash <= 110 * 1024 and model.ram <= 2048
    assert model.bss == gen.arena_bytes


def test_a_float_model_too_big_for_a_small_part_fails_to_link_clearly(float_model, tmp_path, arm_tools):
    _, model_dir = float_model
    with pytest.raises(ExportError, match=r"does not fit small_part.ld: region FLASH overflowed by \d+ bytes"):
        b.build_mcu(model_dir, "mnist", "m4f", tmp_path, model_dir / "samples.h", "small_part.ld")


def test_a_fault_ends_the_run_instead_of_hanging(tmp_path, arm_tools):
    """A main that jumps to an invalid address: the fault handler exits through semihosting (status 1)."""
    (tmp_path / "crash.c").write_text("int main(void)\n{\n    void (*f)(void) = (void (*)(void))0xFFFFFFF0u;\n"
                                      "    f();\n    return 0;\n}\n")
    cpu = list(b.TARGETS["m4f"].cpu_flags)
    objs = []
    for src in (b.MCU_DIR / "startup.c", tmp_path / "crash.c"):
        obj = tmp_path / f"{src.stem}.o"
        b.run(["arm-none-eabi-gcc", *b.CROSS_FLAGS, *cpu, "-c", str(src), "-o", str(obj)], "compile")
        objs.append(str(obj))
    elf = tmp_path / "crash.elf"
    b.run(["arm-none-eabi-gcc", *cpu, "-nostartfiles", "--specs=nano.specs", "--specs=rdimon.specs",
           f"-L{b.MCU_DIR}", "-Tmps2.ld", *objs, "-o", str(elf)], "link")
    with pytest.raises(b.BuildError, match="exit 1") as info:
        b.run_qemu(elf, "m4f", timeout=30)
    assert "fault: the program crashed" in str(info.value)


def test_the_makefile_builds_and_runs_one_board(float_model, tmp_path, arm_tools):
    _, model_dir = float_model
    out = b.run(["make", "-C", str(b.MCU_DIR), f"MODEL_DIR={model_dir}", "NAME=mnist", f"OUT={tmp_path}",
                 "run-m4f"], "make run-m4f").stdout.decode()
    assert f"done {SAMPLES} samples" in out
