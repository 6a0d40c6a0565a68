"""The models ``autograd-lab train --model NAME`` can build, by name.

Every model maps a batch of flat images, x (N, D) float32 with D = 28 * 28, to logits (N, n_classes); models that
need another layout (a CNN's (N, 1, 28, 28), a recurrent net's (N, 28, 28) rows) reshape inside their ``forward``.
So the trainer, the data pipeline and ``evaluate`` are the same for every model.

A builder receives the :class:`~autograd_lab.training.job.TrainConfig`, the input width D, the number of classes and
the generator for the initial weights, and returns a :class:`~autograd_lab.nn.Module` that can be saved
(``config()``) and loaded again by :func:`load_model`.

Training settings that suit one model and not another (the update rule, its learning rate, augmentation) are
per-model defaults: ``MODEL_DEFAULTS[name]`` overrides ``BASE_DEFAULTS`` for that model, and a setting the user gives
(a ``--lr`` on the command line, a ``TrainConfig(lr=...)``) overrides both. See :func:`model_defaults`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from autograd_lab.nn.cnn import CNN
from autograd_lab.nn.mlp import MLP
from autograd_lab.nn.module import ModelFileError, Module, read_header
from autograd_lab.nn.sequence import SequenceClassifier
from autograd_lab.nn.transformer import VisionTransformer

if TYPE_CHECKING:
    from autograd_lab.training.job import TrainConfig

Builder = Callable[["TrainConfig", int, int, np.random.Generator], Module]


def _mlp(config: TrainConfig, n_inputs: int, n_classes: int, rng: np.random.Generator) -> Module:
    return MLP([n_inputs, *config.hidden, n_classes], activation=config.activation, dropout=config.dropout,
               layer_norm=config.layer_norm, rng=rng)


def _recurrent(cell: str) -> Builder:
    """A builder for sequential MNIST: each 28x28 image is read as 28 steps of one 28-pixel row."""

    def build(config: TrainConfig, n_inputs: int, n_classes: int, rng: np.random.Generator) -> Module:
        steps = round(n_inputs ** 0.5)
        if steps * steps != n_inputs:
            raise ValueError(f"--model {cell} reads square images row by row; {n_inputs} inputs are not a square")
        return SequenceClassifier(cell, input_size=steps, hidden_size=config.hidden_size, n_classes=n_classes,
                                  steps=steps, rng=rng)

    return build


def _cnn(config: TrainConfig, n_inputs: int, n_classes: int, rng: np.random.Generator) -> Module:
    side = round(n_inputs ** 0.5)
    if side * side != n_inputs:
        raise ValueError(f"the cnn model needs square one-channel images, got {n_inputs} values per image")
    return CNN(channels=config.channels, batch_norm=config.batch_norm, dropout=config.dropout,
               image_shape=(1, side, side), n_classes=n_classes, rng=rng)


def _transformer(config: TrainConfig, n_inputs: int, n_classes: int, rng: np.random.Generator) -> Module:
    side = round(n_inputs ** 0.5)
    if side * side != n_inputs or side % 7:
        raise ValueError(f"the transformer reads square images in 7x7 patches; {n_inputs} values per image do not fit")
    return VisionTransformer(image_size=side, patch_size=7, num_classes=n_classes, dropout=config.dropout, rng=rng)


#: name -> (builder, one line for ``--help``). Each model family registers itself here.
MODELS: dict[str, tuple[Builder, str]] = {
    "mlp": (_mlp, "multilayer perceptron (--hidden, --activation, --dropout, --layer-norm)"),
    "rnn": (_recurrent("rnn"), "tanh RNN reading one image row per step (--hidden-size)"),
    "lstm": (_recurrent("lstm"), "LSTM reading one image row per step (--hidden-size)"),
    "cnn": (_cnn, "convolutional network, conv-BN-ReLU-pool blocks then a Linear layer (--channels, "
                  "--no-batch-norm, --dropout)"),
    "transformer": (_transformer, "tiny vision transformer: 16 patches of 7x7, 2 pre-norm encoder layers of width 64 "
                                  "with 4 heads (--dropout)"),
}

#: Saved class name -> the class that loads it (``Module.save`` records the class name).
MODEL_CLASSES: dict[str, type[Module]] = {"MLP": MLP, "CNN": CNN, "SequenceClassifier": SequenceClassifier,
                                          "VisionTransformer": VisionTransformer}


def build_model(config: TrainConfig, n_inputs: int, n_classes: int, rng: np.random.Generator) -> Module:
    """The model named by ``config.model``.

    Raises:
        ValueError: for an unknown model name, listing the known ones.
    """
    try:
        builder, _ = MODELS[config.model]
    except KeyError:
        raise ValueError(f"unknown model {config.model!r}; choose one of {sorted(MODELS)}") from None
    return builder(config, n_inputs, n_classes, rng)


def input_output_sizes(model: Module) -> tuple[int, int]:
    """(values per flat input image, number of classes) of a model from this registry.

    Raises:
        TypeError: for a model class the registry does not know.
    """
    if isinstance(model, MLP):
        return model.sizes[0], model.sizes[-1]
    if isinstance(model, CNN):
        return int(np.prod(model.image_shape)), model.n_classes
    if isinstance(model, SequenceClassifier):
        return model.sizes[0], model.sizes[-1]
    if isinstance(model, VisionTransformer):
        return model.image_size**2, model.num_classes
    raise TypeError(f"input_output_sizes: unknown model class {type(model).__name__}")


def load_model(path: Any) -> Module:
    """Load a model saved by ``autograd-lab train`` whatever its class.

    Raises:
        ModelFileError: if the file is damaged (see :meth:`Module.load`) or holds a class this library does not know.
    """
    name = read_header(path)["class"]
    cls = MODEL_CLASSES.get(name)
    if cls is None:
        raise ModelFileError(f"{path}: holds a {name}, which is not a model this library can load "
                             f"(known: {', '.join(sorted(MODEL_CLASSES))})")
    return cls.load(path)


#: The settings a model trains with unless its entry in MODEL_DEFAULTS or the user says otherwise (the MLP's: SGD with
#: momentum, a constant rate and shift augmentation reach ≥ 95% on the bundled subset, see tests/test_train.py).
BASE_DEFAULTS: dict[str, Any] = {"optimizer": "sgd", "lr": 0.05, "augment_shift": 2, "lr_schedule": "constant",
                                 "epochs": 20, "weight_decay": 0.0}

#: name -> the settings where that model's defaults differ from BASE_DEFAULTS; one line per model. The recurrent models
#: learn slowly with SGD at lr 0.05 (49.5% after 2 epochs) and shifting an image moves its rows across time steps;
#: Adam at 3e-3 without augmentation is the issue 12 workload (benchmarks/bench_rnn.py: LSTM ≥ 93% in 10 epochs).
#: The CNN: SGD at 0.02 decayed to 0 by a cosine over the run (the last epochs settle instead of jumping between
#: minima), with 1-pixel shifts: 98.55% and 98.45% held-out for seeds 0 and 1 in 20 epochs (bench_cnn.py --accuracy;
#: from He's init instead of the CNN's PyTorch-style one 98.00% and 98.30%, and at lr 0.05 97.75% and 98.15%).
#: The transformer: AdamW (decoupled weight decay 0.05) on a one-cycle schedule peaking at 2e-3, 2-pixel shifts, 60
#: epochs: 98.25% and 98.15% held-out for seeds 0 and 1 (40 epochs: 97.85% and 97.90%; Adam 1e-3 on a cosine schedule
#: for 40 epochs: 97.20%); docs/transformer.md.
#: A model without an entry trains with BASE_DEFAULTS.
MODEL_DEFAULTS: dict[str, dict[str, Any]] = {
    "mlp": {},
    "rnn": {"optimizer": "adam", "lr": 3e-3, "augment_shift": 0},
    "lstm": {"optimizer": "adam", "lr": 3e-3, "augment_shift": 0},
    "cnn": {"lr": 0.02, "augment_shift": 1, "lr_schedule": "cosine"},
    "transformer": {"optimizer": "adamw", "lr": 2e-3, "augment_shift": 2, "lr_schedule": "onecycle", "epochs": 60,
                    "weight_decay": 0.05},
}


def model_defaults(name: str) -> dict[str, Any]:
    """The training settings model ``name`` uses where the user gives none: BASE_DEFAULTS updated by its entry.

    Raises:
        ValueError: for an unknown model name, listing the known ones.
    """
    if name not in MODELS:
        raise ValueError(f"unknown model {name!r}; choose one of {sorted(MODELS)}")
    return {**BASE_DEFAULTS, **MODEL_DEFAULTS.get(name, {})}


def describe_defaults(setting: str) -> str:
    """``"0.05 for mlp; 0.003 for lstm, rnn"``: the default of one setting per model, for ``--help``."""
    by_value: dict[str, list[str]] = {}
    for name in sorted(MODELS):
        by_value.setdefault(str(model_defaults(name)[setting]), []).append(name)
    return "; ".join(f"{value} for {', '.join(names)}" for value, names in by_value.items())
