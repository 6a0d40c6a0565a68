"""Zero-size and malformed input shapes are refused, and the host driver always terminates."""

from __future__ import annotations

import re

import numpy as np
import pytest

from autograd_lab import Parameter, Variable
from autograd_lab.export import ExportError, export_c, graph_from_root, graph_to_c, write_c
from autograd_lab.export import build as b
from autograd_lab.export.codegen import template
from autograd_lab.ops import MatMulOp, ReLUOp


def relu(v: Variable) -> Variable:
    return ReLUOp()(v)


@pytest.mark.parametrize("shape", [(0, 3), (3, 0), (0,), (), (-1, 4), (2, -3), (2.5,), (True, 3), "784", None])
def test_export_refuses_a_shape_without_elements_or_not_of_positive_ints(shape, tmp_path):
    with pytest.raises(ExportError, match=r"input_shape .* is not exportable") as info:
        export_c(relu, shape, tmp_path)
    assert repr(shape) in str(info.value)
    assert not list(tmp_path.iterdir())  # nothing written


def test_numpy_integer_dimensions_are_accepted():
    assert export_c(relu, (np.int64(1), np.int32(3))).input_size == 3


@pytest.mark.parametrize("shape", [(0, 3), ()])
def test_graph_from_root_refuses_an_empty_or_0d_input(shape):
    x = Variable.from_numpy(np.zeros(shape, dtype=np.float32), name="input")
    with pytest.raises(ExportError, match=re.escape(f"input Variable has shape {shape!r}")):
        graph_from_root(relu(x), x)


def test_a_node_computing_an_empty_value_is_refused_by_name():
    """(1, 4) @ (4, 0): a non-empty input whose output has no element."""
    x = Variable.from_numpy(np.zeros((1, 4), dtype=np.float32), name="input")
    y = MatMulOp()(x, Parameter(np.zeros((4, 0), dtype=np.float32), name="w"))
    with pytest.raises(ExportError, match=r"MatMulOp at node \d+ computes a value of shape \(1, 0\) with no element"):
        graph_from_root(y, x)


@pytest.fixture
def host_exe(tmp_path, gcc):
    x = Variable.from_numpy(np.zeros(3, dtype=np.float32), name="input")
    gen = graph_to_c(graph_from_root(relu(x), x), "m")
    write_c(gen, tmp_path)
    return b.build_host(tmp_path, "m", tmp_path / "build")


def test_host_driver_reads_whole_inputs_until_eof(host_exe):
    x = np.random.default_rng(0).normal(0, 1, (4, 3)).astype(np.float32)
    np.testing.assert_array_equal(b.run_host(host_exe, x, 3), np.maximum(x, 0))
    assert b.run([str(host_exe)], "empty run", timeout=20, input=b"").stdout == b""


def test_host_driver_stops_with_an_error_on_a_truncated_input(host_exe):
    data = np.arange(5, dtype=np.float32).tobytes()  # one whole input and 2 of 3 values of the next
    with pytest.raises(b.BuildError, match="exit 4"):
        b.run([str(host_exe)], "truncated run", timeout=20, input=data)
    partial = np.arange(3, dtype=np.float32).tobytes() + b"\0\0"  # a partial float
    with pytest.raises(b.BuildError, match="exit 4"):
        b.run([str(host_exe)], "truncated run", timeout=20, input=partial)


def test_host_driver_refuses_to_build_for_a_zero_size_model(tmp_path, gcc):
    """A hand-made header claiming 0 inputs (the exporter no longer writes one): the driver does not compile, instead
    of compiling into a loop that never ends."""
    (tmp_path / "z.h").write_text("#define Z_INPUT_SIZE 0\n#define Z_OUTPUT_SIZE 1\n#define Z_OK 0\n"
                                  "int z_predict(const float *input, float *output);\n")
    (tmp_path / "z_main.c").write_text(template("host_main").replace("@NAME@", "z").replace("@MACRO@", "Z"))
    with pytest.raises(b.BuildError, match="zero-size model would make this loop endless"):
        b.run(["gcc", *b.HOST_FLAGS, f"-I{tmp_path}", "-c", str(tmp_path / "z_main.c"), "-o",
               str(tmp_path / "z.o")], "driver build", timeout=60)
