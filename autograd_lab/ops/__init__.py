"""The operator library. Each family lives in its own module; all classes are re-exported here."""

from autograd_lab.ops.arithmetic import AddOp, DivOp, MulOp, NegOp, PowOp, SubOp
from autograd_lab.ops.linalg import MatMulOp

__all__ = ["AddOp", "DivOp", "MatMulOp", "MulOp", "NegOp", "PowOp", "SubOp"]
