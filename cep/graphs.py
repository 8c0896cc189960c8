"""Strongly connected components of a directed graph (Tarjan's algorithm,
without recursion, so that deep graphs such as a large class hierarchy do
not exhaust Python's stack). Used by the RDFS closure of a schema
(cep.background.rdfs.reach) and by rule chaining (cep.algebra.chaining)."""

from __future__ import annotations


def components(roots, edges: dict):
    """The strongly connected components reachable from `roots` (in that
    order), each a list, given `edges` (node -> successors). A component
    comes after every component it reaches (successors first)."""
    index: dict = {}
    low: dict = {}
    stack: list = []
    on_stack: set = set()
    for root in roots:
        if root in index:
            continue
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        work = [(root, iter(edges.get(root, ())))]
        while work:
            node, successors = work[-1]
            for nxt in successors:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(edges.get(nxt, ()))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    yield component
