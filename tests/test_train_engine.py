"""``autograd-lab train --engine plan|eager``: the option, its check, and the same model from both engines."""

from __future__ import annotations

import numpy as np
import pytest

from autograd_lab.cli import build_parser, main
from autograd_lab.nn import MLP
from autograd_lab.training.job import TrainConfig, run_training


def test_the_plan_is_the_default_engine_and_eager_can_be_chosen():
    assert TrainConfig().engine == "plan"
    assert build_parser().parse_args(["train"]).engine == "plan"
    assert build_parser().parse_args(["train", "--engine", "eager"]).engine == "eager"


def test_an_unknown_engine_is_refused_by_the_option_and_the_config(capsys):
    with pytest.raises(SystemExit) as info:
        main(["train", "--engine", "jit"])
    assert info.value.code == 2 and "--engine: invalid choice: 'jit'" in capsys.readouterr().err
    with pytest.raises(ValueError, match=r"TrainConfig: engine must be one of \('plan', 'eager'\), got 'jit'"):
        TrainConfig(engine="jit").check()


@pytest.mark.slow
def test_both_engines_train_the_same_model_from_the_command_line(tmp_path):
    """One epoch on the bundled subset, with dropout and layer norm: the saved weights are bit-identical."""
    weights = {}
    for engine in ("eager", "plan"):
        out = tmp_path / engine
        run_training(TrainConfig(dataset="mnist-bundled", epochs=1, hidden=[24], dropout=0.2, layer_norm=True,
                                 plots=False, progress=False, output_dir=str(out), engine=engine), log=lambda s: None)
        weights[engine] = MLP.load(out / "model.npz").state_dict()
    assert weights["eager"].keys() == weights["plan"].keys()
    for name, value in weights["eager"].items():
        assert np.array_equal(value, weights["plan"][name]), name
