"""The backward stepper: frames in Engine.backward's order, gradients checked against central differences, the
graph left untouched, internal gradients freed as the engine frees them, and an animation that needs no kernel."""

from __future__ import annotations

import base64
import re

import numpy as np
import pytest

from autograd_lab import Engine, Variable
from autograd_lab.ops import MulOp, SumOp
from autograd_lab.viz import (
    BackwardAnimation,
    backward_step_graphs,
    backward_stepper,
    backward_steps,
    show_backward_steps,
)
from autograd_lab.viz.graph import STEP_COLOR

from .helpers import attr, build_mlp, html_label, parse_dot, visible_text


def central_difference(f, x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """d f / d x by (f(x + eps e_i) - f(x - eps e_i)) / (2 eps), in float64."""
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += eps
        down[i] -= eps
        grad[i] = (f(up) - f(down)) / (2 * eps)
    return grad


def mlp_loss_with(mlp, **values) -> float:
    """The MLP's loss recomputed from scratch with some leaves replaced (by name of the helper's attribute)."""
    from .helpers import build_mlp as rebuild

    fresh = rebuild()
    for key, value in values.items():
        getattr(fresh, key).copy_(value)
    Engine.forward(fresh.loss)
    return float(fresh.loss.data)


def test_one_frame_for_the_seed_and_one_per_operator_in_backward_order():
    mlp = build_mlp()
    steps = list(backward_steps(mlp.loss))
    ops_in_order = [v for v in Engine.backward_order(mlp.loss) if v.op is not None]
    assert [s.node for s in steps] == [None, *ops_in_order]
    assert [s.changed for s in steps[1:]] == [tuple(v.parents) for v in ops_in_order]


def test_final_gradients_match_central_differences():
    mlp = build_mlp()
    final = list(backward_steps(mlp.loss))[-1].grads
    for name in ("W1", "b1", "W2", "b2"):
        param = getattr(mlp, name)
        numeric = central_difference(lambda value, name=name: mlp_loss_with(mlp, **{name: value}), param.numpy())
        np.testing.assert_allclose(final[param], numeric, rtol=1e-6, atol=1e-8)


def test_graph_and_grad_attributes_are_left_untouched():
    mlp = build_mlp()
    list(backward_steps(mlp.loss))
    assert mlp.W1.grad is None and not mlp.loss.is_released and mlp.loss.op is not None
    Engine.backward(mlp.loss)  # still possible, and agrees with the stepper
    again = build_mlp()
    np.testing.assert_array_equal(list(backward_steps(again.loss))[-1].grads[again.W1], mlp.W1.grad)


def test_works_after_a_backward_restricted_to_some_inputs():
    """Engine.backward(inputs=...) leaves ops asking for some gradients only; the stepper asks for all of them."""
    mlp = build_mlp()
    Engine.backward(mlp.loss, retain_graph=True, inputs=[mlp.b2])
    final = list(backward_steps(mlp.loss))[-1].grads
    assert mlp.W1 in final and mlp.x in final


def test_a_node_used_twice_receives_the_sum_of_both_paths():
    x = Variable.from_numpy([3.0], name="x")
    y = MulOp()(x, x)  # dy/dx = 2x = 6
    steps = list(backward_steps(SumOp()(y)))
    assert steps[-1].changed == (x, x)
    np.testing.assert_array_equal(steps[-1].grads[x], [6.0])


def test_frames_highlight_the_operator_that_ran_and_the_inputs_it_updated():
    mlp = build_mlp()
    order = Engine.topo_sort(mlp.loss)
    frames = backward_step_graphs(mlp.loss)
    ops_in_order = [v for v in Engine.backward_order(mlp.loss) if v.op is not None]
    assert len(frames) == 1 + len(ops_in_order)
    assert STEP_COLOR not in frames[0].source
    assert "grad 1" in visible_text(html_label(parse_dot(frames[0].source).nodes[f"n{len(order) - 1}"]))
    for frame, node in zip(frames[1:], ops_in_order):
        dot = parse_dot(frame.source)
        green = {k for k, a in dot.nodes.items() if attr(a, "color") == STEP_COLOR}
        assert green == {f"op{order.index(node)}"} | {f"n{order.index(p)}" for p in node.parents}
    last = parse_dot(frames[-1].source)
    assert "grad" in visible_text(html_label(last.nodes[f"n{order.index(mlp.W1)}"]))


def test_svg_frames_and_the_live_widget():
    mlp = build_mlp()
    frames = backward_stepper(mlp.loss)
    assert len(frames) == 7 and all(f.startswith("<?xml") and "</svg>" in f for f in frames)
    third = [v for v in Engine.backward_order(mlp.loss) if v.op is not None][2]  # the second MatMul
    hidden = f"n{Engine.topo_sort(mlp.loss).index(third.parents[0])}"
    assert f"step 3 of 6: MatMulOp.backward sends the gradient to {hidden}, fc2.W" in frames[3]
    widget = show_backward_steps(build_mlp().loss, live=True)
    controls, picture = widget.children
    play, slider = controls.children
    assert (slider.min, slider.max, play.max) == (0, 6, 6)
    assert picture.value == frames[0][frames[0].index("<svg") :]
    slider.value = 3
    assert picture.value == frames[3][frames[3].index("<svg") :]


def test_internal_gradients_are_freed_once_passed_on_as_the_engine_frees_them():
    """Issue 14: the stepper showed internal gradients that the engine (and the learner's engine) had freed."""
    mlp = build_mlp()
    steps = list(backward_steps(mlp.loss))
    ran: set[Variable] = set()
    for step in steps[1:]:
        ran.add(step.node)
        assert step.freed == ran
        assert not any(v in step.grads for v in ran)  # a node whose op ran holds no gradient any more
    assert set(steps[-1].grads) == {v for v in Engine.topo_sort(mlp.loss) if v.is_leaf}
    order = Engine.topo_sort(mlp.loss)
    frames = backward_step_graphs(mlp.loss)
    root_label = visible_text(html_label(parse_dot(frames[1].source).nodes[f"n{len(order) - 1}"]))
    assert "grad freed" in root_label and "grad 1" not in root_label
    assert frames[1].caption.endswith(f"; the gradient of n{len(order) - 1} is freed")
    w1_label = visible_text(html_label(parse_dot(frames[-1].source).nodes[f"n{order.index(mlp.W1)}"]))
    assert "grad" in w1_label and "freed" not in w1_label  # leaves keep theirs


def test_the_animation_embeds_every_frame_with_its_caption():
    mlp = build_mlp()
    svgs = backward_stepper(mlp.loss, caption_in_picture=False)  # the caption is HTML text, not in the picture
    assert not any("step 1 of 6" in svg for svg in svgs)
    shown = show_backward_steps(build_mlp().loss)
    assert isinstance(shown, BackwardAnimation) and len(shown) == 7
    page = shown._repr_html_()
    images = re.findall(r'<img src="data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)"', page)
    assert [base64.b64decode(i).decode() for i in images] == [s[s.index("<svg") :] for s in svgs]
    captions = re.findall(r"<figcaption><b>(step \d+ of 6)[:;]", page)
    assert captions == [f"step {k} of 6" for k in range(7)]
    assert "<script>" in page and ' hidden="' not in page.split("<figure", 1)[1]  # without JS every frame shows
    assert page == show_backward_steps(build_mlp().loss)._repr_html_()  # no ids or times that change per run


def test_the_animation_saves_a_standalone_page(tmp_path):
    animation = show_backward_steps(build_mlp().loss)
    page = animation.save_as(tmp_path / "steps.html").read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and animation.html() in page
    with pytest.raises(ValueError, match=r"\.html"):
        animation.save_as(tmp_path / "steps.svg")
    with pytest.raises(ValueError, match="one caption per frame"):
        BackwardAnimation(["<svg></svg>"], [])


def test_without_ipywidgets_live_falls_back_to_the_animation(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "ipywidgets", None)  # makes `import ipywidgets` raise ImportError
    shown = show_backward_steps(build_mlp().loss, live=True)
    assert isinstance(shown, BackwardAnimation) and shown.html().count("<figure") == 7


def test_errors():
    mlp = build_mlp()
    with pytest.raises(ValueError, match="max_frames"):
        backward_step_graphs(mlp.loss, max_frames=5)
    vector = MulOp()(mlp.x, mlp.x)
    with pytest.raises(ValueError, match="grad= is needed"):
        list(backward_steps(vector))
    with pytest.raises(ValueError, match="grad has shape"):
        list(backward_steps(vector, grad=np.ones(3)))
