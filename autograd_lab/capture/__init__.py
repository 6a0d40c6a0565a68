"""Define-and-run: capture one call of a function of Variables as a Program, then replay it on new data.

    from autograd_lab.capture import Plan
    step = Plan(lambda x, y: cross_entropy(model(x), y), wrt=model.parameters())
    loss = step(x_batch, y_batch)        # forward + backward; the Parameters' .grad are filled

The same Program is what the C exporter lowers (:mod:`autograd_lab.export.trace`). The tracing rule (which functions
can be captured) is in :mod:`autograd_lab.capture.capture`.
"""

from autograd_lab.capture.capture import capture, check_same_structure, program_from_graph
from autograd_lab.capture.errors import CaptureError, ReplayShapeError
from autograd_lab.capture.ir import Node, Program, Value
from autograd_lab.capture.plan import Plan
from autograd_lab.capture.replay import Replay

__all__ = ["CaptureError", "Node", "Plan", "Program", "Replay", "ReplayShapeError", "Value", "capture",
           "check_same_structure", "program_from_graph"]
