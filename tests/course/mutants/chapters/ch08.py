"""Chapter 08 (regularisation and optimizers): plausible wrong answers to every graded exercise."""

from ..spec import Mutant

_ADAM_ADD = "            p.add_(-self.lr * m_hat / (np.sqrt(v_hat) + self.eps))\n"
_ADAM_LOOP_HEAD = ("        for p, m, v in zip(self.params, self.m, self.v):\n            if p.grad is None:\n"
                   "                continue\n")

MUTANTS = [
    # DropoutOp
    Mutant("dropout_code", "no inverted scaling", edits=[("keep.astype(x.dtype) / x.dtype.type(1 - self.p)",
                                                          "keep.astype(x.dtype)")], says=r"1/\(1-p\)"),
    Mutant("dropout_code", "scaled by 1/p instead of 1/(1-p)", edits=[("x.dtype.type(1 - self.p)", "x.dtype.type(self.p)")],
           says=r"1/p\b"),
    Mutant("dropout_code", "keeps the draws below p", edits=[(">= self.p", "< self.p")], says=r">= p"),
    Mutant("dropout_code", "drops in evaluation mode too",
           edits=[("        if not Engine.is_training:\n            self.scaled_mask = None\n            return x\n", "")],
           says=r"eval_mode|identity"),
    Mutant("dropout_code", "backward scales but forgets the mask",
           edits=[("return [gy * self.scaled_mask]", "return [gy / (1 - self.p)]")], says=r"dropped units get 0"),
    Mutant("dropout_code", "backward reads the mode instead of the saved mask",
           edits=[("        if self.scaled_mask is None:\n            return [gy]",
                   "        if not Engine.is_training:\n            return [gy]")], says=r"forward saved|saved mask"),
    Mutant("dropout_code", "float64 mask turns float32 input into float64",
           edits=[("keep.astype(x.dtype) / x.dtype.type(1 - self.p)", "keep / (1 - self.p)")], says=r"float32"),
    Mutant("dropout_code", "writes the mask into the input in place",
           edits=[("        return x * self.scaled_mask", "        x *= self.scaled_mask\n        return x")],
           says=r"read-only"),
    # LayerNormOp
    Mutant("layer_norm_code", "variance by the shortcut mean(x**2) - mean(x)**2",
           edits=[("var = (centred * centred).mean(axis=-1, keepdims=True)",
                   "var = (x * x).mean(axis=-1, keepdims=True) - x.mean(axis=-1, keepdims=True) ** 2")],
           says=r"centred values"),
    Mutant("layer_norm_code", "unbiased variance (divides by D - 1)",
           edits=[("var = (centred * centred).mean(axis=-1, keepdims=True)",
                   "var = (centred * centred).sum(axis=-1, keepdims=True) / (x.shape[-1] - 1)")],
           says=r"unbiased|D - 1"),
    Mutant("layer_norm_code", "normalises over the first axis",
           edits=[("centred = x - x.mean(axis=-1, keepdims=True)", "centred = x - x.mean(axis=0, keepdims=True)"),
                  ("var = (centred * centred).mean(axis=-1, keepdims=True)",
                   "var = (centred * centred).mean(axis=0, keepdims=True)")], says=r"last axis"),
    Mutant("layer_norm_code", "forgot keepdims", edits=[("centred = x - x.mean(axis=-1, keepdims=True)",
                                                         "centred = x - x.mean(axis=-1)")], says=r"keepdims"),
    Mutant("layer_norm_code", "eps added to the standard deviation, outside the square root",
           edits=[("1.0 / np.sqrt(var + self.eps)", "1.0 / (np.sqrt(var) + self.eps)")], says=r"inside the square root"),
    Mutant("layer_norm_code", "backward without the xhat * mean(g * xhat) term",
           edits=[(" - xhat * (g * xhat).mean(axis=-1, keepdims=True))", ")")], says=r"lacks the term"),
    Mutant("layer_norm_code", "backward forgets gamma", edits=[("g = gy * gamma", "g = gy")], says=r"reaching xhat"),
    Mutant("layer_norm_code", "gamma and beta gradients summed over axis 0 only",
           edits=[("rows = tuple(range(x.ndim - 1))", "rows = 0")], says=r"every axis but the last"),
    Mutant("layer_norm_code", "gamma's and beta's gradients swapped",
           edits=[("return [dx, (gy * xhat).sum(axis=rows), gy.sum(axis=rows)]",
                   "return [dx, gy.sum(axis=rows), (gy * xhat).sum(axis=rows)]")], says=r"d/d beta"),
    # Adam
    Mutant("adam_code", "no bias correction", edits=[("m_hat = m / (1 - beta1**self.t)", "m_hat = m"),
                                                     ("v_hat = v / (1 - beta2**self.t)", "v_hat = v")],
           says=r"bias correction"),
    Mutant("adam_code", "step count starts at 0 (incremented after the update)",
           edits=[("        self.t += 1\n        for p", "        for p"), (_ADAM_ADD, _ADAM_ADD + "        self.t += 1\n")],
           says=r"t = 1"),
    Mutant("adam_code", "eps inside the square root", edits=[("np.sqrt(v_hat) + self.eps", "np.sqrt(v_hat + self.eps)")],
           says=r"eps"),
    Mutant("adam_code", "v averages g, not g squared", edits=[("v += (1 - beta2) * g * g", "v += (1 - beta2) * g")],
           says=r"squared"),
    Mutant("adam_code", "step counter bumped once per parameter",
           edits=[("        self.t += 1\n" + _ADAM_LOOP_HEAD, _ADAM_LOOP_HEAD + "            self.t += 1\n")],
           says=r"step\(\) calls"),
    Mutant("adam_code", "m and v rebound locally: the running averages are lost",
           edits=[("            m *= beta1\n            m += (1 - beta1) * g\n            v *= beta2\n"
                   "            v += (1 - beta2) * g * g\n",
                   "            m = beta1 * m + (1 - beta1) * g\n            v = beta2 * v + (1 - beta2) * g * g\n")],
           says=r"between steps"),
    Mutant("adam_code", "betas swapped", edits=[("beta1, beta2 = self.betas", "beta2, beta1 = self.betas")],
           says=r"swapped"),
    Mutant("adam_code", "zero_grad fills zeros instead of None",
           edits=[("            p.grad = None", "            p.grad = np.zeros_like(p.data)")], says=r"None"),
    # stalled_parameters
    Mutant("stalled_code", "only a missing gradient counts", edits=[(" or not np.any(p.grad)", "")], says=r"all-zero"),
    Mutant("stalled_code", "any zero entry counts", edits=[("not np.any(p.grad)", "not np.all(p.grad)")],
           says=r"some zero entries"),
    Mutant("stalled_code", "a gradient summing to zero counts", edits=[("not np.any(p.grad)", "np.sum(p.grad) == 0")],
           says=r"sums to zero"),
    Mutant("stalled_code", "returns the parameters, not their names",
           edits=[("return [name for name, p in", "return [p for name, p in")], says=r"names"),
    Mutant("stalled_code", "names sorted", edits=[("return [name for name, p in model.named_parameters() if p.grad is None "
                                                   "or not np.any(p.grad)]",
                                                   "return sorted(name for name, p in model.named_parameters() if p.grad "
                                                   "is None or not np.any(p.grad))")], says=r"order"),
    Mutant("stalled_code", "returns a set", edits=[("return [name for", "return {name for"),
                                                   ("not np.any(p.grad)]", "not np.any(p.grad)}")], says=r"a list"),
    Mutant("stalled_code", "looks at the values, not the gradients",
           edits=[("p.grad is None or not np.any(p.grad)", "not np.any(p.data)")], says=r"values"),
    # nan_op
    Mutant("nan_op_code", "the op of the first NaN (inf / inf), not of the first inf",
           edits=[('nan_op = "ExpOp"', 'nan_op = "DivOp"')], says=r"first non-finite"),
    Mutant("nan_op_code", "the usual suspect, log", edits=[('nan_op = "ExpOp"', 'nan_op = "LogOp"')],
           says=r"already non-finite"),
    Mutant("nan_op_code", "the layer that made the large logits", edits=[('nan_op = "ExpOp"', 'nan_op = "MatMulOp"')],
           says=r"large but finite"),
    Mutant("nan_op_code", "a function name, not the class name", edits=[('nan_op = "ExpOp"', 'nan_op = "exp"')],
           says=r"class name"),
    Mutant("nan_op_code", "the class itself, not its name", edits=[('nan_op = "ExpOp"', "nan_op = ExpOp")],
           says=r"class name"),
    Mutant("nan_op_code", "the error's class", edits=[('nan_op = "ExpOp"', 'nan_op = "AnomalyError"')],
           says=r"operator"),
    # global_grad_norm
    Mutant("grad_norm_code", "squares in float32 overflow", edits=[("p.grad.astype(np.float64) ** 2", "p.grad ** 2")],
           says=r"float64|overflow"),
    Mutant("grad_norm_code", "adds the per-parameter norms",
           edits=[("total += float(np.sum(p.grad.astype(np.float64) ** 2))",
                   "total += float(np.sqrt(np.sum(p.grad.astype(np.float64) ** 2)))"),
                  ("return float(np.sqrt(total))", "return float(total)")], says=r"added"),
    Mutant("grad_norm_code", "forgot the square root", edits=[("return float(np.sqrt(total))", "return float(total)")],
           says=r"square root"),
    Mutant("grad_norm_code", "does not skip a missing gradient",
           edits=[("        if p.grad is not None:\n", "        if True:\n")], says=r"None"),
    Mutant("grad_norm_code", "mean of squares", edits=[("np.sum(p.grad.astype(np.float64) ** 2)",
                                                        "np.mean(p.grad.astype(np.float64) ** 2)")], says=r"mean"),
    Mutant("grad_norm_code", "= for +=: only the last gradient counts", edits=[("total += float", "total = float")],
           says=r"\+="),
    # graph_size
    Mutant("graph_size_code", "counts a shared Variable once per use", source=(
        "def graph_size(root):\n    count = 1\n    stack = [root]\n    while stack:\n        node = stack.pop()\n"
        "        for parent in node.parents:\n            count += 1\n            stack.append(parent)\n"
        "    return count\n"), says=r"once"),
    Mutant("graph_size_code", "recursive walk", source=(
        "def graph_size(root):\n    seen = set()\n\n    def visit(v):\n        if id(v) in seen:\n            return\n"
        "        seen.add(id(v))\n        for parent in v.parents:\n            visit(parent)\n\n    visit(root)\n"
        "    return len(seen)\n"), says=r"recursion"),
    Mutant("graph_size_code", "root not counted", edits=[("seen = {id(root)}", "seen = set()")], says=r"root"),
    Mutant("graph_size_code", "Variables compared by value",
           edits=[("seen = {id(root)}", "seen = {root.data.tobytes()}"),
                  ("if id(parent) not in seen:", "if parent.data.tobytes() not in seen:"),
                  ("seen.add(id(parent))", "seen.add(parent.data.tobytes())")], says=r"identity"),
    Mutant("graph_size_code", "direct parents only", source=(
        "def graph_size(root):\n    return 1 + len({id(p) for p in root.parents})\n"), says=r"all the way"),
    Mutant("graph_size_code", "leaves not counted", source=(
        "def graph_size(root):\n    seen = {id(root): root}\n    stack = [root]\n    while stack:\n"
        "        node = stack.pop()\n        for parent in node.parents:\n            if id(parent) not in seen:\n"
        "                seen[id(parent)] = parent\n                stack.append(parent)\n"
        "    return sum(1 for v in seen.values() if v.op is not None)\n"), says=r"leaves"),
    # leaky_loop
    Mutant("leaky_loop_code", "the loop that stores floats", edits=[('leaky_loop = "loop_b"', 'leaky_loop = "loop_a"')],
           says=r"loss\.item\(\)"),
    Mutant("leaky_loop_code", "a letter", edits=[('leaky_loop = "loop_b"', 'leaky_loop = "b"')],
           says=r"'loop_a' or 'loop_b'"),
    Mutant("leaky_loop_code", "a hyphen", edits=[('leaky_loop = "loop_b"', 'leaky_loop = "loop-b"')],
           says=r"'loop_a' or 'loop_b'"),
    Mutant("leaky_loop_code", "capitalised", edits=[('leaky_loop = "loop_b"', 'leaky_loop = "Loop_B"')],
           says=r"'loop_a' or 'loop_b'"),
    Mutant("leaky_loop_code", "both", edits=[('leaky_loop = "loop_b"', 'leaky_loop = "both"')],
           says=r"'loop_a' or 'loop_b'"),
    Mutant("leaky_loop_code", "a call", edits=[('leaky_loop = "loop_b"', 'leaky_loop = "loop_b()"')],
           says=r"'loop_a' or 'loop_b'"),
]
