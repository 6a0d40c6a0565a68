"""Chapter 02 (operators): plausible wrong answers. A trial list to shake out the harness."""

from ..spec import Mutant

MUTANTS = [
    Mutant("add_op_code", "b's gradient negated", edits=[("return [gy, gy]", "return [gy, -gy]")], says=r"b"),
    Mutant("sub_op_code", "input order swapped in forward", edits=[("return a - b", "return b - a")],
           says=r"order|a - b"),
    Mutant("mul_op_code", "gradients swapped", edits=[("return [gy * b, gy * a]", "return [gy * a, gy * b]")],
           says=r"swap|dy/da"),
]
