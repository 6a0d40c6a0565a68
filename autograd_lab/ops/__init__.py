"""The operator library. Each family lives in its own module; all classes are re-exported here.

``sum_to_shape`` (the gradient of broadcasting, used by every binary op) and ``RunningStats`` (batch norm's statistics
holder) are importable from here too; ``__all__`` lists the operator classes only.
"""

from autograd_lab.ops._broadcast import sum_to_shape as sum_to_shape
from autograd_lab.ops.arithmetic import AddOp, DivOp, MulOp, NegOp, PowOp, SubOp
from autograd_lab.ops.conv import Conv2DOp
from autograd_lab.ops.dropout import DropoutOp
from autograd_lab.ops.elementwise import (
    AbsOp,
    ClipOp,
    ExpOp,
    GELUOp,
    LeakyReLUOp,
    LogOp,
    ReLUOp,
    SigmoidOp,
    SqrtOp,
    TanhOp,
)
from autograd_lab.ops.embedding import EmbeddingOp
from autograd_lab.ops.gates import LSTMCellStateOp, LSTMGatesOp, LSTMHiddenOp
from autograd_lab.ops.indexing import ConcatenateOp, IndexOp, SelectOp, SliceOp, StackOp
from autograd_lab.ops.linalg import MatMulOp
from autograd_lab.ops.losses import MSELossOp, SoftmaxCrossEntropyOp
from autograd_lab.ops.normalization import BatchNormOp, LayerNormOp
from autograd_lab.ops.normalization import RunningStats as RunningStats
from autograd_lab.ops.pooling import AvgPool2DOp, MaxPool2DOp
from autograd_lab.ops.reduce import MaxOp, MeanOp, StdOp, SumOp, VarOp
from autograd_lab.ops.select import MaximumOp, MinimumOp, WhereOp
from autograd_lab.ops.shape import BroadcastToOp, ReshapeOp, TransposeOp
from autograd_lab.ops.softmax import LogSoftmaxOp, LogSumExpOp, SoftmaxOp

__all__ = [
    "AbsOp",
    "AddOp",
    "AvgPool2DOp",
    "BatchNormOp",
    "BroadcastToOp",
    "ClipOp",
    "ConcatenateOp",
    "Conv2DOp",
    "DivOp",
    "DropoutOp",
    "EmbeddingOp",
    "ExpOp",
    "GELUOp",
    "IndexOp",
    "LSTMCellStateOp",
    "LSTMGatesOp",
    "LSTMHiddenOp",
    "LayerNormOp",
    "LeakyReLUOp",
    "LogOp",
    "LogSoftmaxOp",
    "LogSumExpOp",
    "MSELossOp",
    "MatMulOp",
    "MaxOp",
    "MaxPool2DOp",
    "MaximumOp",
    "MeanOp",
    "MinimumOp",
    "MulOp",
    "NegOp",
    "PowOp",
    "ReLUOp",
    "ReshapeOp",
    "SelectOp",
    "SigmoidOp",
    "SliceOp",
    "SoftmaxCrossEntropyOp",
    "SoftmaxOp",
    "SqrtOp",
    "StackOp",
    "StdOp",
    "SubOp",
    "SumOp",
    "TanhOp",
    "TransposeOp",
    "VarOp",
    "WhereOp",
]
