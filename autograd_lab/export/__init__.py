"""C code generation for trained graphs: float32 or int8 C99 with static memory, for hosts and microcontrollers.

Typical use::

    from autograd_lab.export import export_c
    gen = export_c(model, input_shape=(1, 784), out_dir="build/mnist", name="mnist")
    print(gen.flash_bytes, gen.arena_bytes)          # also #defined in build/mnist/mnist.h

The pipeline, one module per step: :mod:`~.trace` (run the model on a placeholder, walk the graph in topological
order), :mod:`~.lower` (one kernel per node, fused dense layers, weight layout), :mod:`~.quantize` (optional int8),
:mod:`~.memory` (arena planning), :mod:`~.codegen` (the C text), :mod:`~.build` (compile and run it: host, Cortex-M,
QEMU). See docs/mcu.md.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from autograd_lab.export.codegen import GeneratedC, generate
from autograd_lab.export.errors import ExportError
from autograd_lab.export.lower import Step, lower
from autograd_lab.export.trace import SUPPORTED_OPS, Graph, graph_from_root, trace
from autograd_lab.variable import Variable

__all__ = [
    "SUPPORTED_OPS",
    "ExportError",
    "GeneratedC",
    "Graph",
    "export_c",
    "graph_from_root",
    "graph_to_c",
    "trace",
    "write_c",
]


def graph_to_c(graph: Graph, name: str = "model", *, calibration: np.ndarray | None = None,
               description: str = "") -> GeneratedC:
    """Generate C for a traced graph; with ``calibration`` (inputs, shape (N, *input_shape[1:]) or (N, input
    size)), the dense layers are quantized to int8 with activation scales calibrated on those inputs.

    Raises:
        ExportError: for a graph with nothing to compute, unsupported shapes, or (int8) empty calibration data.
    """
    steps: list[Step] = lower(graph)
    if not steps:
        raise ExportError("the graph has no operation to run: its output is its input")
    if calibration is not None:
        from autograd_lab.export.quantize import quantize_steps

        steps = quantize_steps(graph, steps, calibration)
    return generate(graph, steps, name, description)


def write_c(gen: GeneratedC, out_dir: str | Path) -> list[Path]:
    """Write ``<name>.h`` and ``<name>.c`` into ``out_dir`` (created if needed); return their paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / f"{gen.name}.h", out / f"{gen.name}.c"]
    paths[0].write_text(gen.header)
    paths[1].write_text(gen.source)
    return paths


def export_c(model: Callable[[Variable], Variable], input_shape: tuple[int, ...], out_dir: str | Path | None = None,
             name: str = "model", *, calibration: np.ndarray | None = None, description: str = "") -> GeneratedC:
    """Trace ``model`` at ``input_shape``, generate C (int8 when ``calibration`` inputs are given) and, if
    ``out_dir`` is given, write the files there.

    Raises:
        ExportError: naming the op and node, for anything the exporter cannot express in C.
    """
    gen = graph_to_c(trace(model, input_shape), name, calibration=calibration, description=description)
    if out_dir is not None:
        write_c(gen, out_dir)
    return gen
