"""Nested property paths on cyclic graphs (issue 17, item 10): a closure
of a closure, or a closure nested in a sequence, ran for minutes on a
graph of a few hundred nodes (each level of nesting ran the inner closure
again from every node the outer one reached). The runs that used to hang
are run in a subprocess with a generous timeout (a guard, not a speed
claim); the answers are the reference evaluator's."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cep import prolog as pl
from cep.algebra import ops
from cep.background.knowledge import load_background
from cep.compile.program import path_term
from cep.events import Event
from cep.rules import parse_rules
from tests.unit.support import checked_answers

EX = "http://example.org/"
PREFIX = f"PREFIX : <{EX}>\n"
T0 = 1_767_225_600_000  # 2026-01-01T00:00:00Z
GUARD_SECONDS = 300  # a run that hangs is stopped here: the test fails, the suite goes on


def rules(text: str):
    return parse_rules(PREFIX + text, "r.rq")


def ev(s, p, o, t):
    return Event(f"<{EX}{s}>", f"<{EX}{p}>", o if o.startswith(('"', "<")) else f"<{EX}{o}>", t, t)


def jsonl(path: Path, events) -> Path:
    path.write_text("".join(json.dumps({"s": e.s, "p": e.p, "o": e.o, "t": e.start}) + "\n" for e in events))
    return path


def cep_subprocess(*argv):
    """`cep ARGV` in a child process, stopped (failing the test) if it hangs."""
    return subprocess.run([sys.executable, "-m", "cep", *map(str, argv)], capture_output=True, text=True,
                          timeout=GUARD_SECONDS)


RING = 300  # nodes of a cyclic road graph: n -> n+1 and n -> 7n+3 (mod RING)


@pytest.fixture(scope="module")
def ring(tmp_path_factory):
    path = tmp_path_factory.mktemp("ring") / "ring.ttl"
    path.write_text("@prefix : <http://example.org/> .\n" + "".join(
        f":n{i} :road :n{(i + 1) % RING} .\n:n{i} :road :n{(i * 7 + 3) % RING} .\n" for i in range(RING)))
    return path


@pytest.mark.parametrize("path", ["((:road+)+)*", "((:road+/:road)+/^:road)*"])
def test_nested_closures_on_a_cyclic_graph_end(tmp_path, ring, path):
    # ((:road+)+)* ran for minutes; each level of nesting multiplied the work
    rules_file = tmp_path / "p.rq"
    rules_file.write_text(PREFIX + f"SELECT ?to WHERE {{ ?van :at ?from . ?from {path} ?to }}")
    events = jsonl(tmp_path / "e.jsonl", [ev("van", "at", "n0", T0)])
    done = cep_subprocess("run", rules_file, "--events", events, "--ontology", ring, "--engine", "local", "-q")
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.splitlines()) == RING  # every node of the ring


def test_a_closure_of_a_closure_compiles_to_one_closure():
    road = f"<{EX}road>"
    star = pl.write(pl.Struct("star", pl.Struct("iri", pl.Atom(f"{EX}road"))))
    plus = pl.write(pl.Struct("plus", pl.Struct("iri", pl.Atom(f"{EX}road"))))
    for nested, one in (((("+", "+"), "*"), star), ((("+", "+"),), plus), ((("?", "+"),), star),
                        ((("?", "?"),), pl.write(pl.Struct("opt", pl.Struct("iri", pl.Atom(f"{EX}road")))))):
        path = road
        for op in (op for level in nested for op in level):
            path = ops.Path(op, (path,))
        assert pl.write(path_term(path)) == one, path


def test_a_closure_reaching_a_node_whose_closure_is_known_takes_all_of_it(tmp_path):
    # in one closure's evaluation, :p+ from s is run first ({a, c}); the
    # second :p+, from b, reaches s, whose closure it takes whole instead
    # of expanding it again
    graph = tmp_path / "g.ttl"
    graph.write_text("@prefix : <http://example.org/> .\n:s :p :a . :a :p :c . :c :q :b . :b :p :s .\n")
    got = checked_answers(rules("SELECT ?to WHERE { ?v :at ?from . ?from (:p+/:q/:p+)+ ?to }"),
                          [ev("v", "at", "s", 1)], load_background([graph]))
    assert sorted(dict(a.bindings)["to"] for a in got) == [f"<{EX}{n}>" for n in ("a", "c", "s")]



def paths(depth):
    """Paths with closures nested in closures, sequences and alternatives."""
    step = st.sampled_from([":p", ":q", "^:p"])
    if depth == 0:
        return step
    inner = paths(depth - 1)
    return st.one_of(step,
                     st.builds(lambda p, op: f"({p}){op}", inner, st.sampled_from("+*?")),
                     st.builds(lambda a, b, op: f"({a}){op}({b})", inner, inner, st.sampled_from("/|")))


@settings(max_examples=150, deadline=None)
@given(edges=st.lists(st.tuples(st.integers(0, 5), st.sampled_from("pq"), st.integers(0, 5)), max_size=14),
       path=paths(3), start=st.integers(0, 5))
def test_nested_paths_give_the_reference_answers(tmp_path_factory, edges, path, start):
    # the compiled closures (one closure for a closure of a closure; each
    # run once per node, prolog/cep_paths.pl) against SPARQL's definitions
    graph = tmp_path_factory.mktemp("g") / "g.ttl"
    graph.write_text("@prefix : <http://example.org/> .\n:n0 :p :n1 .\n"
                     + "".join(f":n{a} :{p} :n{b} .\n" for a, p, b in edges))
    queries = rules(f"SELECT ?to WHERE {{ ?v :at ?from . ?from ({path})+ ?to }}")
    checked_answers(queries, [ev("v", "at", f"n{start}", 1)], load_background([graph]))
