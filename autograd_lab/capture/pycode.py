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
``forward`` and ``backward`` methods in the same order, and sums gradients in the same order as
:meth:`Engine.backward`, so its results are bit-identical to eager execution and to the loop.
:attr:`Replay.source` shows the generated text.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from autograd_lab.capture.errors import ReplayShapeError
from autograd_lab.capture.ir import CONST, PARAM, Program
from autograd_lab.engine import _store_leaf_grads
from autograd_lab.errors import ShapeError
from autograd_lab.variable import _as_leaf_array

#: What a replayed op's ``output`` points to between runs (its real output is dropped with the step).
RELEASED = np.empty(0)
RELEASED.setflags(write=False)


def python_source(program: Program) -> tuple[str, dict[str, Any]]:
    """The source of a function ``replay_step(a0, a1, ..., copy)`` that replays ``program`` once, and the global
    names it uses (the operators, their bound methods, the leaves, dtypes and helpers).

    The function returns the list of output values (read-only arrays) and, for a program with a backward pass,
    adds the gradients into the Parameters' ``.grad`` as :meth:`Replay.run` does.
    """
    values = program.values
    env: dict[str, Any] = {
        "ndarray": np.ndarray, "asarray": np.asarray, "leaf_array": _as_leaf_array, "RELEASED": RELEASED,
        "store_leaf_grads": _store_leaf_grads, "ShapeError": ShapeError,
        "wrong_argument": _wrong_argument(program), "forward_failed": _forward_failed(program),
        "check_count": _check_count(program), "check_grad": _check_grad(program),
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
        _backward_lines(program, env, add, dtype_name)
    outputs = ", ".join(f"v{i}" for i in program.outputs)
    add(f"        return [{outputs}]")
    add("    except ValueError as exc:")
    add("        if node < 0 or isinstance(exc, ShapeError): raise")
    add("        raise forward_failed(node, exc) from exc")
    add("    finally:")
    add("        # drop what the ops saved, so that each Parameter's array is held by the Parameter alone again")
    for node in program.nodes:
        add(f"        op{node.index}.inputs = (); op{node.index}.output = RELEASED")
    if not program.nodes:
        add("        pass")
    return "\n".join(lines) + "\n", env


def _backward_lines(program: Program, env: dict[str, Any], add: Callable[[str], None],
                    dtype_name: Callable[[np.dtype], str]) -> None:
    """The backward pass: Engine.backward's order and sums, unrolled (see :func:`python_source`)."""
    values = program.values
    loss = program.loss
    assert loss is not None
    env["seed"] = np.ones(values[loss].shape, dtype=values[loss].dtype)
    count: dict[int, int] = {loss: 1}  # contributions received so far, per value slot
    add("        # backward, root first: each node's gradient is complete before its backward runs")
    add(f"        g{loss} = seed.copy()")
    for k in program.backward_order:
        node = program.nodes[k]
        env[f"backward{k}"] = node.op.backward
        add(f"        grads = backward{k}(g{node.output})  # {_comment(node.op_class)}")
        add(f"        del g{node.output}")
        # The count and None checks cost nothing on the common path (a list of arrays), and without them a None
        # became a 0-d NaN gradient (asarray(None).astype(float)) and a missing one an IndexError.
        add(f"        if type(grads) is not list or len(grads) != {len(node.inputs)}: grads = check_count({k}, grads)")
        for position, (i, need) in enumerate(zip(node.inputs, node.needs or ())):
            if not need:
                continue
            # As Engine.backward: the first gradient is stored as received; the second makes a new array (the
            # first may be shared, AddOp hands gy to both inputs), which later ones are added into.
            seen = count.get(i, 0)
            count[i] = seen + 1
            target = f"g{i}" if seen == 0 else "t"
            add(f"        {target} = grads[{position}]")
            add(f"        if type({target}) is not ndarray: {target} = check_grad({k}, {position}, {target})")
            dtype = dtype_name(values[i].dtype)
            add(f"        if {target}.dtype != {dtype}: {target} = {target}.astype({dtype})")
            if seen == 1:
                add(f"        g{i} = asarray(g{i} + t)")
            elif seen > 1:
                add(f"        g{i} += t")
    wanted = [i for i in program.wrt if count.get(i)]
    # Arrays this pass made (a sum, or the seed of a loss that is itself a wanted leaf) need no defensive copy.
    env["owned"] = {values[i].leaf for i in wanted if count[i] > 1 or i == loss}
    for i in wanted:
        env[f"leaf{i}"] = values[i].leaf
    pairs = ", ".join(f"leaf{i}: g{i}" for i in wanted)
    add("        # the Parameters' gradients, stored as Engine.backward stores them")
    add(f"        store_leaf_grads({{{pairs}}}, owned)")


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


def count_error(op_class: str, n_inputs: int, grads: Any) -> ShapeError:
    """The error for a backward that did not return a list or tuple of one gradient per input."""
    got = len(grads) if isinstance(grads, (list, tuple)) else type(grads).__name__
    return ShapeError(f"{op_class}.backward must return one gradient per input ({n_inputs}), got {got}")


def none_error(op_class: str, position: int) -> ShapeError:
    """The error for a backward that returned None where a gradient is needed."""
    return ShapeError(f"{op_class}.backward returned None for input {position}, whose gradient is needed")


def _wrong_argument(program: Program) -> Callable[[int, np.ndarray], None]:
    def wrong_argument(k: int, x: np.ndarray) -> None:
        v = program.values[program.inputs[k]]
        raise argument_error(v.label(), x, v.shape, v.dtype)
    return wrong_argument


def _check_count(program: Program) -> Callable[[int, Any], list[Any]]:
    def check_count(k: int, grads: Any) -> list[Any]:
        n = len(program.nodes[k].inputs)
        if isinstance(grads, (list, tuple)) and len(grads) == n:
            return list(grads)
        raise count_error(program.nodes[k].op_class, n, grads)
    return check_count


def _check_grad(program: Program) -> Callable[[int, int, Any], np.ndarray]:
    def check_grad(k: int, position: int, g: Any) -> np.ndarray:
        if g is None:
            raise none_error(program.nodes[k].op_class, position)
        return np.asarray(g)
    return check_grad


def _forward_failed(program: Program) -> Callable[[int, Exception], ShapeError]:
    def forward_failed(k: int, exc: Exception) -> ShapeError:
        return ShapeError(f"replay: node {k} ({program.nodes[k].op_class}) failed: {exc}")
    return forward_failed
