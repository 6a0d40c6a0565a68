"""autograd-lab: a computational-graph autograd engine written from scratch with NumPy.

The public names::

    from autograd_lab import Variable, Parameter, Operator, Engine
    from autograd_lab import no_grad, eval_mode, train_mode, detect_anomaly
    from autograd_lab.ops import MatMulOp, AddOp, ReLUOp, SoftmaxCrossEntropyOp, ...
"""

from autograd_lab.engine import Engine
from autograd_lab.errors import (
    AnomalyError,
    AutogradError,
    CycleError,
    GraphReleasedError,
    InPlaceModificationError,
    OperatorReuseError,
    ShapeError,
)
from autograd_lab.gradcheck import GradcheckError, check_operator, gradcheck
from autograd_lab.modes import detect_anomaly, eval_mode, no_grad, train_mode
from autograd_lab.operator import Operator
from autograd_lab.variable import Parameter, Variable

__version__ = "0.1.0"

__all__ = [
    "AnomalyError",
    "AutogradError",
    "CycleError",
    "Engine",
    "GradcheckError",
    "GraphReleasedError",
    "InPlaceModificationError",
    "Operator",
    "OperatorReuseError",
    "Parameter",
    "ShapeError",
    "Variable",
    "check_operator",
    "detect_anomaly",
    "eval_mode",
    "gradcheck",
    "no_grad",
    "train_mode",
]
