"""The plan printed as Python: one straight-line function that replays a Program.

:class:`~autograd_lab.capture.Replay` walks a Program with a loop: for each node, look up its slots, call its
``forward``, store the result. That loop is the clearest statement of what replay does, and its bookkeeping (building
argument tuples, indexing slot lists, looking at which gradients a node must produce) is repeated on every step
although it never changes. Here the loop is run once, at capture time, and what it would do is written out as the
source of a Python function, one or a few lines per node:

.. code-block:: python

    v3 = forward0(v0, v2)  # node3 (64, 128) float32 = MatMulOp(transpose_a=False, transpose_b=True)(input0, ...)
    if type(v3) is not ndarray: v3 = asarray(v3)
    v3.setflags(write=False)
    op0.inputs = (v0, v2); op0.output = v3

This is what a compiler does with a graph (the C exporter prints the same Program as C, :mod:`autograd_lab.export`):
the decisions are taken once, and the program that remains only computes. The function calls the same operators'
``forward`` and ``run_backward`` methods in the same order, and sums gradients in the same order and with the same
function as :meth:`Engine.backward` (:func:`autograd_lab.gradients.add_gradient`, its count of gradients so far
written in as a number), so its results are bit-identical to eager execution and to the loop. Nothing of a rule
is restated here: each backward result is checked by ``run_backward``, sums are ``add_gradient``'s, the Parameters
get their gradients from ``store_leaf_grads``, and each op is released by its own ``release``.
:attr:`Replay.source` shows the generated text.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from autograd_lab.capture.errors import ReplayShapeError
from autograd_lab.capture.ir import CONST, PARAM, Program
from autograd_lab.errors import ShapeError
from autograd_lab.gradients import add_gradient, store_leaf_grads
from autograd_lab.variable import as_leaf_array


def python_source(program: Program) -> tuple[str, dict[str, Any]]:
    """The source of a function ``replay_step(a0, a1, ..., copy)`` that replays ``program`` once, and the global
    names it uses (the operators, their bound methods, the leaves, dtypes and helpers).

    The function returns the list of output values (read-only arrays) and, for a program with a backward pass,
    adds the gradients into the Parameters' ``.grad`` as :meth:`Replay.run` does.
    """
    values = program.values
    env: dict[str, Any] = {
        "ndarray": np.ndarray, "asarray": np.asarray, "leaf_array": as_leaf_array, "add_gradient": add_gradient,
        "store_leaf_grads": store_leaf_grads, "ShapeError": ShapeError,
        "wrong_argument": _wrong_argument(program), "forward_failed": _forward_failed(program),
    }

    def dtype_name(dtype: np.dtype) -> str:  # a global name per dtype: float32, or dtype_be_f4 for a big-endian one
        key = dtype.name if dtype.isnative else f"dtype_{dtype.str.replace('<', 'le_').replace('>', 'be_')}"
        env[key] = dtype
        return key

    lines = [f"def replay_step({''.join(f'a{k}, ' for k in range(len(program.inputs)))}copy=True):"]
    add = lines.append
    add("    # the arguments, as placeholders of the captured shapes and dtypes")
    for k, i in enumerate(program.inputs):
        v = values[i]
        env[f"label{k}"] = v.label()  # a name is data, never source text: repr() of a str subclass may be anything
        add(f"    v{i} = leaf_array(a{k}, label{k}, copy)  # {_comment(v.label())}")
        shape = tuple(int(n) for n in v.shape)  # plain ints: only their repr enters the source
        add(f"    if v{i}.shape != {shape!r} or v{i}.dtype != {dtype_name(v.dtype)}: wrong_argument({k}, v{i})")
    leaves = [v for v in values if v.kind in (PARAM, CONST)]
    if leaves:
        add("    # Parameters and constants: their values now (an optimizer may have changed them since the capture)")
    for v in leaves:
        env[f"leaf{v.index}"] = v.leaf
        add(f"    v{v.index} = leaf{v.index}._data  # {_comment(v.label())}")

    add("    try:")
    add("        # forward, in the captured order")
    for node in program.nodes:
        k, out = node.index, node.output
        env[f"op{k}"], env[f"forward{k}"] = node.op, node.op.forward
        args = ", ".join(f"v{i}" for i in node.inputs)
        inputs = f"({args},)" if len(node.inputs) == 1 else f"({args})"
        labels = ", ".join(str(values[i].label()) for i in node.inputs)
        add(f"        node = {k}")
        add(f"        v{out} = forward{k}({args})  # {_comment(f'{values[out].label()} = {node.op!r}({labels})')}")
        add(f"        if type(v{out}) is not ndarray: v{out} = asarray(v{out})")
        add(f"        v{out}.setflags(write=False)")
        add(f"        op{k}.inputs = {inputs}; op{k}.output = v{out}")
    add("        node = -1")
    if program.loss is not None:
        _backward_lines(program, env, add)
    outputs = ", ".join(f"v{i}" for i in program.outputs)
    add(f"        return [{outputs}]")
    add("    except ValueError as exc:")
    add("        if node < 0 or isinstance(exc, ShapeError): raise")
    add("        raise forward_failed(node, exc) from exc")
    add("    finally:")
    add("        # release the ops (drop what they saved), so that each Parameter's array is held by it alone again")
    for node in program.nodes:
        env[f"release{node.index}"] = node.op.release
        add(f"        release{node.index}()")
    if not program.nodes:
        add("        pass")
    return "\n".join(lines) + "\n", env


def _backward_lines(program: Program, env: dict[str, Any], add: Callable[[str], None]) -> None:
    """The backward pass: Engine.backward's order, check and sums, unrolled (see :func:`python_source`)."""
    values = program.values
    loss = program.loss
    assert loss is not None
    env["seed"] = np.ones(values[loss].shape, dtype=values[loss].dtype)
    summed: dict[int, int] = {loss: 1}  # gradients received so far, per value slot: add_gradient's count
    add("        # backward, root first: each node's gradient is complete before its backward runs")
    add(f"        g{loss} = seed.copy()")
    for k in program.backward_order:
        node = program.nodes[k]
        env[f"backward{k}"] = node.op.run_backward
        needs = tuple(bool(need) for need in node.needs or ())  # plain bools: only their repr enters the source
        add(f"        grads = backward{k}(g{node.output}, {needs!r})  # {_comment(node.op_class)}, checked")
        add(f"        del g{node.output}")
        for position, (i, need) in enumerate(zip(node.inputs, node.needs or ())):
            if need:
                n = summed.get(i, 0)
                summed[i] = n + 1
                total = "None" if n == 0 else f"g{i}"
                add(f"        g{i} = add_gradient({total}, grads[{position}], {n})")
    wanted = [i for i in program.wrt if summed.get(i)]
    # Arrays this pass made (a sum, or the seed of a loss that is itself a wanted leaf) need no defensive copy.
    env["fresh"] = [values[i].leaf for i in wanted if summed[i] > 1 or i == loss]
    for i in wanted:
        env[f"leaf{i}"] = values[i].leaf
    pairs = ", ".join(f"leaf{i}: g{i}" for i in wanted)
    add("        # the Parameters' gradients, stored as Engine.backward stores them")
    add(f"        store_leaf_grads({{{pairs}}}, fresh)")


def compile_source(source: str, env: dict[str, Any]) -> Callable[..., list[np.ndarray]]:
    """Compile the text :func:`python_source` made and return the function it defines (``env`` becomes its globals).

    Raises:
        RecursionError: when the function is too large for CPython's compiler.
    """
    code = compile(source, "<generated replay>", "exec")
    exec(code, env)  # text generated from the Program's structure; names appear only in comments (see _comment)
    # Taken out of its own globals: a function in the dict it reads would be a reference cycle, kept (with the ops
    # and what they saved) until the garbage collector runs, instead of freed with its Replay.
    return env.pop("replay_step")  # type: ignore[no-any-return]


def _comment(text: str) -> str:
    """``text`` made safe and short for a comment on one line (a name may hold any character)."""
    # A plain str first: a name need not be a str, and a str subclass may redefine iteration.
    text = str.__str__(text if isinstance(text, str) else str(text))
    text = "".join(c if c.isprintable() else " " for c in text)
    return text if len(text) <= 100 else text[:97] + "..."


def argument_error(label: str, x: np.ndarray, shape: tuple[int, ...], dtype: np.dtype) -> ReplayShapeError:
    """The error for an argument whose shape or dtype is not the captured one (both replay paths raise it)."""
    return ReplayShapeError(f"argument {label} has shape {x.shape} and dtype {x.dtype}; the program was captured for "
                            f"shape {shape} and dtype {dtype} (capture again for new shapes)")


def _wrong_argument(program: Program) -> Callable[[int, np.ndarray], None]:
    def wrong_argument(k: int, x: np.ndarray) -> None:
        v = program.values[program.inputs[k]]
        raise argument_error(v.label(), x, v.shape, v.dtype)
    return wrong_argument


def _forward_failed(program: Program) -> Callable[[int, Exception], ShapeError]:
    def forward_failed(k: int, exc: Exception) -> ShapeError:
        return ShapeError(f"replay: node {k} ({program.nodes[k].op_class}) failed: {exc}")
    return forward_failed
