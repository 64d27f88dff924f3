"""No import circle among the modules of ``entrypoints`` (imports under ``TYPE_CHECKING``
included: they are arrows a reader follows too). The container builds the actuator, so what it
imports must not lead back to it (``entrypoints.actuator`` stands outside ``http/``)."""

from __future__ import annotations

import grimp


def _circles(graph: grimp.ImportGraph, package: str) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    modules = {m for m in graph.modules if m == package or m.startswith(package + ".")}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for imported in graph.find_modules_directly_imported_by(module) & modules:
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in on_stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == module:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for module in sorted(modules):
        if module not in index:
            visit(module)
    return found


def test_no_import_circle_in_entrypoints() -> None:
    graph = grimp.build_graph("entrypoints", exclude_type_checking_imports=False)
    assert _circles(graph, "entrypoints") == []


def test_the_circle_finder_finds_one() -> None:
    """The check can fail: a two-module circle is found."""
    graph = grimp.ImportGraph()
    for name in ("pkg", "pkg.a", "pkg.b", "pkg.c"):
        graph.add_module(name)
    graph.add_import(importer="pkg.a", imported="pkg.b")
    graph.add_import(importer="pkg.b", imported="pkg.a")
    graph.add_import(importer="pkg.c", imported="pkg.a")
    assert _circles(graph, "pkg") == [["pkg.a", "pkg.b"]]
