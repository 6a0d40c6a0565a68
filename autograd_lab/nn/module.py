"""Module: the base class of layers and models, a container of Parameters and of other Modules.

A Module finds its Parameters by walking its attributes in the order they were assigned: a :class:`Parameter`
attribute is one of its own, a Module attribute (or a list of Modules) is searched in turn. Names are dotted paths
such as ``"layers.0.weight"``; they are the keys of :meth:`Module.state_dict` and of the saved ``.npz`` file.

``train()`` / ``eval()`` set a flag on the module and all its children. A module in evaluation mode runs its forward
inside :func:`autograd_lab.eval_mode`, so dropout is the identity there whatever the global mode.

State that is not trained but must be kept, a batch-norm layer's :class:`~autograd_lab.ops.RunningStats`, is found
the same way: a RunningStats attribute ``stats`` gives the buffers ``stats.mean`` and ``stats.var``
(:meth:`Module.named_buffers`). They are saved and loaded with the parameters; optimizers never see them.

Saved files (``model.save(path)``) are plain NumPy ``.npz`` archives: one array per parameter and buffer, plus
``__config__``, a JSON string holding the class name and the constructor arguments, so ``MLP.load(path)`` rebuilds
the model. They load with ``allow_pickle=False``: no code runs when a file is opened. A file that is not such a model
(damaged, edited, from elsewhere) raises :class:`ModelFileError`, whose message names the file and the fault.
"""

from __future__ import annotations

import json
import os
import zipfile
import zlib
from collections.abc import Iterator, Mapping
from typing import Any, TypeVar

import numpy as np

from autograd_lab.modes import eval_mode
from autograd_lab.ops.normalization import RunningStats
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

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Run :meth:`forward` with the same arguments; in evaluation mode, inside ``eval_mode()``."""
        if self.training:
            return self.forward(*args, **kwargs)
        with eval_mode():
            return self.forward(*args, **kwargs)

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

    def named_buffers(self, prefix: str = "") -> Iterator[tuple[str, RunningStats, str]]:
        """Every running-statistics array of this module and its children, as (dotted name, holder, attribute).

        A RunningStats attribute ``stats`` of ``layers.1`` gives ``("layers.1.stats.mean", stats, "mean")`` and
        ``("layers.1.stats.var", stats, "var")``.
        """
        for name, value in vars(self).items():
            if isinstance(value, RunningStats):
                yield f"{prefix}{name}.mean", value, "mean"
                yield f"{prefix}{name}.var", value, "var"
        for name, child in self.named_children():
            yield from child.named_buffers(f"{prefix}{name}.")

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
        """A copy of every parameter's value and of every buffer (running statistics), keyed by dotted name."""
        state = {name: p.numpy() for name, p in self.named_parameters()}
        state.update((name, np.array(getattr(holder, attr))) for name, holder, attr in self.named_buffers())
        return state

    def load_state_dict(self, state: Mapping[str, np.ndarray], strict: bool = True) -> None:
        """Copy values into the parameters (in place, through ``Parameter.copy_``) and the buffers (new arrays).

        Args:
            state: dotted name -> array of that parameter's (or buffer's) shape.
            strict: require exactly this module's names (otherwise missing and extra keys are ignored).

        Raises:
            KeyError: in strict mode, listing missing and unexpected names.
            ValueError: if an array's shape differs from its parameter's (names both).
        """
        params = dict(self.named_parameters())
        buffers = {name: (holder, attr) for name, holder, attr in self.named_buffers()}
        if strict:
            missing = [k for k in (*params, *buffers) if k not in state]
            extra = [k for k in state if k not in params and k not in buffers]
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
        for name, (holder, attr) in buffers.items():
            if name not in state:
                continue
            old = getattr(holder, attr)
            value = np.asarray(state[name])
            if value.shape != old.shape:
                raise ValueError(
                    f"{type(self).__name__}.load_state_dict: {name!r} has shape {value.shape}, "
                    f"the model expects {old.shape}"
                )
            new = value.astype(old.dtype, copy=True)  # a new array: the old one may be held elsewhere
            new.setflags(write=False)
            setattr(holder, attr, new)

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
        np.savez(path, allow_pickle=False, **arrays)  # load() refuses pickles too

    @classmethod
    def load(cls: type[M], path: str | os.PathLike[str]) -> M:
        """Rebuild a model saved with :meth:`save`: construct ``cls(**config)``, then load the parameters.

        Raises:
            FileNotFoundError: if there is no file at ``path`` (other ``OSError``: it cannot be read).
            ModelFileError: (a ValueError) if the file is not a model this class can load; the message names the file
                and the fault: not a ``.npz`` archive, empty or truncated, no or damaged config, written by another
                class or a newer format, a config the constructor refuses, missing or unexpected arrays, wrong
                shapes, non-numeric or non-finite (NaN/inf) weights.
        """
        header, arrays = read_model_file(path)
        if header["class"] != cls.__name__:
            raise ModelFileError(f"{path}: holds a {header['class']}, not a {cls.__name__}")
        try:
            model = cls(**header["config"])
        except (TypeError, ValueError) as exc:
            raise ModelFileError(f"{path}: its config {header['config']} does not build a {cls.__name__} ({exc}); "
                                 f"the file was edited or damaged") from exc
        for name, value in arrays.items():
            if not (np.issubdtype(value.dtype, np.floating) or np.issubdtype(value.dtype, np.integer)):
                raise ModelFileError(f"{path}: array {name!r} holds {value.dtype} values, not numbers")
            bad = int(np.count_nonzero(~np.isfinite(value)))
            if bad:
                raise ModelFileError(f"{path}: parameter {name!r} holds {bad} NaN/inf value(s) of {value.size}; the "
                                     f"model was probably saved after training diverged")
        try:
            model.load_state_dict(arrays)
        except (KeyError, ValueError) as exc:
            reason = exc.args[0] if exc.args else exc
            raise ModelFileError(f"{path}: the arrays do not fit the config {header['config']}: {reason}") from exc
        return model


class ModelFileError(ValueError):
    """A file given to :meth:`Module.load` or :func:`read_header` is not a usable saved model.

    The message starts with the path and says what is wrong with the file. A ValueError, so code that caught
    ValueError from loading keeps working.
    """


_ZIP_MAGIC = b"PK\x03\x04"
_NPY_MAGIC = b"\x93NUMPY"


def read_model_file(path: str | os.PathLike[str]) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """Read a saved model without building it: its checked JSON header (see :func:`read_header`) and its arrays.

    Raises:
        FileNotFoundError, OSError: if the file cannot be opened.
        ModelFileError: if it is not an intact ``.npz`` archive with a valid ``__config__`` entry.
    """
    with open(path, "rb") as f:
        magic = f.read(len(_NPY_MAGIC))
    if not magic:
        raise ModelFileError(f"{path}: the file is empty (0 bytes), not a saved model")
    if magic.startswith(_NPY_MAGIC):
        raise ModelFileError(f"{path}: a single NumPy .npy array, not a model .npz archive written by Module.save")
    if not magic.startswith(_ZIP_MAGIC):
        raise ModelFileError(f"{path}: not a .npz archive (it does not start with the zip signature); model files "
                             f"are written by Module.save or 'autograd-lab train'")
    try:
        with np.load(path, allow_pickle=False) as archive:
            arrays = {k: archive[k] for k in archive.files}
    except (zipfile.BadZipFile, zlib.error, EOFError, ValueError) as exc:
        # Truncation shows as "File is not a zip file" (the central directory at the end is gone), damage inside
        # as a CRC or array-header error; np.load's own ValueError text talks about pickles, which would mislead.
        raise ModelFileError(f"{path}: truncated or damaged .npz archive ({type(exc).__name__}: {exc})") from exc
    if CONFIG_KEY not in arrays:
        raise ModelFileError(f"{path}: not an autograd-lab model file (no {CONFIG_KEY} entry)")
    header = _parse_header(path, arrays.pop(CONFIG_KEY))
    return header, arrays


def _parse_header(path: str | os.PathLike[str], entry: np.ndarray) -> dict[str, Any]:
    """Decode and check the ``__config__`` entry; ModelFileError names what is missing or malformed."""
    if entry.shape != () or entry.dtype.kind != "U":
        raise ModelFileError(f"{path}: {CONFIG_KEY} is a {entry.dtype} array of shape {entry.shape}, not a JSON string")
    try:
        header = json.loads(str(entry))
    except json.JSONDecodeError as exc:
        raise ModelFileError(f"{path}: {CONFIG_KEY} is not valid JSON ({exc})") from exc
    if not isinstance(header, dict):
        raise ModelFileError(f"{path}: {CONFIG_KEY} is a JSON {type(header).__name__}, not an object")
    missing = [k for k in ("class", "config") if k not in header]
    if missing:
        raise ModelFileError(f"{path}: {CONFIG_KEY} lacks the key(s) {missing}")
    if not isinstance(header["class"], str) or not isinstance(header["config"], dict):
        raise ModelFileError(f"{path}: {CONFIG_KEY} needs a class name (string) and a config (object), got "
                             f"{header['class']!r} and {header['config']!r}")
    version = header.get("format", 0)
    if not isinstance(version, int) or isinstance(version, bool):
        raise ModelFileError(f"{path}: {CONFIG_KEY} has format {version!r}, not an integer")
    if version > FORMAT_VERSION:
        raise ModelFileError(f"{path}: model format {version} is newer than this library reads ({FORMAT_VERSION})")
    if not isinstance(header.setdefault("meta", {}), dict):
        raise ModelFileError(f"{path}: {CONFIG_KEY} meta is {header['meta']!r}, not an object")
    return header


def read_header(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The JSON header of a saved model: ``{"format", "class", "config", "meta"}``.

    Raises:
        FileNotFoundError, OSError: if the file cannot be opened.
        ModelFileError: as :func:`read_model_file` (not a model file, damaged, no or malformed config, newer format).
    """
    return read_model_file(path)[0]
