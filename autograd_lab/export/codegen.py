"""Write the C99 header and source of a lowered model.

The source holds, in this order: the constants (``static const``, so they go to flash), one static arena per
activation type, the kernels the model needs (copied from ``templates/``), the ``<name>_predict`` entry point, which
calls the kernels in topological order, and ``<name>_argmax``. Nothing is allocated at run time and nothing is
printed; ``<math.h>`` is included only when an op needs ``expf``, ``tanhf``, ``logf`` or ``sqrtf``.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from importlib import resources

import numpy as np

from autograd_lab.export.batched import BMM_FIELDS
from autograd_lab.export.conv import CONV_BLOCK
from autograd_lab.export.floats import f32_array_body, f32_literal
from autograd_lab.export.lower import DENSE_BLOCK
from autograd_lab.export.memory import ArenaPlan, plan_arena
from autograd_lab.export.names import RESERVED, NameTable, c_comment, c_identifier, identifiers_in
from autograd_lab.export.steps import Step
from autograd_lab.export.trace import Graph, Tensor

# Kernel template -> templates it needs first.
_TEMPLATE_DEPS = {"dense_f32": ["layer", "mac", "activate", "bias_activate"], "matmul_f32": ["mac"],
                  "dense_q8": ["layer", "activate", "q8_common"],
                  "conv_f32": ["layer", "mac", "activate", "bias_activate", "conv_geom"],
                  "conv_q8": ["layer", "activate", "q8_common", "conv_geom"],
                  "conv_f32_q8": ["layer", "mac", "activate", "bias_activate", "conv_geom", "conv_f32", "q8_common"],
                  "add_f32": ["layer", "broadcast_f32"], "mul_f32": ["layer", "broadcast_f32"],
                  "softmax_f32": ["layer", "exp_f32"], "gelu_f32": ["layer", "exp_f32"], "bmm_f32": ["layer", "mac"],
                  "layer_norm_f32": ["layer"], "copy_f32": ["layer"], "mean_f32": ["layer"],
                  "quantize_q8": ["layer", "q8_common"]}
_KERNEL_OF = {"dense": "dense_f32", "matmul": "matmul_f32", "add": "add_f32", "mul": "mul_f32", "relu": "relu_f32",
              "leaky_relu": "leaky_relu_f32", "sigmoid": "sigmoid_f32", "tanh": "tanh_f32",
              "softmax": "softmax_f32", "log_softmax": "softmax_f32", "layer_norm": "layer_norm_f32",
              "quantize": "quantize_q8", "dense_q8": "dense_q8", "conv": "conv_f32", "conv_q8": "conv_q8",
              "conv_to_q8": "conv_f32_q8",
              "max_pool": "pool_f32", "avg_pool": "pool_f32", "to_chw": "to_chw_f32", "copy": "copy_f32",
              "bmm": "bmm_f32", "mean": "mean_f32", "gelu": "gelu_f32"}
_NEEDS_LIBM = {"sigmoid", "tanh", "softmax", "log_softmax", "layer_norm", "quantize", "dense_q8", "conv_q8",
               "conv_to_q8", "gelu"}
_INT_KINDS = {"quantize", "dense_q8", "conv_q8", "conv_to_q8", "softmax", "log_softmax", "gelu"}  # uint32_t


@dataclass
class GeneratedC:
    """The generated files and the numbers the header reports.

    Attributes:
        name: the C identifier of the model (prefix of every public symbol).
        header, source: file contents of ``<name>.h`` and ``<name>.c``.
        input_size, output_size: floats read from ``input`` and written to ``output``.
        arena_bytes: static RAM for activations.
        flash_bytes: bytes of constant data (weights, biases, scales); the code adds a few KB.
        macs: multiply-accumulates per call of ``<name>_predict``.
        step_flash: bytes of constant data each step added (in step order; a constant read by several steps
            counts for the first).
    """

    name: str
    header: str
    source: str
    input_size: int
    output_size: int
    arena_bytes: int
    flash_bytes: int
    macs: int
    step_flash: tuple[int, ...] = ()


def template(name: str) -> str:
    """The text of ``templates/<name>.c``."""
    return resources.files("autograd_lab.export").joinpath("templates", f"{name}.c").read_text()


def generate(graph: Graph, steps: list[Step], name: str, description: str = "") -> GeneratedC:
    """Emit C for ``steps`` (from :func:`~autograd_lab.export.lower.lower`, possibly quantized).

    Constants are named ``<model>_<tensor name>``; every identifier the generator writes otherwise (kernels and
    their macros, the header's macros and guard, the entry points and arenas) and the names of the standard headers
    are reserved first, so a tensor that would collide gets a ``_2`` suffix instead.

    Args:
        graph: the traced graph (for the input and output tensors).
        steps: kernel steps in execution order.
        name: the model name; it becomes a C identifier (:func:`model_identifier`) used as prefix.
        description: one line for the file comments (e.g. the model file it came from).
    """
    ident = model_identifier(name)
    names = NameTable(ident, emitted_identifiers(ident))
    out = graph.output
    plans = {pool: plan_arena(steps, pool, {id(out)}) for pool in ("f32", "q16")}
    emitter = _Emitter(ident, names, graph, plans)
    calls, step_flash = [], []
    for step in steps:
        before = emitter.flash_bytes
        calls.append(emitter.call(step))
        step_flash.append(emitter.flash_bytes - before)
    kernels = _kernel_sources(steps)
    arena_bytes = 4 * (plans["f32"].elements + plans["q16"].elements)
    macs = sum(s.macs for s in steps)
    sizes = _Sizes(graph.input.size, out.size, arena_bytes, emitter.flash_bytes, macs)
    io = (str(graph.input.shape), str(out.shape))
    header = _header(ident, io, sizes, description)
    includes = ["#include <stddef.h>"]
    if any(s.kind in _INT_KINDS for s in steps):
        includes.append("#include <stdint.h>")
    if any(s.kind in _NEEDS_LIBM for s in steps):
        includes.append("#include <math.h>")
    if any(s.kind in ("conv", "conv_q8", "conv_to_q8", "max_pool", "avg_pool") for s in steps):
        includes.append("\n" + template("conv_geom_type").rstrip())  # the constants include layer geometries
    source = _source(ident, sizes, description, includes, emitter.constants,
                     plans["f32"].elements, plans["q16"].elements, kernels, "\n".join(calls))
    return GeneratedC(ident, header, source, graph.input.size, out.size, arena_bytes, emitter.flash_bytes, macs,
                      tuple(step_flash))


@dataclass
class _Sizes:
    """The numbers the files report: floats in and out, arena and constant bytes, MACs per call."""

    input: int
    output: int
    arena: int
    flash: int
    macs: int


def model_identifier(name: str) -> str:
    """The C identifier of a model called ``name``: :func:`c_identifier`, with ``_m`` appended while one of the
    names it generates (``<ident>_predict``, ``<IDENT>_OK``...) would be a kernel's or a standard header's name."""
    ident = c_identifier(name)
    while _own_identifiers(ident) & (_template_identifiers() | RESERVED):
        ident += "_m"
    return ident


def emitted_identifiers(ident: str) -> frozenset[str]:
    """Every identifier that the generated header and source of model ``ident`` contain besides the constants:
    all kernel templates (whether used or not, so that naming does not depend on the model's ops) and the
    skeleton around them."""
    return _template_identifiers() | _skeleton_identifiers(ident)


def _skeleton_identifiers(ident: str) -> set[str]:
    sizes = _Sizes(1, 1, 0, 0, 0)
    return identifiers_in(_header(ident, ("", ""), sizes, "") + _source(ident, sizes, "", [], [], 1, 1, "", ""))


def _own_identifiers(ident: str) -> set[str]:
    """The skeleton's identifiers that are made from ``ident`` (``<ident>_predict``, ``<IDENT>_H``...)."""
    return _skeleton_identifiers(ident) - _fixed_identifiers()


@functools.cache
def _fixed_identifiers() -> frozenset[str]:
    """The skeleton's identifiers that do not depend on the model's name (NULL, uint32_t, input...)."""
    probe = "zqx"
    return frozenset(t for t in _skeleton_identifiers(probe) if probe not in t.lower())


@functools.cache
def _template_identifiers() -> frozenset[str]:
    folder = resources.files("autograd_lab.export").joinpath("templates")
    return frozenset(identifiers_in("\n".join(f.read_text() for f in folder.iterdir()
                                              if f.name.endswith(".c") and f.name != "host_main.c")))


def _source(ident: str, sizes: _Sizes, description: str, includes: list[str], constants: list[str], arena_f32: int,
            arena_q: int, kernels: str, body: str) -> str:
    macro = ident.upper()
    arenas = []
    if arena_f32:
        arenas.append(f"static float {ident}_arena_f32[{arena_f32}];")
    if arena_q:
        arenas.append(f"/* int8 activations as int16 pairs, two per word */\n"
                      f"static uint32_t {ident}_arena_q[{arena_q}];")
    about = f": {c_comment(description)}" if description else ""
    return f"""/* {ident}.c: inference of a model exported by autograd-lab{about}.
   Generated code: edit the model and export again rather than editing this file.
   Static memory only: weights are const (flash), activations share one arena (RAM), no malloc, no stdio. */
#include "{ident}.h"

{chr(10).join(includes)}

/* ---- constants ({sizes.flash} bytes) ---- */
{chr(10).join(constants)}

/* ---- arena ({sizes.arena} bytes, buffers reused once dead) ---- */
{chr(10).join(arenas) if arenas else '/* none: every step reads the input or writes the output directly */'}

/* ---- kernels ---- */
{kernels}
int {ident}_predict(const float *input, float *output)
{{
    if (input == NULL || output == NULL) {{
        return {macro}_ERR_NULL;
    }}
{body}
    return {macro}_OK;
}}

int {ident}_argmax(const float *scores)
{{
    int best = 0;
    int i;
    for (i = 1; i < {macro}_OUTPUT_SIZE; ++i) {{
        if (scores[i] > scores[best]) {{
            best = i;
        }}
    }}
    return best;
}}
"""


def _header(ident: str, io_shapes: tuple[str, str], sizes: _Sizes, description: str) -> str:
    macro = ident.upper()
    about = f": {c_comment(description)}" if description else ""
    return f"""/* {ident}.h: C interface of a model exported by autograd-lab{about}.
   Input shape {io_shapes[0]}, output shape {io_shapes[1]}, both float32 in row-major order. */
#ifndef {macro}_H
#define {macro}_H

#ifdef __cplusplus
extern "C" {{
#endif

#define {macro}_INPUT_SIZE {sizes.input}
#define {macro}_OUTPUT_SIZE {sizes.output}
/* Static RAM for activations, and bytes of constant data (weights) in flash; code comes on top. */
#define {macro}_ARENA_BYTES {sizes.arena}
#define {macro}_FLASH_BYTES {sizes.flash}
/* Multiply-accumulates per call. */
#define {macro}_MACS {sizes.macs}

#define {macro}_OK 0
#define {macro}_ERR_NULL 1

/* Run the model on {macro}_INPUT_SIZE floats and write {macro}_OUTPUT_SIZE floats.
   Returns {macro}_OK, or {macro}_ERR_NULL if a pointer is NULL. Not reentrant: it uses a static arena. */
int {ident}_predict(const float *input, float *output);

/* Index of the largest of the {macro}_OUTPUT_SIZE scores (the first one on ties): the predicted class. */
int {ident}_argmax(const float *scores);

#ifdef __cplusplus
}}
#endif

#endif /* {macro}_H */
"""


def _kernel_sources(steps: list[Step]) -> str:
    wanted: list[str] = []
    for step in steps:
        kernel = _KERNEL_OF[step.kind]
        for t in [*_TEMPLATE_DEPS.get(kernel, []), kernel]:
            if t not in wanted:
                wanted.append(t)
    return "\n".join(template(t) for t in wanted)


def conv_f32_layout(w: np.ndarray, groups: int = 1) -> np.ndarray:
    """A conv's (cout, patch) weight rows for ``al_conv_f32``: each group's cout / groups rows in the blocks of
    :func:`dense_f32_layout` (block ``CONV_BLOCK``), group after group."""
    return np.concatenate([dense_f32_layout(part, CONV_BLOCK) for part in np.split(np.asarray(w), groups)])


def dense_f32_layout(w: np.ndarray, block: int = DENSE_BLOCK) -> np.ndarray:
    """Reorder a (m, k) weight matrix for ``al_dense_f32`` (block 8) or ``al_dense4_f32`` (block 4, conv layers):
    blocks of ``block`` rows interleaved column by column, then the m % block remaining rows. Returns a flat float32
    array of m*k values."""
    m, k = w.shape
    nb = m // block
    blocks = w[:nb * block].reshape(nb, block, k).transpose(0, 2, 1).ravel()
    return np.concatenate([blocks, w[nb * block:].ravel()]).astype(np.float32)


class _Emitter:
    """Turns steps into C calls, collecting the constant arrays they need."""

    def __init__(self, ident: str, names: NameTable, graph: Graph, plans: dict[str, ArenaPlan]) -> None:
        self.ident = ident
        self.names = names
        self.graph = graph
        self.plans = plans
        self.constants: list[str] = []
        self.flash_bytes = 0
        self._const_names: dict[int, str] = {}

    def ref(self, t: Tensor) -> str:
        """The C expression of a tensor's data."""
        if t is self.graph.output:
            return "output"
        if t.kind == "input":
            return "input"
        if t.kind == "const":
            if id(t) not in self._const_names:
                self._const_names[id(t)] = self.array(t.name, np.asarray(t.value))
            return self._const_names[id(t)]
        pool = "arena_q" if t.dtype == "q16" else "arena_f32"
        return f"({self.ident}_{pool} + {self.plans[t.dtype].offsets[id(t)]})"

    def array(self, name: str, values: np.ndarray, comment: str = "") -> str:
        """Add a ``static const`` array (float32, or uint64 weight words) and return its identifier."""
        ident = self.names.unique(name)
        flat = values.ravel() if values.dtype == np.uint64 else np.asarray(values, dtype=np.float32).ravel()
        note = f"/* {c_comment(comment)} */\n" if comment else ""
        if flat.dtype == np.uint64:
            words = [f"0x{int(v):016x}ull" for v in flat]
            body = ",\n".join("    " + ", ".join(words[i:i + 4]) for i in range(0, len(words), 4))
            self.constants.append(f"{note}static const uint64_t {ident}[{flat.size}] = {{\n{body}\n}};")
        else:
            self.constants.append(f"{note}static const float {ident}[{flat.size}] = {{\n{f32_array_body(flat)}\n}};")
        self.flash_bytes += flat.itemsize * flat.size
        return ident

    def call(self, s: Step) -> str:
        p = s.params
        x, y = (self.ref(s.inputs[0]) if s.inputs else ""), self.ref(s.output)
        head = f"    /* {c_comment(f'{s.where} -> {s.output.name!r} {s.output.shape}')} */\n"
        if s.kind == "dense":
            w = self.array(f"{p['weight_name']}_blocked", dense_f32_layout(p["weight"]),
                           f"{p['weight_name']}: {p['m']} x {p['k']}, interleaved in blocks of {DENSE_BLOCK} rows")
            b = self.array(str(p["bias_name"]), p["bias"]) if p["bias"] is not None else "NULL"
            return head + (f"    al_dense_f32({x}, {w}, {b}, {y}, {p['rows']}, {p['k']}, {p['m']}, {p['act']}, "
                           f"{f32_literal(p['slope'])});")
        if s.kind == "matmul":
            b = self.ref(s.inputs[1])
            return head + (f"    al_matmul_f32({x}, {p['sa0']}, {p['sa1']}, {b}, {p['sb0']}, {p['sb1']}, {y}, "
                           f"{p['n']}, {p['k']}, {p['m']});")
        if s.kind in ("add", "mul"):
            b = self.ref(s.inputs[1])
            sa, sb, d = p["sa"], p["sb"], p["dims"]
            return head + (f"    al_{s.kind}_f32({x}, {sa[0]}, {sa[1]}, {sa[2]}, {b}, {sb[0]}, {sb[1]}, {sb[2]}, {y}, "
                           f"{d[0]}, {d[1]}, {d[2]});")
        if s.kind == "bmm":
            g, (oa, ob) = p["geom"], p["offsets"]
            a, b = (f"({self.ref(t)} + {o})" if o else self.ref(t) for t, o in zip(s.inputs, (oa, ob)))
            return head + (f"    al_bmm_f32({a}, {b}, {y}, {f32_literal(p['alpha'])}, "
                           f"{', '.join(str(g[f]) for f in BMM_FIELDS)});")
        if s.kind == "copy":
            src = f"({x} + {p['offset']})" if p["offset"] else x
            return head + f"    al_copy_f32({src}, {y}, {', '.join(map(str, [*p['dims'], *p['strides']]))});"
        if s.kind == "mean":
            return head + f"    al_mean_f32({x}, {y}, {p['outer']}, {p['n']}, {p['inner']});"
        if s.kind == "gelu":
            return head + f"    al_gelu_f32({x}, {y}, {p['n']});"
        if s.kind in ("relu", "sigmoid", "tanh"):
            return head + f"    al_{s.kind}_f32({x}, {y}, {p['n']});"
        if s.kind == "leaky_relu":
            return head + f"    al_leaky_relu_f32({x}, {y}, {p['n']}, {f32_literal(p['slope'])});"
        if s.kind in ("softmax", "log_softmax"):
            return head + f"    al_softmax_f32({x}, {y}, {p['outer']}, {p['n']}, {p['inner']}, {p['log']});"
        if s.kind == "layer_norm":
            gamma = self.ref(s.inputs[1]) if len(s.inputs) > 1 else "NULL"
            beta = self.ref(s.inputs[2]) if len(s.inputs) > 2 else "NULL"
            return head + (f"    al_layer_norm_f32({x}, {gamma}, {beta}, {y}, {p['rows']}, {p['n']}, "
                           f"{f32_literal(p['eps'])});")
        if s.kind == "quantize":
            return head + (f"    al_quantize_rows_q8({x}, {y}, {p['rows']}, {p['k']}, {p['kp']}, "
                           f"{f32_literal(p['inv_scale'])});")
        if s.kind == "dense_q8":
            w = self.array(f"{p['weight_name']}_q8", p["words"],
                           f"{p['weight_name']}: int8, {p['m']} x {p['kp']} padded to {p['mp']} rows, 4 per word")
            scale = self.array(f"{p['weight_name']}_scale", p["scale"], "input scale x per-row weight scale")
            b = self.array(str(p["bias_name"]), p["bias"]) if p["bias"] is not None else "NULL"
            yf, yq = (y, "NULL") if s.output.dtype == "f32" else ("NULL", y)
            return head + (f"    al_dense_q8({x}, {w}, {scale}, {b}, {yf}, {yq}, {f32_literal(p['out_inv_scale'])}, "
                           f"{p['rows']}, {p['kp']}, {p['m']}, {p['mp']}, {p['act']}, {f32_literal(p['slope'])});")
        if s.kind in ("conv", "conv_q8", "conv_to_q8", "max_pool", "avg_pool"):
            return head + self._conv_family(s, x, y)
        if s.kind == "to_chw":
            return head + f"    al_to_chw_f32({x}, {y}, {p['c']}, {p['h']}, {p['w']});"
        raise AssertionError(f"no C for step kind {s.kind}")

    def geometry(self, name: str, geom: dict[str, int]) -> str:
        """Add a ``static const al_conv_geom`` and return its identifier."""
        from autograd_lab.export.conv import GEOM_FIELDS

        ident = self.names.unique(name)
        values = ", ".join(str(int(geom.get(f, 0))) for f in GEOM_FIELDS)
        self.constants.append(f"/* {', '.join(GEOM_FIELDS)} */\nstatic const al_conv_geom {ident} = {{{values}}};")
        self.flash_bytes += 4 * len(GEOM_FIELDS)
        return ident

    def _conv_family(self, s: Step, x: str, y: str) -> str:
        p = s.params
        g = p["geom"]
        if s.kind in ("max_pool", "avg_pool"):
            geom = self.geometry(f"{s.output.name}_geom", g)
            return f"    al_pool_f32({x}, {y}, &{geom}, {int(s.kind == 'avg_pool')});"
        name = p["weight_name"]
        geom = self.geometry(f"{name}_geom", g)
        b = self.array(str(p["bias_name"]), p["bias"]) if p["bias"] is not None else "NULL"
        shape = f"{g['cout']} x {g['cin']} x {g['kh']} x {g['kw']}"
        if s.kind in ("conv", "conv_to_q8") and g.get("direct") == 1:
            w = self.array(f"{name}_rows", p["weight"], f"{name}: {shape} as {p['m']} rows of the 3 x 3 window")
        elif s.kind in ("conv", "conv_to_q8") and g.get("direct") == 2:
            w = self.array(f"{name}_taps", np.ascontiguousarray(np.asarray(p["weight"]).T),
                           f"{name}: depthwise {shape} as {p['k']} taps of {p['m']} channels")
        elif s.kind in ("conv", "conv_to_q8"):
            w = self.array(f"{name}_blocked", conv_f32_layout(p["weight"], int(g.get("groups", 1))),
                           f"{name}: {shape} as {p['m']} rows of (kh, kw, c_in) patches, blocks of {CONV_BLOCK} rows")
        if s.kind == "conv":
            # patches, sums (none for the direct kernel)
            f_buffers = ", ".join([self.ref(t) for t in s.scratch] + ["NULL"] * (2 - len(s.scratch)))
            return (f"    al_conv_f32({x}, {w}, {b}, {y}, {f_buffers}, &{geom}, {p['act']}, "
                    f"{f32_literal(p['slope'])}, 0, {g['ph']});")
        if s.kind == "conv_to_q8":
            # row, patches, sums (only the row for the direct kernel)
            row_buffers = ", ".join([self.ref(t) for t in s.scratch] + ["NULL"] * (3 - len(s.scratch)))
            return (f"    al_conv_f32_q8({x}, {w}, {b}, {y}, {f32_literal(p['out_inv_scale'])}, {row_buffers}, "
                    f"&{geom}, {p['act']}, {f32_literal(p['slope'])});")
        w = self.array(f"{name}_q8", p["words"], f"{name}: int8, {shape} as {p['mp']} rows of {p['kp']} (padded), "
                                                  "4 per word")
        scale = self.array(f"{name}_scale", p["scale"], "input scale x per-channel weight scale")
        xf, xq = ("NULL", x) if s.inputs[0].dtype == "q16" else (x, "NULL")
        yf, yq = (y, "NULL") if s.output.dtype == "f32" else ("NULL", y)
        buffers = list(s.scratch)  # [float patch (float input only)], int8 patch, window maximum of the sums
        fpatch = self.ref(buffers.pop(0)) if xf != "NULL" else "NULL"
        qpatch, best = (self.ref(t) for t in buffers)
        best = f"(int32_t *){best}"  # int32 sums in the word arena
        return (f"    al_conv_q8({xf}, {xq}, {f32_literal(p['in_inv_scale'])}, {w}, {scale}, {b}, {yf}, {yq}, "
                f"{f32_literal(p['out_inv_scale'])}, {fpatch}, {qpatch}, {best}, &{geom}, {p['kp']}, "
                f"{p['mp']}, {p['act']}, {f32_literal(p['slope'])});")
