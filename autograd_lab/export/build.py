"""Compile and run generated C: on the host with gcc, for Cortex-M with arm-none-eabi-gcc, and on QEMU's MPS2 boards.

These helpers serve the tests, the benchmark and the command line. They need the tools on PATH (gcc; for the
microcontroller builds gcc-arm-none-eabi, libnewlib-arm-none-eabi and qemu-system-arm) and raise
:class:`BuildError` with the tool's own message when a step fails. The board files (startup, linker scripts,
main.c) live in ``examples/mcu`` of the source tree.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from autograd_lab.export.codegen import model_identifier, template
from autograd_lab.export.errors import ExportError
from autograd_lab.export.floats import f32_array_body

#: Host flags: ISO C99 without FMA contraction, so every product is rounded before its sum, as in NumPy.
HOST_FLAGS = ["-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-ffp-contract=off"]
CROSS_FLAGS = ["-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-ffp-contract=off",
               "-ffunction-sections", "-fdata-sections"]
MCU_DIR = Path(__file__).resolve().parents[2] / "examples" / "mcu"


@dataclass(frozen=True)
class Target:
    """A Cortex-M core: its compiler flags and the QEMU board that emulates it."""

    name: str
    cpu_flags: tuple[str, ...]
    board: str


TARGETS = {
    "m3": Target("m3", ("-mcpu=cortex-m3", "-mthumb", "-mfloat-abi=soft"), "mps2-an385"),
    "m4f": Target("m4f", ("-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16"), "mps2-an386"),
    "m7": Target("m7", ("-mcpu=cortex-m7", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv5-d16"), "mps2-an500"),
}


class BuildError(ExportError):
    """A compiler, linker or emulator step failed; the message carries the command and its output."""


@dataclass
class Sizes:
    """Bytes of a built object or program (GNU ``size``): flash = text + data, RAM = data + bss (static only), and
    the worst-case stack of ``<name>_predict`` from ``-fstack-usage`` (its frame plus its deepest kernel's)."""

    text: int
    data: int
    bss: int
    stack: int | None = None

    @property
    def flash(self) -> int:
        return self.text + self.data

    @property
    def ram(self) -> int:
        return self.data + self.bss


def run(cmd: list[str], what: str, timeout: float = 300, **kwargs: object) -> subprocess.CompletedProcess:
    """Run ``cmd``; raise BuildError naming ``what``, the command and its output if it fails or times out."""
    try:
        proc = subprocess.run(cmd, capture_output=True, timeout=timeout, **kwargs)  # type: ignore[call-overload]
    except FileNotFoundError as exc:
        raise BuildError(f"{what}: {cmd[0]} is not installed ({exc})") from exc
    except subprocess.TimeoutExpired as exc:
        raise BuildError(f"{what}: timed out after {timeout} s: {' '.join(cmd)}") from exc
    if proc.returncode != 0:
        out = "".join(s.decode(errors="replace") if isinstance(s, bytes) else s for s in (proc.stdout, proc.stderr))
        raise BuildError(f"{what} failed (exit {proc.returncode}): {' '.join(cmd)}\n{out[-4000:]}")
    return proc


def have_tools(*tools: str) -> bool:
    """True if every program is on PATH."""
    return all(shutil.which(t) for t in tools)


# -- host ------------------------------------------------------------------------------------------------------------
def build_host(model_dir: Path, name: str, work_dir: Path, extra_flags: tuple[str, ...] = ()) -> Path:
    """Compile ``<name>.c`` with a stdin/stdout driver into ``work_dir/<name>_host`` (flags: HOST_FLAGS)."""
    ident = model_identifier(name)
    work_dir.mkdir(parents=True, exist_ok=True)
    driver = work_dir / f"{ident}_host_main.c"
    driver.write_text(template("host_main").replace("@NAME@", ident).replace("@MACRO@", ident.upper()))
    exe = work_dir / f"{ident}_host"
    run(["gcc", *HOST_FLAGS, *extra_flags, f"-I{model_dir}", str(model_dir / f"{ident}.c"), str(driver),
         "-o", str(exe), "-lm"], "host build")
    return exe


def run_host(exe: Path, inputs: np.ndarray, output_size: int) -> np.ndarray:
    """Feed ``inputs`` (N, input size) to a host build; return its outputs, float32 (N, output_size)."""
    x = np.ascontiguousarray(inputs, dtype=np.float32)
    proc = run([str(exe)], "host run", input=x.tobytes())
    return np.frombuffer(proc.stdout, dtype=np.float32).reshape(len(x), output_size)


def undefined_symbols(path: Path, nm: str = "nm") -> list[str]:
    """The undefined symbols of an object or program (``nm -u``), e.g. to check that no malloc or printf is used."""
    return [line.split()[-1] for line in run([nm, "-u", str(path)], "nm").stdout.decode().splitlines() if line]


# -- microcontroller -------------------------------------------------------------------------------------------------
def write_samples_header(path: Path, name: str, inputs: np.ndarray) -> None:
    """Write the ``samples.h`` that ``examples/mcu/main.c`` includes: the model's names and the inputs (N, size)."""
    ident = model_identifier(name)
    x = np.asarray(inputs, dtype=np.float32).reshape(len(inputs), -1)
    rows = ",\n".join("{\n" + f32_array_body(row) + "\n}" for row in x)
    # A model called "model" already defines MODEL_INPUT_SIZE and MODEL_OUTPUT_SIZE: aliasing them would redefine them.
    sizes = "" if ident.upper() == "MODEL" else (f"#define MODEL_INPUT_SIZE {ident.upper()}_INPUT_SIZE\n"
                                                 f"#define MODEL_OUTPUT_SIZE {ident.upper()}_OUTPUT_SIZE\n")
    # The guard has lower-case letters, so no model's upper-case <NAME>_H guard can be the same macro.
    path.write_text(f"""/* Sample inputs for examples/mcu/main.c, written by autograd-lab. */
#ifndef al_samples_h
#define al_samples_h
#include "{ident}.h"
#define MODEL_PREDICT {ident}_predict
#define MODEL_ARGMAX {ident}_argmax
{sizes}#define SAMPLE_COUNT {len(x)}
static const float samples[SAMPLE_COUNT][MODEL_INPUT_SIZE] = {{
{rows}
}};
#endif
""")


def model_sizes(model_dir: Path, name: str, target: str, work_dir: Path) -> Sizes:
    """Compile the model alone for ``target`` and measure it: flash, static RAM and the stack of predict."""
    ident = model_identifier(name)
    work_dir.mkdir(parents=True, exist_ok=True)
    obj = work_dir / f"{ident}_{target}.o"
    run(["arm-none-eabi-gcc", *CROSS_FLAGS, *TARGETS[target].cpu_flags, "-fstack-usage", "-c",
         str(model_dir / f"{ident}.c"), "-o", str(obj)], f"cross compile for {target}")
    sizes = _size(obj)
    sizes.stack = predict_stack(obj.with_suffix(".su"), ident)
    return sizes


def predict_stack(su_file: Path, ident: str) -> int:
    """Worst-case stack bytes of ``<ident>_predict``: its own frame plus the largest frame of the (static, leaf)
    kernels it calls, from a ``-fstack-usage`` file. libm calls (expf...) are not counted."""
    frames: dict[str, int] = {}
    for line in su_file.read_text().splitlines():
        where, size, _kind = line.rsplit("\t", 2)
        frames[where.rsplit(":", 1)[-1]] = int(size)
    own = frames.pop(f"{ident}_predict")
    frames.pop(f"{ident}_argmax", None)
    return own + max(frames.values(), default=0)


def build_mcu(model_dir: Path, name: str, target: str, work_dir: Path, samples_header: Path,
              linker_script: str = "mps2.ld") -> tuple[Path, Sizes]:
    """Build ``examples/mcu`` (startup, main, the model) for ``target`` with ``linker_script`` from examples/mcu.

    Returns the ELF path and its sizes (stack: that of predict, from -fstack-usage).

    Raises:
        BuildError: on a compile or link failure; when the program does not fit the memory map, the message says
            which region overflowed and by how much.
    """
    ident = model_identifier(name)
    tgt = TARGETS[target]
    work_dir.mkdir(parents=True, exist_ok=True)
    elf = work_dir / f"{ident}_{target}.elf"
    common = [*CROSS_FLAGS, *tgt.cpu_flags, f"-I{model_dir}", f"-I{samples_header.parent}"]
    objs = []
    for i, src in enumerate((MCU_DIR / "startup.c", MCU_DIR / "main.c", model_dir / f"{ident}.c")):
        obj = work_dir / f"{i}_{src.stem}_{target}.o"  # numbered: a model may be called "startup"
        run(["arm-none-eabi-gcc", *common, "-fstack-usage", "-c", str(src), "-o", str(obj)],
            f"cross compile {src.name} for {target}")
        objs.append(obj)
    try:
        run(["arm-none-eabi-gcc", *tgt.cpu_flags, "-nostartfiles", "--specs=nano.specs", "--specs=rdimon.specs",
             f"-L{MCU_DIR}", f"-T{linker_script}", "-Wl,--gc-sections", *map(str, objs), "-lm",
             "-o", str(elf)], f"link for {target}")
    except BuildError as exc:
        over = re.search(r"region `(\w+)' overflowed by (\d+) bytes", str(exc))
        if over:
            raise BuildError(f"the program does not fit {linker_script}: region {over.group(1)} overflowed by "
                             f"{over.group(2)} bytes (the model is too big for this part)\n{exc}") from exc
        raise
    sizes = _size(elf)
    sizes.stack = predict_stack(objs[2].with_suffix(".su"), ident)
    return elf, sizes


def run_qemu(elf: Path, target: str, timeout: float = 120) -> str:
    """Run an ELF on the target's MPS2 board under QEMU with semihosting; return what it printed.

    Raises:
        BuildError: if QEMU exits non-zero (main returned non-zero, or a fault) or the run times out.
    """
    cmd = ["qemu-system-arm", "-M", TARGETS[target].board, "-nographic", "-monitor", "none",
           "-semihosting-config", "enable=on,target=native", "-kernel", str(elf)]
    return run(cmd, f"QEMU {TARGETS[target].board}", timeout=timeout).stdout.decode()


def _size(path: Path) -> Sizes:
    out = run(["arm-none-eabi-size", "-B", str(path)], "size").stdout.decode().splitlines()[1].split()
    return Sizes(int(out[0]), int(out[1]), int(out[2]))
