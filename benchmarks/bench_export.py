"""Benchmark of the generated C: instructions per multiply-accumulate, and a size table for Cortex-M3/M4F/M7.

    .venv/bin/python benchmarks/bench_export.py            # needs gcc, valgrind, gcc-arm-none-eabi, qemu-system-arm

Counts (goals from issue 4: host float <= 2, Cortex-M4 float <= 3 and int8 <= 1.5 instructions per MAC):
* host: callgrind's instruction count inside ``<name>_predict`` (``--toggle-collect``), over 10 inferences;
* Cortex-M4 (QEMU mps2-an386): one inference run with ``-singlestep -d nochain,exec``, so that QEMU logs every
  executed instruction, counted where the PC lies inside the model's functions (``<name>_predict`` and its kernels).
The model is an MLP 784-128-10 (ReLU), float32 and int8; instruction counts do not depend on the weights' values.
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


def m4_instructions_per_mac(model_dir: Path, name: str, macs: int, x: np.ndarray, work: Path) -> float:
    b.write_samples_header(model_dir / "samples.h", name, x[:1])
    elf, _ = b.build_mcu(model_dir, name, "m4f", work, model_dir / "samples.h")
    ranges = []
    for line in b.run(["arm-none-eabi-nm", "-S", "--defined-only", str(elf)], "nm").stdout.decode().splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in "tT" and (parts[3] == f"{name}_predict" or parts[3].startswith("al_")):
            start = int(parts[0], 16) & ~1
            ranges.append((start, start + int(parts[1], 16)))
    log = work / "exec.log"
    subprocess.run(["timeout", "300", "qemu-system-arm", "-M", "mps2-an386", "-nographic", "-monitor", "none",
                    "-semihosting-config", "enable=on,target=native", "-kernel", str(elf), "-singlestep",
                    "-d", "nochain,exec", "-D", str(log)], capture_output=True, check=True)
    pcs = np.array([int(m.group(1), 16) for m in re.finditer(r"^Trace \S+ \S+ \[[0-9a-f]+/([0-9a-f]+)/",
                                                              log.read_text(), re.M)], dtype=np.int64)
    log.unlink()
    inside = np.zeros(len(pcs), dtype=bool)
    for lo, hi in ranges:
        inside |= (pcs >= lo) & (pcs < hi)
    return int(inside.sum()) / macs


def main() -> int:
    data = load_bundled_mnist()
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
    print("\nSize of the model object (arm-none-eabi-gcc -O2; flash = text + data, RAM = data + bss, stack = "
          "predict + deepest kernel from -fstack-usage):")
    print(f"{'target':8s} {'model':8s} {'flash B':>9s} {'RAM B':>7s} {'stack B':>8s}")
    for target, kind, flash, ram, stack in rows:
        print(f"{target:8s} {kind:8s} {flash:9d} {ram:7d} {stack:8d}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
