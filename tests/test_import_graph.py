"""The import graph of ``ragline``: no module-level cycle, and no import hidden in a function to dodge one.

Each module of ``src/ragline`` is parsed with ``ast`` (nothing is imported). A module-level import is
one executed when the module loads: at the top, or inside a module-level ``if``/``try``/``with`` or a
class body, but not inside a function, and not under ``if TYPE_CHECKING:``. ``from a import b``
depends on ``a.b`` when that is a module, else on ``a``. Importing ``a.b.c`` runs ``a/__init__`` and
``a/b/__init__`` first, so a module also depends on the packages above what it imports, except its
own packages (they are already loading when it runs, so that edge cannot close a cycle).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"


@dataclass
class ImportGraph:
    """Modules of one package (name -> file), their module-level imports and their function-level ones."""

    modules: dict[str, Path]
    top: dict[str, set[str]] = field(default_factory=dict)
    deferred: dict[str, dict[str, int]] = field(default_factory=dict)  # target -> first line

    @classmethod
    def parse(cls, src: Path, package: str) -> ImportGraph:
        modules = {}
        for path in sorted((src / package).rglob("*.py")):
            parts = list(path.relative_to(src).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
        graph = cls(modules)
        for name in modules:
            graph.top[name], graph.deferred[name] = graph._imports(name)
        return graph

    def _resolve(self, module: str, node: ast.ImportFrom) -> str:
        if not node.level:
            return node.module or ""
        base = module.split(".")
        if self.modules[module].name != "__init__.py":
            base.pop()
        base = base[: len(base) - (node.level - 1)]
        return ".".join(base + ([node.module] if node.module else []))

    def _targets(self, module: str, node: ast.Import | ast.ImportFrom) -> set[str]:
        """The project modules that ``node`` loads, with the packages above them (see the module docstring)."""
        if isinstance(node, ast.Import):
            named = {alias.name for alias in node.names}
        else:
            source = self._resolve(module, node)
            submodules = {f"{source}.{alias.name}" for alias in node.names} & self.modules.keys()
            named = submodules if len(submodules) == len(node.names) else submodules | {source}
        loaded = set()
        for name in named:
            if name in self.modules:
                loaded.add(name)
            parts = name.split(".")
            for end in range(1, len(parts)):
                prefix = ".".join(parts[:end])
                if prefix in self.modules and not module.startswith(prefix + "."):
                    loaded.add(prefix)
        loaded.discard(module)
        return loaded

    def _imports(self, module: str) -> tuple[set[str], dict[str, int]]:
        tree = ast.parse(self.modules[module].read_text(encoding="utf-8"))
        top: set[str] = set()
        deferred: dict[str, int] = {}

        def visit(node: ast.AST, in_function: bool) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.If) and _is_type_checking(child.test):
                    for stmt in child.orelse:
                        visit_one(stmt, in_function)
                else:
                    visit_one(child, in_function)

        def visit_one(node: ast.AST, in_function: bool) -> None:
            if isinstance(node, ast.Import | ast.ImportFrom):
                for target in self._targets(module, node):
                    if in_function:
                        deferred.setdefault(target, node.lineno)
                    else:
                        top.add(target)
                return
            visit(node, in_function or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda))

        visit(tree, False)
        return top, deferred

    def reachable(self, source: str) -> set[str]:
        """Every module that loading ``source`` loads, through module-level imports."""
        seen: set[str] = set()
        todo = [source]
        while todo:
            for succ in self.top.get(todo.pop(), ()):
                if succ not in seen:
                    seen.add(succ)
                    todo.append(succ)
        return seen

    def cycles(self) -> list[list[str]]:
        """One cycle through each strongly connected component of more than one module (Tarjan)."""
        index: dict[str, int] = {}
        low: dict[str, int] = {}
        stack: list[str] = []
        on_stack: set[str] = set()
        components: list[set[str]] = []

        def connect(node: str) -> None:
            index[node] = low[node] = len(index)
            stack.append(node)
            on_stack.add(node)
            for succ in sorted(self.top.get(node, ())):
                if succ not in index:
                    connect(succ)
                    low[node] = min(low[node], low[succ])
                elif succ in on_stack:
                    low[node] = min(low[node], index[succ])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(component)

        for node in sorted(self.top):
            if node not in index:
                connect(node)
        return [self._cycle_through(component) for component in components]

    def _cycle_through(self, component: set[str]) -> list[str]:
        """A shortest cycle from the component's first module back to it (breadth-first)."""
        start = min(component)
        parents: dict[str, str] = {}
        frontier = [start]
        while frontier:
            following = []
            for node in frontier:
                for succ in sorted(self.top[node] & component):
                    if succ == start:
                        path = [node]
                        while path[-1] != start:
                            path.append(parents[path[-1]])
                        return [*reversed(path), start]
                    if succ not in parents:
                        parents[succ] = node
                        following.append(succ)
            frontier = following
        raise AssertionError(f"no cycle in component {sorted(component)}")

    def hidden_cycles(self) -> dict[tuple[str, str], str]:
        """(importer, target) -> ``file:line`` for each function-level import whose target loads the importer."""
        hidden = {}
        for module, targets in self.deferred.items():
            for target, line in sorted(targets.items()):
                if target not in self.top[module] and module in self.reachable(target) | {target}:
                    hidden[module, target] = f"{self.modules[module]}:{line}"
        return hidden


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


RAGLINE = ImportGraph.parse(SRC, "ragline")

# Function-level imports known to hide a cycle, each with what has to move to remove it. This list
# may only shrink: an entry that no longer hides a cycle fails the test until it is deleted.
HIDDEN_CYCLES_TO_REMOVE: dict[tuple[str, str], str] = {}


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def test_the_parser_reads_every_import_form(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "pkg/__init__.py": "from pkg.base import Thing\nfrom pkg.sub import leaf\n",
            "pkg/base.py": "Thing = 1\n",
            "pkg/sub/__init__.py": "",
            "pkg/sub/leaf.py": (
                "from typing import TYPE_CHECKING\n"
                "from .. import base\n"  # a submodule: depends on pkg.base, not on pkg
                "from pkg import Thing\n"  # the package's contents: depends on pkg
                "if TYPE_CHECKING:\n    import pkg.typed\n"
                "class Holder:\n    import pkg.in_class\n"
                "def later():\n    from pkg.sub import deferred\n"
            ),
            "pkg/typed.py": "",
            "pkg/in_class.py": "",
            "pkg/sub/deferred.py": "import pkg.sub.leaf\n",
            "pkg/outside.py": "import pkg.sub.leaf\n",
        },
    )
    graph = ImportGraph.parse(tmp_path, "pkg")
    assert graph.top["pkg.sub.leaf"] == {"pkg.base", "pkg", "pkg.in_class"}
    assert graph.deferred["pkg.sub.leaf"] == {"pkg.sub.deferred": 9}
    assert graph.top["pkg.sub.deferred"] == {"pkg.sub.leaf"}  # its own packages are already loading
    assert graph.top["pkg.outside"] == {"pkg.sub.leaf", "pkg.sub"}  # pkg is its own package
    assert graph.cycles() == [["pkg", "pkg.sub.leaf", "pkg"]]
    assert set(graph.hidden_cycles()) == {("pkg.sub.leaf", "pkg.sub.deferred")}


def test_no_module_level_import_cycle() -> None:
    cycles = RAGLINE.cycles()
    assert not cycles, "module-level import cycles:\n" + "\n".join(" -> ".join(cycle) for cycle in cycles)


def test_no_function_level_import_dodges_a_cycle() -> None:
    """An import inside a function whose module-level form would close a cycle is a cycle in hiding.

    Deferring an import for start-up time (a heavy optional dependency, the component registry
    scanning its packages) is fine; deferring one because the target imports the importer back
    is not: move the shared code down a layer instead.
    """
    hidden = RAGLINE.hidden_cycles()
    new = [
        f"{where} imports {target}, which imports {module} back"
        for (module, target), where in hidden.items()
        if (module, target) not in HIDDEN_CYCLES_TO_REMOVE
    ]
    assert not new, "function-level imports that hide a cycle:\n" + "\n".join(new)
    stale = sorted(set(HIDDEN_CYCLES_TO_REMOVE) - set(hidden))
    assert not stale, f"no longer a hidden cycle, delete it from HIDDEN_CYCLES_TO_REMOVE: {stale}"
