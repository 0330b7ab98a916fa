"""The driver's modules import each other one way: no module reaches itself through its imports
(type-only imports included), so a job takes the state it needs and nothing calls back into
the module that called it. Plain python3, no Spark."""

from __future__ import annotations

import ast
import os
import unittest

PACKAGE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "recount_spark")


def imports() -> dict[str, set[str]]:
    """Each module of the package and the package's modules it imports."""
    graph: dict[str, set[str]] = {}
    for name in sorted(os.listdir(PACKAGE)):
        if not name.endswith(".py"):
            continue
        with open(os.path.join(PACKAGE, name), encoding="utf-8") as f:
            tree = ast.parse(f.read())
        uses: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module == "recount_spark":
                uses |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("recount_spark."):
                uses.add(node.module.split(".")[1])
        graph[name[:-3]] = uses
    return graph


def circle(graph: dict[str, set[str]], start: str) -> list[str] | None:
    """A path of imports from `start` back to itself, if there is one."""
    stack = [(start, [start])]
    seen: set[str] = set()
    while stack:
        module, path = stack.pop()
        for used in sorted(graph.get(module, set())):
            if used == start:
                return [*path, used]
            if used not in seen:
                seen.add(used)
                stack.append((used, [*path, used]))
    return None


class Imports(unittest.TestCase):
    def test_no_module_of_the_driver_imports_itself_back(self) -> None:
        graph = imports()
        self.assertIn("v2", graph["cli"], "the walk read the imports")
        circles = [c for m in graph if (c := circle(graph, m)) is not None]
        self.assertEqual(circles, [])

    def test_a_circle_is_found(self) -> None:
        self.assertEqual(circle({"a": {"b"}, "b": {"a"}}, "a"), ["a", "b", "a"])


if __name__ == "__main__":
    unittest.main()
