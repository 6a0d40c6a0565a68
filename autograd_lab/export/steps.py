"""Step: one kernel call of a lowered program, what :mod:`autograd_lab.export.lower` and
:mod:`autograd_lab.export.conv` produce and the memory planner, simulator and code generator read."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from autograd_lab.export.trace import Tensor

#: Steps whose output may overwrite their first input (each element is read before it is written).
IN_PLACE_KINDS = frozenset({"relu", "leaky_relu", "sigmoid", "tanh", "softmax", "log_softmax", "layer_norm", "add",
                            "mul", "gelu"})


@dataclass(eq=False)
class Step:
    """One kernel call: ``output = kind(inputs; params)``. ``macs`` counts multiply-accumulates (for benchmarks)."""

    kind: str
    inputs: list[Tensor]
    output: Tensor
    params: dict[str, Any] = field(default_factory=dict)
    where: str = ""
    macs: int = 0
    scratch: list[Tensor] = field(default_factory=list)  # buffers the kernel needs during this step only

    @property
    def in_place_ok(self) -> bool:
        """Whether the output may share the first input's buffer."""
        if self.kind in ("add", "mul"):
            return bool(self.params.get("a_full"))
        return self.kind in IN_PLACE_KINDS
