"""The op library's public names (issue 2) and the contract every op class follows."""

from __future__ import annotations

import pytest

import autograd_lab
from autograd_lab import Operator, ops

ISSUE_NAMES = [
    "AddOp", "SubOp", "MulOp", "DivOp", "NegOp", "PowOp", "MatMulOp",
    "ExpOp", "LogOp", "SqrtOp", "SigmoidOp", "TanhOp", "ReLUOp", "LeakyReLUOp",
    "SumOp", "MeanOp", "MaxOp", "ReshapeOp", "TransposeOp", "BroadcastToOp",
    "SoftmaxOp", "LogSoftmaxOp", "SoftmaxCrossEntropyOp", "DropoutOp", "LayerNormOp",
]  # fmt: skip
ISSUE_11_NAMES = ["Conv2DOp", "MaxPool2DOp", "AvgPool2DOp", "BatchNormOp"]


@pytest.mark.parametrize("name", [*ISSUE_NAMES, *ISSUE_11_NAMES, "MSELossOp"])
def test_every_op_is_exported_is_an_operator_and_documents_itself(name):
    cls = getattr(ops, name)
    assert issubclass(cls, Operator) and name in ops.__all__
    assert cls.__doc__ and len(cls.__doc__) > 10
    assert "forward" in vars(cls) and "backward" in vars(cls)


def test_only_dropout_and_batch_norm_depend_on_the_training_mode():
    assert sorted(n for n in ops.__all__ if getattr(ops, n).training_dependent) == ["BatchNormOp", "DropoutOp"]


def test_gradcheck_is_exported_from_the_package():
    assert callable(autograd_lab.gradcheck) and callable(autograd_lab.check_operator)
    assert issubclass(autograd_lab.GradcheckError, AssertionError)
