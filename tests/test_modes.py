"""Modes: no_grad, eval_mode / train_mode, detect_anomaly."""

from __future__ import annotations

import numpy as np
import pytest

from autograd_lab import AnomalyError, Engine, Variable, detect_anomaly, eval_mode, no_grad, train_mode
from autograd_lab.ops import AddOp, LogOp, MulOp, SqrtOp, SumOp


def test_no_grad_records_no_graph():
    x = Variable.from_numpy([1.0, 2.0])
    op = MulOp()
    with no_grad():
        y = op(x, x)
    np.testing.assert_array_equal(y.data, [1.0, 4.0])
    assert y.is_leaf and y.op is None and y.parents == []
    assert op.inputs == () and not hasattr(op, "output")  # nothing saved for backward
    Engine.backward(SumOp()(y))
    assert x.grad is None  # no path from the result back to x


def test_no_grad_restores_the_previous_mode_even_after_an_error():
    assert Engine.grad_enabled
    with pytest.raises(RuntimeError), no_grad():
        assert not Engine.grad_enabled
        raise RuntimeError("boom")
    assert Engine.grad_enabled


def test_modes_nest():
    with no_grad():
        with no_grad():
            assert not Engine.grad_enabled
        assert not Engine.grad_enabled
    assert Engine.grad_enabled


def test_eval_and_train_mode_switch_is_training():
    assert Engine.is_training
    with eval_mode():
        assert not Engine.is_training
        with train_mode():
            assert Engine.is_training
        assert not Engine.is_training
    assert Engine.is_training


def test_detect_anomaly_names_the_op_and_the_line_that_made_a_nan_in_forward():
    x = Variable.from_numpy([1.0, -1.0])
    with detect_anomaly(), np.errstate(invalid="ignore"), pytest.raises(AnomalyError) as info:
        LogOp()(x)  # log(-1) is NaN
    message = str(info.value)
    assert "LogOp" in message and "1 NaN" in message and "index (1,)" in message
    assert f"{__file__}:{info.tb.tb_lineno}" in message


def test_detect_anomaly_names_the_op_and_the_line_that_made_an_inf_gradient():
    x = Variable.from_numpy([0.0, 4.0])
    with detect_anomaly(), np.errstate(divide="ignore"):
        y = SqrtOp()(x)
        line = _line_of("y = SqrtOp()(x)")
        with pytest.raises(AnomalyError) as info:
            Engine.backward(SumOp()(y))
    message = str(info.value)
    assert "SqrtOp.backward" in message and "1 inf" in message and "input 0" in message
    assert f"{__file__}:{line}" in message


def test_without_detect_anomaly_nan_passes_silently():
    x = Variable.from_numpy([np.nan])
    y = AddOp()(x, x)
    assert np.isnan(y.data).all()
    with detect_anomaly(), pytest.raises(AnomalyError, match="AddOp"):
        AddOp()(x, x)


def _line_of(text: str) -> int:
    with open(__file__) as f:
        return next(i for i, line in enumerate(f, 1) if line.strip() == text)


def test_the_modes_live_in_config_and_engine_names_read_and_write_them():
    """Config holds the modes (issue 21, item 3); Engine.is_training and the other Engine names, which the notebooks
    use, read and write the same attributes."""
    from autograd_lab.config import Config

    with eval_mode():
        assert Config.is_training is False and Engine.is_training is False
    Engine.grad_enabled = False
    try:
        assert Config.grad_enabled is False
    finally:
        Engine.grad_enabled = True
    assert Config.grad_enabled is True and Engine.detect_anomaly is Config.detect_anomaly is False
