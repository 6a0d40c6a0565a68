"""Tensor and model names become unique, valid C identifiers that compile."""

from __future__ import annotations

import re

import numpy as np

from autograd_lab import Parameter, Variable
from autograd_lab.export.names import C_KEYWORDS, NameTable, c_identifier
from autograd_lab.ops import AddOp

NASTY = ["fc1.weight", "fc1_weight", "double", "2nd", "int", "", "é", "__x", "main", "fc1-weight"]


def test_identifiers_are_valid_and_not_keywords():
    for name in NASTY:
        ident = c_identifier(name)
        assert re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", ident), (name, ident)
        assert ident not in C_KEYWORDS


def test_clashing_names_get_distinct_identifiers():
    table = NameTable("m")
    idents = [table.unique(n) for n in NASTY + NASTY]
    assert len(set(idents)) == len(idents)
    assert idents[0] == "m_fc1_weight" and idents[1] == "m_fc1_weight_2"


def test_clashing_and_keyword_names_compile_and_compute(run_in_c):
    """Constants named 'fc1.weight', 'fc1_weight', 'double' and '2nd' in a model named 'double' (a C keyword)."""
    names = ["fc1.weight", "fc1_weight", "double", "2nd"]

    def build(x: Variable) -> Variable:
        for i, name in enumerate(names):
            x = AddOp()(x, Parameter(np.full(3, 10.0 ** i, dtype=np.float32), name=name))
        return x

    x = np.arange(6, dtype=np.float32).reshape(2, 1, 3)
    np.testing.assert_array_equal(run_in_c(build, x, name="double"), x.reshape(2, 3) + np.float32(1111))
