"""Float32 constants reach the C compiler exactly, and non-finite weights are refused."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest

from autograd_lab import Parameter, Variable
from autograd_lab.export import ExportError, graph_from_root
from autograd_lab.export.floats import f32_literal
from autograd_lab.ops import AddOp

# 0.51548230441328713 is a double whose float32 rounding needs all nine digits; 1e-8 is far below 1.
EDGE_VALUES = [0.1, 0.51548230441328713, 1.0, 1e-8, -2.5, 3.4028234663852886e38, 1.401298464324817e-45]


def test_literals_have_a_point_or_exponent_and_an_f_suffix():
    assert f32_literal(1.0) == "1.0f"
    assert f32_literal(-0.0) == "-0.0f"
    for v in EDGE_VALUES:
        text = f32_literal(v)
        assert text.endswith("f") and any(c in text for c in ".e"), text


def test_literals_round_trip_in_python():
    for v in EDGE_VALUES:
        assert np.float32(float(f32_literal(v)[:-1])) == np.float32(v)


def test_literals_round_trip_through_the_c_compiler(tmp_path, gcc):
    """Compile a program that prints the bits of each literal and compare them with NumPy's float32 rounding."""
    body = "\n".join(f'    f = {f32_literal(v)}; memcpy(&u, &f, 4); printf("%08lx\\n", (unsigned long)u);'
                     for v in EDGE_VALUES)
    src = tmp_path / "bits.c"
    src.write_text("#include <stdio.h>\n#include <string.h>\n#include <stdint.h>\n"
                   f"int main(void)\n{{\n    float f;\n    uint32_t u;\n{body}\n    return 0;\n}}\n")
    exe = tmp_path / "bits"
    subprocess.run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", str(src), "-o", str(exe)], check=True)
    printed = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.split()
    expected = [f"{int(np.float32(v).view(np.uint32)):08x}" for v in EDGE_VALUES]
    assert printed == expected


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_a_non_finite_weight_is_refused_naming_the_tensor(bad):
    w = np.ones((2, 3), dtype=np.float32)
    w[1, 2] = bad
    x = Variable.from_numpy(np.zeros((2, 3), dtype=np.float32), name="input")
    y = AddOp()(x, Parameter(w, name="fc1.weight"))
    with pytest.raises(ExportError, match=r"'fc1.weight'.*index \(1, 2\)"):
        graph_from_root(y, x)


def test_a_float64_weight_that_overflows_float32_is_refused():
    x = Variable.from_numpy(np.zeros(2, dtype=np.float32), name="input")
    y = AddOp()(x, Parameter(np.array([1.0, 1e300]), name="huge"))
    with pytest.raises(ExportError, match="'huge'"):
        graph_from_root(y, x)
