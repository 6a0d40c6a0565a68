"""Loading damaged or foreign model files: one error type (ModelFileError) naming the file and the fault.

Each case builds the bad file the way it happens in practice: a copy cut short, an empty file, a text file, an .npz
from elsewhere, a hand-edited ``__config__``, weights saved after training diverged.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from autograd_lab.nn import MLP, read_header
from autograd_lab.nn.module import ModelFileError


def save_model(path: Path) -> Path:
    MLP([6, 5, 3], rng=0).save(path)
    return path


def rewrite(path: Path, **changes: np.ndarray) -> Path:
    """Copy the arrays of the saved model at ``path`` with ``changes`` applied (as a hand edit would) and save."""
    with np.load(path, allow_pickle=False) as archive:
        arrays = {k: archive[k] for k in archive.files}
    arrays.update(changes)
    np.savez(path, **arrays)
    return path


def edited_header(path: Path, **fields: object) -> np.ndarray:
    header = read_header(path)
    header.update(fields)
    return np.array(json.dumps(header))


def truncated(tmp_path: Path) -> Path:
    good = save_model(tmp_path / "good.npz").read_bytes()
    bad = tmp_path / "trunc.npz"
    bad.write_bytes(good[: len(good) // 2])
    return bad


def empty(tmp_path: Path) -> Path:
    bad = tmp_path / "empty.npz"
    bad.write_bytes(b"")
    return bad


def text(tmp_path: Path) -> Path:
    bad = tmp_path / "notes.npz"
    bad.write_text("layers.0.weight = [[1, 2], [3, 4]]\n")
    return bad


def no_config(tmp_path: Path) -> Path:
    bad = tmp_path / "plain.npz"
    np.savez(bad, w=np.zeros(3))
    return bad


def config_not_json(tmp_path: Path) -> Path:
    path = save_model(tmp_path / "edited.npz")
    return rewrite(path, __config__=np.array('{"class": "MLP", "config": {"sizes": [6, 5, 3]'))


def config_sizes_edited(tmp_path: Path) -> Path:
    path = save_model(tmp_path / "edited.npz")
    config = read_header(path)["config"] | {"sizes": [6, 4, 3]}
    return rewrite(path, __config__=edited_header(path, config=config))


def config_activation_edited(tmp_path: Path) -> Path:
    path = save_model(tmp_path / "edited.npz")
    config = read_header(path)["config"] | {"activation": "gelu"}
    return rewrite(path, __config__=edited_header(path, config=config))


def config_without_class(tmp_path: Path) -> Path:
    path = save_model(tmp_path / "edited.npz")
    return rewrite(path, __config__=np.array(json.dumps({"format": 1, "config": {"sizes": [6, 5, 3]}})))


def nan_weights(tmp_path: Path) -> Path:
    path = save_model(tmp_path / "diverged.npz")
    with np.load(path) as archive:
        weight = archive["layers.0.weight"].copy()
    weight[1, 2] = np.nan
    weight[0, 0] = np.inf
    return rewrite(path, **{"layers.0.weight": weight})


#: (builder of the bad file, words the message must contain).
BAD_FILES = [
    (truncated, "truncated or damaged .npz archive"),
    (empty, "the file is empty (0 bytes)"),
    (text, "not a .npz archive"),
    (no_config, "not an autograd-lab model file (no __config__ entry)"),
    (config_not_json, "__config__ is not valid JSON"),
    (config_sizes_edited, "'layers.0.weight' has shape (5, 6), the model expects (4, 6)"),
    (config_activation_edited, "does not build a MLP (MLP: unknown activation 'gelu'"),
    (config_without_class, "__config__ lacks the key(s) ['class']"),
    (nan_weights, "parameter 'layers.0.weight' holds 2 NaN/inf value(s) of 30"),
]


@pytest.mark.parametrize(("make", "message"), BAD_FILES, ids=[make.__name__ for make, _ in BAD_FILES])
def test_a_bad_model_file_raises_model_file_error_naming_the_file_and_the_fault(tmp_path, make, message):
    path = make(tmp_path)
    with pytest.raises(ModelFileError) as info:
        MLP.load(path)
    text = str(info.value)
    assert text.startswith(f"{path}: ") and message in text
    assert "pickle" not in text  # NumPy's own message for non-archives talks about pickles, which misleads


@pytest.mark.parametrize("make", [truncated, empty, text, no_config, config_not_json, config_without_class])
def test_read_header_refuses_the_same_files_with_the_same_error(tmp_path, make):
    path = make(tmp_path)
    with pytest.raises(ModelFileError, match="^" + str(path).replace("\\", "\\\\")):
        read_header(path)


def test_model_file_error_is_a_value_error_and_a_missing_file_stays_file_not_found(tmp_path):
    assert issubclass(ModelFileError, ValueError)
    with pytest.raises(FileNotFoundError):
        MLP.load(tmp_path / "missing.npz")


def test_a_single_npy_array_is_named_as_such(tmp_path):
    np.save(tmp_path / "weights.npy", np.zeros((5, 6)))
    with pytest.raises(ModelFileError, match=r"a single NumPy \.npy array, not a model \.npz archive"):
        MLP.load(tmp_path / "weights.npy")


def test_a_missing_weight_array_is_named(tmp_path):
    path = save_model(tmp_path / "m.npz")
    with np.load(path) as archive:
        arrays = {k: archive[k] for k in archive.files if k != "layers.2.bias"}
    np.savez(path, **arrays)
    with pytest.raises(ModelFileError, match=r"missing \['layers.2.bias'\], unexpected \[\]"):
        MLP.load(path)


def test_a_flipped_byte_inside_the_archive_is_reported_as_damage(tmp_path):
    path = save_model(tmp_path / "m.npz")
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF  # inside a stored array: the zip CRC check catches it
    path.write_bytes(bytes(data))
    with pytest.raises(ModelFileError, match=r"truncated or damaged \.npz archive"):
        MLP.load(path)
