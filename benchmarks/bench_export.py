"""Benchmark of the generated C: instructions per multiply-accumulate, and a size table for Cortex-M3/M4F/M7.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_export.py [--cnn-only | --transformer-only]
    # gcc, valgrind, arm-none-eabi-gcc, QEMU

Counts (goals: issue 4, MLP: host float <= 2, Cortex-M4 float <= 3 and int8 <= 1.5 instructions per MAC; issue 11,
CNN conv layers on the Cortex-M4: float <= 3, int8 <= 2):
* host: callgrind's instruction count inside ``<name>_predict`` (``--toggle-collect``), over 10 inferences;
* Cortex-M4 (QEMU mps2-an386): one inference run with ``-singlestep -d nochain,exec``, so that QEMU logs every
  executed instruction (one instruction per translation block, each block logged when it runs); counted are all
  the instructions from the first of ``<name>_predict`` to its last, whatever function they lie in.
  For the CNN the trace is cut into the kernel calls ``<name>_predict`` makes (each maximal run of instructions
  outside predict's own code is one call, in step order), so each conv layer gets its own count: everything the
  layer executes (patch gathering, input quantization, the dense kernel, bias, activation, pooling, requantization)
  divided by its MACs, counted two ways: the usual oh * ow * C_out * kh * kw * C_in (the zero padding's products
  included, although the kernels skip or waste them as they like) and the products with real input pixels only
  (the stricter count; both are printed).
The models: an MLP 784-128-10 (ReLU) with fixed random weights, the shipped pretrained CNN
(``autograd_lab.export.pretrained``) and a depthwise-separable CNN trained here for a few epochs
(``benchmarks/ds_cnn.py``, about 2 minutes of CPU), float32 and int8, with their held-out accuracy (the exporter's
NumPy simulation of each); instruction counts do not depend on the weights' values.
The vision transformer (issue 23: model flash <= 128 KB, arena <= 48 KB, attention's matrix products <= 3
instructions per MAC in float32): per layer kind, instructions, MACs and constants; then the board over all 2,000
held-out images (chunks of 500), its output bits against the host build of the same main.c and its class against
NumPy's float32 model.
Sizes for the CNN: the model object's flash (text + data of ``<name>.c`` compiled for the M4F; code plus constants),
the code of each of the model's functions (the ELF's symbol sizes), the arena, and predict's stack.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, NamedTuple

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np

from autograd_lab.data import load_bundled_mnist
from autograd_lab.export import build as b
from autograd_lab.export import export_c
from autograd_lab.export.simulate import patch_index
from autograd_lab.nn import MLP


def host_instructions_per_mac(model_dir: Path, name: str, macs: int, x: np.ndarray, work: Path) -> float:
    exe = b.build_host(model_dir, name, work)
    out = work / "callgrind.out"
    subprocess.run(["valgrind", "--tool=callgrind", f"--toggle-collect={name}_predict",
                    f"--callgrind-out-file={out}", str(exe)], input=x.astype(np.float32).tobytes(),
                   capture_output=True, check=True)
    text = out.read_text()
    total = int(re.search(r"^(?:summary|totals):\s+(\d+)", text, re.M).group(1))
    return total / (len(x) * macs)


def m4_trace(model_dir: Path, name: str, x: np.ndarray, work: Path) -> tuple[np.ndarray, list, dict[str, int], Path]:
    """One inference on the Cortex-M4 board with QEMU logging every instruction: the PCs executed from the first
    instruction of ``<name>_predict`` to its last (everything the call executes, including any library routine a
    kernel calls, such as memset or roundf), predict's own address range, and the sizes (bytes) of the model's
    functions, and the ELF."""
    b.write_samples_header(model_dir / "samples.h", name, x[:1])
    elf, _ = b.build_mcu(model_dir, name, "m4f", work, model_dir / "samples.h")
    sizes, own = {}, (0, 0)
    for line in b.run(["arm-none-eabi-nm", "-S", "--defined-only", str(elf)], "nm").stdout.decode().splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in "tT" and (parts[3] == f"{name}_predict" or parts[3].startswith("al_")):
            start = int(parts[0], 16) & ~1
            sizes[parts[3]] = int(parts[1], 16)
            if parts[3] == f"{name}_predict":
                own = (start, start + int(parts[1], 16))
    log = work / "exec.log"
    # -singlestep: one guest instruction per translation block; nochain: every block goes through the logger;
    # -d exec: one "Trace" line per executed block, i.e. per executed instruction
    subprocess.run(["timeout", "600", "qemu-system-arm", "-M", "mps2-an386", "-nographic", "-monitor", "none",
                    "-semihosting-config", "enable=on,target=native", "-kernel", str(elf), "-singlestep",
                    "-d", "nochain,exec", "-D", str(log)], capture_output=True, check=True)
    pcs = np.array([int(m.group(1), 16) for m in re.finditer(r"^Trace \S+ \S+ \[[0-9a-f]+/([0-9a-f]+)/",
                                                              log.read_text(), re.M)], dtype=np.int64)
    log.unlink()
    in_predict = np.flatnonzero((pcs >= own[0]) & (pcs < own[1]))
    if len(in_predict) == 0:
        raise RuntimeError(f"{name}_predict never ran on the board")
    return pcs[in_predict[0]:in_predict[-1] + 1], [own], sizes, elf


def mnemonics(elf: Path) -> dict[int, str]:
    """Address -> instruction mnemonic of every instruction in the ELF (``arm-none-eabi-objdump -d``)."""
    out = b.run(["arm-none-eabi-objdump", "-d", "--no-show-raw-insn", str(elf)], "objdump").stdout.decode()
    return {int(m.group(1), 16): m.group(2) for m in re.finditer(r"^\s*([0-9a-f]+):\s+(\S+)", out, re.M)}


def m4_instructions_per_mac(model_dir: Path, name: str, macs: int, x: np.ndarray, work: Path) -> float:
    pcs, _, _, _ = m4_trace(model_dir, name, x, work)
    return len(pcs) / macs


def m4_calls(pcs: np.ndarray, own: tuple[int, int]) -> list[tuple[int, int]]:
    """The calls predict makes, as (first, end) positions in the trace: maximal runs of PCs outside predict's code."""
    outside = ~((pcs >= own[0]) & (pcs < own[1]))
    edges = np.flatnonzero(np.diff(np.concatenate([[0], outside.astype(np.int8), [0]])))
    return [(int(s), int(e)) for s, e in zip(edges[0::2], edges[1::2])]


def real_macs(g: dict) -> int:
    """Products of a weight with an input pixel (not with the zero padding) that a conv step needs: over the conv
    pixels its output depends on (with a fused pool, those under some pool window), C_in * C_out per in-image tap."""
    if g["pkh"]:
        rows = sorted({oy * g["psy"] + i for oy in range(g["ph"]) for i in range(g["pkh"])})
        cols = sorted({ox * g["psx"] + j for ox in range(g["pw"]) for j in range(g["pkw"])})
    else:
        rows, cols = list(range(g["oh"])), list(range(g["ow"]))
    taps_y = sum(sum(0 <= y * g["sy"] - g["py"] + i < g["h"] for i in range(g["kh"])) for y in rows)
    taps_x = sum(sum(0 <= x * g["sx"] - g["px"] + j < g["w"] for j in range(g["kw"])) for x in cols)
    macs = taps_y * taps_x * g["cin"] // max(g.get("groups", 1), 1) * g["cout"]  # each output sees its group
    # the same count from the NumPy simulation's patch indices (padding entries point past the input; group 0)
    inside = patch_index(g, g["h"] * g["w"] * g["cin"]) < g["h"] * g["w"] * g["cin"]
    assert macs == int(inside[np.ix_(rows, cols)].sum()) * g["cout"], "two counts of the real MACs disagree"
    return macs


def cnn_rows(data, tmp: Path) -> None:
    from autograd_lab.export.pretrained import load_cnn

    conv_model_rows(load_cnn(), "CNN (shipped pretrained, conv 8 + conv 16, batch norm folded, ReLU and 2x2 max pool "
                    "fused)", data, tmp / "cnn")


def ds_cnn_rows(data, tmp: Path, epochs: int = 4) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from ds_cnn import train

    model, _ = train(data, epochs=epochs)
    conv_model_rows(model, f"Depthwise-separable CNN (benchmarks/ds_cnn.py: conv 16, depthwise 3x3 16, pointwise "
                    f"16->32, dense; {epochs} epochs on the bundled MNIST)", data, tmp / "ds_cnn")


class BoardBuild(NamedTuple):
    """One model exported as ``kind`` (float32 or int8) and run once on the Cortex-M4: its lowered steps, the
    generator's report, QEMU's executed PCs, the kernel calls among them, code size per function, the ELF and the
    model object's sizes."""

    steps: list
    gen: Any
    pcs: np.ndarray
    calls: list[tuple[int, int]]
    sizes: dict[str, int]
    elf: Path
    obj: Any


def board_builds(model, name: str, graph, calib: np.ndarray, x: np.ndarray, tmp: Path):
    """Yield ``(kind, BoardBuild)`` for float32, then int8 calibrated on ``calib``, each run on ``x[:1]``."""
    from autograd_lab.export import lower
    from autograd_lab.export.quantize import quantize_steps

    for kind, calibration in (("float32", None), ("int8", calib)):
        steps = lower(graph) if calibration is None else quantize_steps(graph, lower(graph), calibration)
        model_dir = tmp / kind
        gen = export_c(model, (1, 784), model_dir, name, calibration=calibration)
        pcs, (own,), sizes, elf = m4_trace(model_dir, name, x[:1], model_dir / "m4")
        obj = b.model_sizes(model_dir, name, "m4f", model_dir / "size")
        yield kind, BoardBuild(steps, gen, pcs, m4_calls(pcs, own), sizes, elf, obj)


def conv_model_rows(model, title: str, data, tmp: Path) -> None:
    from autograd_lab.export import lower, trace
    from autograd_lab.export.quantize import accuracy_report, quantize_steps

    graph = trace(model, (1, 784))
    print(f"\n{title}, one inference on the Cortex-M4 (QEMU mps2-an386, instructions counted from QEMU's execution "
          "log):")
    calib = data.x_train[:1000]
    report = accuracy_report(graph, lower(graph), quantize_steps(graph, lower(graph), calib), data.x_test,
                             data.y_test)
    print(f"  accuracy on the held-out images (the exporter's NumPy simulation): {report}")
    for kind, (steps, gen, pcs, calls, sizes, elf, obj) in board_builds(model, "cnn", graph, calib, data.x_test, tmp):
        names = mnemonics(elf)
        code = sum(sizes.values())
        print(f"  {kind}: {len(pcs):,} instructions per inference ({len(pcs) / gen.macs:.2f} per MAC over "
              f"{gen.macs:,} MACs); model object (arm-none-eabi-gcc -O2, M4F): flash {obj.flash:,} B (code "
              f"{code:,} B in the functions below, constants {gen.flash_bytes:,} B); arena {gen.arena_bytes:,} B; "
              f"stack {obj.stack} B")
        print("    code by function (bytes): " + ", ".join(f"{f} {n}" for f, n in sorted(sizes.items())))
        if len(calls) != len(steps):
            print(f"    (the trace has {len(calls)} kernel calls for {len(steps)} steps: some kernel was inlined "
                  "into predict, so no per-layer split)")
            continue
        for step, (first, end) in zip(steps, calls):
            count = end - first
            if step.kind in ("conv", "conv_q8", "conv_to_q8"):
                real = real_macs(step.params["geom"])
                goal = 2 if step.kind == "conv_q8" else 3
                met = "met" if count / step.macs <= goal and count / real <= goal else "NOT met"
                print(f"    {step.where}: {step.macs:,} MACs ({real:,} without the padding), {count:,} instructions,"
                      f" {count / step.macs:.2f} per MAC ({count / real:.2f} per MAC without the padding; goal <= "
                      f"{goal}: {met})")
                if step.kind != "conv_q8":
                    # a check of the count: every float MAC the kernel does (padding's included) is one vmla or vmul
                    fmacs = sum(names.get(int(pc), "").startswith(("vmla.f32", "vmul.f32")) for pc in pcs[first:end])
                    extra = " plus one vmul per output for its quantization" if step.kind == "conv_to_q8" else ""
                    print(f"      vmla/vmul executed in this layer: {fmacs:,} (its MACs with the padding's: "
                          f"{step.macs:,}{extra})")
            else:
                print(f"    {step.kind}: {count:,} instructions")


#: Layer kinds of the transformer report: step kinds -> the row they are counted in (int8 input quantization is
#: counted with its dense layer).
VIT_KINDS = {"dense": "dense (embedding, Q/K/V, output projection, feed-forward, head)",
             "quantize": "dense (embedding, Q/K/V, output projection, feed-forward, head)",
             "dense_q8": "dense (embedding, Q/K/V, output projection, feed-forward, head)",
             "bmm": "attention products Q.K^T (scaled) and P.V", "softmax": "softmax over the keys",
             "layer_norm": "layer norm", "gelu": "GELU (tanh form)", "add": "residual and position adds",
             "copy": "patch rearrangement (copy)", "mean": "mean of the tokens"}
BOARD_CHUNK = 500  # held-out images per QEMU run (1.5 MB of samples in the board's 4 MB of flash)


def vit_rows(data, tmp: Path) -> None:
    """The shipped vision transformer: accuracy, sizes, instructions per MAC by layer kind on the Cortex-M4, and
    the board against the host and NumPy over the whole held-out set."""
    from autograd_lab import Variable
    from autograd_lab.export import lower, trace
    from autograd_lab.export.pretrained import load_vit
    from autograd_lab.export.quantize import accuracy_report, quantize_steps
    from autograd_lab.modes import eval_mode

    model = load_vit()
    graph = trace(model, (1, 784))
    calib = data.x_train[:1000]
    with eval_mode():
        numpy_class = model(Variable.from_numpy(data.x_test)).data.argmax(axis=1)
    print("\nVision transformer (shipped pretrained, autograd_lab.export.pretrained.load_vit: 16 patches of 7x7, width "
          "64, 2 pre-norm layers of 4 heads, GELU tanh), one inference on the Cortex-M4 (QEMU mps2-an386):")
    report = accuracy_report(graph, lower(graph), quantize_steps(graph, lower(graph), calib), data.x_test,
                             data.y_test)
    print(f"  accuracy on the held-out images (the exporter's NumPy simulation, int8 calibrated on 1,000 training "
          f"images): {report}")
    print("  goals: model flash <= 128 KB, arena <= 48 KB, attention's matrix products <= 3 instructions per MAC "
          "(float32)")
    for kind, (steps, gen, pcs, calls, sizes, _, obj) in board_builds(model, "vit", graph, calib, data.x_test, tmp):
        model_dir = tmp / kind
        flash_ok = "met" if obj.flash <= 128 * 1024 else "NOT met"
        arena_ok = "met" if gen.arena_bytes <= 48 * 1024 else "NOT met"
        print(f"  {kind}: {len(pcs):,} instructions per inference ({len(pcs) / gen.macs:.2f} per MAC over "
              f"{gen.macs:,} MACs); model object (arm-none-eabi-gcc -O2, M4F): flash {obj.flash:,} B ({flash_ok}; "
              f"constants {gen.flash_bytes:,} B, code {sum(sizes.values()):,} B in the functions below); arena "
              f"{gen.arena_bytes:,} B ({arena_ok}); stack {obj.stack} B")
        print("    code by function (bytes): " + ", ".join(f"{f} {n}" for f, n in sorted(sizes.items())))
        if len(calls) != len(steps):
            print(f"    (the trace has {len(calls)} kernel calls for {len(steps)} steps: no per-layer split)")
        else:
            rows: dict[str, list[int]] = {}
            for step, (first, end), flash in zip(steps, calls, gen.step_flash):
                row = rows.setdefault(VIT_KINDS.get(step.kind, step.kind), [0, 0, 0, 0, 0])
                row[0] += 1 if step.kind != "quantize" else 0
                row[1] += step.macs
                row[2] += end - first
                row[3] += flash
                row[4] += 4 * step.output.size if step.output.dtype == "f32" else 0
            for label, (n, macs, count, flash, elements) in rows.items():
                per = (f"{count / macs:.2f} per MAC over {macs:,} MACs" if macs else
                       f"{count / max(elements // 4, 1):.1f} per output value")
                goal = ""
                if label.startswith("attention") and kind == "float32":
                    goal = f" (goal <= 3: {'met' if count / macs <= 3 else 'NOT met'})"
                print(f"    {label}: {n} step(s), {count:,} instructions, {per}{goal}; constants {flash:,} B")
        board_rows(model_dir, "vit", data.x_test, numpy_class, model_dir / "board")


def board_rows(model_dir: Path, name: str, x: np.ndarray, numpy_class: np.ndarray, work: Path) -> None:
    """Run the model on the Cortex-M4 board over all of ``x`` (chunks of BOARD_CHUNK images) and on the host with
    the same main.c; print whether every printed bit agrees and how often the board's class is NumPy's."""
    exe = work / "main_host"
    identical, agree = True, 0
    for start in range(0, len(x), BOARD_CHUNK):
        chunk = x[start:start + BOARD_CHUNK]
        b.write_samples_header(model_dir / "samples.h", name, chunk)
        elf, _ = b.build_mcu(model_dir, name, "m4f", work, model_dir / "samples.h")
        board = b.run_qemu(elf, "m4f", timeout=900)
        b.run(["gcc", *b.HOST_FLAGS, f"-I{model_dir}", str(b.MCU_DIR / "main.c"), str(model_dir / f"{name}.c"),
               "-o", str(exe), "-lm"], "host build of main.c")
        identical &= board == b.run([str(exe)], "host run").stdout.decode()
        classes = [int(m.group(1)) for m in re.finditer(r"^sample \d+ class (\d+)", board, re.M)]
        agree += int(np.sum(np.array(classes) == numpy_class[start:start + len(chunk)]))
    print(f"    on the board (QEMU mps2-an386) over the {len(x):,} held-out images: output bits identical to the "
          f"host build: {'yes' if identical else 'NO'}; class equal to NumPy's float32 model on {agree:,} of "
          f"{len(x):,}")


def main() -> int:
    data = load_bundled_mnist()
    if "--transformer-only" in sys.argv:
        with tempfile.TemporaryDirectory() as tmp:
            vit_rows(data, Path(tmp))
        return 0
    if "--cnn-only" in sys.argv:
        with tempfile.TemporaryDirectory() as tmp:
            cnn_rows(data, Path(tmp))
            ds_cnn_rows(data, Path(tmp))
        return 0
    model = MLP([784, 128, 10], rng=0)
    x = data.x_test[:10]
    print("Generated C for MLP 784-128-10 (ReLU); OPENBLAS_NUM_THREADS=1 (NumPy is not timed here).")
    print("Goals: host float <= 2, Cortex-M4 float <= 3, Cortex-M4 int8 <= 1.5 instructions per MAC.\n")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for kind, calibration in (("float32", None), ("int8", data.x_train[:1000])):
            model_dir = Path(tmp) / kind
            gen = export_c(model, (1, 784), model_dir, "mnist", calibration=calibration)
            host = host_instructions_per_mac(model_dir, "mnist", gen.macs, x, model_dir / "host")
            m4 = m4_instructions_per_mac(model_dir, "mnist", gen.macs, x, model_dir / "m4")
            print(f"{kind:8s} {gen.macs} MACs/inference: host (x86-64, gcc -O2, callgrind) {host:.2f} instr/MAC, "
                  f"Cortex-M4 (QEMU mps2-an386) {m4:.2f} instr/MAC; constants {gen.flash_bytes} B, "
                  f"arena {gen.arena_bytes} B")
            for target in ("m3", "m4f", "m7"):
                s = b.model_sizes(model_dir, "mnist", target, model_dir / f"size_{target}")
                rows.append((target, kind, s.flash, s.ram, s.stack))
    with tempfile.TemporaryDirectory() as tmp:
        cnn_rows(data, Path(tmp))
        ds_cnn_rows(data, Path(tmp))
        vit_rows(data, Path(tmp))
    print("\nSize of the model object (arm-none-eabi-gcc -O2; flash = text + data, RAM = data + bss, stack = "
          "predict + deepest kernel from -fstack-usage):")
    print(f"{'target':8s} {'model':8s} {'flash B':>9s} {'RAM B':>7s} {'stack B':>8s}")
    for target, kind, flash, ram, stack in rows:
        print(f"{target:8s} {kind:8s} {flash:9d} {ram:7d} {stack:8d}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
