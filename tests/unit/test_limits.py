"""Work that runs away at run time (issue 17, items 3, 9, 10 and 11): a
REGEX that PCRE gives up on, cycles of CONSTRUCT rules that never end,
partial matches that multiply with each event (a product of patterns, a
pattern repeated, nested OPTIONALs), windows evaluated millions of times,
nested property paths on cyclic graphs, and state that grows without bound. Each is a clear error, a
refusal at compile time or a warning, and the rest of the run goes on.
Runs that used to hang are run in a subprocess with a generous timeout (a
guard, not a speed claim)."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cep import cli, reference
from cep import prolog as pl
from cep.algebra import ops
from cep.background.knowledge import load_background
from cep.compile import compile_queries, state_warnings
from cep.compile.leaves import path_term
from cep.engine import Engine
from cep.errors import EngineError, QueryError
from cep.events import Event
from cep.limits import Limits
from cep.rules import parse_rules
from cep.runtime.session import session
from tests.unit.support import checked_answers

EX = "http://example.org/"
XSD = "http://www.w3.org/2001/XMLSchema#"
PREFIX = f"PREFIX : <{EX}>\nPREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#>\n"
T0 = 1_767_225_600_000  # 2026-01-01T00:00:00Z
# A run that hangs is stopped (the test fails, the suite goes on) when it has
# used GUARD_SECONDS of CPU time: a loop, whatever the machine's load (the
# kernel ends it: RLIMIT_CPU); or, waiting without using the CPU, after as
# many seconds of wall time times the load per core when it started.
GUARD_SECONDS = 300
CATASTROPHIC = '"' + "a" * 40 + '!"'


def rules(text: str):
    return parse_rules(PREFIX + text, "r.rq")


def ev(s, p, o, t):
    return Event(f"<{EX}{s}>", f"<{EX}{p}>", o if o.startswith(('"', "<")) else f"<{EX}{o}>", t, t)


def num(n):
    return f'"{n}"^^<{XSD}integer>'


def cep(argv, capsys):
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def jsonl(path: Path, events) -> Path:
    path.write_text("".join(json.dumps({"s": e.s, "p": e.p, "o": e.o, "t": e.start}) + "\n" for e in events))
    return path


def cep_subprocess(*argv, address_space: int | None = None):
    """`cep ARGV` in a child process, stopped (failing the test) if it hangs
    (GUARD_SECONDS); with at most `address_space` bytes of memory if given."""
    def limits():
        resource.setrlimit(resource.RLIMIT_CPU, (GUARD_SECONDS, GUARD_SECONDS + 10))  # SIGXCPU, then SIGKILL
        if address_space:
            resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))

    load = os.getloadavg()[0] / (os.cpu_count() or 1)
    done = subprocess.run([sys.executable, "-m", "cep", *map(str, argv)], capture_output=True, text=True,
                          timeout=GUARD_SECONDS * max(1.0, load), preexec_fn=limits)
    assert done.returncode not in (-signal.SIGXCPU, -signal.SIGKILL), \
        f"no end in {GUARD_SECONDS} s of CPU time: {done.stderr[-2000:]}"
    return done


# ------------------------------------------------ 3: a REGEX PCRE gives up on

REGEX_RULES = """REGISTER QUERY names AS
SELECT ?x ?a WHERE { ?x :name ?a FILTER REGEX(?a, "^(a+)+$") }"""


def names(answers):
    return [dict(a.bindings)["x"].removeprefix(f"<{EX}").removesuffix(">") for a in answers]


def test_a_regex_pcre_gives_up_on_fails_its_solution_and_the_run_goes_on():
    engine = Engine(rules(REGEX_RULES))
    got = engine.push([ev("bad", "name", CATASTROPHIC, 1), ev("good", "name", '"aaa"', 2),
                       ev("bad2", "name", CATASTROPHIC, 3), ev("good2", "name", '"aaaa"', 4)]) + engine.flush()
    assert names(got) == ["good", "good2"]
    # one warning, naming the query, however many events PCRE gave up on
    assert len(engine.warnings) == 1
    assert engine.warnings[0].startswith("names: REGEX or REPLACE gave up on a value")
    assert "a FILTER drops the solution" in engine.warnings[0]


def test_a_replace_pcre_gives_up_on_is_an_error_value_and_the_run_goes_on():
    engine = Engine(rules("""REGISTER QUERY replaced AS
        SELECT ?x (REPLACE(?a, "^(a+)+$", "b") AS ?r) WHERE { ?x :name ?a }"""))
    got = engine.push([ev("bad", "name", CATASTROPHIC, 1), ev("good", "name", '"aaa"', 2)]) + engine.flush()
    values = {dict(a.bindings)["x"].removeprefix(f"<{EX}").removesuffix(">"): dict(a.bindings).get("r") for a in got}
    assert values == {"bad": None, "good": '"b"'}  # the error leaves ?r unbound
    assert len(engine.warnings) == 1 and engine.warnings[0].startswith("replaced: REGEX or REPLACE gave up")


def test_a_constant_replace_pattern_that_cannot_run_is_a_query_error():
    with pytest.raises(QueryError, match=r"the REPLACE pattern \"\(\" is not a valid regular expression"):
        Engine(rules('REGISTER QUERY r AS SELECT ?x (REPLACE(?a, "(", "b") AS ?r) WHERE { ?x :name ?a }'))


def test_a_regex_pcre_gives_up_on_is_an_error_under_not_and_or():
    # SPARQL 17.2: !error is an error (dropped); error || true is true
    engine = Engine(rules("""
        REGISTER QUERY negated AS SELECT ?x WHERE { ?x :name ?a FILTER (!REGEX(?a, "^(a+)+$")) }
        REGISTER QUERY either AS SELECT ?x WHERE { ?x :name ?a FILTER (REGEX(?a, "^(a+)+$") || STRSTARTS(?a, "a")) }"""))
    got = engine.push([ev("bad", "name", CATASTROPHIC, 1), ev("b", "name", '"b"', 2),
                       ev("aaa", "name", '"aaa"', 3)]) + engine.flush()
    by_query = {q: sorted(names(a for a in got if a.query == q)) for q in ("negated", "either")}
    assert by_query == {"negated": ["b"], "either": ["aaa", "bad"]}
    assert sorted(w.split(":")[0] for w in engine.warnings) == ["either", "negated"]


def test_a_regex_pcre_gives_up_on_in_a_shared_step_names_every_query_of_it():
    engine = Engine(rules(REGEX_RULES + """
        REGISTER QUERY again AS SELECT ?x ?a WHERE { ?x :name ?a FILTER REGEX(?a, "^(a+)+$") }"""))
    engine.push([ev("bad", "name", CATASTROPHIC, 1)])
    engine.flush()
    assert len(engine.warnings) == 1 and engine.warnings[0].startswith("names, again: ")


def test_cep_run_warns_once_for_a_regex_pcre_gives_up_on_and_answers_the_next_event(tmp_path, capsys):
    rules_file = tmp_path / "r.rq"
    rules_file.write_text(PREFIX + REGEX_RULES)
    events = jsonl(tmp_path / "e.jsonl", [ev("bad", "name", CATASTROPHIC, T0), ev("good", "name", '"aa"', T0 + 1),
                                          ev("bad2", "name", CATASTROPHIC, T0 + 2)])
    code, out, err = cep(["run", rules_file, "--events", events, "--engine", "local", "-q",
                          "--batch-size", "1"], capsys)
    assert code == 0
    assert [json.loads(line)["bindings"]["x"]["value"] for line in out.splitlines()] == [f"{EX}good"]
    assert err.count("REGEX or REPLACE gave up") == 1
    assert "cep: warning: names: REGEX or REPLACE gave up on a value" in err


# ----------------------------------------- 9: derivations that never end

REIFY = """REGISTER STREAM reify AS
CONSTRUCT { [ rdf:subject ?s ; rdf:predicate ?p ; rdf:object ?o ] } WHERE { ?s ?p ?o }"""
HALVES = """REGISTER STREAM left AS CONSTRUCT { :a :p ?m } WHERE { SELECT (?n * 2 AS ?m) WHERE { ?x :p ?n } }
REGISTER STREAM right AS CONSTRUCT { :a :p ?m } WHERE { SELECT (?n * 2 + 1 AS ?m) WHERE { ?x :p ?n } }"""
DOUBLING = """REGISTER STREAM grow AS
CONSTRUCT { :a :s ?t } WHERE { SELECT (CONCAT(?v, ?v) AS ?t) WHERE { ?x :s ?v } }"""


def test_a_template_blank_node_that_reifies_every_triple_stops_at_the_limit():
    engine = Engine(rules(REIFY), limits=Limits(derived=1000))
    with pytest.raises(EngineError, match=r"at 2026-01-01T00:00:00\+00:00 the CONSTRUCT rules reify "
                                          r"\(1,001 new triples\) derived more than 1,000 triples, the limit "
                                          r"of one instant.*--max-derived"):
        engine.push([ev("a", "p", num(1), T0)])
        engine.flush()


def test_two_rules_feeding_each_other_new_values_are_both_named():
    engine = Engine(rules(HALVES), limits=Limits(derived=500))
    with pytest.raises(EngineError, match=r"the CONSTRUCT rules (left|right) \(2\d\d new triples\), "
                                          r"(left|right) \(2\d\d new triples\) derived more than 500 triples"):
        engine.push([ev("a", "p", num(1), T0)])
        engine.flush()


def test_a_value_that_doubles_each_round_stops_at_the_value_limit():
    engine = Engine(rules(DOUBLING), limits=Limits(derived_value_chars=10_000))
    with pytest.raises(EngineError, match="the CONSTRUCT rule grow derived a value longer than 10,000 characters"):
        engine.push([ev("a", "s", '"ab"', T0)])
        engine.flush()


def test_the_derivation_limit_counts_the_triples_of_one_instant():
    # 50 events at one instant, each deriving one triple that a query reads:
    # 50 new triples at that instant, 25 at each of two others
    text = """REGISTER STREAM copy AS CONSTRUCT { ?x :copied ?v } WHERE { ?x :v ?v }
              REGISTER QUERY read AS SELECT ?x WHERE { ?x :copied ?v }"""
    events = [ev(f"x{i}", "v", num(i), T0) for i in range(50)]
    events += [ev(f"y{i}", "v", num(i), T0 + 1 + i % 2) for i in range(50)]
    engine = Engine(rules(text), limits=Limits(derived=50))
    got = engine.push(events) + engine.flush()
    assert sum(a.query == "read" for a in got) == 100
    engine = Engine(rules(text), limits=Limits(derived=49))
    with pytest.raises(EngineError, match=r"copy \(50 new triples\) derived more than 49 triples"):
        engine.push(events)
        engine.flush()


def test_limits_must_be_positive():
    with pytest.raises(ValueError, match="Limits.derived must be a positive integer"):
        Limits(derived=0)


def test_cep_run_stops_a_reifying_cycle_with_exit_2(tmp_path, capsys):
    rules_file = tmp_path / "reify.rq"
    rules_file.write_text(PREFIX + REIFY)
    events = jsonl(tmp_path / "e.jsonl", [ev("a", "p", num(1), T0)])
    code, out, err = cep(["run", rules_file, "--events", events, "--engine", "local", "--max-derived", "300"],
                         capsys)
    assert code == 2
    assert "cep: error: at 2026-01-01T00:00:00+00:00 the CONSTRUCT rules reify" in err
    assert "derived more than 300 triples" in err and "Traceback" not in err
    code, _, err = cep(["run", rules_file, "--events", events, "--engine", "local", "--max-derived", "0"], capsys)
    assert (code, err) == (2, "cep: error: --max-derived must be at least 1, not 0\n")


@pytest.mark.parametrize("text, ev_args, says", [
    (REIFY, ("a", "p", num(1)), "derived more than 100,000 triples"),
    (HALVES, ("a", "p", num(1)), "derived more than 100,000 triples"),
    (DOUBLING, ("a", "s", '"ab"'), "derived a value longer than 16,777,216 characters"),
], ids=["reify", "halves", "doubling"])
def test_cycles_that_used_to_hang_or_crash_stop_with_the_default_limits(tmp_path, text, ev_args, says):
    # before: a hang, SWI-Prolog out of memory (SIGABRT) and a stack overflow
    rules_file = tmp_path / "r.rq"
    rules_file.write_text(PREFIX + text)
    events = jsonl(tmp_path / "e.jsonl", [ev(*ev_args, T0)])
    done = cep_subprocess("run", rules_file, "--events", events, "--engine", "local", "-q")
    assert done.returncode == 2, done.stderr
    assert says in done.stderr and "Traceback" not in done.stderr


def test_prolog_running_out_of_memory_is_a_clear_error():
    # a cross product of one instant's events, under a small stack limit
    engine = Engine(rules("SELECT * WHERE { ?a :p ?x . ?b :p ?y . ?c :p ?z }"))
    prolog = session().prolog
    (old,) = [r["L"] for r in prolog.query("current_prolog_flag(stack_limit, L)")]
    list(prolog.query("set_prolog_flag(stack_limit, 64_000_000)"))
    try:
        with pytest.raises(EngineError, match=r"the rules ran out of memory in SWI-Prolog \(.*\): a value, or "
                                              r"the partial matches or answers of one batch"):
            engine.push([ev(f"k{i}", "p", num(i), T0) for i in range(300)])
            engine.flush()
    finally:
        list(prolog.query(f"set_prolog_flag(stack_limit, {old})"))


# ------------------------------- 17: partial matches that multiply per event

def group(*patterns):
    return rules("REGISTER QUERY product AS SELECT * WHERE { " + " . ".join(patterns) + " }")


DISTINCT = [f"?s{i} ?p{i} ?o{i}" for i in range(100)]  # each event matches each pattern: a product
REPEATED = ["?s ?p ?o"] * 100  # one answer per event, but the partial matches multiply


def test_a_product_of_parts_stops_at_the_partial_match_limit_naming_the_query():
    engine = Engine(group(*DISTINCT), limits=Limits(partial_matches=1000))
    with pytest.raises(EngineError, match=r"^at 2026-01-01T00:00:00.001\+00:00 one event made more than 1,000 partial "
                                          r"matches of product, the limit of one event .*--max-partial-matches, "
                                          r"cep.limits.Limits.partial_matches \(a match of more than 32 "
                                          r"variables counts once per 32\)$"):
        engine.push([ev("a", "p", "b", T0), ev("c", "q", "d", T0 + 1)])
        engine.flush()


def test_a_pattern_repeated_stops_at_the_partial_match_limit():
    engine = Engine(group(*REPEATED), limits=Limits(partial_matches=1000))
    with pytest.raises(EngineError, match="one event made more than 1,000 partial matches of product"):
        engine.push([ev("a", "p", "b", T0 + i) for i in range(3)])
        engine.flush()


def test_the_limit_counts_the_partial_matches_of_one_event():
    # ?a . ?b . ?c over 5 events: the k-th makes 2k - 1 matches of the
    # first join (k - 1 with its first pattern, k with its second), kept
    # for the second; the second's solutions are answers, not counted
    queries = group("?a :p ?x", "?b :p ?y", "?c :p ?z")
    events = [ev(f"k{i}", "p", num(i), T0 + i) for i in range(1, 6)]
    engine = Engine(queries, limits=Limits(partial_matches=9))
    got = engine.push(events) + engine.flush()
    assert len(got) == 125
    assert reference.multiset(got) == reference.multiset(reference.evaluate(queries, events))
    engine = Engine(queries, limits=Limits(partial_matches=8))
    with pytest.raises(EngineError, match=r"^at 2026-01-01T00:00:00.005\+00:00 one event made more than 8 partial"):
        engine.push(events)
        engine.flush()


def test_the_solutions_a_window_keeps_count_as_partial_matches():
    # the query's own join, kept for the window's evaluation: the k-th event makes 2k - 1
    queries = rules(f"""REGISTER QUERY w AS SELECT (COUNT(*) AS ?n) FROM STREAM <{EX}s> [RANGE 1h STEP 1h]
        WHERE {{ ?a :p ?x . ?b :p ?y }}""")
    events = [ev(f"k{i}", "p", num(i), T0 + i) for i in range(1, 7)]
    engine = Engine(queries, limits=Limits(partial_matches=11))
    # 36 in the hour of the events, then 0 in the next one, the first past them (an empty window's row)
    assert [dict(a.bindings)["n"] for a in engine.push(events) + engine.flush()] == [num(36), num(0)]
    engine = Engine(queries, limits=Limits(partial_matches=10))
    with pytest.raises(EngineError, match=r"^at 2026-01-01T00:00:00.006\+00:00 one event made more than 10 partial "
                                          r"matches of w,"):
        engine.push(events)
        engine.flush()


def test_the_end_of_an_instant_may_make_the_limit_for_each_of_its_events():
    # the optional part's checks at the instant's end hand each of its 50
    # solutions on to the SEQ: 50 partial matches, one per event
    queries = rules("""REGISTER QUERY late AS SELECT * WHERE {
        { ?k :a ?x OPTIONAL { ?k :b ?y } } SEQ { ?k :c ?z } }""")
    events = [ev(f"k{i}", "a", num(i), T0) for i in range(50)] + [ev(f"k{i}", "c", num(i), T0 + 1) for i in range(50)]
    engine = Engine(queries, limits=Limits(partial_matches=1))
    got = engine.push(events) + engine.flush()
    assert reference.multiset(got) == reference.multiset(reference.evaluate(queries, events))
    assert len(got) == 50


def test_nested_optionals_that_multiply_stop_at_the_limit():
    depth = 40
    text = "SELECT * WHERE { ?a :p ?b " + "".join(f"OPTIONAL {{ ?a :q ?c{i} " for i in range(depth)) + "}" * depth + " }"
    engine = Engine(rules("REGISTER QUERY nested AS " + text), limits=Limits(partial_matches=10_000))
    with pytest.raises(EngineError, match="made more than 10,000 partial matches of nested"):
        engine.push([ev("a", "q", f"c{i}", T0 + i) for i in range(10)] + [ev("a", "p", "b", T0 + 10)])
        engine.flush()


def test_cep_run_stops_partial_matches_that_multiply_with_exit_2(tmp_path, capsys):
    rules_file = tmp_path / "product.rq"
    rules_file.write_text(PREFIX + "SELECT * WHERE { " + " . ".join(DISTINCT) + " }")
    events = jsonl(tmp_path / "e.jsonl", [ev("a", "p", "b", T0), ev("c", "q", "d", T0 + 1)])
    code, out, err = cep(["run", rules_file, "--events", events, "--engine", "local", "-q",
                          "--max-partial-matches", "2000"], capsys)
    # the first event's answer (it matches each pattern) is given; the second one's partial matches multiply
    assert code == 2 and len(out.splitlines()) == 1
    assert err.splitlines()[-1].startswith("cep: error: at 2026-01-01T00:00:00.001+00:00 one event made more than "
                                           "2,000 partial matches of product, the limit of one event")
    code, _, err = cep(["run", rules_file, "--events", events, "--engine", "local",
                        "--max-partial-matches", "0"], capsys)
    assert (code, err) == (2, "cep: error: --max-partial-matches must be at least 1, not 0\n")
    with pytest.raises(ValueError, match="Limits.partial_matches must be a positive integer"):
        Limits(partial_matches=0)


NESTED = "?a :p ?b " + "".join(f"OPTIONAL {{ ?a :q ?c{i} " for i in range(500)) + "}" * 500


@pytest.mark.parametrize("pattern, events", [
    (" . ".join(DISTINCT), [("a", "p", "b", 0), ("c", "q", "d", 1)]),
    # parts that share their variables but ?o: a solution per choice of events
    (" . ".join(f"?s ?p ?o{i}" for i in range(100)), [("a", "p", f"b{i}", i) for i in range(10)]),
    # each OPTIONAL matches 10 events; its partial matches hold up to 500 variables
    (NESTED, [("a", "q", f"c{i}", i) for i in range(10)] + [("a", "p", "b", 10)]),
], ids=["product", "shared-key", "nested-optionals"])
def test_partial_matches_that_multiply_stop_with_the_default_limit_before_memory_runs_out(tmp_path, pattern,
                                                                                          events):
    # before: SWI-Prolog's goal stores grew until malloc failed (SIGABRT
    # under this guard; on the bare machine, gigabytes)
    rules_file = tmp_path / "product.rq"
    rules_file.write_text(PREFIX + "SELECT * WHERE { " + pattern + " }")
    events = jsonl(tmp_path / "e.jsonl", [ev(s, p, o, T0 + t) for s, p, o, t in events])
    done = cep_subprocess("run", rules_file, "--events", events, "--engine", "local", "-q",
                          address_space=5 << 29)  # 2.5 GiB
    assert done.returncode == 2, done.stderr
    assert "one event made more than 250,000 partial matches of product" in done.stderr
    assert "Traceback" not in done.stderr


# ---------------------------------- 10: windows and paths that eat the machine

def window_rules(window, every=""):
    return rules(f"""REGISTER QUERY w {every} AS SELECT (COUNT(*) AS ?n)
        FROM STREAM <{EX}s> {window} WHERE {{ ?x :p ?y }}""")


def test_a_window_evaluated_more_often_than_the_limit_is_refused_at_its_position():
    with pytest.raises(QueryError, match=r"r.rq:4:\d+: the window of w is evaluated 3,600,000 times with each "
                                         r"instant in it \(RANGE 1h / STEP 1ms\), more than the limit of 10,000"):
        compile_queries(window_rules("[RANGE 1h STEP 1ms]"))
    with pytest.raises(QueryError, match=r"evaluated 3,600 times .*\(RANGE 1h / COMPUTED EVERY 1s\), more than "
                                         r"the limit of 1,000"):
        compile_queries(window_rules("[RANGE 1h STEP 1h]", "COMPUTED EVERY 1s"), limits=Limits(window_evaluations=1000))


def test_a_window_at_the_limit_runs():
    queries = window_rules("[RANGE 10s STEP 1ms]")  # 10,000 evaluations: the limit
    engine = Engine(queries)
    got = engine.push([ev("a", "p", "b", T0)]) + engine.flush()
    # 10,000 windows hold the event, then the first one past it is empty: COUNT 0
    assert [dict(a.bindings)["n"] for a in got] == [num(1)] * 10_000 + [num(0)]
    with pytest.raises(QueryError, match="evaluated 10,000 times"):
        Engine(queries, limits=Limits(window_evaluations=9_999))


def test_cep_run_refuses_a_window_stepping_by_the_millisecond(tmp_path, capsys):
    # [RANGE 1h STEP 1ms] on one event ran for 2 minutes, then overflowed the stack
    events = jsonl(tmp_path / "e.jsonl", [ev("a", "p", "b", T0)])
    for range_, evaluations in (("1h", "3,600,000"), ("12s", "12,000")):
        rules_file = tmp_path / f"w{range_}.rq"
        rules_file.write_text(PREFIX + f"""REGISTER QUERY w AS SELECT (COUNT(*) AS ?n)
        FROM STREAM <{EX}s> [RANGE {range_} STEP 1ms] WHERE {{ ?x :p ?y }}""")
        for command in (["run", rules_file, "--events", events, "--engine", "local"], ["explain", rules_file],
                        ["compile", rules_file]):
            code, out, err = cep(command, capsys)
            assert code == 2 and out == ""
            assert err.startswith(f"cep: error: {rules_file}:4:9: the window of w is evaluated {evaluations} "
                                  f"times with each instant in it (RANGE {range_} / STEP 1ms)")
            assert "--max-window-evaluations" in err
    code, out, err = cep(["run", rules_file, "--events", events, "--engine", "local", "-q",
                          "--max-window-evaluations", "12000"], capsys)
    assert code == 0 and len(out.splitlines()) == 12_001  # and the first empty window's COUNT 0


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


# ------------------------------------------ 11: state that grows unbounded

def warned(text: str) -> list[str]:
    return state_warnings(rules(text))


def test_an_unwindowed_seq_warns_naming_the_query_and_how_to_bound_it():
    (warning,) = warned("REGISTER QUERY pairs AS SELECT * WHERE { { ?k :a ?x } SEQ { ?k :b ?y } }")
    assert warning.startswith("r.rq:3:1: pairs keeps partial matches with no time bound, so its state grows "
                              "with the stream: the left side of SEQ (e2)")
    assert 'WITHIN "PT1H"' in warning and "getDURATION()" in warning and "[RANGE" in warning


def test_joins_and_optional_parts_warn():
    (join,) = warned("SELECT * WHERE { ?k :a ?x . ?k :b ?y }")
    assert "both sides of joins (e2)" in join
    # the optional part of OPTIONALSEQ is kept even under WITHIN: absence is judged over the stream
    (optional,) = warned("""SELECT * WHERE { { ?k :a ?x } OPTIONALSEQ { ?k :b ?y } WITHIN "PT1M" }""")
    assert "the optional part of OPTIONALSEQ (e2)" in optional and "kept whatever the bound" in optional
    assert "the left side" not in optional


@pytest.mark.parametrize("pattern", [
    '{ ?k :a ?x } SEQ { ?k :b ?y } WITHIN "PT1H"',
    '{ { ?k :a ?x } SEQ { ?k :b ?y } FILTER (getDURATION() < "PT10M"^^<http://www.w3.org/2001/XMLSchema#duration>) }',
    "{ ?k :a ?x } EQUALS { ?k :b ?y }",
    "{ ?k :a ?x } EQUALSOPTIONAL { ?k :b ?y }",
    '{ ?k :a ?x } NOTSEQ "PT1M" { ?k :b ?y }',
    "{ ?k :a ?x } UNION { ?k :b ?y }",
    "?k :a ?x",
], ids=["within", "getduration", "equals", "equalsoptional", "notseq", "union", "one-pattern"])
def test_bounded_state_does_not_warn(pattern):
    assert warned(f"SELECT * WHERE {{ {pattern} }}") == []


def test_a_time_window_bounds_its_patterns_partial_matches():
    queries = rules(f"""REGISTER QUERY w AS SELECT (COUNT(*) AS ?n) FROM STREAM <{EX}s> [RANGE 10s STEP 5s]
        WHERE {{ {{ ?k :a ?x }} SEQ {{ ?k :b ?y }} }}""")
    assert state_warnings(queries) == []
    # the SEQ's goals expire with the range: an :a older than the range joins nothing
    engine = Engine(queries)
    got = engine.push([ev("k", "a", "x", T0), ev("k", "b", "y", T0 + 20_000), ev("k", "a", "x", T0 + 21_000),
                       ev("k", "b", "y", T0 + 22_000)]) + engine.flush()
    assert {dict(a.bindings)["n"] for a in got} == {num(1), num(0)}  # 0: the windows between and after
    assert [n.window for n in engine.compiled.plan.nodes if getattr(n, "op", None) is ops.SeqJoin] == [9_999]
    # and no partial match is left once event time is past them
    assert not engine.advance(T0 + 60_000)


def test_a_count_window_of_events_does_not_bound_its_pattern():
    (warning,) = warned(f"""REGISTER QUERY w AS SELECT (COUNT(*) AS ?n) FROM STREAM <{EX}s> WINDOW ELEMS 5
        WHERE {{ {{ ?k :a ?x }} SEQ {{ ?k :b ?y }} }}""")
    assert "w keeps partial matches" in warning


def test_a_window_of_triples_evaluates_its_pattern_over_its_content():
    # [TRIPLES n] holds some triples of its oldest instant: its steps are
    # evaluated at each evaluation from the triples it holds, so no partial
    # match is kept over the stream
    assert warned(f"""REGISTER QUERY w AS SELECT (COUNT(*) AS ?n) FROM STREAM <{EX}s> [TRIPLES 5]
        WHERE {{ {{ ?k :a ?x }} SEQ {{ ?k :b ?y }} }}""") == []


def test_cep_explain_and_run_warn_once_per_unbounded_query(tmp_path, capsys):
    rules_file = tmp_path / "r.rq"
    rules_file.write_text(PREFIX + """REGISTER QUERY pairs AS SELECT * WHERE { { ?k :a ?x } SEQ { ?k :b ?y } }
REGISTER QUERY bounded AS SELECT * WHERE { { ?k :a ?x } SEQ { ?k :b ?y } WITHIN "PT1H" }""")
    events = jsonl(tmp_path / "e.jsonl", [ev("k", "a", "x", T0), ev("k", "b", "y", T0 + 1)])
    for command in (["explain", rules_file], ["run", rules_file, "--events", events, "--engine", "local", "-q"]):
        code, _, err = cep(command, capsys)
        assert code == 0
        lines = [line for line in err.splitlines() if "keeps partial matches" in line]
        assert len(lines) == 1
        assert lines[0].startswith(f"cep: warning: {rules_file}:3:1: pairs keeps partial matches")
