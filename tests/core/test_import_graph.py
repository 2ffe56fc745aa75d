"""The tree a newcomer reads at a glance (issue 32): root sizes, no import cycles, ``__all__`` everywhere,
the exception tree and the public names documented. Checked on the source, so a lazy import counts."""

import ast
import importlib
import pkgutil
import re
import sys

import pytest
from paths import ROOT

FOLDERS = {"plugins": "rewardhub", "rewards": "rewardhub.rewards", "sandbox": "rewardhub.sandbox",
           "trainers": "rewardhub.trainers"}
ROOT_LIMITS = {"plugins": 22, "rewards": 12}
# Modules that run elsewhere (inside a container, next to their sibling scripts) or need a trainer's package.
NOT_IMPORTABLE_HERE = ("rewardhub.sandbox._docker_runner", "rewardhub.sandbox._seccomp", "rewardhub.trainers.verl_manager",
                       "rewardhub.trainers.hubs.openenv", "rewardhub.trainers.hubs.skyrl_gym")  # subclass their package's classes


def _modules() -> dict[str, object]:
    found = {}
    for folder, package in FOLDERS.items():
        for path in (ROOT / folder).rglob("*.py"):
            parts = list(path.relative_to(ROOT / folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join([package, *parts])] = path
    return found


def _runtime_imports(path, name: str, modules: dict) -> set[str]:
    """The rewardhub modules ``path`` imports when it runs (``if TYPE_CHECKING:`` blocks left out)."""
    tree = ast.parse(path.read_text())
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    typing_only = {id(n) for node in ast.walk(tree)
                   if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
                   for sub in node.body for n in ast.walk(sub)}
    out = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            targets = [f"{source}.{a.name}" if f"{source}.{a.name}" in modules else source for a in node.names]
        else:
            continue
        out.update(t for t in targets if t in modules and t != name)
    return out


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))
    try:
        for node in graph:
            if node not in index:
                visit(node)
    finally:
        sys.setrecursionlimit(limit)  # other tests rely on the interpreter's own limit
    return found


def test_no_import_cycles_at_module_level_or_in_functions():
    modules = _modules()
    graph = {name: _runtime_imports(path, name, modules) for name, path in modules.items()}
    assert _cycles(graph) == []


@pytest.mark.parametrize("folder", sorted(ROOT_LIMITS))
def test_the_package_roots_stay_small(folder):
    count = len(list((ROOT / folder).glob("*.py")))
    assert count <= ROOT_LIMITS[folder], f"{folder}/ has {count} modules at its root (at most {ROOT_LIMITS[folder]})"


def test_every_module_says_what_it_exports():
    missing = [name for name, path in _modules().items() if path.name != "__main__.py"
               and not any(isinstance(n, ast.Assign | ast.AnnAssign) and "__all__" in ast.unparse(n).split("=")[0]
                           for n in ast.parse(path.read_text()).body)]
    assert missing == []


def _all_exception_classes() -> set[type]:
    for package in FOLDERS.values():
        root = importlib.import_module(package)
        for info in pkgutil.walk_packages(root.__path__, package + "."):
            if info.name.startswith(NOT_IMPORTABLE_HERE) or info.name.endswith("__main__"):
                continue
            importlib.import_module(info.name)
    from rewardhub.errors import RewardhubError, RewardhubWarning

    seen: set[type] = set()
    todo = [RewardhubError, RewardhubWarning]
    while todo:
        cls = todo.pop()
        if cls not in seen:
            seen.add(cls)
            todo.extend(cls.__subclasses__())
    return {cls for cls in seen if cls.__module__.startswith("rewardhub")}


def test_the_exception_tree_in_the_docs_names_every_exception():
    text = (ROOT / "docs" / "architecture.md").read_text()
    missing = sorted(cls.__name__ for cls in _all_exception_classes()
                     if not re.search(rf"\b{cls.__name__}\b", text))
    assert missing == []


def test_the_public_api_table_lists_every_public_name():
    import rewardhub

    text = (ROOT / "docs" / "plugins.md").read_text()
    table = text[text.index("## Public modules"):]
    missing = [name for name in rewardhub.__all__ if f"`{name}`" not in table]
    assert missing == []
