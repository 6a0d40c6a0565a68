"""The ``autograd-lab export-c`` command."""

from __future__ import annotations

import pytest

from autograd_lab.cli import main
from autograd_lab.nn import MLP


def test_export_c_writes_int8_code_and_reports_accuracy(tmp_path, capsys):
    MLP([784, 16, 10], rng=0).save(tmp_path / "model.npz")
    status = main(["export-c", str(tmp_path / "model.npz"), "--out", str(tmp_path / "c"), "--name", "fc1.net",
                   "--int8", "--calibration", "200", "--samples", "2"])
    out = capsys.readouterr().out
    assert status == 0
    assert "int8 vs float: 2000 test inputs" in out
    assert {p.name for p in (tmp_path / "c").iterdir()} == {"fc1_net.h", "fc1_net.c", "samples.h"}
    assert "int fc1_net_predict(const float *input, float *output);" in (tmp_path / "c" / "fc1_net.h").read_text()


def test_export_c_reports_a_missing_model_file(tmp_path, capsys):
    status = main(["export-c", str(tmp_path / "nope.npz"), "--out", str(tmp_path / "c")])
    assert status == 2
    err = capsys.readouterr().err
    assert "error: no such file:" in err and "nope.npz" in err


@pytest.mark.slow  # about 4 s: the int8 accuracy report runs the CNN on 2,000 images
def test_export_c_takes_a_cnn_model_file(tmp_path, capsys):
    from autograd_lab.export.pretrained import path

    status = main(["export-c", path(), "--out", str(tmp_path / "c"), "--name", "cnn", "--int8", "--calibration",
                   "200"])
    out = capsys.readouterr().out
    assert status == 0
    assert "int8 vs float: 2000 test inputs" in out
    assert "#define CNN_INPUT_SIZE 784" in (tmp_path / "c" / "cnn.h").read_text()
