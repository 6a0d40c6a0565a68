"""Chapter 04 (gradient checking): plausible wrong answers to numerical_grad, gradcheck, find_broken and the fixed
operators."""

from ..spec import Mutant

_GRAD_BY_INDEX = '''def numerical_grad(f, x, eps: float = 1e-6) -> np.ndarray:
    """Central-difference gradient of the scalar function f at x, computed in float64 (same shape as x)."""
    point = np.array(x, dtype=np.float64)
    grad = np.zeros_like(point)
    for i in range(len(point)):
        original = point[i].copy()
        point[i] = original + eps
        up = float(f(point))
        point[i] = original - eps
        down = float(f(point))
        point[i] = original
        grad[i] = (up - down) / (2 * eps)
    return grad
'''

_GRAD_MATLAB_STYLE = _GRAD_BY_INDEX.replace("range(len(point))", "range(point.size)")

MUTANTS = [
    # numerical_grad
    Mutant("numerical_grad_code", "forward difference", edits=[
        ("        point.flat[i] = original - eps\n        down = float(f(point))\n",
         "        point.flat[i] = original\n        down = float(f(point))\n"),
        ("(up - down) / (2 * eps)", "(up - down) / eps")], says=r"forward difference|one-sided"),
    Mutant("numerical_grad_code", "divides by eps instead of 2·eps",
           edits=[("(up - down) / (2 * eps)", "(up - down) / eps")], says=r"2h|2·eps|2 \* eps"),
    Mutant("numerical_grad_code", "a fixed step of 1e-6 whatever eps says",
           edits=[("original + eps", "original + 1e-6"), ("original - eps", "original - 1e-6"),
                  ("(2 * eps)", "(2 * 1e-6)")], says=r"argument eps"),
    Mutant("numerical_grad_code", "a nudged element is not put back",
           edits=[("        point.flat[i] = original\n        grad", "        grad")], says=r"put back|one element"),
    Mutant("numerical_grad_code", "nudges x itself instead of a float64 copy",
           edits=[("point = np.array(x, dtype=np.float64)", "point = x")], says=r"x itself"),
    Mutant("numerical_grad_code", "the copy keeps x's dtype (float32 reaches f)",
           edits=[("point = np.array(x, dtype=np.float64)", "point = np.array(x)")], says=r"float64"),
    Mutant("numerical_grad_code", "the result takes x's dtype", edits=[("grad = np.zeros_like(point)", "grad = np.zeros_like(x)")],
           says=r"float64"),
    Mutant("numerical_grad_code", "indexes rows (point[i]) instead of elements", source=_GRAD_BY_INDEX,
           says=r"x\.flat|0-d"),
    Mutant("numerical_grad_code", "MATLAB-style linear index x[i] for i up to x.size", source=_GRAD_MATLAB_STYLE,
           says=r"x\.flat\[i\].*np\.ndindex"),
    Mutant("numerical_grad_code", "returns a flat array", edits=[("grad = np.zeros_like(point)", "grad = np.zeros(point.size)")],
           says=r"x's shape"),
    # gradcheck
    Mutant("gradcheck_code", "r = ones instead of a random direction",
           edits=[("r = np.random.default_rng(seed).standard_normal(y.shape)", "r = np.ones(y.shape)")],
           says=r"random|ignores gy"),
    Mutant("gradcheck_code", "seed argument ignored", edits=[("default_rng(seed)", "default_rng(0)")], says=r"seed argument"),
    Mutant("gradcheck_code", "numerical side reuses y from step 1 instead of a fresh operator",
           edits=[("return np.sum(r * y_k.data)", "return np.sum(r * y.data)")], says=r"fresh|y_k"),
    Mutant("gradcheck_code", "numerical side differentiates sum(y), without r",
           edits=[("return np.sum(r * y_k.data)", "return np.sum(y_k.data)")], says=r"same r|r \* y_k"),
    Mutant("gradcheck_code", "message counts inputs from 1", edits=[("gradient of input {k} is wrong", "gradient of input {k + 1} is wrong")],
           says=r"input index|from 0|input 1"),
    Mutant("gradcheck_code", "message names the factory, not the operator's class",
           edits=[("f\"{op!r}: gradient", "f\"{op_factory!r}: gradient")], says=r"operator class"),
    Mutant("gradcheck_code", "returns after checking the first input",
           edits=[("                f\"analytic:\\n{analytic}\\nnumeric:\\n{numeric}\"\n            )\n    return True",
                   "                f\"analytic:\\n{analytic}\\nnumeric:\\n{numeric}\"\n            )\n        return True")],
           says=r"every input"),
    Mutant("gradcheck_code", "returns False instead of raising",
           edits=[("            worst = float(np.max(np.abs(analytic - numeric)))\n            raise AssertionError(",
                   "            worst = float(np.max(np.abs(analytic - numeric)))\n            return False\n            raise AssertionError(")],
           says=r"returned False"),
    Mutant("gradcheck_code", "raises ValueError", edits=[("            raise AssertionError(", "            raise ValueError(")],
           says=r"should raise AssertionError"),
    # find_broken
    Mutant("find_broken_code", "catches only AssertionError", edits=[("except Exception:", "except AssertionError:")],
           says=r"every Exception"),
    Mutant("find_broken_code", "no try: a failing check propagates",
           edits=[("        try:\n            gradcheck(op_factory, inputs)\n        except Exception:  # a mismatch (AssertionError) or a crash (ShapeError, ...): broken either way\n            broken.add(name)",
                   "        if not gradcheck(op_factory, inputs):\n            broken.add(name)")],
           says=r"catch the exception"),
    Mutant("find_broken_code", "returns a list", edits=[("    return broken", "    return sorted(broken)")], says=r"return a set"),
    Mutant("find_broken_code", "returns the names that pass",
           edits=[("    return broken", "    return set(candidates) - broken")], says=r"FAILS|not the ones that pass"),
    Mutant("find_broken_code", "stops at the first broken one",
           edits=[("            broken.add(name)", "            broken.add(name)\n            return broken")],
           says=r"every candidate|first"),
    Mutant("find_broken_code", "too strict tolerances",
           edits=[("gradcheck(op_factory, inputs)", "gradcheck(op_factory, inputs, atol=1e-12, rtol=1e-12)")],
           says=r"toleranc"),
    Mutant("find_broken_code", "passes an operator where gradcheck wants the factory",
           edits=[("gradcheck(op_factory, inputs)", "gradcheck(op_factory(), inputs)")], says=r"op_factory\(\)|the factory"),
    Mutant("find_broken_code", "collects the factories, not the names",
           edits=[("            broken.add(name)", "            broken.add(op_factory)")], says=r"return the names"),
    # the fixed operators
    Mutant("fixed_ops_code", "FixedSubOp: the minus sign on the wrong input",
           edits=[("return [gy, -gy]", "return [-gy, gy]")], says=r"minus sign"),
    Mutant("fixed_ops_code", "FixedSubOp left as it was", edits=[("return [gy, -gy]", "return [gy, gy]")], says=r"minus sign"),
    Mutant("fixed_ops_code", "FixedDivOp: a / b, not a / b²", edits=[("-gy * a / b**2", "-gy * a / b")],
           says=r"power of b"),
    Mutant("fixed_ops_code", "FixedDivOp: da forgets gy", edits=[("return [gy / b, ", "return [1.0 / b, ")],
           says=r"multiplied by gy"),
    Mutant("fixed_ops_code", "FixedSigmoidOp: uses the input x, not the output σ(x)",
           edits=[("        y = self.output\n", "        (y,) = self.inputs\n")], says=r"σ\(x\), not x|self\.output"),
    Mutant("fixed_ops_code", "FixedDivOp: the sign of db", edits=[("-gy * a / b**2", "gy * a / b**2")], says=r"the sign"),
    Mutant("fixed_ops_code", "FixedSigmoidOp: forgets gy", edits=[("return [gy * y * (1.0 - y)]", "return [y * (1.0 - y)]")],
           says=r"multiplied by gy"),
    Mutant("fixed_ops_code", "FixedSquareOp: forgets gy", edits=[("return [gy * 2.0 * a]", "return [2.0 * a]")],
           says=r"multiplied by gy"),
    Mutant("fixed_ops_code", "FixedSquareOp: forgets the factor 2", edits=[("return [gy * 2.0 * a]", "return [gy * a]")],
           says=r"factor 2"),
]
