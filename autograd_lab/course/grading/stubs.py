"""The sandbox's copy of ``autograd_lab``: the chapter's exercises replaced by stubs, in the source text itself.

A hidden test's ``replaces=["autograd_lab.ops.AddOp", "autograd_lab.Engine.backward"]`` names the library objects
the chapter's answers re-implement. In the copy mounted in the sandbox, each named function or method has its body
(after its docstring) replaced by ``raise NotImplementedError("<name> is one of this chapter's exercises: write it
yourself")``; for a class, each method defined in the class body. The reference's text is then nowhere in the
sandbox: not in the ``.py`` files, and no ``.pyc`` of the real package is copied (the copy's own bytecode is
compiled from the stubbed text, so the sandbox starts without compiling).

Copies are cached by content (the package's files and the names) under ``<cache>/stubs/<sha256>/autograd_lab``.
"""

from __future__ import annotations

import ast
import hashlib
import inspect
import os
import py_compile
import shutil
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path

import autograd_lab
from autograd_lab.course import checks

UNCHECKED = py_compile.PycInvalidationMode.UNCHECKED_HASH

PACKAGE = Path(autograd_lab.__file__).resolve().parent


class StubError(ValueError):
    """A ``replaces=`` name cannot be stubbed (unknown, outside autograd_lab, or not a function, method or class)."""


#: The end of every stub's message: the exercise process looks for it to tell "stopped in a stub" apart.
MARK = "is one of this chapter's exercises: write it yourself"


def message(name: str) -> str:
    """The text every stub raises with (``name`` as written in ``replaces=``)."""
    return f"{name} {MARK}"


def _package_files() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*") if p.is_file() and "__pycache__" not in p.parts
                  and p.suffix not in (".pyc", ".pyo"))


def definition(name: str) -> tuple[Path, list[str]]:
    """(source file, qualname parts) of the object ``name`` names.

    Raises:
        StubError: see the class.
    """
    try:
        obj = checks.resolve(name)
    except LookupError as exc:
        raise StubError(str(exc)) from None
    obj = getattr(obj, "__func__", obj)
    obj = inspect.unwrap(obj) if callable(obj) else obj
    if not (inspect.isfunction(obj) or inspect.isclass(obj)):
        raise StubError(f"replaces={name!r} names a {type(obj).__name__}, not a function, method or class")
    try:
        path = Path(inspect.getsourcefile(obj) or "").resolve()
    except TypeError:
        path = Path()
    if not path.is_relative_to(PACKAGE):
        raise StubError(f"replaces={name!r} is not defined in the autograd_lab package")
    return path, obj.__qualname__.split(".")


def _find(tree: ast.Module, qualname: list[str], name: str) -> ast.FunctionDef | ast.ClassDef:
    body: list[ast.stmt] = tree.body
    node: ast.stmt | None = None
    for part in qualname:
        node = next((n for n in body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                     and n.name == part), None)
        if node is None:
            raise StubError(f"replaces={name!r}: no definition of {'.'.join(qualname)} in its module's source")
        body = node.body  # type: ignore[attr-defined]
    assert isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    return node  # type: ignore[return-value]


def _spans(node: ast.FunctionDef | ast.ClassDef, name: str) -> list[tuple[ast.AST, list[ast.stmt]]]:
    """(function, its body statements after the docstring) for a function, or for each method of a class."""
    if isinstance(node, ast.ClassDef):
        methods = [n for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        return [pair for m in methods for pair in _spans(m, name)]  # type: ignore[arg-type]
    body = list(node.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and \
            isinstance(body[0].value.value, str):
        body = body[1:]
    return [(node, body)]


def stub_source(text: str, targets: list[tuple[list[str], str]]) -> str:
    """``text`` (a module's source) with each ``(qualname parts, replaces name)`` target's bodies stubbed.

    Raises:
        StubError: if a target is not defined in ``text``.
    """
    tree = ast.parse(text)
    lines = text.splitlines(True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(lineno: int, col: int) -> int:  # ast columns are UTF-8 byte offsets
        return starts[lineno - 1] + len(lines[lineno - 1].encode()[:col].decode(errors="replace"))

    edits: dict[tuple[int, int], str] = {}  # by span: one function named twice (a re-export) is stubbed once
    for qualname, name in targets:
        for func, body in _spans(_find(tree, qualname, name), name):
            raise_line = f"raise NotImplementedError({message(name)!r})"
            if body:
                first, last = body[0], body[-1]
                start, end = offset(first.lineno, first.col_offset), offset(last.end_lineno or last.lineno,
                                                                             last.end_col_offset or 0)
                edits.setdefault((start, end), raise_line)
            else:  # only a docstring: the raise goes after it
                doc = func.body[0]  # type: ignore[attr-defined]
                end = offset(doc.end_lineno, doc.end_col_offset)
                edits.setdefault((end, end), "\n" + " " * doc.col_offset + raise_line)
    out = text
    for (start, end), new in sorted(edits.items(), reverse=True):
        out = out[:start] + new + out[end:]
    ast.parse(out)  # a stubbed module must still be Python
    return out


def digest(names: Iterable[str]) -> str:
    """The cache key: SHA-256 of the package's files, the names and the Python version."""
    h = hashlib.sha256(f"{sys.version_info[:2]}\0{sorted(set(names))}".encode())
    for path in _package_files():
        h.update(str(path.relative_to(PACKAGE)).encode() + b"\0")
        h.update(path.read_bytes() + b"\0")
    return h.hexdigest()


def bytecode_path(source: Path) -> Path:
    """``<folder>/__pycache__/<stem>.<cache tag>.pyc``: where the sandbox's interpreter (with a cleared environment,
    so no ``PYTHONPYCACHEPREFIX``) looks for ``source``'s bytecode, whatever the grader's own settings."""
    return source.parent / "__pycache__" / f"{source.stem}.{sys.implementation.cache_tag}.pyc"


def stubbed_package(names: Iterable[str], cache: Path) -> Path:
    """The folder ``<cache>/stubs/<key>/autograd_lab``: a copy of the package with ``names`` stubbed (built once).

    Its bytecode is compiled with unchecked-hash invalidation (the folder never changes once built). A stubbed copy
    is made from the whole copy (``names`` empty, built first): the files it does not stub keep that copy's
    bytecode, and only the stubbed files are compiled, from their stubbed text.

    Raises:
        StubError: if a name cannot be stubbed.
    """
    names = sorted(set(names))
    target = cache / "stubs" / digest(names)
    if (target / "autograd_lab" / "__init__.py").is_file():
        return target / "autograd_lab"
    by_file: dict[Path, list[tuple[list[str], str]]] = {}
    for name in names:
        path, qualname = definition(name)
        by_file.setdefault(path, []).append((qualname, name))
    base = stubbed_package([], cache) if names else None
    target.parent.mkdir(parents=True, exist_ok=True)
    build = Path(tempfile.mkdtemp(prefix=".build-", dir=target.parent))
    try:
        copy = build / "autograd_lab"
        for path in _package_files():
            relative = path.relative_to(PACKAGE)
            dest = copy / relative
            dest.parent.mkdir(parents=True, exist_ok=True)
            if path in by_file:
                dest.write_text(stub_source(path.read_text(encoding="utf-8"), by_file[path]), encoding="utf-8")
            else:
                shutil.copyfile(path if base is None else base / relative, dest)  # the package's text either way
            if dest.suffix != ".py":
                continue
            compiled = bytecode_path(dest)
            compiled.parent.mkdir(exist_ok=True)
            reused = None if base is None or path in by_file else bytecode_path(base / relative)
            if reused is not None and reused.is_file():
                shutil.copyfile(reused, compiled)
            else:
                py_compile.compile(str(dest), cfile=str(compiled), doraise=True, invalidation_mode=UNCHECKED)
        for p in [build, *build.rglob("*")]:  # readable by the sandbox's user (nobody)
            os.chmod(p, 0o755 if p.is_dir() else 0o644)
        try:
            build.rename(target)
        except OSError:  # another grader built it first
            shutil.rmtree(build, ignore_errors=True)
    except BaseException:
        shutil.rmtree(build, ignore_errors=True)
        raise
    return target / "autograd_lab"


def course_libraries(course_dir: Path, source: Path) -> tuple[Path, Path | None]:
    """(the copy the graded run gets, the copy a feedback run of its own gets, or None) for the source notebook
    ``source`` of the course at ``course_dir``, cached in ``course_dir/.autograd-lab``. The feedback run gets the
    whole library, as the learner's Jupyter has it; a chapter that stubs nothing needs no second copy, so one sandbox
    serves both runs (None). ``course release`` builds them, so that grading finds them (it builds them itself when
    the library changed since).

    Raises:
        StubError: if a ``replaces=`` name cannot be stubbed.
        AuthoringError: if a test cell of the source breaks the hidden-test contract.
    """
    from autograd_lab.course.grading import assemble

    cache = course_dir / ".autograd-lab"
    graded, whole = stubbed_package(assemble.replaced_names(source), cache), stubbed_package([], cache)
    return graded, None if whole == graded else whole
