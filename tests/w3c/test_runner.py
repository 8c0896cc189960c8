"""The W3C runner's own rules: which tests apply, how answers are compared."""

from rdflib import BNode, Literal, URIRef

from tests.w3c import run

XSD = "http://www.w3.org/2001/XMLSchema#"


def _lit(lex, dt):
    return run._literal(lex, dt)


def test_terms_are_compared_as_written():
    one, zero_one = _lit("1", XSD + "integer"), _lit("01", XSD + "integer")
    assert not run._same_multiset([{"v": one}], [{"v": zero_one}])
    assert run._same_multiset([{"v": one}], [{"v": _lit("1", XSD + "integer")}])


def test_a_simple_literal_is_an_xsd_string():
    assert run._canon(Literal("a")) == _lit("a", XSD + "string")


def test_solutions_are_a_multiset():
    x = {"x": URIRef("http://e/x")}
    assert not run._same_multiset([x], [x, x])
    assert run._same_multiset([x, {}], [{}, x])


def test_blank_nodes_up_to_isomorphism():
    a, b, c, d = BNode("a"), BNode("b"), BNode("c"), BNode("d")
    assert run._same_multiset([{"x": a, "y": a}, {"x": b}], [{"x": c}, {"x": d, "y": d}])
    # one blank node for two different ones is not the same answer
    assert not run._same_multiset([{"x": a}, {"x": a}], [{"x": c}, {"x": d}])


def test_order_keys_stop_at_an_expression():
    assert run._order_keys("SELECT * { ?s ?p ?o } ORDER BY ?s DESC(?o) LIMIT 2") == ["s", "o"]
    assert run._order_keys("SELECT * { ?s ?p ?o } ORDER BY ?s STR(?o) ?p") == ["s"]
    assert run._order_keys("SELECT * { ?s ?p ?o }") == []


def test_named_graph_queries_are_out_of_scope():
    assert run._named_graphs("SELECT * FROM <g.ttl> { ?s ?p ?o }")
    assert run._named_graphs("SELECT * { GRAPH ?g { ?s ?p ?o } }")
    assert not run._named_graphs('SELECT * { ?s <http://e/graph> "FROM" } # GRAPH')


def test_the_tick_joins_the_where_group():
    q = "PREFIX : <http://e/> CONSTRUCT { ?s :p ?o } WHERE { ?s :q ?o } ORDER BY ?s"
    ticked = run._with_tick(q, "construct")
    tick = f"<{run.TICK}>"
    assert ticked == (f"PREFIX : <http://e/> CONSTRUCT {{ ?s :p ?o }} FROM NAMED STREAM {tick} WINDOW ELEMS 1\n"
                      f"WHERE {{ {{ ?s :q ?o }}\n GRAPH {tick} {{ {tick} {tick} {tick} }} }} ORDER BY ?s")


def test_data_terms_are_written_as_read():
    assert run._nt(_lit("01", XSD + "integer")) == f'"01"^^<{XSD}integer>'
    assert run._nt(Literal('a"\nb', lang="en")) == '"a\\"\\nb"@en'


def test_the_short_construct_gets_its_template():
    ticked = run._with_tick("CONSTRUCT WHERE { ?s <http://e/p> ?o }", "construct")
    tick = f"<{run.TICK}>"
    assert ticked == (f"CONSTRUCT {{ ?s <http://e/p> ?o }} FROM NAMED STREAM {tick} WINDOW ELEMS 1\n"
                      f"WHERE {{ {{ ?s <http://e/p> ?o }}\n GRAPH {tick} {{ {tick} {tick} {tick} }} }}")


def test_the_known_failures_read_back_as_written(tmp_path):
    failures = {"events sparql11/bind/manifest#bind01": "parse error: unexpected BIND",
                "syntax dawg-data-r2/syntax-sparql1/manifest#syntax-lit-08": "accepted"}
    path = tmp_path / "known.txt"
    run.write_known(failures, path)
    assert run.read_known(path) == failures


def test_the_list_can_only_shrink():
    case = run.Case("sparql11/bind/manifest#bind01", "events", "sparql11", "eval", run.HERE / "q.rq")
    listed = {case.key: "parse error: unexpected BIND"}
    passed, failed = run.Outcome(True), run.Outcome(False, "wrong answers: none")
    assert "remove it from the list" in run.verdict(case, passed, listed)
    assert run.verdict(case, failed, listed) is None
    assert run.verdict(case, passed, {}) is None
    assert "wrong answers: none" in run.verdict(case, failed, {})


def test_the_tests_sparql_11_contradicts_are_left_out_and_their_twins_run():
    ids = {case.id for case in run.cases()}
    for key in run.CONTRADICTED:
        assert not any(i.endswith("/" + key) for i in ids), key
    assert "dawg-data-r2/optional-filter/manifest#dawg-optional-filter-005-not-simplified" in ids


def test_a_positive_syntax_test_refused_only_for_an_extension_function_is_accepted(tmp_path):
    query = tmp_path / "q.rq"
    case = run.Case("x", "syntax", "dawg-data-r2", "positive", query)
    query.write_text("PREFIX q: <http://e/>\nSELECT * { ?s ?p ?o FILTER(q:f(?o)) }")
    assert run.run_case(case).passed
    query.write_text("PREFIX q: <http://e/>\nSELECT ?s ?s { ?s ?p ?o FILTER(q:f(?o)) }")  # refused for ?s twice
    assert not run.run_case(case).passed


def test_a_reduced_result_may_give_a_solution_fewer_times(tmp_path):
    """mf:LaxCardinality (REDUCED, W3C reduced-1): each solution at least
    once and at most as often as the result lists it."""
    import dataclasses
    import json

    x, y = {"type": "uri", "value": "http://e/x"}, {"type": "uri", "value": "http://e/y"}
    result = tmp_path / "r.srj"
    result.write_text(json.dumps({"head": {"vars": ["s"]},
                                  "results": {"bindings": [{"s": x}, {"s": x}, {"s": y}]}}))
    lax = run.Case("x", "events", "dawg-data-r2", "eval", tmp_path / "q.rq", (), result, lax=True)
    text = "SELECT REDUCED * { ?s ?p ?o }"
    once = [{"bindings": {"s": x}}, {"bindings": {"s": y}}]
    assert run._compare(lax, "select", text, once).passed
    assert not run._compare(dataclasses.replace(lax, lax=False), "select", text, once).passed
    assert not run._compare(lax, "select", text, once[:1]).passed  # y missing
    assert not run._compare(lax, "select", text, once + once).passed  # x three times
