"""The package's modules import in one direction: no import circle anywhere in autograd_lab (issue 21, item 3).

The graph is read from the source with ``ast``, so no module is imported: an edge A -> B for every
``import autograd_lab.B`` or ``from autograd_lab.B import ...`` (or relative form) in A, at module level or inside a
function (a function-local import that closes a circle is a circle that merely waits for the call). Imports under
``if TYPE_CHECKING:`` are left out: they never run, and annotations may name types both ways (a Variable's ``op`` is
an Operator, whose inputs are Variables). ``from package import name`` counts as an import of the submodule
``package.name`` when there is one, else of the package.
"""

from __future__ import annotations

import ast
from pathlib import Path

import autograd_lab

PACKAGE = Path(autograd_lab.__file__).parent


def module_files() -> dict[str, Path]:
    files = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        files[".".join(parts)] = path
    return files


def _is_type_checking_block(node: ast.AST) -> bool:
    if not isinstance(node, ast.If):
        return False
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement in ``tree``, however deeply nested, except those under ``if TYPE_CHECKING:``."""
    found: list[ast.Import | ast.ImportFrom] = []
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
        elif _is_type_checking_block(node):
            stack.extend(node.orelse)  # type: ignore[attr-defined]
        else:
            stack.extend(ast.iter_child_nodes(node))
    return found


def import_graph() -> dict[str, set[str]]:
    """Module name -> the package modules it imports."""
    files = module_files()

    def known(name: str) -> str | None:
        while name and name not in files:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for module, path in files.items():
        edges: set[str] = set()
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        for node in _imports(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = node.module or ""
                if node.level:
                    parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(parts + ([base] if base else []))
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in files else base for a in node.names]
            for target in targets:
                if target.split(".")[0] == "autograd_lab":
                    found = known(target)
                    if found is not None and found != module:
                        edges.add(found)
        graph[module] = edges
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as a list of modules (the first repeated at the end), or None. Iterative DFS."""
    done: set[str] = set()
    for start in sorted(graph):
        if start in done:
            continue
        path = [start]
        on_path = {start: 0}
        branches = [iter(sorted(graph[start]))]
        while branches:
            nxt = next(branches[-1], None)
            if nxt is None:
                finished = path.pop()
                del on_path[finished]
                done.add(finished)
                branches.pop()
            elif nxt in on_path:
                return [*path[on_path[nxt]:], nxt]
            elif nxt not in done:
                on_path[nxt] = len(path)
                path.append(nxt)
                branches.append(iter(sorted(graph[nxt])))
    return None


def test_the_graph_sees_the_core_edges():
    """The reader works: the edges everyone knows are there (a sanity check of the parser, not a rule)."""
    graph = import_graph()
    assert "autograd_lab.variable" in graph["autograd_lab.operator"]
    assert "autograd_lab.config" in graph["autograd_lab.variable"]
    assert "autograd_lab.gradients" in graph["autograd_lab.engine"]


def test_find_cycle_names_a_cycle_and_accepts_a_tree():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_no_module_of_the_package_is_part_of_an_import_circle():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import circle: " + " -> ".join(cycle or [])


def test_the_core_imports_in_one_direction():
    """config <- variable <- operator <- engine: no core module imports one to its right (item 3: the global modes
    live in Config, not on Engine, so operator needs nothing of the engine)."""
    core = ["autograd_lab.config", "autograd_lab.errors", "autograd_lab.variable", "autograd_lab.gradients",
            "autograd_lab.operator", "autograd_lab.engine"]
    graph = import_graph()
    for i, module in enumerate(core):
        later = set(core[i + 1:])
        assert not graph[module] & later, f"{module} imports {sorted(graph[module] & later)}"
