"""Diagnostics plots: the Figure holds exactly the data given, with the right titles, and saves to a PNG."""

from __future__ import annotations

import io

import numpy as np
import pytest
from matplotlib.colors import to_hex
from matplotlib.figure import Figure

from autograd_lab import Parameter
from autograd_lab.viz import (
    plot_activation_histograms,
    plot_confusion_matrix,
    plot_gradient_flow,
    plot_misclassified,
    plot_training_curves,
    plot_weight_histograms,
)
from autograd_lab.viz.plots import FLAG_COLOR


def png_bytes(fig: Figure) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    return buffer.getvalue()


def assert_saves_png(fig: Figure) -> None:
    data = png_bytes(fig)
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5_000


HISTORY = {
    "epoch": [1, 2, 3],
    "train_loss": [0.9, 0.5, 0.3],
    "train_acc": [0.70, 0.85, 0.91],
    "val_loss": [0.8, 0.55, 0.45],
    "val_acc": [0.72, 0.83, 0.86],
}


def test_training_curves_plot_train_and_held_out_loss_and_accuracy():
    fig = plot_training_curves(HISTORY)
    loss_ax, acc_ax = fig.axes
    assert (loss_ax.get_title(), acc_ax.get_title()) == ("Loss", "Accuracy")
    for ax, key in ((loss_ax, "loss"), (acc_ax, "acc")):
        train, val = ax.get_lines()
        assert list(train.get_xdata()) == [1, 2, 3] and list(train.get_ydata()) == HISTORY[f"train_{key}"]
        assert list(val.get_ydata()) == HISTORY[f"val_{key}"]
        assert [t.get_text() for t in ax.get_legend().get_texts()] == ["training", "held-out"]
    assert_saves_png(fig)


def test_figures_display_in_jupyter_without_pyplot():
    """IPython calls _repr_png_ on a cell's last value; a plain Figure has none until pyplot is imported."""
    fig = plot_training_curves(HISTORY)
    assert fig._repr_png_()[:8] == b"\x89PNG\r\n\x1a\n"
    assert repr(fig).startswith("<InlineFigure size 1000x360 with 2 Axes>")


def test_training_curves_without_held_out_or_accuracy():
    fig = plot_training_curves({"epoch": [1, 2], "train_loss": [1.0, 0.5], "train_acc": [0.5, 0.6]})
    assert [len(ax.get_lines()) for ax in fig.axes] == [1, 1]
    assert len(plot_training_curves({"epoch": [1], "train_loss": [1.0]}).axes) == 1


def test_training_curves_reject_bad_history():
    with pytest.raises(ValueError, match="no 'train_loss'"):
        plot_training_curves({"epoch": [1]})
    with pytest.raises(ValueError, match=r"history\['val_loss'\] has 1 values, 'epoch' has 2"):
        plot_training_curves({"epoch": [1, 2], "train_loss": [1, 2], "val_loss": [1]})


def params_with_grads():
    """Three layers; the first one's gradients are a million times smaller (the vanishing-gradient picture)."""
    rng = np.random.default_rng(0)
    params = []
    for name, scale in (("fc1.weight", 1e-6), ("fc2.weight", 1.0), ("fc3.weight", 0.5)):
        p = Parameter(rng.normal(size=(4, 3)), name=name)
        p.grad = rng.normal(size=(4, 3)) * scale
        params.append(p)
    return params


class TinyModel:
    def __init__(self, params):
        self._params = params

    def named_parameters(self):
        return [(p.name, p) for p in self._params]


def test_gradient_flow_bars_are_mean_and_max_abs_grad_and_flag_the_vanishing_layer():
    params = params_with_grads()
    fig = plot_gradient_flow(TinyModel(params))
    (ax,) = fig.axes
    maxes, means = ax.containers
    np.testing.assert_allclose([b.get_height() for b in maxes], [np.max(np.abs(p.grad)) for p in params])
    np.testing.assert_allclose([b.get_height() for b in means], [np.mean(np.abs(p.grad)) for p in params])
    assert ax.get_yscale() == "log"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["fc1.weight", "fc2.weight", "fc3.weight"]
    assert to_hex(ax.get_xticklabels()[0].get_color()) == FLAG_COLOR
    assert "vanishing" in ax.get_title() and "fc1.weight" in ax.get_title() and "fc2.weight" not in ax.get_title()
    assert_saves_png(fig)


def test_gradient_flow_takes_plain_parameters_and_marks_missing_gradients():
    params = params_with_grads()
    params[2].grad = None
    fig = plot_gradient_flow(params)
    (ax,) = fig.axes
    assert [t.get_text() for t in ax.get_xticklabels()][2] == "fc3.weight"
    marker = [line for line in ax.get_lines() if line.get_label() == "no gradient / all zero"]
    assert list(marker[0].get_xdata()) == [2]


def test_weight_histograms_one_axes_per_parameter_counting_every_value():
    params = params_with_grads()
    fig = plot_weight_histograms({p.name: p for p in params}, bins=10)
    assert len(fig.axes) == 3
    for ax, p in zip(fig.axes, params):
        assert sum(patch.get_height() for patch in ax.patches) == p.size
        assert ax.get_title().startswith(f"{p.name} (4, 3)\nmean {p.data.mean():.3g}")
    assert_saves_png(fig)


def test_activation_histograms_report_the_share_of_zeros():
    acts = {"relu1": np.array([0.0, 0.0, 0.0, 1.0, 2.0, 3.0, 0.0, 5.0]), "relu2": np.arange(1.0, 9.0)}
    fig = plot_activation_histograms(acts)
    assert [ax.get_title().endswith(share) for ax, share in zip(fig.axes, ("50% zero", "0% zero"))] == [True, True]
    assert fig.get_suptitle() == "Activation histograms"
    with pytest.raises(ValueError):
        plot_activation_histograms({})


def test_confusion_matrix_counts_every_pair():
    y_true = [0, 0, 1, 1, 1, 2, 2, 2, 2]
    y_pred = [0, 1, 1, 1, 2, 2, 2, 0, 2]
    expected = np.zeros((3, 3))
    for t, p in zip(y_true, y_pred):
        expected[t, p] += 1
    fig = plot_confusion_matrix(y_true, y_pred, class_names=["cat", "dog", "eel"])
    ax = fig.axes[0]
    np.testing.assert_array_equal(ax.get_images()[0].get_array(), expected)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["cat", "dog", "eel"]
    assert [t.get_text() for t in ax.texts][:3] == ["1", "1", "0"]
    assert ax.get_title() == "Confusion matrix, accuracy 66.67%"
    assert_saves_png(fig)


def test_confusion_matrix_normalised_rows_sum_to_one():
    fig = plot_confusion_matrix([0, 0, 0, 1], [0, 1, 1, 1], normalize=True)
    matrix = fig.axes[0].get_images()[0].get_array()
    np.testing.assert_allclose(matrix, [[1 / 3, 2 / 3], [0, 1]])
    matrix = plot_confusion_matrix([0, 0], [0, 0], class_names=["a", "b"], normalize=True).axes[0].get_images()[0]
    np.testing.assert_array_equal(matrix.get_array(), [[1, 0], [0, 0]])  # a class with no example stays 0


def test_confusion_matrix_rejects_bad_labels():
    with pytest.raises(ValueError, match="equal length"):
        plot_confusion_matrix([0, 1], [0])
    with pytest.raises(ValueError, match="only 2 class names"):
        plot_confusion_matrix([0, 2], [0, 1], class_names=["a", "b"])
    with pytest.raises(ValueError, match="non-negative integer"):
        plot_confusion_matrix([0.5, 1], [0, 1])


def test_misclassified_grid_shows_the_wrong_examples_with_their_labels():
    rng = np.random.default_rng(0)
    images = rng.uniform(size=(40, 784))
    y_true = np.arange(40) % 10
    y_pred = y_true.copy()
    wrong = [3, 7, 8, 20, 39]
    y_pred[wrong] = (y_true[wrong] + 1) % 10
    fig = plot_misclassified(images, y_true, y_pred, max_images=4)
    assert len(fig.axes) == 4
    for ax, i in zip(fig.axes, wrong):
        np.testing.assert_array_equal(ax.get_images()[0].get_array(), images[i].reshape(28, 28))
        assert ax.get_title() == f"true {y_true[i]}\npred {y_pred[i]}"
    assert fig.get_suptitle() == "Misclassified: 5 of 40 (first 4 shown)"
    assert_saves_png(fig)


def test_misclassified_with_nothing_wrong_and_bad_shapes():
    fig = plot_misclassified(np.zeros((3, 8, 8)), [1, 2, 3], [1, 2, 3])
    assert fig.axes[0].texts[0].get_text() == "no misclassified examples"
    with pytest.raises(ValueError, match="not square"):
        plot_misclassified(np.zeros((2, 10)), [0, 1], [1, 0])
    with pytest.raises(ValueError, match="same length"):
        plot_misclassified(np.zeros((2, 4, 4)), [0, 1], [1])
