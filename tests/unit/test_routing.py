"""Partition keys and query classes of the Spark engine (cep/spark/routing.py)."""

from cep import terms
from cep.rules import parse_rules
import pytest

from cep.spark import plan, routing

PRE = "PREFIX : <http://example.org/>\n"


def test_the_paper_query_1_is_partitioned_by_company():
    q, = parse_rules(PRE + """SELECT ?company WHERE { ?company :hasStockPrice ?p1 }
        SEQ { ?company :hasStockPrice ?p2 } SEQ { ?company :hasStockPrice ?p3 } FILTER (?p2 < ?p1)""")
    assert routing.partition_key(q) == "company"
    assert "partitioned by ?company" in routing.explain([q])


def test_a_query_without_a_common_variable_runs_in_one_group():
    q, = parse_rules(PRE + "SELECT * WHERE { ?a :p ?b } SEQ { ?c :q ?d }")
    assert routing.partition_key(q) is None
    assert "no partition key" in routing.explain([q])
    assert plan([q]).buckets == (1,)


@pytest.mark.parametrize("query, why", [
    ("SELECT ?k WHERE { ?k :p ?x } ORDER BY ?x LIMIT 2", "ORDER BY, LIMIT or OFFSET"),
    ("ASK WHERE { ?k :p ?x }", "an ASK answers once per evaluation"),
    ("SELECT ?k WHERE { ?k :p+ ?x }", "reads whole instants"),
])
def test_explain_says_why_a_query_with_a_common_variable_has_no_key(query, why):
    q, = parse_rules(PRE + query)
    assert routing.partition_key(q) is None
    text = routing.explain([q])
    assert why in text and "no variable is bound" not in text


def test_queries_with_the_same_routing_share_a_class():
    a, b, c, d = parse_rules(PRE + """
        REGISTER QUERY a AS SELECT * WHERE { ?k :p ?x } SEQ { ?k :q ?y }
        REGISTER QUERY b AS SELECT * WHERE { ?k :q ?y } EQUALS { ?k :p ?x }
        REGISTER QUERY c AS SELECT * WHERE { ?x :p ?k } SEQ { ?k :q ?y }
        REGISTER QUERY d AS SELECT * WHERE { ?k :p ?x }""")
    classes = routing.classes([a, b, c, d])
    assert [[q.name for q in cl.queries] for cl in classes] == [["a", "b"], ["c"], ["d"]]
    # c keys on the object of one pattern and the subject of the other: one group
    assert plan([a, b, c, d], buckets=4).buckets == (4, 1, 4)


def test_lateness_intervals_in_milliseconds():
    from cep.errors import UsageError
    from cep.spark import interval_ms

    assert [interval_ms(t) for t in ("10 seconds", "0 seconds", "1 minute 30 seconds", "500 ms", "2 hours")] == [
        10_000, 0, 90_000, 500, 7_200_000]
    for bad in ("soon", "10 parsecs", ""):
        with pytest.raises(UsageError):
            interval_ms(bad)


def test_with_an_ontology_events_go_where_what_they_entail_can_match():
    from cep.background.knowledge import background_of

    ex = "http://example.org/"
    rdfs = "http://www.w3.org/2000/01/rdf-schema#"
    schema = background_of([
        (f"<{ex}Buoy>", f"<{rdfs}subClassOf>", f"<{ex}Platform>"),
        (f"<{ex}waterHeight>", f"<{rdfs}subPropertyOf>", f"<{ex}result>"),
        (f"<{ex}hosts>", f"<{rdfs}domain>", f"<{ex}Platform>"),
        (f"<{ex}mounts>", f"<{rdfs}range>", f"<{ex}Platform>"),
    ]).schema
    results, platforms = parse_rules(PRE + """
        REGISTER QUERY results AS SELECT * WHERE { ?k :result ?v }
        REGISTER QUERY platforms AS SELECT * WHERE { ?k a :Platform }""")
    (r,) = routing.classes([results], schema)
    assert r.routes == (routing.Route((("p", frozenset({f"<{ex}result>", f"<{ex}waterHeight>"})),), "s"),)
    assert r.bucketed
    (p,) = routing.classes([platforms], schema)
    assert set(p.routes) == {
        routing.Route((("p", terms.RDF_TYPE), ("o", frozenset({f"<{ex}Platform>", f"<{ex}Buoy>"}))), "s"),
        routing.Route((("p", f"<{ex}hosts>"),), "s"),  # the domain types the subject
        routing.Route((("p", f"<{ex}mounts>"),), "o"),  # the range types the object: the key moves
    }
    assert not p.bucketed  # one event could reach two buckets
    assert routing.classes([results, platforms])[0].routes[0].constants == (("p", f"<{ex}result>"),)


def test_update_rules_run_in_every_class_and_route_what_they_read():
    from cep.background.knowledge import background_of

    ex = "http://example.org/"
    queries = parse_rules(PRE + """
        REGISTER UPDATE closing AS DELETE { ?a :road ?b } WHERE { ?a :closed ?b }
        REGISTER QUERY here AS SELECT * WHERE { ?v :at ?p }
        REGISTER QUERY there AS SELECT * WHERE { ?v :left ?p } SEQ { ?w :came ?p }""")
    background = background_of([(f"<{ex}sub>", "<http://www.w3.org/2000/01/rdf-schema#subPropertyOf>", f"<{ex}closed>")])
    spec = plan(queries, buckets=4, background=background, spark=_NoSpark())
    # the queries keep their classes; every class's rules hold the update
    assert [[q.name for q in c.queries] for c in spec.classes] == [["here"], ["there"]]
    assert [[q.name for q in c.queries] for c in spec.compiled] == [["here", "closing"], ["there", "closing"]]
    assert spec.update_routes == (routing.Route((("p", frozenset({f"<{ex}closed>", f"<{ex}sub>"})),), None),)
    assert "closing: updates the background: every group runs it" in routing.explain(queries)


class _NoSpark:
    """What plan() asks of a session: broadcast variables, kept as they are."""

    class sparkContext:
        @staticmethod
        def broadcast(value):
            return value


def test_queries_that_read_a_rules_triples_share_its_class():
    """Derived triples are fed back in the group that derived them: a rule
    and its readers are one class, bucketed while each derived triple
    holds the rule's key where the class's events hold theirs."""
    rules = parse_rules(PRE + """
        REGISTER STREAM hot AS CONSTRUCT { ?k :hot ?x } WHERE { ?k :a ?x FILTER (?x > 8) }
        REGISTER QUERY alarms AS SELECT * WHERE { ?k :hot ?x } SEQ { ?k :b ?y }
        REGISTER QUERY other AS SELECT * WHERE { ?k :c ?x }""")
    classes = routing.classes(rules)
    assert [[q.name for q in c.queries] for c in classes] == [["hot", "alarms"], ["other"]]
    assert plan(rules, buckets=4).buckets == (4, 4)
    # the derived triple's subject is another variable: it may belong to another bucket
    moved = parse_rules(PRE + """
        REGISTER STREAM hot AS CONSTRUCT { ?x :hot ?k } WHERE { ?k :a ?x }
        REGISTER QUERY alarms AS SELECT * WHERE { ?k :hot ?x } SEQ { ?k :b ?y }""")
    (c,) = routing.classes(moved)
    assert not c.local and plan(moved, buckets=4).buckets == (1,)
    assert "runs in a single group, with the CONSTRUCT rules" in routing.explain(moved)


def test_an_update_rule_that_reads_derived_triples_is_refused_on_spark():
    from cep.errors import QueryError

    rules = parse_rules(PRE + """
        REGISTER STREAM hot AS CONSTRUCT { ?k :hot ?x } WHERE { ?k :a ?x }
        DELETE { ?k :ok ?x } INSERT { ?k :warm ?x } WHERE { ?k :hot ?x }""")
    with pytest.raises(QueryError, match="reads the triples that hot derives"):
        plan(rules)


def test_detect_names_a_rule_file_that_is_not_there(tmp_path):
    """A mistyped rules path is neither a file nor query text: the error
    names the missing file (it was parsed as query text before)."""
    from cep.errors import QueryError
    from cep.spark import detect

    missing = tmp_path / "stokc.rq"
    with pytest.raises(QueryError, match=f"no rule file {missing}"):
        detect(None, str(missing))
    with pytest.raises(QueryError, match="cannot read rule file .*stokc.rq"):
        detect(None, missing)  # a Path is always a file's


def test_detect_takes_one_line_of_query_text():
    from cep.spark import plan

    spec = plan("SELECT ?x WHERE { ?x <http://example.org/p> ?y }")
    assert len(spec.classes) == 1
