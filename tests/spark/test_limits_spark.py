"""Work that runs away at run time on the Spark engine (issue 17, items 3
and 9, and partial matches that multiply): the workers run the compiled
program of the in-process engine, so a REGEX that PCRE gives up on fails
its solution and the query goes on, and a cycle of CONSTRUCT rules or a
query whose partial matches multiply stops at the limit given to detect()
with the in-process engine's error (it does not loop or take all memory);
`cep run --engine spark` exits 2 with it."""

from __future__ import annotations

import json

import pytest

from cep import cli
from cep.limits import Limits

pytestmark = pytest.mark.spark
EX = "http://example.org/"
T0 = 1_767_225_600_000
PREFIX = f"PREFIX : <{EX}>\nPREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#>\n"


def test_a_regex_pcre_gives_up_on_does_not_fail_the_query(spark):
    from cep.spark import detect

    rules = PREFIX + 'REGISTER QUERY names AS SELECT ?x WHERE { ?x :name ?a FILTER REGEX(?a, "^(a+)+$") }'
    rows = [(f"<{EX}bad>", f"<{EX}name>", '"' + "a" * 40 + '!"', T0),
            (f"<{EX}good>", f"<{EX}name>", '"aaa"', T0 + 1)]
    df = spark.createDataFrame(rows, "s string, p string, o string, t long")
    got = detect(df, rules, buckets=1).collect()
    assert [(r["kind"], r["query"], r["bindings"]["x"]) for r in got] == [("answer", "names", f"<{EX}good>")]


REIFY = PREFIX + """REGISTER STREAM reify AS
    CONSTRUCT { [ rdf:subject ?s ; rdf:predicate ?p ; rdf:object ?o ] } WHERE { ?s ?p ?o }"""


def test_a_reifying_cycle_stops_at_the_derivation_limit(spark):
    from cep.spark import detect

    df = spark.createDataFrame([(f"<{EX}a>", f"<{EX}p>", f"<{EX}b>", T0)], "s string, p string, o string, t long")
    with pytest.raises(Exception, match=r"the CONSTRUCT rules reify \(301 new triples\) derived more than 300"):
        detect(df, REIFY, buckets=1, limits=Limits(derived=300)).collect()


def test_cep_run_on_spark_exits_2_with_the_workers_error(spark, tmp_path, capsys):
    rules, events = tmp_path / "reify.rq", tmp_path / "e.jsonl"
    rules.write_text(REIFY)
    events.write_text(json.dumps({"s": f"<{EX}a>", "p": f"<{EX}p>", "o": f"<{EX}b>", "t": T0}) + "\n")
    code = cli.main([str(a) for a in ("run", rules, "--events", events, "--engine", "spark", "--max-derived", "300",
                                      "-q")])
    err = capsys.readouterr().err
    assert code == 2
    assert err.splitlines()[-1] == (
        "cep: error: at 2026-01-01T00:00:00+00:00 the CONSTRUCT rules reify (301 new triples) derived more "
        "than 300 triples, the limit of one instant: a cycle of rules that derives a new blank node or a new "
        "value each round never ends (if the rules do need more, raise the limit: cep run --max-derived, "
        "cep.limits.Limits.derived)")


def test_partial_matches_that_multiply_stop_at_the_limit(spark):
    # a product of 100 triple patterns: each event matches each of them
    from cep.spark import detect

    rules = PREFIX + "REGISTER QUERY product AS SELECT * WHERE { " + " . ".join(
        f"?s{i} ?p{i} ?o{i}" for i in range(100)) + " }"
    df = spark.createDataFrame([(f"<{EX}a>", f"<{EX}p>", f"<{EX}b>", T0), (f"<{EX}c>", f"<{EX}q>", f"<{EX}d>", T0 + 1)],
                               "s string, p string, o string, t long")
    with pytest.raises(Exception, match=r"at 2026-01-01T00:00:00.001\+00:00 one event made more than 1,000 partial "
                                        r"matches of product, the limit of one event"):
        detect(df, rules, buckets=1, limits=Limits(partial_matches=1000)).collect()
