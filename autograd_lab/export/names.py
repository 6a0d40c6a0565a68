"""Turn tensor and model names into unique, valid C identifiers.

C99 identifiers are letters, digits and underscores, not starting with a digit (ISO/IEC 9899:1999 §6.4.2). They must
not be keywords (§6.4.1), and names that start with an underscore followed by a capital or another underscore are
reserved for the implementation (§7.1.3), as are the names of the standard library we link (``expf``...).
"""

from __future__ import annotations

import re

C_KEYWORDS = frozenset(
    "auto break case char const continue default do double else enum extern float for goto if inline int long "
    "register restrict return short signed sizeof static struct switch typedef union unsigned void volatile while "
    "_Bool _Complex _Imaginary".split()
)
# Names our generated code or the C library already uses at file scope.
RESERVED = frozenset(
    "main input output arena expf tanhf sqrtf fabsf malloc free printf memcpy memset "
    "int8_t int16_t int32_t uint8_t uint16_t uint32_t int64_t uint64_t size_t NULL".split()
)


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


class NameTable:
    """Hand out unique C identifiers under a common prefix.

    ``NameTable("mnist").unique("fc1.weight")`` gives ``mnist_fc1_weight``; asking again for ``fc1_weight`` (a
    different name mapping to the same identifier) gives ``mnist_fc1_weight_2``.
    """

    def __init__(self, prefix: str = "") -> None:
        self.prefix = prefix
        self._taken: set[str] = set()

    def unique(self, name: str) -> str:
        """A new identifier for ``name``, never returned before by this table."""
        base = c_identifier(f"{self.prefix}_{name}" if self.prefix else name)
        ident, n = base, 2
        while ident in self._taken:
            ident, n = f"{base}_{n}", n + 1
        self._taken.add(ident)
        return ident
