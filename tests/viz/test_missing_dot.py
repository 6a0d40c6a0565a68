"""Without the Graphviz `dot` program, rendering says how to install it instead of failing with a bare traceback."""

from __future__ import annotations

import graphviz
import pytest

from autograd_lab.viz import DotNotFoundError, backward_stepper, draw_graph

from .helpers import build_mlp

INSTALL_COMMANDS = ["apt-get install graphviz", "conda install -c conda-forge graphviz", "brew install graphviz"]


@pytest.fixture
def no_dot_on_path(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # an empty directory: no executables at all


def check_message(error: pytest.ExceptionInfo) -> None:
    for command in INSTALL_COMMANDS:
        assert command in str(error.value)
    assert isinstance(error.value, graphviz.ExecutableNotFound)  # callers catching graphviz's error still do


@pytest.mark.usefixtures("no_dot_on_path")
def test_pipe_and_render_name_the_install_commands(tmp_path):
    g = draw_graph(build_mlp().loss)
    with pytest.raises(DotNotFoundError) as error:
        g.pipe(format="svg")
    check_message(error)
    with pytest.raises(DotNotFoundError) as error:
        g.render(tmp_path / "graph", format="png")
    check_message(error)


@pytest.mark.usefixtures("no_dot_on_path")
def test_jupyter_display_names_the_install_commands():
    g = draw_graph(build_mlp().loss)
    with pytest.raises(DotNotFoundError) as error:
        g._repr_mimebundle_()  # what Jupyter calls to show the drawing inline
    check_message(error)


@pytest.mark.usefixtures("no_dot_on_path")
def test_stepper_names_the_install_commands():
    with pytest.raises(DotNotFoundError) as error:
        backward_stepper(build_mlp().loss)
    check_message(error)


@pytest.mark.usefixtures("no_dot_on_path")
def test_dot_source_is_still_available_without_the_program():
    assert draw_graph(build_mlp().loss).source.startswith("digraph")
