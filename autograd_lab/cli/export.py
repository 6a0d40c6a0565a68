"""``autograd-lab export-c MODEL.npz --out DIR``: write a trained MLP as C99 (float32 or int8) for a microcontroller."""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from autograd_lab.cli import int_at_least, load_model


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register the ``export-c`` subcommand."""
    p = subparsers.add_parser(
        "export-c", help="generate C code (float32 or int8) from a saved model",
        description="Generate <name>.h and <name>.c (C99, static memory) from a model saved by `train`. "
                    "See docs/mcu.md for building it for a Cortex-M board.")
    p.add_argument("model", type=Path, help="model file (.npz) written by `autograd-lab train`")
    p.add_argument("--out", type=Path, required=True, help="output directory (created if needed)")
    p.add_argument("--name", default="model",
                   help="C name prefix of the model (default: model); other characters than letters, digits and _ "
                        "become _, and a leading digit gets a t_ prefix")
    p.add_argument("--int8", action="store_true", help="quantize the dense layers to int8")
    p.add_argument("--calibration", type=int_at_least(1), default=1000, metavar="N",
                   help="training images used to calibrate int8 activation scales (default: 1000)")
    p.add_argument("--samples", type=int_at_least(0), default=0, metavar="N",
                   help="also write samples.h with N test images for examples/mcu/main.c")
    p.add_argument("--target", choices=["none", "host", "m3", "m4f", "m7"], default="none",
                   help="after writing, compile for this target and report sizes (host: also check the outputs "
                        "against NumPy on 100 test images); needs gcc or arm-none-eabi-gcc")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Export the model; print sizes and, for int8, the float vs int8 accuracy. Returns the exit status: 1 when the
    export or a build fails; a missing or damaged model file raises UsageError (exit 2)."""
    import numpy as np

    from autograd_lab.data import load_bundled_mnist
    from autograd_lab.export import ExportError, graph_to_c, trace, write_c
    from autograd_lab.export import build as b
    from autograd_lab.export.codegen import model_identifier
    from autograd_lab.export.lower import lower
    from autograd_lab.export.quantize import accuracy_report, quantize_steps
    from autograd_lab.export.simulate import predict

    model = load_model(args.model)
    ident = model_identifier(args.name)
    if ident != args.name:
        print(f"autograd-lab export-c: note: --name {args.name!r} is not a usable C identifier "
              f"({rename_reason(args.name, ident)}); the model is named {ident!r}", file=sys.stderr)
    try:
        from autograd_lab.training.models import input_output_sizes

        graph = trace(model, (1, input_output_sizes(model)[0]))  # an MLP or a CNN: both read flat images
        data = load_bundled_mnist()
        calibration = data.x_train[:args.calibration] if args.int8 else None
        steps = lower(graph) if calibration is None else quantize_steps(graph, lower(graph), calibration)
        if calibration is not None:
            report = accuracy_report(graph, lower(graph), steps, data.x_test, data.y_test)
            print(f"int8 vs float: {report}")
        gen = graph_to_c(graph, args.name, calibration=calibration, description=args.model.name)
        paths = write_c(gen, args.out)
        print(f"wrote {', '.join(str(p) for p in paths)}: {gen.flash_bytes} bytes of constants, "
              f"{gen.arena_bytes} bytes of arena, {gen.macs} multiply-accumulates per inference")
        if args.samples:
            b.write_samples_header(args.out / "samples.h", gen.name, data.x_test[:args.samples])
            print(f"wrote {args.out / 'samples.h'} ({args.samples} test images)")
        if args.target == "host":
            exe = b.build_host(args.out, gen.name, args.out / "build")
            x = data.x_test[:100]
            diff = np.abs(b.run_host(exe, x, gen.output_size) - predict(graph, steps, x)).max()
            print(f"host build {exe}: max |C - NumPy| over 100 test images = {diff:.3g}")
        elif args.target != "none":
            s = b.model_sizes(args.out, gen.name, args.target, args.out / "build")
            print(f"{args.target}: flash {s.flash} bytes (text {s.text} + data {s.data}), static RAM {s.ram} bytes, "
                  f"stack of {gen.name}_predict {s.stack} bytes")
    except (ExportError, OSError) as exc:
        print(f"autograd-lab export-c: error: {exc}", file=sys.stderr)
        return 1
    return 0


def rename_reason(name: str, ident: str) -> str:
    """Why ``model_identifier`` changed ``name`` into ``ident`` (C99 §6.4.2: letters, digits, _; no leading digit)."""
    reasons = []
    if re.search(r"[^A-Za-z0-9_]", name) or not name:
        reasons.append("C names use only letters, digits and _")
    if re.match(r"[_\W]*\d", name):
        reasons.append("C names cannot start with a digit")
    if name.startswith("_"):
        reasons.append("a leading _ is reserved for the C implementation")
    if ident.endswith(("_v", "_m")) and not name.endswith(("_v", "_m")):
        reasons.append("it is a C keyword or a name the generated code already uses")
    return "; ".join(reasons)
