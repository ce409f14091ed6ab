"""runner/'s modules import each other in one direction: tasks (the Celery entry points) over
services over routing and selectors, with no loop a reader would have to hold in mind. Read from
the source (every import statement, wherever it stands), not from what happens to be loaded."""

import ast
from pathlib import Path

RUNNER = Path(__file__).resolve().parents[2] / "runner"


def _runner_graph() -> dict[str, set[str]]:
    graph = {}
    for path in sorted(RUNNER.rglob("*.py")):
        parts = path.relative_to(RUNNER.parent).with_suffix("").parts
        if "migrations" in parts or "sandbox" in parts:  # the sandbox package imports nothing of runner
            continue
        name = ".".join(parts).removesuffix(".__init__")
        imported = set()
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module == "runner":
                imported |= {f"runner.{alias.name}" for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("runner."):
                imported.add(node.module)
            elif isinstance(node, ast.Import):
                imported |= {alias.name for alias in node.names if alias.name.startswith("runner.")}
        graph[name] = imported
    return {name: {other for other in imported if other in graph} - {name} for name, imported in graph.items()}


def _loops(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's)."""
    index, low, stack, on_stack, loops = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in graph[node]:
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                loops.append(sorted(component))

    for node in graph:
        if node not in index:
            visit(node)
    return loops


def test_runner_modules_import_each_other_without_a_loop():
    graph = _runner_graph()
    assert {"runner.tasks", "runner.services", "runner.routing"} <= set(graph), "the walk found runner's modules"
    assert _loops(graph) == []


def test_the_walk_finds_a_loop_where_there_is_one():
    assert _loops({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
