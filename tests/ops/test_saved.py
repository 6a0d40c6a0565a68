"""Every operator of the package declares exactly what its forward saves (issue 21, item 5).

The declaration is one class attribute, ``saved = ("_name", ...)``: the attributes ``forward`` sets on ``self`` for
``backward`` (beyond ``inputs`` and ``output``, which the base class keeps); a per-shape cache that may outlive the
call is declared as ``cached = (...)`` instead. Release (eager), replay and the exporter read them. Each op's forward
is run here, in each of its modes, and the attributes it set are compared with the declarations; a new operator class
of the package fails ``test_every_operator_class_has_a_case`` until a case is added below.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable

import numpy as np
import pytest

import autograd_lab
from autograd_lab import Engine, Operator, Variable, eval_mode
from autograd_lab import ops as O
from autograd_lab.ops import RunningStats

RNG = np.random.default_rng(21)
#: The base class's own per-call attributes (Operator.__call__ and run_backward), not the op's saved state.
BASE = {"inputs", "output", "_called", "_versions", "_created_at", "_needs"}


def r(*shape: int) -> np.ndarray:
    return RNG.uniform(0.5, 1.5, size=shape)


# name -> (make the op, the input values, run in training mode?)
Case = tuple[Callable[[], Operator], Callable[[], list[np.ndarray]], bool]
CASES: dict[str, Case] = {
    "AddOp": (O.AddOp, lambda: [r(2, 3), r(3)], True),
    "AbsOp": (O.AbsOp, lambda: [r(2, 3) - 1], True),
    "GELUOp": (O.GELUOp, lambda: [r(2, 3) - 1], True),
    "GELUOp, tanh form": (lambda: O.GELUOp("tanh"), lambda: [r(2, 3) - 1], True),
    "EmbeddingOp": (O.EmbeddingOp, lambda: [r(5, 3), np.array([[0.0, 4.0], [4.0, 1.0]])], True),
    "ClipOp": (lambda: O.ClipOp(0.8, 1.2), lambda: [r(2, 3)], True),
    "ConcatenateOp": (lambda: O.ConcatenateOp(axis=1), lambda: [r(2, 3), r(2, 2)], True),
    "IndexOp": (lambda: O.IndexOp((slice(None, None, 2), None, ...)), lambda: [r(4, 3)], True),
    "LogSumExpOp": (lambda: O.LogSumExpOp(axis=1), lambda: [r(2, 3)], True),
    "MaximumOp": (O.MaximumOp, lambda: [r(2, 3), r(3)], True),
    "MinimumOp": (O.MinimumOp, lambda: [r(2, 3), r(3)], True),
    "StdOp": (lambda: O.StdOp(axis=0), lambda: [r(4, 3)], True),
    "VarOp": (lambda: O.VarOp(axis=0), lambda: [r(4, 3)], True),
    "WhereOp": (O.WhereOp, lambda: [np.array([[1.0, 0, 1], [0, 1, 0]]), r(2, 3), r(2, 3)], True),
    "MaxPool2DOp padded, with indices": (lambda: O.MaxPool2DOp(2, padding=1, return_indices=True),
                                         lambda: [r(1, 1, 5, 5)], True),
    "AvgPool2DOp padded, pads not counted": (lambda: O.AvgPool2DOp(2, padding=1, count_include_pad=False),
                                             lambda: [r(1, 1, 5, 5)], True),
    "Conv2DOp padded": (lambda: O.Conv2DOp(stride=1, padding=1), lambda: [r(1, 2, 5, 5), r(3, 2, 3, 3)], True),
    "SubOp": (O.SubOp, lambda: [r(2, 3), r(2, 3)], True),
    "MulOp": (O.MulOp, lambda: [r(2, 3), r(2, 3)], True),
    "DivOp": (O.DivOp, lambda: [r(2, 3), r(2, 3)], True),
    "NegOp": (O.NegOp, lambda: [r(2, 3)], True),
    "PowOp": (lambda: O.PowOp(2.0), lambda: [r(2, 3)], True),
    "PowOp with an exponent input": (O.PowOp, lambda: [r(2, 3), r(2, 3)], True),
    "MatMulOp": (lambda: O.MatMulOp(transpose_b=True), lambda: [r(2, 3), r(4, 3)], True),
    "ExpOp": (O.ExpOp, lambda: [r(2, 3)], True),
    "LogOp": (O.LogOp, lambda: [r(2, 3)], True),
    "SqrtOp": (O.SqrtOp, lambda: [r(2, 3)], True),
    "SigmoidOp": (O.SigmoidOp, lambda: [r(2, 3)], True),
    "TanhOp": (O.TanhOp, lambda: [r(2, 3)], True),
    "ReLUOp": (O.ReLUOp, lambda: [r(2, 3) - 1], True),
    "LeakyReLUOp": (O.LeakyReLUOp, lambda: [r(2, 3) - 1], True),
    "SumOp": (lambda: O.SumOp(axis=0), lambda: [r(2, 3)], True),
    "MeanOp": (O.MeanOp, lambda: [r(2, 3)], True),
    "MaxOp": (lambda: O.MaxOp(axis=1), lambda: [r(2, 3)], True),
    "ReshapeOp": (lambda: O.ReshapeOp((3, 2)), lambda: [r(2, 3)], True),
    "TransposeOp": (O.TransposeOp, lambda: [r(2, 3)], True),
    "BroadcastToOp": (lambda: O.BroadcastToOp((2, 3)), lambda: [r(3)], True),
    "SoftmaxOp": (O.SoftmaxOp, lambda: [r(2, 3)], True),
    "LogSoftmaxOp": (O.LogSoftmaxOp, lambda: [r(2, 3)], True),
    "SoftmaxCrossEntropyOp": (O.SoftmaxCrossEntropyOp, lambda: [r(4, 3), np.array([0.0, 2, 1, 0])], True),
    "SoftmaxCrossEntropyOp with probabilities": (O.SoftmaxCrossEntropyOp,
                                                 lambda: [r(4, 3), np.full((4, 3), 1 / 3)], True),
    "MSELossOp": (O.MSELossOp, lambda: [r(2, 3), r(2, 3)], True),
    "DropoutOp": (lambda: O.DropoutOp(0.5, rng=np.random.default_rng(0)), lambda: [r(2, 3)], True),
    "DropoutOp in evaluation": (lambda: O.DropoutOp(0.5), lambda: [r(2, 3)], False),
    "LayerNormOp": (O.LayerNormOp, lambda: [r(2, 3), r(3), r(3)], True),
    "BatchNormOp": (lambda: O.BatchNormOp(RunningStats(3, np.float64)), lambda: [r(4, 3), r(3), r(3)], True),
    "BatchNormOp in evaluation": (lambda: O.BatchNormOp(RunningStats(3, np.float64)),
                                  lambda: [r(4, 3), r(3), r(3)], False),
    "Conv2DOp": (lambda: O.Conv2DOp(padding=1), lambda: [r(2, 3, 5, 5), r(4, 3, 3, 3)], True),
    "MaxPool2DOp": (lambda: O.MaxPool2DOp(2), lambda: [r(1, 2, 4, 4)], True),
    "AvgPool2DOp": (lambda: O.AvgPool2DOp(2), lambda: [r(1, 2, 4, 4)], True),
    "SliceOp": (lambda: O.SliceOp(0, 2), lambda: [r(2, 3, 4)], True),
    "SelectOp": (lambda: O.SelectOp(1), lambda: [r(2, 3, 4)], True),
    "StackOp": (O.StackOp, lambda: [r(2, 4), r(2, 4), r(2, 4)], True),
    "LSTMGatesOp": (O.LSTMGatesOp, lambda: [r(2, 8)], True),
    "LSTMCellStateOp": (lambda: O.LSTMCellStateOp(axis=-1), lambda: [r(2, 8), r(2, 2)], True),
    "LSTMCellStateOp from the zero state": (lambda: O.LSTMCellStateOp(axis=-1), lambda: [r(2, 8)], True),
    "LSTMHiddenOp": (lambda: O.LSTMHiddenOp(axis=-1), lambda: [r(2, 8), r(2, 2)], True),
}


def operator_classes() -> set[type[Operator]]:
    """Every concrete Operator subclass defined in the package (private bases such as _Pool2D are abstract)."""
    for module in pkgutil.walk_packages(autograd_lab.__path__, "autograd_lab."):
        if not module.name.endswith("__main__") and ".course" not in module.name:
            importlib.import_module(module.name)
    found: set[type[Operator]] = set()
    todo = [Operator]
    while todo:
        for cls in todo.pop().__subclasses__():
            todo.append(cls)
            if cls.__module__.startswith("autograd_lab.") and not cls.__name__.startswith("_"):
                found.add(cls)
    return found


def run_case(name: str) -> tuple[Operator, set[str], Variable]:
    """Call the op of case ``name`` on Variables; return it, the attributes its forward set or replaced, and its
    output."""
    make, values, training = CASES[name]
    op = make()
    before = dict(vars(op))
    inputs = [Variable.from_numpy(v) for v in values()]
    if training:
        out = op(*inputs)
    else:
        with eval_mode():
            out = op(*inputs)
    set_by_forward = {k for k, v in vars(op).items() if k not in before or before[k] is not v} - BASE
    return op, set_by_forward, out


def test_every_operator_class_has_a_case():
    covered = {type(CASES[name][0]()) for name in CASES}
    missing = sorted(cls.__name__ for cls in operator_classes() - covered)
    assert not missing, f"add a case to CASES for {missing}"


@pytest.mark.parametrize("name", list(CASES))
def test_forward_sets_only_what_its_class_declares_as_saved(name):
    op, set_by_forward, _ = run_case(name)
    undeclared = set_by_forward - set(type(op).saved) - set(type(op).cached)
    assert not undeclared, f"{type(op).__name__}.forward sets {sorted(undeclared)}: add them to its `saved`"
    assert not set(type(op).saved) & set(type(op).cached), "a name is either saved or cached"


def test_every_declared_name_is_set_by_forward_in_some_mode():
    """No stale names: each name in a declaration is set by at least one case of its class."""
    seen: dict[type, set[str]] = {}
    for name in CASES:
        op, set_by_forward, _ = run_case(name)
        seen.setdefault(type(op), set()).update(set_by_forward)
    for cls, names in seen.items():
        declared = set(cls.saved) | set(cls.cached)
        assert declared == names, f"{cls.__name__} declares {sorted(declared)}; its forward sets {sorted(names)}"


@pytest.mark.parametrize("name", list(CASES))
def test_backward_then_release_leaves_nothing_of_the_call(name):
    """After Engine.backward the op holds none of the call's values (nor anything its backward added)."""
    op, _, out = run_case(name)
    config = op.config()
    grad = np.ones(out.shape, out.dtype) if out.size != 1 else None
    Engine.backward(out, grad=grad)
    left = {k for k in vars(op) if k in op.saved or k == "output"} | ({"inputs"} if op.inputs else set())
    added = {k for k, v in vars(op).items() if k.startswith("_") and k not in BASE and isinstance(v, np.ndarray)}
    assert not left and not added, f"{type(op).__name__} still holds {sorted(left | added)} after release"
    assert op.config() == config
