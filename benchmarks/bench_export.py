"""Benchmark of the generated C: instructions per multiply-accumulate, and a size table for Cortex-M3/M4F/M7.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_export.py [--cnn-only]   # gcc, valgrind, arm-none-eabi-gcc, QEMU

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
    for kind, calibration in (("float32", None), ("int8", calib)):
        steps = lower(graph) if calibration is None else quantize_steps(graph, lower(graph), calibration)
        model_dir = tmp / kind
        gen = export_c(model, (1, 784), model_dir, "cnn", calibration=calibration)
        pcs, (own,), sizes, elf = m4_trace(model_dir, "cnn", data.x_test[:1], model_dir / "m4")
        calls = m4_calls(pcs, own)
        names = mnemonics(elf)
        obj = b.model_sizes(model_dir, "cnn", "m4f", model_dir / "size")
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


def main() -> int:
    data = load_bundled_mnist()
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
    print("\nSize of the model object (arm-none-eabi-gcc -O2; flash = text + data, RAM = data + bss, stack = "
          "predict + deepest kernel from -fstack-usage):")
    print(f"{'target':8s} {'model':8s} {'flash B':>9s} {'RAM B':>7s} {'stack B':>8s}")
    for target, kind, flash, ram, stack in rows:
        print(f"{target:8s} {kind:8s} {flash:9d} {ram:7d} {stack:8d}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
