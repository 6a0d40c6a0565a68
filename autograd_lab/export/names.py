"""Turn tensor and model names into unique, valid C identifiers that cannot collide with anything else in the files.

C99 identifiers are letters, digits and underscores, not starting with a digit (ISO/IEC 9899:1999 §6.4.2). They must
not be keywords (§6.4.1), and names that start with an underscore followed by a capital or another underscore are
reserved for the implementation (§7.1.3), as are the names of the standard headers we include (``<stddef.h>``,
``<stdint.h>``, ``<math.h>``, and ``<stdio.h>`` in the host driver). Names also must not meet a kernel function or
macro of ``templates/``, or a macro, function or array the generator writes: :mod:`~autograd_lab.export.codegen`
reserves all of those in the :class:`NameTable` before it names any tensor.
"""

from __future__ import annotations

import re

C_KEYWORDS = frozenset(
    "auto break case char const continue default do double else enum extern float for goto if inline int long "
    "register restrict return short signed sizeof static struct switch typedef union unsigned void volatile while "
    "_Bool _Complex _Imaginary".split()
)


def _stdint_names() -> set[str]:
    names = {"intptr_t", "uintptr_t", "intmax_t", "uintmax_t", "INTPTR_MIN", "INTPTR_MAX", "UINTPTR_MAX",
             "INTMAX_MIN", "INTMAX_MAX", "UINTMAX_MAX", "INTMAX_C", "UINTMAX_C", "PTRDIFF_MIN", "PTRDIFF_MAX",
             "SIG_ATOMIC_MIN", "SIG_ATOMIC_MAX", "SIZE_MAX", "WCHAR_MIN", "WCHAR_MAX", "WINT_MIN", "WINT_MAX"}
    for n in (8, 16, 32, 64):
        for kind in ("", "_least", "_fast"):
            names |= {f"int{kind}{n}_t", f"uint{kind}{n}_t", f"INT{kind.upper()}{n}_MIN",
                      f"INT{kind.upper()}{n}_MAX", f"UINT{kind.upper()}{n}_MAX"}
        names |= {f"INT{n}_C", f"UINT{n}_C"}
    return names


_MATH_NAMES = (
    "float_t double_t HUGE_VAL HUGE_VALF HUGE_VALL INFINITY NAN FP_INFINITE FP_NAN FP_NORMAL FP_SUBNORMAL FP_ZERO "
    "FP_FAST_FMA FP_FAST_FMAF FP_FAST_FMAL FP_ILOGB0 FP_ILOGBNAN MATH_ERRNO MATH_ERREXCEPT math_errhandling "
    # POSIX constants, defined by <math.h> outside strict ISO mode
    "M_E M_LOG2E M_LOG10E M_LN2 M_LN10 M_PI M_PI_2 M_PI_4 M_1_PI M_2_PI M_2_SQRTPI M_SQRT2 M_SQRT1_2 "
    # newlib's extras, outside strict ISO mode
    "M_TWOPI M_3PI_4 M_SQRTPI M_LN2LO M_LN2HI M_SQRT3 M_IVLN10 M_LOG2_E M_INVLN2 "
    "expf tanhf sqrtf logf fabsf"
)
_STDIO_NAMES = (
    "FILE fpos_t BUFSIZ EOF FILENAME_MAX FOPEN_MAX L_tmpnam SEEK_CUR SEEK_END SEEK_SET TMP_MAX stdin stdout stderr "
    "fread fwrite ferror feof printf"
)

# A model's files are <ident>.h and <ident>.c, found through -I before the system headers: math.h must stay libm's.
_HEADER_FILES = (
    "assert complex ctype errno fenv float inttypes iso646 limits locale math setjmp signal stdarg stdbool stddef "
    "stdint stdio stdlib string tgmath time wchar wctype samples startup"
)

#: Names the C library or the build (object and header files) already uses; exact spellings.
RESERVED = frozenset(
    {"main", "input", "output", "arena", "malloc", "free", "memcpy", "memset", "NULL",
     "offsetof", "size_t", "ptrdiff_t", "wchar_t", "max_align_t"} | set(_HEADER_FILES.split())
    | _stdint_names() | set(_MATH_NAMES.split()) | set(_STDIO_NAMES.split())
)

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def c_identifier(name: str) -> str:
    """Map ``name`` to a valid C identifier: other characters become ``_``, a leading digit gets a ``t_`` prefix,
    keywords and reserved names get a ``_v`` suffix. Uniqueness is :class:`NameTable`'s job.

    Examples: ``fc1.weight`` -> ``fc1_weight``, ``2nd`` -> ``t_2nd``, ``double`` -> ``double_v``.
    """
    ident = re.sub(r"[^A-Za-z0-9_]", "_", name) or "t"
    ident = ident.lstrip("_") or "t"  # a leading underscore risks the reserved _X and __x forms
    if ident[0].isdigit():
        ident = "t_" + ident
    if ident in C_KEYWORDS or ident in RESERVED:
        ident += "_v"
    return ident


def identifiers_in(c_text: str) -> set[str]:
    """Every identifier token of a piece of C, comments and string literals left out (over-collecting is safe: the
    result is used to reserve names)."""
    code = re.sub(r"/\*.*?\*/|//[^\n]*|\"(?:\\.|[^\"\\\n])*\"", " ", c_text, flags=re.S)
    return set(_IDENT.findall(code))


def c_comment(text: str) -> str:
    """``text`` made safe inside a ``/* ... */`` comment: ASCII only, no newline or control character, no ``*/`` or
    ``/*`` (either would end the comment or trip ``-Wcomment``) and no two ``?`` in a row (a trigraph in C99)."""
    text = text.encode("ascii", "backslashreplace").decode("ascii")
    text = "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in text)
    return text.replace("*/", "* /").replace("/*", "/ *").replace("?", "\\?")


class NameTable:
    """Hand out unique C identifiers under a common prefix, avoiding a set of reserved identifiers.

    ``NameTable("mnist").unique("fc1.weight")`` gives ``mnist_fc1_weight``; asking again for ``fc1_weight`` (a
    different name mapping to the same identifier) gives ``mnist_fc1_weight_2``. With ``reserved={"al_relu_f32"}``,
    ``NameTable("al", reserved).unique("relu_f32")`` gives ``al_relu_f32_2``.
    """

    def __init__(self, prefix: str = "", reserved: set[str] | frozenset[str] = frozenset()) -> None:
        self.prefix = prefix
        self._taken: set[str] = set(reserved) | RESERVED | C_KEYWORDS

    def reserve(self, *idents: str) -> None:
        """Mark identifiers as used elsewhere, so :meth:`unique` never returns them."""
        self._taken.update(idents)

    def unique(self, name: str) -> str:
        """A new identifier for ``name``, never returned before by this table and not reserved."""
        base = c_identifier(f"{self.prefix}_{name}" if self.prefix else name)
        ident, n = base, 2
        while ident in self._taken:
            ident, n = f"{base}_{n}", n + 1
        self._taken.add(ident)
        return ident
