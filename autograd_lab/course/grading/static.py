"""The static check of an answer cell: what a submission may contain, decided from its syntax tree alone.

The grader takes only the answer cells from a submission. Before any of them runs, :func:`check_answer_cell` reads
each one with :mod:`ast` (no student code runs) against an allow-list, so that an answer cannot reach into the
machinery that decides a verdict: replace numpy's comparisons, the test helpers or ``autograd_lab.course.checks``,
install IPython hooks, read files, start processes, or forge an object that compares equal to anything.

What an answer cell may hold (see "What the grader enforces" in ``assignments/CONVENTIONS.md``):

- at top level: imports of allowed modules, ``def`` and ``class`` statements, assignments of constants to names,
  docstrings and ``pass``. Nothing else runs when the cell runs; all computation happens in functions and methods;
- everywhere: no dynamic code or reflection (``exec``, ``getattr``, dunder attributes, frame and code objects),
  no file or process access, no attribute assignment except on ``self`` and on local variables, no module used as a
  value, no rebinding of the instructor's names or of builtins, no way to the reference implementation.

A refusal is a :class:`Refusal` naming the line and what is not allowed, worded for the student.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from autograd_lab.course.grading.policy import (
    ALLOWED_DECORATORS,
    ALLOWED_MODULES,
    BUILTIN_NAMES,
    CALLABLE_DUNDERS,
    DEFAULT_CONTEXT,
    DEFINABLE_DUNDERS,
    DENIED_ATTRIBUTES,
    DENIED_BUILTINS,
    MUTATING_METHODS,
    READABLE_DUNDERS,
    Binding,
    allowed_module,
    bindings_of,
    context_imports,
    defined_names,
    foreign_origin,
    library_class,
    module_name_of_attribute,
)

_ALLOWED_TEXT = (", ".join(sorted(ALLOWED_MODULES - {"__future__"}))
                 + " and the public parts of autograd_lab other than the course, CLI, file and process tools")

#: Longer answer cells are refused unread (the check walks the tree recursively; no answer needs this much).
MAX_SOURCE_CHARS = 100_000


@dataclass(frozen=True)
class Refusal:
    """One reason an answer cell is refused: the 1-based ``line`` in the cell and a message for the student."""

    line: int
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}"


def check_answer_cell(
    source: str,
    *,
    grade_id: str,
    protected_names: set[str] | frozenset[str] = frozenset(),
    references: Sequence[str] = (),
    context: Sequence[str] = (),
) -> list[Refusal]:
    """Check one answer cell against the allow-list without running it; an empty list means it may run.

    Args:
        source: the cell's source as submitted.
        grade_id: the cell's nbgrader ``grade_id``, named in the messages.
        protected_names: names the instructor's cells define (setup, helpers, tests): the cell may use them but
            never rebind them.
        references: dotted names of the reference implementations of this exercise (``"autograd_lab.ops.AddOp"``,
            ``"autograd_lab.Engine.topo_sort"``): the cell may neither import them nor reach them by attribute.
        context: sources of the instructor's cells that run before this one (the setup cell, helper cells). Their
            imports say which names are modules; a name imported there from a module outside the allow-list
            (``os``, ``subprocess``, ``unittest.mock``, ``checks``) may not be used by the answer.

    Returns:
        The refusals in line order, each naming the line and what is not allowed.
    """
    defaults = context_imports([DEFAULT_CONTEXT])
    given = context_imports(context)
    checker = _Checker(grade_id, set(protected_names) | set(given), references, {**defaults, **given})
    # Without the instructor's cells, their names are the protected ones that no usual import explains.
    checker.instructor_names = defined_names(context) if context else set(protected_names) - set(defaults)
    return checker.run(source)


def _declared_names(body: Sequence[ast.stmt]) -> set[str]:
    """Names a function's own ``global``/``nonlocal`` statements declare (a nested function's belong to it: an
    outer ``count = 0`` that an inner function declares ``nonlocal`` is a local of the outer one)."""
    declared: set[str] = set()
    todo: list[ast.AST] = list(body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            declared.update(node.names)
        elif not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            todo.extend(ast.iter_child_nodes(node))
    return declared


def _is_dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def _assigned_names(target: ast.expr) -> Iterable[str]:
    for node in ast.walk(target):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            yield node.id


@dataclass
class _Scope:
    """A function's local names; ``aliases`` are locals that may hold a shared object (a class, a function)."""

    names: set[str]
    aliases: set[str]
    owner: str | None = None  # a method's first parameter (self or cls), the object the method may change


class _Checker:
    def __init__(self, grade_id: str, protected: set[str], references: Sequence[str],
                 context: dict[str, Binding]) -> None:
        self.grade_id = grade_id
        self.protected = protected
        self.context = context
        self.refusals: list[Refusal] = []
        self.modules: dict[str, str] = {n: b.module for n, b in context.items() if b.module}  # name -> module
        self.scopes: list[_Scope] = []
        self.cell_names: set[str] = set()
        self.class_names: set[str] = set()  # names the class body being checked defines (properties)
        self.cell_functions: set[str] = set()  # top-level def and class names of the cell
        self.class_decorators: set[str] = set()  # names of dataclasses.dataclass, allowed only as `@dataclass`
        self.instructor_names: set[str] = set()  # names the instructor's cells define (not imports)
        # A reference written with the notebook's alias (np.broadcast_shapes) is named by its module.
        self.references = []
        for ref in references:
            head, _, rest = ref.partition(".")
            if head in self.modules and rest:
                ref = f"{self.modules[head]}.{rest}"
            if "." in ref:  # a bare local name (reference=ref) names nothing the cell could import
                self.references.append(ref)
        self.reference_leaves = {r.rsplit(".", 1)[-1] for r in self.references}

    # -- driver -----------------------------------------------------------------------------------------------

    def run(self, source: str) -> list[Refusal]:
        if len(source) > MAX_SOURCE_CHARS:
            self.refuse(1, f"the cell holds {len(source)} characters, more than the {MAX_SOURCE_CHARS} an answer cell "
                           f"may hold")
            return self.refusals
        try:
            return self.check(source)
        except (RecursionError, MemoryError):
            return [Refusal(1, "the cell is nested too deeply to be checked; write it with less nesting")]

    def check(self, source: str) -> list[Refusal]:
        if "\0" in source:
            self.refuse(1, "the cell holds a NUL character, which Python source cannot hold")
            return self.refusals
        try:
            tree = ast.parse(source)
        except SyntaxError as exc:
            line = exc.lineno or 1
            text = (source.splitlines()[line - 1] if 0 < line <= len(source.splitlines()) else "").lstrip()
            if text.startswith(("%", "!")):
                self.refuse(line, "IPython magics and shell commands (lines starting with % or !) are not "
                                  "allowed in an answer cell")
            else:
                self.refuse(line, f"this is not valid Python ({exc.msg}), so the cell cannot run")
            return self.refusals
        self.cell_names = {n for stmt in tree.body for n in _top_level_names(stmt)}
        self.cell_functions = {stmt.name for stmt in tree.body if isinstance(stmt, (ast.FunctionDef, ast.ClassDef))}
        for stmt in tree.body:
            self.top_level(stmt)
        return sorted(set(self.refusals), key=lambda r: (r.line, r.message))

    def refuse(self, node: ast.AST | int, message: str) -> None:
        line = node if isinstance(node, int) else getattr(node, "lineno", 1)
        self.refusals.append(Refusal(line, message))

    # -- top level and class bodies ---------------------------------------------------------------------------

    def top_level(self, stmt: ast.stmt, in_class: bool = False) -> None:
        where = "in a class body" if in_class else "at the top level of an answer cell"
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            self.import_(stmt)
        elif isinstance(stmt, ast.FunctionDef):
            self.binds(stmt, stmt.name, in_class)
            self.function(stmt, in_class=in_class, at_definition=True)
        elif isinstance(stmt, ast.ClassDef):
            self.binds(stmt, stmt.name, in_class)
            self.class_(stmt)
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            for target in targets:
                if not all(isinstance(n, (ast.Name, ast.Tuple, ast.List, ast.Store, ast.Starred))
                           for n in ast.walk(target)):
                    self.refuse(stmt, f"only plain names can be assigned {where} (found "
                                      f"`{ast.unparse(target)}`); change attributes inside a function or method")
                    continue
                for name in _assigned_names(target):
                    self.binds(stmt, name, in_class)
            if isinstance(stmt, ast.AnnAssign):
                self.static_expr(stmt.annotation, "an annotation")
            if stmt.value is not None and not _is_constant(stmt.value):
                self.refuse(stmt, f"only constants (numbers, strings, and tuples, lists or dicts of them) can be "
                                  f"assigned {where}; compute `{_short(stmt.value)}` inside a function instead")
        elif isinstance(stmt, ast.Pass) or (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
                                             and isinstance(stmt.value.value, str)):
            return
        elif isinstance(stmt, ast.AsyncFunctionDef):
            self.refuse(stmt, "async functions are not allowed in an answer cell")
        else:
            kind = type(stmt).__name__.lower()
            hint = "a call" if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) else f"`{kind}`"
            self.refuse(stmt, f"{hint} {where} runs when the cell runs; an answer cell may only hold imports, "
                              f"def and class statements and constants: put `{_short(stmt)}` inside a function")

    def binds(self, node: ast.AST, name: str, in_class: bool) -> None:
        if in_class:
            if name.startswith(("_repr_", "_ipython_")):
                self.refuse(node, f"a class may not define `{name}`: IPython would call it to display objects, so "
                                  f"the answer could put its own HTML or JavaScript into the output and feedback")
            elif _is_dunder(name) and name not in DEFINABLE_DUNDERS:
                self.refuse(node, f"a class may not define `{name}` in an answer cell (allowed special methods: "
                                  f"{', '.join(sorted(DEFINABLE_DUNDERS))})")
            return
        if _is_dunder(name):
            self.refuse(node, f"`{name}` is a special name and cannot be defined in an answer cell")
        elif name in self.protected:
            self.refuse(node, f"`{name}` is defined by the notebook (a setup or test cell); an answer cell may use "
                              f"it but not redefine it. Pick another name")
        elif name in BUILTIN_NAMES:
            self.refuse(node, f"`{name}` would hide Python's builtin of that name, which the tests use; pick "
                              f"another name")

    def class_(self, node: ast.ClassDef) -> None:
        for deco in node.decorator_list:
            if not self.is_dataclass_decorator(deco):
                self.refuse(deco, f"class decorators are not allowed in an answer cell (found `@{_short(deco)}`; "
                                  f"the one allowed is `@dataclass`, from `from dataclasses import dataclass`, with "
                                  f"constant options such as `@dataclass(frozen=True)`)")
        for kw in node.keywords:
            self.refuse(node, f"class {node.name}: keyword `{kw.arg or '**'}` in the class statement (a "
                              f"metaclass or its arguments) is not allowed in an answer cell")
        for base in node.bases:
            if isinstance(base, ast.Name) and base.id == "type":
                self.refuse(base, f"class {node.name}: subclassing `type` (a metaclass) is not allowed")
            elif self.lying_base(base):
                self.refuse(base, f"class {node.name}: subclassing `{_short(base)}` is not allowed in an answer "
                                  f"cell: a subclass of a NumPy or builtin value type could override how it "
                                  f"compares or reduces (`all`, `sum`, ...) and pass a test with wrong values")
            self.static_expr(base, f"a base of class {node.name}")
        outer, self.class_names = self.class_names, {n for stmt in node.body for n in _top_level_names(stmt)}
        try:
            for stmt in node.body:
                self.top_level(stmt, in_class=True)
        finally:
            self.class_names = outer

    def is_dataclass_decorator(self, deco: ast.expr) -> bool:
        """``@dataclass`` or ``@dataclass(option=constant, ...)`` on a class the cell defines. It adds methods to
        that class only (its generated ``__eq__`` compares instances of the same class, so it cannot make a value
        equal an expected array); used any other way, ``dataclass(SomeLibraryClass)`` would change a class the
        tests use, which :meth:`name` refuses."""
        if isinstance(deco, ast.Call):
            if deco.args or not all(k.arg is not None and _is_constant(k.value) for k in deco.keywords):
                return False
            deco = deco.func
        return isinstance(deco, ast.Name) and deco.id in self.class_decorators and deco.id not in self.protected

    def lying_base(self, base: ast.expr) -> bool:
        """A NumPy type or a builtin type other than an exception, as a class base."""
        if isinstance(base, ast.Name):
            if base.id in self.cell_names or base.id in self.protected - set(self.context):
                return False
            binding = self.context.get(base.id)
            if binding is not None:
                return binding.origin.split(".")[0] == "numpy"
            value = getattr(builtins, base.id, None)
            return isinstance(value, type) and base.id in BUILTIN_NAMES and not issubclass(value, Exception)
        if isinstance(base, ast.Attribute):
            module = self.module_of(base.value)
            return module is not None and module.split(".")[0] == "numpy"
        return False

    def import_(self, node: ast.Import | ast.ImportFrom, local: _Scope | None = None) -> None:
        if local is not None:
            # A module bound inside a body is a local name: it could be aliased and its attributes written without
            # the module rules seeing it (found by a hostile-student review).
            self.refuse(node, "imports belong at the top of the answer cell, not inside a function or class")
            return
        if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
            self.refuse(node, "`import *` is not allowed in an answer cell; import the names you need")
            return
        if isinstance(node, ast.Import):
            for alias in node.names:
                if not allowed_module(alias.name):
                    self.refuse(node, f"importing `{alias.name}` is not allowed in an answer cell (allowed: "
                                      f"{_ALLOWED_TEXT})")
                    return
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if node.module == "dataclasses" and alias.name == "dataclass" and not node.level:
                    self.class_decorators.add(alias.asname or alias.name)  # checked where it is used
                    continue
                if alias.name in DENIED_ATTRIBUTES or alias.name in DENIED_BUILTINS or _is_dunder(alias.name):
                    reason = DENIED_ATTRIBUTES.get(alias.name, "it can run or reach code the grader relies on")
                    self.refuse(node, f"importing `{alias.name}` is not allowed in an answer cell: {reason}")
                    return
        for name, binding in bindings_of(node):
            module = binding.module if binding.module else binding.origin.rpartition(".")[0]
            if isinstance(node, ast.ImportFrom) and binding.module is None:
                real = module_name_of_attribute(module, binding.origin.rpartition(".")[2])
                if real is not None:
                    module = real
            elif binding.module:
                module = binding.module
            known = self.context.get(name)
            if known is not None and (known.origin, known.module) == (binding.origin, binding.module) \
                    and allowed_module(module, private_ok=True):
                continue  # the notebook imports the very same thing under this name: the line changes nothing
            if not allowed_module(module):
                self.refuse(node, f"importing `{binding.origin}` is not allowed in an answer cell (allowed: "
                                  f"{_ALLOWED_TEXT})")
                continue
            head, _, leaf = binding.origin.rpartition(".")
            origin = foreign_origin(head, leaf) if binding.module is None and isinstance(node, ast.ImportFrom) \
                else None
            if origin is not None:
                self.refuse(node, f"importing `{binding.origin}` is not allowed in an answer cell: it is "
                                  f"`{origin}`, from outside the allowed modules ({_ALLOWED_TEXT})")
                continue
            if self.is_reference(binding.origin):
                self.refuse(node, f"`{binding.origin}` is the reference implementation of this exercise; write "
                                  f"it yourself instead of importing it")
                continue
            if name in self.protected:
                self.refuse(node, f"`{name}` is already defined by the notebook (a setup or test cell) as something "
                                  f"else; delete this import and use the notebook's `{name}`, or import it under "
                                  f"another name (`... as my_{name}`)")
                continue
            elif local is None:
                self.binds(node, name, in_class=False)
            if binding.module:
                self.modules[name] = binding.module
            elif local is None:
                self.modules.pop(name, None)

    # -- functions -------------------------------------------------------------------------------------------

    def function(self, node: ast.FunctionDef | ast.Lambda, *, in_class: bool = False,
                 at_definition: bool = False) -> None:
        args = node.args
        every = [*args.posonlyargs, *args.args, *args.kwonlyargs, *(a for a in (args.vararg, args.kwarg) if a)]
        if isinstance(node, ast.FunctionDef):
            for deco in node.decorator_list:
                self.decorator(deco)
            annotations = [a.annotation for a in every if a.annotation is not None]
            for annotation in annotations + ([node.returns] if node.returns is not None else []):
                self.definition_expr(annotation, "an annotation", at_definition)
        for default in [*args.defaults, *(d for d in args.kw_defaults if d is not None)]:
            self.definition_expr(default, "a default argument value", at_definition)
        scope = _Scope({a.arg for a in every}, set())
        decorators = {d.id for d in getattr(node, "decorator_list", []) if isinstance(d, ast.Name)}
        positional = [*args.posonlyargs, *args.args]
        if in_class and positional and "staticmethod" not in decorators:
            scope.owner = positional[0].arg
        for arg in every:
            if _is_dunder(arg.arg):
                self.refuse(node, f"`{arg.arg}` is a special name and cannot be a parameter")
        body = node.body if isinstance(node, ast.FunctionDef) else [ast.Expr(node.body)]
        declared = _declared_names(body)
        for stmt in body:
            scope.names.update(n for n in _locals_of(stmt) if n not in declared)
        self.scopes.append(scope)
        try:
            for stmt in body:
                self.stmt(stmt)
        finally:
            self.scopes.pop()

    def definition_expr(self, node: ast.expr, what: str, at_definition: bool) -> None:
        if at_definition:
            self.static_expr(node, what)
        else:
            self.expr(node)

    def decorator(self, deco: ast.expr) -> None:
        if isinstance(deco, ast.Name) and deco.id in ALLOWED_DECORATORS:
            return
        if (isinstance(deco, ast.Attribute) and isinstance(deco.value, ast.Name)
                and deco.attr in ("setter", "getter", "deleter") and deco.value.id in self.class_names):
            return
        self.refuse(deco, f"decorator `@{_short(deco)}` is not allowed in an answer cell (allowed: "
                          f"@staticmethod, @classmethod, @property and @<property>.setter)")

    def is_owner(self, name: str | None) -> bool:
        """Whether ``name`` is, where it resolves, the ``self`` (or ``cls``) of the method being checked."""
        for scope in reversed(self.scopes):
            if name in scope.names:
                return scope.owner == name and name not in scope.aliases
        return False

    def is_local(self, name: str) -> bool:
        return any(name in s.names for s in self.scopes)

    def is_alias(self, name: str) -> bool:
        return any(name in s.aliases for s in self.scopes)

    # -- statements inside functions ------------------------------------------------------------------------

    def stmt(self, stmt: ast.stmt) -> None:
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            self.import_(stmt, local=self.scopes[-1])
            return
        if isinstance(stmt, ast.FunctionDef):
            self.function(stmt)
            return
        if isinstance(stmt, ast.ClassDef):
            self.refuse(stmt, f"class {stmt.name}: define classes at the top level of the cell, not inside a "
                              f"function")
            return
        if isinstance(stmt, (ast.AsyncFunctionDef, ast.AsyncFor, ast.AsyncWith)):
            self.refuse(stmt, "async code is not allowed in an answer cell")
            return
        if isinstance(stmt, (ast.Global, ast.Nonlocal)):
            for name in stmt.names:
                if name in self.protected or name in self.modules or _is_dunder(name):
                    self.refuse(stmt, f"`{type(stmt).__name__.lower()} {name}`: `{name}` belongs to the notebook; "
                                      f"an answer may not rebind it")
            return
        if isinstance(stmt, ast.Try):
            for handler in stmt.handlers:
                if handler.type is None:
                    self.refuse(handler, "a bare `except:` also catches the grader's time limit and interrupts; "
                                         "catch `Exception` or a specific error instead")
            for final in stmt.finalbody:
                for sub in ast.walk(final):
                    if isinstance(sub, (ast.Return, ast.Break, ast.Continue)):
                        self.refuse(sub, "`return`, `break` or `continue` inside `finally` would swallow any "
                                         "error, including the grader's time limit; move it out of `finally`")
        if isinstance(stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
            targets = (stmt.targets if isinstance(stmt, (ast.Assign, ast.Delete)) else [stmt.target])
            for target in targets:
                self.store_target(target)
            if isinstance(stmt, ast.Assign):
                self.track_aliases(stmt.targets, stmt.value)
                self.stored_value(stmt.targets, stmt.value)
        if isinstance(stmt, (ast.For, ast.With)):
            if isinstance(stmt, ast.For):
                self.store_target(stmt.target)
                self.track_aliases([stmt.target], stmt.iter)
            else:
                for item in stmt.items:
                    if item.optional_vars is not None:
                        self.store_target(item.optional_vars)
        for child in ast.iter_child_nodes(stmt):
            if isinstance(child, ast.stmt):
                self.stmt(child)
            elif isinstance(child, ast.expr):
                self.expr(child)
            elif isinstance(child, (ast.excepthandler, ast.withitem, ast.comprehension, ast.arguments,
                                    ast.keyword, ast.match_case)):
                for sub in ast.iter_child_nodes(child):
                    if isinstance(sub, ast.stmt):
                        self.stmt(sub)
                    elif isinstance(sub, ast.expr):
                        self.expr(sub)

    def store_target(self, target: ast.expr) -> None:
        """Attribute and item assignment only on objects the function owns: self, its locals and parameters."""
        for node in ast.walk(target):
            if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)) and not self.is_local(node.id):
                self.refuse(node, f"`{node.id}` is not a local variable of this function; an answer may not "
                                  f"rebind names outside its function")
            if not (isinstance(node, (ast.Attribute, ast.Subscript)) and isinstance(node.ctx, (ast.Store, ast.Del))):
                continue
            root = _root_name(node)
            what = "an attribute" if isinstance(node, ast.Attribute) else "an item"
            if root is None:
                self.refuse(node, f"assigning {what} of `{_short(node.value)}` is not allowed; assign attributes "
                                  f"of self or of a local variable")
            elif not self.is_local(root) or root in self.modules:
                self.refuse(node, f"assigning {what} of `{root}` changes an object the notebook shares (a module, "
                                  f"a class, a helper or a builtin); an answer may only change self and its own "
                                  f"local variables")
            elif self.is_alias(root):
                self.refuse(node, f"assigning {what} of `{root}`, which holds a class, function or module taken "
                                  f"from outside the function, would change it for the tests; not allowed")
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Del) and not self.is_owner(root):
                self.refuse(node, f"deleting the attribute `{_short(node)}` is not allowed (it could remove a "
                                  f"method from a class the tests use); delete attributes of self only")

    def stored_value(self, targets: Sequence[ast.expr], value: ast.expr) -> None:
        """No functions stored on objects other than self: a parameter may hold a class of the notebook
        (``patch(Variable)``), and a function stored on it would replace a method the tests call."""
        if not any(isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store) and not self.is_owner(_root_name(n))
                   for t in targets for n in ast.walk(t)):
            return
        is_function = isinstance(value, ast.Lambda) or (
            isinstance(value, ast.Name) and value.id in self.cell_functions and not self.is_local(value.id)) or (
            isinstance(value, ast.Call) and _short(value.func).split(".")[-1] in ("partial", "partialmethod",
                                                                                 "MethodType"))
        if is_function:
            self.refuse(value, f"storing the function `{_short(value)}` on `{_short(targets[0])}` could replace a "
                               f"method of a class the tests use; store functions on self only")

    def track_aliases(self, targets: Sequence[ast.expr], value: ast.expr) -> None:
        if not self.may_be_shared(value):
            return
        for target in targets:
            for name in _assigned_names(target):
                self.scopes[-1].aliases.add(name)

    def may_be_shared(self, value: ast.expr) -> bool:
        """Whether ``value`` may be a class, function or module from outside the function (not an instance)."""
        if isinstance(value, ast.Name):
            return not self.is_local(value.id) or self.is_alias(value.id)
        if isinstance(value, ast.Attribute):
            root = _root_name(value)
            return root is not None and (not self.is_local(root) or self.is_alias(root)) and not any(
                isinstance(n, ast.Call) for n in ast.walk(value))
        if isinstance(value, ast.Call):
            return isinstance(value.func, ast.Name) and value.func.id in ("type", "super")
        if isinstance(value, (ast.Tuple, ast.List, ast.Set, ast.Starred)):
            return any(self.may_be_shared(e) for e in ast.iter_child_nodes(value) if isinstance(e, ast.expr))
        if isinstance(value, (ast.Subscript, ast.IfExp, ast.BoolOp, ast.NamedExpr, ast.Dict)):
            return any(self.may_be_shared(e) for e in ast.iter_child_nodes(value) if isinstance(e, ast.expr))
        return False

    # -- expressions -----------------------------------------------------------------------------------------

    def static_expr(self, node: ast.expr, what: str) -> None:
        """An expression evaluated when the def or class statement runs: names, attributes, constants only."""
        for sub in ast.walk(node):
            if isinstance(sub, (ast.Call, ast.Lambda, ast.NamedExpr, ast.ListComp, ast.SetComp, ast.DictComp,
                                ast.GeneratorExp, ast.Await, ast.Yield, ast.YieldFrom)):
                self.refuse(sub, f"{what} is evaluated when the definition runs, so it may not call anything or "
                                 f"compute (found `{_short(sub)}`); use a constant or compute it inside the body")
                return
        self.expr(node)

    def expr(self, node: ast.expr, attribute_base: bool = False) -> None:
        if isinstance(node, ast.Name):
            self.name(node, attribute_base)
            return
        if isinstance(node, ast.Attribute):
            self.attribute(node, attribute_base)
            return
        if isinstance(node, ast.Lambda):
            self.function(node)
            return
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            names = {n for gen in node.generators for n in _assigned_names(gen.target)}
            self.scopes.append(_Scope(names, set()))
            try:
                for gen in node.generators:
                    self.track_aliases([gen.target], gen.iter)
                for child in ast.iter_child_nodes(node):
                    self.visit_children(child)
            finally:
                self.scopes.pop()
            return
        if isinstance(node, ast.NamedExpr):
            self.store_target(node.target)
        if isinstance(node, ast.Call):
            self.call(node)
        self.visit_children(node)

    def visit_children(self, node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                self.expr(child)
            elif isinstance(child, (ast.comprehension, ast.keyword)):
                self.visit_children(child)

    def call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Name) and func.id == "type" and len(node.args) + len(node.keywords) != 1:
            self.refuse(node, "`type(...)` with more than one argument creates a class at run time; define "
                              "classes with a class statement")
        if isinstance(func, ast.Name) and func.id in ("staticmethod", "classmethod", "property"):
            self.refuse(node, f"`{func.id}(...)` may only be used as a decorator in an answer cell")
        if isinstance(func, ast.Attribute) and func.attr in MUTATING_METHODS:
            root = _root_name(func)
            if root is not None and not self.is_local(root) and (root in self.modules or root in self.context) \
                    and root not in self.cell_names:
                self.refuse(node, f"`{_short(func)}(...)` changes a list, dict or set that `{root}` holds, which "
                                  f"the library and the tests share; work on a copy")
            elif root is not None and not self.is_local(root) and root in self.instructor_names:
                self.refuse(node, f"`{_short(func)}(...)` changes `{root}`, which the notebook's tests use; "
                                  f"work on a copy (`list({root})`, `dict({root})`, `{root}.copy()`)")
        if isinstance(func, ast.Name) and func.id in ("isinstance", "issubclass"):
            return
        builtin_callee = isinstance(func, ast.Name) and func.id in BUILTIN_NAMES and not self.is_local(func.id) \
            and func.id not in self.cell_names
        for arg in [*node.args, *(k.value for k in node.keywords)]:
            if isinstance(arg, ast.Starred):
                arg = arg.value
            if not isinstance(arg, ast.Name) or self.is_local(arg.id) or arg.id in self.cell_names:
                continue
            if self.is_library_class(arg.id):
                self.refuse(arg, f"passing the class `{arg.id}` to a function lets that function change it for the "
                                 f"tests; use it directly (`{arg.id}(...)`, `{arg.id}.method(...)`, `isinstance`)")
            elif arg.id in self.instructor_names and not builtin_callee:
                self.refuse(arg, f"passing `{arg.id}`, which the notebook's tests use, to a function lets that "
                                 f"function change it; pass a copy or the values you need")

    def is_library_class(self, name: str) -> bool:
        """Whether ``name`` is a class the notebook imported from autograd_lab (a mutable Python class)."""
        binding = self.context.get(name)
        if binding is None or binding.module or name in self.cell_names:
            return False
        return library_class(binding.origin)

    def name(self, node: ast.Name, attribute_base: bool) -> None:
        ident = node.id
        if ident in self.class_decorators and not self.is_local(ident):
            self.refuse(node, f"`{ident}` (dataclasses.dataclass) may only be used as `@{ident}` on a class this "
                              f"cell defines: called on another class it would change that class for the tests")
            return
        if ident in DENIED_BUILTINS and not self.is_local(ident):
            self.refuse(node, f"`{ident}` is not allowed in an answer cell: it can run or reach code the grader "
                              f"relies on")
            return
        if _is_dunder(ident):
            self.refuse(node, f"the special name `{ident}` is not allowed in an answer cell")
            return
        if self.is_local(ident) or (ident in self.cell_names and ident not in self.modules):
            return
        binding = self.context.get(ident)
        if binding is not None:
            module = binding.module or binding.origin.rpartition(".")[0]
            if not allowed_module(module, private_ok=True):
                self.refuse(node, f"`{ident}` comes from `{binding.origin}`, which an answer cell may not use "
                                  f"(only numpy, math, functools, itertools, collections, typing, dataclasses and "
                                  f"the public parts of autograd_lab)")
                return
            if self.is_reference(binding.origin):
                self.refuse(node, f"`{ident}` is the reference implementation of this exercise "
                                  f"({binding.origin}); write it yourself instead of using it")
                return
        if ident in self.modules and not attribute_base:
            self.refuse(node, f"the module `{ident}` may only be used to reach its functions and classes "
                              f"(`{ident}.something`), not passed around or stored")

    def attribute(self, node: ast.Attribute, attribute_base: bool) -> None:
        attr = node.attr
        if _is_dunder(attr):
            base = node.value
            on_own_object = (isinstance(base, ast.Call) and isinstance(base.func, ast.Name)
                             and base.func.id == "super") or (isinstance(base, ast.Name) and self.is_owner(base.id))
            call_ok = attr in CALLABLE_DUNDERS and isinstance(node.ctx, ast.Load) and on_own_object
            read_ok = attr in READABLE_DUNDERS and isinstance(node.ctx, ast.Load)
            if not (call_ok or read_ok):
                hint = (f" (call `.{attr}` only on `super()` or on self)" if attr in CALLABLE_DUNDERS else
                        " (for the class's name write `type(self).__name__`)" if attr == "__class__" else "")
                self.refuse(node, f"the special attribute `.{attr}` is not allowed in an answer cell{hint}")
                return
        if attr in DENIED_ATTRIBUTES:
            self.refuse(node, f"`.{attr}` is not allowed in an answer cell: {DENIED_ATTRIBUTES[attr]}")
            return
        module = self.module_of(node.value)
        if module is not None and not allowed_module(module, private_ok=True):
            self.expr(node.value, attribute_base=True)  # the module itself is refused, by name
            return
        if module is not None:
            if attr.startswith("_"):
                self.refuse(node, f"`{_short(node)}` is a private part of `{module}`; use its public functions")
                return
            dotted = f"{module}.{attr}"
            if self.is_reference(dotted):
                self.refuse(node, f"`{_short(node)}` is the reference implementation of this exercise; write it "
                                  f"yourself instead of calling it")
                return
            sub = module_name_of_attribute(module, attr)
            if sub is not None:
                if not allowed_module(sub):
                    self.refuse(node, f"`{_short(node)}` is the module `{sub}`, which an answer cell may not use")
                    return
                if not attribute_base:
                    self.refuse(node, f"the module `{_short(node)}` may only be used to reach its functions and "
                                      f"classes, not passed around or stored")
                    return
            else:
                origin = foreign_origin(module, attr)
                if origin is not None:
                    self.refuse(node, f"`{_short(node)}` is `{origin}`, from outside the modules an answer cell "
                                      f"may use (only {_ALLOWED_TEXT})")
                    return
        elif attr in self.reference_leaves and isinstance(node.value, (ast.Name, ast.Attribute)):
            root = _root_name(node)
            if root is not None and not self.is_local(root) and root not in self.cell_names and any(
                    r.endswith(f".{_dotted(node)}") or (r.endswith(f".{attr}") and root in self.context)
                    for r in self.references):
                self.refuse(node, f"`{_short(node)}` reaches the reference implementation of this exercise; write "
                                  f"it yourself instead of calling it")
                return
        self.expr(node.value, attribute_base=True)

    def module_of(self, node: ast.expr) -> str | None:
        """The dotted module name ``node`` evaluates to, if it is a module name or a chain of submodules."""
        if isinstance(node, ast.Name):
            if self.is_local(node.id):
                return None
            return self.modules.get(node.id)
        if isinstance(node, ast.Attribute):
            parent = self.module_of(node.value)
            if parent is not None:
                return module_name_of_attribute(parent, node.attr)
        return None

    def is_reference(self, dotted: str) -> bool:
        """Whether ``dotted`` (an import or attribute path) names one of the references, through any re-export."""
        for ref in self.references:
            if dotted == ref:
                return True
            head, _, leaf = ref.rpartition(".")
            d_head, _, d_leaf = dotted.rpartition(".")
            # autograd_lab.ops.arithmetic.AddOp is autograd_lab.ops.AddOp: same package root, same leaf.
            if leaf == d_leaf and d_head.split(".")[0] == head.split(".")[0]:
                return True
        return False


def _dotted(node: ast.expr) -> str:
    return ast.unparse(node)


def _root_name(node: ast.expr) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Starred)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _top_level_names(stmt: ast.stmt) -> Iterable[str]:
    if isinstance(stmt, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)):
        yield stmt.name
    elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
        for target in stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]:
            yield from _assigned_names(target)
    elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
        for name, _ in bindings_of(stmt):
            yield name


def _locals_of(stmt: ast.stmt) -> Iterable[str]:
    """Names a statement binds in its function (not inside nested functions, lambdas or comprehensions)."""
    stack: list[ast.AST] = [stmt]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield node.name
            continue
        if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            yield node.id
        elif isinstance(node, ast.ExceptHandler) and node.name:
            yield node.name
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for name, _ in bindings_of(node):
                yield name
        stack.extend(ast.iter_child_nodes(node))


def _is_constant(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return all(_is_constant(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(k is not None and _is_constant(k) for k in node.keys) and all(_is_constant(v) for v in node.values)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return isinstance(node.operand, ast.Constant) and isinstance(node.operand.value, (int, float, complex))
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv)):
        return all(isinstance(o, (ast.Constant, ast.UnaryOp, ast.BinOp)) and _is_constant(o)
                   and not isinstance(getattr(o, "value", 0), str) for o in (node.left, node.right))
    return False


def _short(node: ast.AST, limit: int = 60) -> str:
    lines = ast.unparse(node).splitlines()
    text = lines[0] if lines else ""
    return text if len(text) <= limit else text[: limit - 3] + "..."
