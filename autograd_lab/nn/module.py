"""Module: the base class of layers and models, a container of Parameters and of other Modules.

A Module finds its Parameters by walking its attributes in the order they were assigned: a :class:`Parameter`
attribute is one of its own, a Module attribute (or a list of Modules) is searched in turn. Names are dotted paths
such as ``"layers.0.weight"``; they are the keys of :meth:`Module.state_dict` and of the saved ``.npz`` file.

``train()`` / ``eval()`` set a flag on the module and all its children. A module in evaluation mode runs its forward
inside :func:`autograd_lab.eval_mode`, so dropout is the identity there whatever the global mode.

Saved files (``model.save(path)``) are plain NumPy ``.npz`` archives: one array per parameter, plus ``__config__``, a
JSON string holding the class name and the constructor arguments, so ``MLP.load(path)`` rebuilds the model. They load
with ``allow_pickle=False``: no code runs when a file is opened.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from typing import Any, TypeVar

import numpy as np

from autograd_lab.modes import eval_mode
from autograd_lab.variable import Parameter, Variable

CONFIG_KEY = "__config__"
FORMAT_VERSION = 1
M = TypeVar("M", bound="Module")


class Module:
    """Base class: subclasses assign Parameters and sub-Modules as attributes in ``__init__`` and define ``forward``.

    Subclasses that can be saved and loaded also define :meth:`config` (the keyword arguments that rebuild them).
    """

    training: bool

    def __init__(self) -> None:
        self.training = True

    def forward(self, x: Variable) -> Variable:
        """Compute the output from ``x``. Subclasses implement this."""
        raise NotImplementedError(f"{type(self).__name__}.forward is not implemented")

    def __call__(self, x: Variable) -> Variable:
        """Run :meth:`forward`; in evaluation mode, inside ``eval_mode()``."""
        if self.training:
            return self.forward(x)
        with eval_mode():
            return self.forward(x)

    # -- structure -------------------------------------------------------------------------------------------------
    def named_children(self) -> Iterator[tuple[str, Module]]:
        """The direct sub-Modules, as (name, module); a list attribute ``layers`` gives ``layers.0``, ``layers.1``..."""
        for name, value in vars(self).items():
            if isinstance(value, Module):
                yield name, value
            elif isinstance(value, (list, tuple)):
                for i, item in enumerate(value):
                    if isinstance(item, Module):
                        yield f"{name}.{i}", item

    def named_parameters(self, prefix: str = "") -> Iterator[tuple[str, Parameter]]:
        """Every Parameter of this module and its children, as (dotted name, parameter), in assignment order."""
        for name, value in vars(self).items():
            if isinstance(value, Parameter):
                yield prefix + name, value
        for name, child in self.named_children():
            yield from child.named_parameters(f"{prefix}{name}.")

    def parameters(self) -> list[Parameter]:
        """The Parameters of :meth:`named_parameters`, as a list (what optimizers take)."""
        return [p for _, p in self.named_parameters()]

    def num_parameters(self) -> int:
        """Total number of trainable scalars."""
        return sum(p.size for p in self.parameters())

    def train(self: M, mode: bool = True) -> M:
        """Set training mode (``mode=True``) or evaluation mode on this module and every child; returns self."""
        self.training = mode
        for _, child in self.named_children():
            child.train(mode)
        return self

    def eval(self: M) -> M:
        """Evaluation mode (same as ``train(False)``): dropout becomes the identity. Returns self."""
        return self.train(False)

    # -- state -----------------------------------------------------------------------------------------------------
    def state_dict(self) -> dict[str, np.ndarray]:
        """A copy of every parameter's value, keyed by dotted name."""
        return {name: p.numpy() for name, p in self.named_parameters()}

    def load_state_dict(self, state: Mapping[str, np.ndarray], strict: bool = True) -> None:
        """Copy values into the parameters (in place, through ``Parameter.copy_``).

        Args:
            state: dotted name -> array of that parameter's shape.
            strict: require exactly this module's names (otherwise missing and extra keys are ignored).

        Raises:
            KeyError: in strict mode, listing missing and unexpected names.
            ValueError: if an array's shape differs from its parameter's (names both).
        """
        params = dict(self.named_parameters())
        if strict:
            missing = [k for k in params if k not in state]
            extra = [k for k in state if k not in params]
            if missing or extra:
                raise KeyError(f"{type(self).__name__}.load_state_dict: missing {missing}, unexpected {extra}")
        for name, p in params.items():
            if name not in state:
                continue
            value = np.asarray(state[name])
            if value.shape != p.shape:
                raise ValueError(
                    f"{type(self).__name__}.load_state_dict: {name!r} has shape {value.shape}, "
                    f"the model expects {p.shape}"
                )
            p.copy_(value)

    def config(self) -> dict[str, Any]:
        """Keyword arguments that rebuild this module (JSON-serialisable). Subclasses that can be saved define it."""
        raise NotImplementedError(f"{type(self).__name__} cannot be saved: it does not define config()")

    def save(self, path: str | os.PathLike[str], meta: Mapping[str, Any] | None = None) -> None:
        """Write the parameters and the config to ``path`` (a ``.npz`` file; NumPy adds the suffix if missing).

        Args:
            meta: extra JSON-serialisable facts to keep with the model (e.g. the data set it was trained on).
        """
        header = {"format": FORMAT_VERSION, "class": type(self).__name__, "config": self.config(),
                  "meta": dict(meta or {})}
        arrays: dict[str, np.ndarray] = {CONFIG_KEY: np.array(json.dumps(header))}
        arrays.update(self.state_dict())
        np.savez(path, **arrays)

    @classmethod
    def load(cls: type[M], path: str | os.PathLike[str]) -> M:
        """Rebuild a model saved with :meth:`save`: construct ``cls(**config)``, then load the parameters.

        Raises:
            ValueError: if the file has no config, was written by another class or by a newer format.
            KeyError, ValueError: as :meth:`load_state_dict` when the arrays do not fit the config.
        """
        header = read_header(path)
        if header["class"] != cls.__name__:
            raise ValueError(f"{path}: holds a {header['class']}, not a {cls.__name__}")
        model = cls(**header["config"])
        with np.load(path, allow_pickle=False) as archive:
            model.load_state_dict({k: archive[k] for k in archive.files if k != CONFIG_KEY})
        return model


def read_header(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The JSON header of a saved model: ``{"format", "class", "config", "meta"}``.

    Raises:
        ValueError: if the file has no ``__config__`` entry or its format is newer than this library reads.
    """
    with np.load(path, allow_pickle=False) as archive:
        if CONFIG_KEY not in archive.files:
            raise ValueError(f"{path}: not an autograd-lab model file (no {CONFIG_KEY} entry)")
        header = json.loads(str(archive[CONFIG_KEY]))
    if header.get("format", 0) > FORMAT_VERSION:
        raise ValueError(f"{path}: model format {header['format']} is newer than this library reads ({FORMAT_VERSION})")
    return header
