"""Plan: a function captured once per input signature and replayed afterwards (what ``autograd-lab train`` uses).

    from autograd_lab.capture import Plan
    step = Plan(lambda x, y: cross_entropy(model(x), y), wrt=model.parameters())
    loss = step(x_batch, y_batch)        # forward + backward; the Parameters' .grad are filled
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from autograd_lab.capture.capture import capture, check_same_structure
from autograd_lab.capture.errors import CaptureError
from autograd_lab.capture.ir import Program
from autograd_lab.capture.replay import Replay
from autograd_lab.config import Config
from autograd_lab.variable import Parameter


class Plan:
    """``fn`` captured once per input signature and replayed afterwards: call it as you would call ``fn`` (with
    arrays). Returns the outputs as read-only arrays (a tuple if ``fn`` returns a tuple).

    The first call with a new signature (argument shapes and dtypes, and ``Config.is_training``) captures; with
    ``verify=True`` (default) the second call with it captures again and compares the two programs
    (:func:`~autograd_lab.capture.check_same_structure`); later calls replay. Each call, capture or replay, is one
    complete step with the same results as running ``fn`` and ``Engine.backward`` eagerly.

    Args:
        fn, wrt, backward, copy: as for :func:`~autograd_lab.capture.capture`.
        verify: capture twice before replaying (see above).

    Attributes:
        captures: how many captures ran so far. program: the Program used by the last call.
        replay: the :class:`Replay` made for the last call's signature (None while that signature is still being
            verified); ``plan.replay.source`` is the generated Python.

    Raises:
        CaptureError: see :func:`~autograd_lab.capture.capture` and :func:`check_same_structure`.
    """

    def __init__(self, fn: Callable[..., Any], *, wrt: Iterable[Parameter] | None = None, backward: bool = True,
                 copy: bool = True, verify: bool = True) -> None:
        self.fn = fn
        self.wrt = None if wrt is None else list(wrt)
        self.backward = backward
        self.copy = copy
        self.verify = verify
        self.captures = 0
        self.program: Program | None = None
        self.replay: Replay | None = None
        self._replays: dict[object, Replay] = {}
        self._first: dict[object, Program] = {}

    def __call__(self, *args: Any) -> Any:
        key = (Config.is_training, tuple([_signature(a) for a in args]))
        replay = self._replays.get(key)
        if replay is not None:
            outputs = replay.run(*args, copy=self.copy)
            program = replay.program
            self.replay = replay
        else:
            program, outputs = capture(self.fn, *args, wrt=self.wrt, backward=self.backward, copy=self.copy)
            self.captures += 1
            first = self._first.pop(key, None)
            if self.verify and first is None:
                self._first[key] = program
            else:
                if first is not None:
                    check_same_structure(first, program)
                self._replays[key] = Replay(program)
            self.replay = self._replays.get(key)
        self.program = program
        return tuple(outputs) if program.returns_tuple else outputs[0]


def _signature(a: Any) -> tuple[tuple[int, ...], np.dtype]:
    if type(a) is not np.ndarray:
        a = np.asarray(a)
    if a.dtype.kind not in "fiub":
        raise CaptureError(f"a captured function takes numeric arrays, got dtype {a.dtype}")
    return a.shape, a.dtype
