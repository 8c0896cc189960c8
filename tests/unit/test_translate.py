"""Translation of EP-SPARQL to the algebra (cep/algebra/translate.py,
through cep.rules): the paper's six queries and one small case per operator,
asserted exactly in the algebra's text form; constants, names, options,
positions and warnings."""

from pathlib import Path
from textwrap import dedent

import pytest

from cep.algebra import ops, sexpr
from cep.algebra.ops import Call, Const, Pos, ProjectItem, Var
from cep.algebra.translate import resolve_iri
from cep.errors import QueryError
from cep.rules import load_rules, parse_rules

REPO = Path(__file__).resolve().parents[2]
PAPER = REPO / "rules" / "paper"
EX = "http://example.org/"
XSD = "http://www.w3.org/2001/XMLSchema#"
HEADER = f"PREFIX : <{EX}>\nPREFIX xsd: <{XSD}>\n"


def query(text: str, filename: str = "t.rq") -> ops.Query:
    (q,) = parse_rules(HEADER + dedent(text), filename)
    return q


def algebra(text: str) -> str:
    return sexpr.query(query(text))


def pattern(text: str) -> str:
    """The algebra of a SELECT * query's pattern, from its WHERE part."""
    return sexpr.pattern(query("SELECT * WHERE " + text).pattern)


def integer(n):
    return f'"{n}"^^<{XSD}integer>'


def decimal(x):
    return f'"{x}"^^<{XSD}decimal>'


def duration(d):
    return f'"{d}"^^<{XSD}duration>'


def paper(n: int) -> ops.Query:
    (q,) = load_rules(PAPER / f"q{n}.rq")
    return q


# ------------------------------------------------------- the paper's queries


def test_paper_query_1_seq_chain_with_one_filter():
    assert sexpr.query(paper(1)) == dedent(f"""\
        (select (?company)
          (filter (and (and (< ?price2 (* ?price1 {decimal("0.7")})) (> ?price3 (* ?price1 {decimal("1.05")}))) (< (getDURATION) {duration("P30D")}))
            (seqjoin
              (seqjoin
                (bgp
                  (triple ?company <{EX}hasStockPrice> ?price1))
                (bgp
                  (triple ?company <{EX}hasStockPrice> ?price2)))
              (bgp
                (triple ?company <{EX}hasStockPrice> ?price3)))))""")


def test_paper_query_2_optionalseq_makes_the_left_operand_optional():
    assert sexpr.query(paper(2)) == dedent(f"""\
        (select (?company ?ratingagency)
          (filter (< ?price2 (* ?price1 {decimal("0.5")}))
            (seqrightjoin
              (bgp
                (triple ?company <{EX}downratedby> ?ratingagency))
              (seqjoin
                (bgp
                  (triple ?company <{EX}hasStockPrice> ?price1))
                (bgp
                  (triple ?company <{EX}hasStockPrice> ?price2))))))""")


def test_paper_query_3_keeps_the_papers_hasStockprice():
    assert sexpr.query(paper(3)) == dedent(f"""\
        (select (?company)
          (filter (and (and (< ?price2 (* ?price1 {decimal("1.5")})) (not (bound ?othercompany))) (< (getDURATION) {duration("P15D")}))
            (seqjoin
              (bgp
                (triple ?company <{EX}hasStockprice> ?price1))
              (seqrightjoin
                (bgp
                  (triple ?company <{EX}hasAcquired> ?othercompany))
                (bgp
                  (triple ?company <{EX}hasStockPrice> ?price2))))))""")


def test_paper_query_4_unbraced_construct_template():
    q = paper(4)
    assert sexpr.query(q) == dedent(f"""\
        (construct ((triple ?company <{EX}downratedby> ?ratingagency))
          (filter (< ?score2 ?score1)
            (seqjoin
              (bgp
                (triple ?rating1 <{EX}rater> ?ratingagency)
                (triple ?rating1 <{EX}rated> ?company)
                (triple ?rating1 <{EX}score> ?score1))
              (bgp
                (triple ?rating2 <{EX}rater> ?ratingagency)
                (triple ?rating2 <{EX}rated> ?company)
                (triple ?rating2 <{EX}score> ?score2)))))""")
    assert q.projection is None and q.warnings == ()


def test_paper_query_5_construct_from_a_sub_select():
    q = paper(5)
    assert sexpr.query(q) == dedent(f"""\
        (construct ((triple _:aaa <{EX}hasCount> ?count) (triple _:aaa <{EX}hasSum> ?sum))
          (((+ ?prevcount {integer(1)}) AS ?count) ((+ ?prevsum ?price) AS ?sum))
          (filter (and (not (bound ?inbetween)) (< (getDURATION) {duration("P10D")}))
            (eqleftjoin
              (seqjoin
                (bgp
                  (triple ?point <{EX}hasCount> ?prevcount)
                  (triple ?point <{EX}hasSum> ?prevsum))
                (bgp
                  (triple <{EX}ACME> <{EX}hasStockPrice> ?price)))
              (seqjoin
                (seqjoin
                  (bgp
                    (triple ?point <{EX}hasCount> ?prevcount)
                    (triple ?point <{EX}hasSum> ?prevsum))
                  (bgp
                    (triple <{EX}ACME> <{EX}hasStockPrice> ?inbetween)))
                (bgp
                  (triple <{EX}ACME> <{EX}hasStockPrice> ?price))))))""")
    # the template is instantiated from the sub-select's items
    assert q.projection == (
        ProjectItem(Var("count"), Call("+", Var("prevcount"), Const(integer(1)))),
        ProjectItem(Var("sum"), Call("+", Var("prevsum"), Var("price"))),
    )
    assert q.warnings == ()


def test_paper_query_6_parses_with_a_warning_about_sum_and_count():
    q = paper(6)
    assert sexpr.query(q) == dedent(f"""\
        (select (((/ ?sum ?count) AS ?average))
          (filter (and (not (bound ?inbetween)) (> (getDURATION) {duration("P10D")}))
            (eqleftjoin
              (seqjoin
                (bgp
                  (triple <{EX}ACME> <{EX}hasStockPrice> ?price))
                (bgp
                  (triple ?point <{EX}hasCount> ?prevcount)
                  (triple ?point <{EX}hasSum> ?prevsum)))
              (seqjoin
                (seqjoin
                  (bgp
                    (triple <{EX}ACME> <{EX}hasStockPrice> ?price))
                  (bgp
                    (triple <{EX}ACME> <{EX}hasStockPrice> ?inbetween)))
                (bgp
                  (triple ?point <{EX}hasCount> ?prevcount)
                  (triple ?point <{EX}hasSum> ?prevsum))))))""")
    assert q.warnings == (
        f"{PAPER / 'q6.rq'}:3:8: ?sum and ?count in the expression for ?average are never "
        "bound by the pattern",)


def test_an_expression_on_a_variable_never_bound_is_a_warning():
    q = query("SELECT ?s (COALESCE(?nope, ?x) AS ?y) WHERE { ?s :a ?x }")
    assert q.warnings == ("t.rq:3:11: ?nope in the expression for ?y is never bound by the pattern",)
    assert q.projection[1] == ProjectItem(Var("y"), Call("coalesce", Var("nope"), Var("x")))


def test_the_paper_queries_are_named_after_their_files():
    assert [q.name for q in load_rules(PAPER)] == [f"q{n}" for n in range(1, 7)]


# ---------------------------------------------------------------- operators


def test_triples_block_with_semicolon_comma_and_a():
    assert pattern("{ ?s :p ?o , ?o2 ; a :C . ?o :q 1 }") == dedent(f"""\
        (bgp
          (triple ?s <{EX}p> ?o)
          (triple ?s <{EX}p> ?o2)
          (triple ?s <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <{EX}C>)
          (triple ?o <{EX}q> {integer(1)}))""")


def test_juxtaposed_groups_join_left_to_right():
    assert pattern("{ { ?s :a ?x } { ?s :b ?y } ?s :c ?z }") == dedent(f"""\
        (join
          (join
            (bgp
              (triple ?s <{EX}a> ?x))
            (bgp
              (triple ?s <{EX}b> ?y)))
          (bgp
            (triple ?s <{EX}c> ?z)))""")


def test_a_filter_does_not_end_a_basic_graph_pattern_and_wraps_the_whole_group():
    assert pattern("{ ?s :a ?x FILTER(?x > 1) ?s :b ?y }") == dedent(f"""\
        (filter (> ?x {integer(1)})
          (bgp
            (triple ?s <{EX}a> ?x)
            (triple ?s <{EX}b> ?y)))""")
    # issue 19, item 5 (W3C syn-11, blabel-cross-filter): one blank node on both sides
    assert pattern("{ _:a ?p ?v . FILTER(true) . [] ?q _:a }") == dedent(f"""\
        (filter "true"^^<{XSD}boolean>
          (bgp
            (triple ?_:b0 ?p ?v)
            (triple ?_:b1 ?q ?_:b0)))""")
    # anything else between two triples blocks ends the first
    assert pattern("{ ?s :a ?x OPTIONAL { ?s :c ?z } ?s :b ?y }") == dedent(f"""\
        (join
          (leftjoin
            (bgp
              (triple ?s <{EX}a> ?x))
            (bgp
              (triple ?s <{EX}c> ?z)))
          (bgp
            (triple ?s <{EX}b> ?y)))""")


def test_the_filters_and_withins_of_a_group_are_conjoined_in_order():
    assert pattern('{ FILTER(?x > 1) ?s :a ?x WITHIN "PT1H" FILTER(?x < 9) }') == dedent(f"""\
        (filter (and (and (> ?x {integer(1)}) (< (getDURATION) {duration("PT1H")})) (< ?x {integer(9)}))
          (bgp
            (triple ?s <{EX}a> ?x)))""")


def test_empty_groups_are_the_identity_of_join():
    assert pattern("{ {} ?s :a ?x {} { {} } }") == pattern("{ ?s :a ?x }")
    assert pattern("{ ?s :a ?x OPTIONAL {} }") == pattern("{ ?s :a ?x }")


def test_union():
    assert pattern("{ ?s :a ?x } UNION { ?s :b ?x }") == dedent(f"""\
        (union
          (bgp
            (triple ?s <{EX}a> ?x))
          (bgp
            (triple ?s <{EX}b> ?x)))""")


def test_seq():
    assert pattern("{ ?s :a ?x } SEQ { ?s :b ?y }") == dedent(f"""\
        (seqjoin
          (bgp
            (triple ?s <{EX}a> ?x))
          (bgp
            (triple ?s <{EX}b> ?y)))""")


def test_equals():
    assert pattern("{ ?s :a ?x } EQUALS { ?s :b ?y }") == dedent(f"""\
        (eqjoin
          (bgp
            (triple ?s <{EX}a> ?x))
          (bgp
            (triple ?s <{EX}b> ?y)))""")


def test_optional_without_and_with_a_filter():
    assert pattern("{ ?s :a ?x OPTIONAL { ?s :b ?y } }") == dedent(f"""\
        (leftjoin
          (bgp
            (triple ?s <{EX}a> ?x))
          (bgp
            (triple ?s <{EX}b> ?y)))""")
    assert pattern("{ ?s :a ?x OPTIONAL { ?s :b ?y FILTER(?y > ?x) } }") == dedent(f"""\
        (leftjoin (> ?y ?x)
          (bgp
            (triple ?s <{EX}a> ?x))
          (bgp
            (triple ?s <{EX}b> ?y)))""")


def test_the_filter_of_a_group_nested_in_an_optional_group_stays_inside_it():
    """Issue 19, item 2: only the optional group's own FILTER is the
    condition of OPTIONAL (and of OPTIONALSEQ, EQUALSOPTIONAL); a nested
    group's filters its own pattern (SPARQL 18.2.2.6)."""
    assert pattern("{ ?s :a ?x OPTIONAL { { ?s :b ?y FILTER(?y > ?x) } } }") == dedent(f"""\
        (leftjoin
          (bgp
            (triple ?s <{EX}a> ?x))
          (filter (> ?y ?x)
            (bgp
              (triple ?s <{EX}b> ?y))))""")
    assert pattern("{ { ?s :a ?x FILTER(?x > 1) } } OPTIONALSEQ { ?s :b ?y }") == dedent(f"""\
        (seqrightjoin
          (filter (> ?x {integer(1)})
            (bgp
              (triple ?s <{EX}a> ?x)))
          (bgp
            (triple ?s <{EX}b> ?y)))""")
    assert pattern("{ ?s :a ?x } EQUALSOPTIONAL { { ?s :b ?y FILTER(?y > 2) } }") == dedent(f"""\
        (eqleftjoin
          (bgp
            (triple ?s <{EX}a> ?x))
          (filter (> ?y {integer(2)})
            (bgp
              (triple ?s <{EX}b> ?y))))""")


def test_optionalseq_takes_the_filter_of_its_left_optional_operand():
    assert pattern("{ ?s :a ?x } OPTIONALSEQ { ?s :b ?y }") == dedent(f"""\
        (seqrightjoin
          (bgp
            (triple ?s <{EX}a> ?x))
          (bgp
            (triple ?s <{EX}b> ?y)))""")
    assert pattern("{ ?s :a ?x FILTER(?x > 1) } OPTIONALSEQ { ?s :b ?y FILTER(?y > 2) }") == dedent(f"""\
        (seqrightjoin (> ?x {integer(1)})
          (bgp
            (triple ?s <{EX}a> ?x))
          (filter (> ?y {integer(2)})
            (bgp
              (triple ?s <{EX}b> ?y))))""")


def test_equalsoptional_takes_the_filter_of_its_right_optional_operand():
    assert pattern("{ ?s :a ?x } EQUALSOPTIONAL { ?s :b ?y }") == dedent(f"""\
        (eqleftjoin
          (bgp
            (triple ?s <{EX}a> ?x))
          (bgp
            (triple ?s <{EX}b> ?y)))""")
    assert pattern("{ ?s :a ?x FILTER(?x > 1) } EQUALSOPTIONAL { ?s :b ?y FILTER(?y > 2) }") == dedent(f"""\
        (eqleftjoin (> ?y {integer(2)})
          (filter (> ?x {integer(1)})
            (bgp
              (triple ?s <{EX}a> ?x)))
          (bgp
            (triple ?s <{EX}b> ?y)))""")


def test_operator_chains_mix_and_associate_to_the_left():
    text = "{ ?s :a ?a } seq { ?s :b ?b } Union { ?s :c ?c } EQUALS { ?s :d ?d }"
    q = query("SELECT * WHERE " + text)
    assert type(q.pattern) is ops.EqJoin
    assert type(q.pattern.left) is ops.Union_
    assert type(q.pattern.left.left) is ops.SeqJoin
    assert pattern(text) == dedent(f"""\
        (eqjoin
          (union
            (seqjoin
              (bgp
                (triple ?s <{EX}a> ?a))
              (bgp
                (triple ?s <{EX}b> ?b)))
            (bgp
              (triple ?s <{EX}c> ?c)))
          (bgp
            (triple ?s <{EX}d> ?d)))""")


def test_braces_group_a_chain_to_the_right():
    q = query("SELECT * WHERE { ?s :a ?a } SEQ { { ?s :b ?b } UNION { ?s :c ?c } }")
    assert type(q.pattern) is ops.SeqJoin and type(q.pattern.right) is ops.Union_


def test_the_unbraced_where_is_the_braced_group():
    unbraced = query("SELECT ?s WHERE { ?s :a ?x } SEQ { ?s :b ?y } FILTER(?y > ?x) WITHIN 'P1D'")
    braced = query("SELECT ?s { { ?s :a ?x } SEQ { ?s :b ?y } FILTER(?y > ?x) WITHIN 'P1D' }")
    assert sexpr.query(unbraced) == sexpr.query(braced)
    assert type(unbraced.pattern) is ops.Filter


def test_within_is_a_duration_filter():
    assert pattern('{ ?s :a ?x } WITHIN "PT30M"') == pattern(
        '{ ?s :a ?x } FILTER(getDURATION() < "PT30M"^^xsd:duration)')
    # the duration is kept as written (compared by value)
    assert query("SELECT * { ?s :a ?x } WITHIN 'PT90M'").pattern.cond == Call(
        "<", Call("getDURATION"), Const(f'"PT90M"^^<{XSD}duration>'))


# --------------------------------------------------------------- SELECT


def test_select_items_in_both_paper_and_sparql_forms():
    q = query("SELECT DISTINCT ?s (?x + 1 AS ?y) ?x * 2 AS ?z ?y - ?x AS ?w WHERE { ?s :a ?x }")
    assert q.form == "select" and q.distinct
    assert q.projection == (
        ProjectItem(Var("s")),
        ProjectItem(Var("y"), Call("+", Var("x"), Const(integer(1)))),
        ProjectItem(Var("z"), Call("*", Var("x"), Const(integer(2)))),
        ProjectItem(Var("w"), Call("-", Var("y"), Var("x"))),  # uses ?y: no warning
    )
    assert q.warnings == ()


def test_select_star_has_no_projection():
    q = query("SELECT * { ?s :a ?x }")
    assert q.projection is None and not q.distinct


def test_an_unparenthesized_item_continues_an_expression_rather_than_starting_one():
    q = query("SELECT ?x -?y AS ?d ?x { ?x :a ?y }")
    assert q.projection == (ProjectItem(Var("d"), Call("-", Var("x"), Var("y"))), ProjectItem(Var("x")))


def test_dollar_variables_are_question_mark_variables():
    assert query("SELECT $x { ?x :a $y }").projection == (ProjectItem(Var("x")),)


# ------------------------------------------------------------ CONSTRUCT


def test_construct_template_braced_and_with_blank_nodes():
    q = query("CONSTRUCT { ?s :b [] ; :c [ :d ?x ] . _:b0 :e ?x } WHERE { ?s :a ?x }")
    assert q.form == "construct" and q.projection is None
    # [] gets a fresh label that the template does not use itself
    assert [(t.s, t.p, t.o) for t in q.template] == [
        (Var("s"), f"<{EX}b>", "_:b1"),
        (Var("s"), f"<{EX}c>", "_:b2"),
        ("_:b2", f"<{EX}d>", Var("x")),
        ("_:b0", f"<{EX}e>", Var("x")),
    ]


def test_construct_template_variable_never_bound_is_a_warning():
    q = query("CONSTRUCT { ?s :b ?nope . ?s :c ?nope } WHERE { ?s :a ?x }")
    assert q.warnings == ("t.rq:3:13: ?nope in the CONSTRUCT template is never bound by the "
                          "pattern: the triples that use it are never produced",)


def test_construct_with_a_distinct_sub_select():
    q = query("CONSTRUCT { ?s :b ?y } { SELECT DISTINCT ?s (?x * 2 AS ?y) { ?s :a ?x } }")
    assert q.distinct
    assert q.projection == (ProjectItem(Var("s")), ProjectItem(Var("y"), Call("*", Var("x"), Const(integer(2)))))
    assert sexpr.pattern(q.pattern) == pattern("{ ?s :a ?x }")


# ---------------------------------------------------------------- terms


@pytest.mark.parametrize("written, term", [
    ("5", integer(5)),
    ("007", f'"007"^^<{XSD}integer>'),  # numbers keep their lexical form (RDF term equality)
    ("-5", integer(-5)),
    ("+5", f'"+5"^^<{XSD}integer>'),
    ("0.50", f'"0.50"^^<{XSD}decimal>'),
    ("-.5", f'"-.5"^^<{XSD}decimal>'),
    ("1e3", f'"1e3"^^<{XSD}double>'),
    ("2.5E-1", f'"2.5E-1"^^<{XSD}double>'),
    ("true", f'"true"^^<{XSD}boolean>'),
    ("FALSE", f'"false"^^<{XSD}boolean>'),
    ('"text"', '"text"'),
    ("'text'", '"text"'),
    ('"""two\nlines"""', '"two\\nlines"'),
    ("'''it's'''", '"it\'s"'),
    ('"tab\\there \\"q\\" \\u00e9\\\\"', '"tab\\there \\"q\\" \u00e9\\\\"'),
    ('"chat"@FR-be', '"chat"@fr-be'),
    ('"01"^^xsd:integer', f'"01"^^<{XSD}integer>'),  # a lexical form is kept as written
    ('"x"^^xsd:string', '"x"'),
    ('"P1DT24H"^^<http://www.w3.org/2001/XMLSchema#duration>', f'"P1DT24H"^^<{XSD}duration>'),
    ('"x"^^:t', f'"x"^^<{EX}t>'),
    (":a", f"<{EX}a>"),
    ("a", f"<{EX}a>"),  # a bare name in object position; `a` is rdf:type only as a verb
    ("seqNumber", f"<{EX}seqNumber>"),  # starts like a keyword: still a name
    (":", f"<{EX}>"),
    (r":a\.b\,c", f"<{EX}a.b,c>"),
    (":%41", f"<{EX}%41>"),
    ("xsd:integer", f"<{XSD}integer>"),
    ("<http://other.org/x>", "<http://other.org/x>"),
])
def test_constants_are_canonical_n_triples(written, term):
    q = query(f"SELECT * {{ ?s ?p {written} }}")
    assert q.pattern.triples[0].o == term


def test_constants_in_expressions_are_canonical_too():
    q = query("SELECT * { ?s :p ?o FILTER(?o = - 5 && ?o != +0.50 && ?o != - ?s && ?o != :a) }")
    assert ops.conjuncts(q.pattern.cond) == [
        Call("=", Var("o"), Const(integer(-5))),
        Call("!=", Var("o"), Const(f'"0.50"^^<{XSD}decimal>')),  # unary + of 0.50
        Call("!=", Var("o"), Call("neg", Var("s"))),
        Call("!=", Var("o"), Const(f"<{EX}a>")),
    ]


def test_base_resolves_relative_iris_including_prefix_iris():
    q = query("""
        BASE <http://a.org/b/c>
        PREFIX e: <d/>
        SELECT * { <x> <../y> e:z . <#f> <?q> <//h.org/i> . <> <g/./h/../i> </j> }""")
    assert [(t.s, t.p, t.o) for t in q.pattern.triples] == [
        ("<http://a.org/b/x>", "<http://a.org/y>", "<http://a.org/b/d/z>"),
        ("<http://a.org/b/c#f>", "<http://a.org/b/c?q>", "<http://h.org/i>"),
        ("<http://a.org/b/c>", "<http://a.org/b/g/i>", "<http://a.org/j>"),
    ]


def test_relative_iris_before_any_base_resolve_against_the_rule_files_iri(tmp_path):
    """SPARQL 1.1 4.1.1.1: the base IRI of the query document (issue 19,
    the positive syntax tests syntax-general-*); a relative BASE too."""
    folder = tmp_path / "rules"
    q = query("SELECT * { <x> <../y> <#f> }", str(folder / "q.rq"))
    base = folder.resolve().as_uri()
    assert (q.pattern.triples[0].s, q.pattern.triples[0].p, q.pattern.triples[0].o) == (
        f"<{base}/x>", f"<{tmp_path.resolve().as_uri()}/y>", f"<{base}/q.rq#f>")
    q = query("BASE <b/>\nSELECT * { ?s ?p <c> }", str(folder / "q.rq"))
    assert q.pattern.triples[0].o == f"<{base}/b/c>"
    # text read from no file: the current directory's IRI
    assert query("SELECT * { ?s ?p <c> }", "<string>").pattern.triples[0].o == f"<{Path.cwd().as_uri()}/c>"


@pytest.mark.parametrize("ref, resolved", [
    # RFC 3986, section 5.4.1 (normal examples) and some of 5.4.2
    ("g:h", "g:h"), ("g", "http://a/b/c/g"), ("./g", "http://a/b/c/g"), ("g/", "http://a/b/c/g/"),
    ("/g", "http://a/g"), ("//g", "http://g"), ("?y", "http://a/b/c/d;p?y"),
    ("g?y", "http://a/b/c/g?y"), ("#s", "http://a/b/c/d;p?q#s"), ("g#s", "http://a/b/c/g#s"),
    (";x", "http://a/b/c/;x"), ("", "http://a/b/c/d;p?q"), (".", "http://a/b/c/"),
    ("./", "http://a/b/c/"), ("..", "http://a/b/"), ("../", "http://a/b/"), ("../g", "http://a/b/g"),
    ("../..", "http://a/"), ("../../g", "http://a/g"), ("../../../g", "http://a/g"),
    ("/./g", "http://a/g"), ("/../g", "http://a/g"), ("g.", "http://a/b/c/g."), ("..g", "http://a/b/c/..g"),
    ("./../g", "http://a/b/g"), ("g/./h", "http://a/b/c/g/h"), ("g/../h", "http://a/b/c/h"),
])
def test_resolve_iri_follows_rfc_3986(ref, resolved):
    assert resolve_iri("http://a/b/c/d;p?q", ref) == resolved


def test_blank_nodes_in_patterns_are_non_distinguished_variables():
    q = query("SELECT * { _:x :a ?o . _:x :b [] . [ :c ?o ] :d _:y }")
    assert [(t.s, t.p, t.o) for t in q.pattern.triples] == [
        (Var("_:b0"), f"<{EX}a>", Var("o")),
        (Var("_:b0"), f"<{EX}b>", Var("_:b1")),
        (Var("_:b2"), f"<{EX}c>", Var("o")),
        (Var("_:b2"), f"<{EX}d>", Var("_:b3")),
    ]


# ---------------------------------------------------------- expressions


def condition(text: str):
    return query(f"SELECT * {{ ?s :p ?o FILTER({text}) }}").pattern.cond


@pytest.mark.parametrize("written, expected", [
    ("?a || ?b && ?c", Call("or", Var("a"), Call("and", Var("b"), Var("c")))),
    ("!?a", Call("not", Var("a"))),
    ("?a = ?b", Call("=", Var("a"), Var("b"))),
    ("?a != ?b", Call("!=", Var("a"), Var("b"))),
    ("?a < ?b", Call("<", Var("a"), Var("b"))),
    ("?a > ?b", Call(">", Var("a"), Var("b"))),
    ("?a <= ?b", Call("<=", Var("a"), Var("b"))),
    ("?a >= ?b", Call(">=", Var("a"), Var("b"))),
    ("?a + ?b * ?c", Call("+", Var("a"), Call("*", Var("b"), Var("c")))),
    ("(?a - ?b) / ?c", Call("/", Call("-", Var("a"), Var("b")), Var("c"))),
    ("?a - ?b - ?c", Call("-", Call("-", Var("a"), Var("b")), Var("c"))),
    ("-?a", Call("neg", Var("a"))),
    ("+?a", Call("pos", Var("a"))),
    ("?a IN (1, ?b)", Call("in", Var("a"), Const(integer(1)), Var("b"))),
    ("?a not in ()", Call("notin", Var("a"))),
    ("BOUND(?a)", Call("bound", Var("a"))),
    ("str(?a) = lang(?a)", Call("=", Call("str", Var("a")), Call("lang", Var("a")))),
    ("datatype(?a)", Call("datatype", Var("a"))),
    ("isIRI(?a) && isUri(?a)", Call("and", Call("isIRI", Var("a")), Call("isIRI", Var("a")))),
    ("isBlank(?a) && isLITERAL(?a)", Call("and", Call("isBlank", Var("a")), Call("isLiteral", Var("a")))),
    ("isNumeric(?a)", Call("isNumeric", Var("a"))),
    ("sameTerm(?a, ?b)", Call("sameTerm", Var("a"), Var("b"))),
    ("langMatches(lang(?a), 'en')", Call("langMatches", Call("lang", Var("a")), Const('"en"'))),
    ("regex(?a, 'x', 'i')", Call("regex", Var("a"), Const('"x"'), Const('"i"'))),
    ("IF(?a, 1, 2)", Call("if", Var("a"), Const(integer(1)), Const(integer(2)))),
    ("COALESCE(?a, ?b)", Call("coalesce", Var("a"), Var("b"))),
    ("strlen(ucase(lcase(?a)))", Call("strlen", Call("ucase", Call("lcase", Var("a"))))),
    ("contains(?a, ?b) || strstarts(?a, ?b) || strends(?a, ?b)",
     Call("or", Call("or", Call("contains", Var("a"), Var("b")), Call("strstarts", Var("a"), Var("b"))),
          Call("strends", Var("a"), Var("b")))),
    ("concat()", Call("concat")),
    ("concat(?a, ?b, ?c)", Call("concat", Var("a"), Var("b"), Var("c"))),
    ("abs(ceil(floor(round(?a))))", Call("abs", Call("ceil", Call("floor", Call("round", Var("a")))))),
    ("getduration() > getSTARTTIME() - GETENDTIME()",
     Call(">", Call("getDURATION"), Call("-", Call("getSTARTTIME"), Call("getENDTIME")))),
    ("xsd:integer(?a)", Call(f"cast:{XSD}integer", Var("a"))),
    ("<http://www.w3.org/2001/XMLSchema#dateTime>(?a)", Call(f"cast:{XSD}dateTime", Var("a"))),
])
def test_expressions(written, expected):
    assert condition(written) == expected


@pytest.mark.parametrize("name", ["integer", "decimal", "double", "float", "string", "boolean",
                                  "dateTime", "duration"])
def test_every_xsd_cast(name):
    assert condition(f"xsd:{name}(?o)") == Call(f"cast:{XSD}{name}", Var("o"))


def test_every_function_name_is_one_the_later_stages_know():
    from cep.algebra.translate import BUILTINS

    assert {name for name, _, _ in BUILTINS.values()} <= ops.FUNCTIONS
    assert {"or", "and", "not", "in", "notin", "neg", "pos"} <= ops.FUNCTIONS


def test_filter_without_parentheses_takes_a_call():
    assert condition("true") == Const(f'"true"^^<{XSD}boolean>')
    q = query("SELECT * { ?s :p ?o FILTER regex(?o, 'x') }")
    assert q.pattern.cond == Call("regex", Var("o"), Const('"x"'))


# --------------------------------------------------------- files and names


def test_a_file_of_several_queries_names_them_and_keeps_its_prefixes():
    text = dedent("""\
        PREFIX : <http://example.org/>
        @policy recent
        @binarize right  # comments are fine here
        REGISTER QUERY drops AS
        SELECT ?s { ?s :a ?x }

        select ?s { ?s :b ?x }
        PREFIX : <http://other.org/>
        register stream derived as construct { ?s :c ?x } { ?s :a ?x }
        @policy chronological
        CONSTRUCT { ?s :d ?x } { ?s :a ?x }
        """)
    queries = parse_rules(text, "rules/stock.rq")
    assert [q.name for q in queries] == ["drops", "stock#2", "derived", "stock#4"]
    assert [q.options for q in queries] == [
        (("binarize", "right"), ("policy", "recent")), (), (), (("policy", "chronological"),)]
    assert [q.form for q in queries] == ["select", "select", "construct", "construct"]
    assert queries[1].pattern.triples[0].p == f"<{EX}b>"
    assert queries[2].template[0].p == "<http://other.org/c>"
    assert queries[0].option("policy") == "recent" and queries[1].option("policy", "x") == "x"


def test_a_single_unnamed_query_is_named_after_the_file_stem():
    assert query("SELECT * { ?s :a ?x }", "rules/some/thing.rq").name == "thing"


def test_load_rules_reads_directories_sorted_and_files(tmp_path):
    (tmp_path / "b.rq").write_text(HEADER + "SELECT * { ?s :b ?x }")
    (tmp_path / "a.rq").write_text(HEADER + "SELECT * { ?s :a ?x } SELECT * { ?s :a ?y }")
    (tmp_path / "notes.txt").write_text("not a rule file")
    other = tmp_path / "sub" / "c.rq"
    other.parent.mkdir()
    other.write_text(HEADER + "SELECT * { ?s :c ?x }")
    assert [q.name for q in load_rules([tmp_path, other])] == ["a#1", "a#2", "b", "c"]
    assert [q.name for q in load_rules(str(other))] == ["c"]
    assert load_rules([tmp_path])[2].pos == Pos(str(tmp_path / "b.rq"), 3, 1)


# ------------------------------------------------------------- positions


def test_every_node_has_the_position_where_it_starts():
    text = HEADER + dedent("""\
        REGISTER QUERY q AS SELECT * WHERE {
          ?s :a ?x ;
             :b ?y , ?z .
          { ?s :c ?w } SEQ { ?s :d ?v }
          OPTIONAL { ?s :e ?u }
          FILTER (?x > 1)
        } OPTIONALSEQ { ?s :f ?t } EQUALSOPTIONAL { ?s :g ?t } UNION { ?s :h ?r } EQUALS { ?s :i ?q }
        WITHIN "PT1M"
        """)
    (q,) = parse_rules(text, "p.rq")

    def at(line, column):
        return Pos("p.rq", line, column)

    assert q.pos == at(3, 1)
    filt = q.pattern
    assert type(filt) is ops.Filter and filt.pos == at(10, 1)  # WITHIN
    eq = filt.pattern
    assert type(eq) is ops.EqJoin and eq.pos == at(9, 75)
    union = eq.left
    assert type(union) is ops.Union_ and union.pos == at(9, 56)
    eqleft = union.left
    assert type(eqleft) is ops.EqLeftJoin and eqleft.pos == at(9, 28)
    seqright = eqleft.left
    assert type(seqright) is ops.SeqRightJoin and seqright.pos == at(9, 3)
    # the optional operand's FILTER became the condition of OPTIONALSEQ
    assert seqright.cond == Call(">", Var("x"), Const(integer(1)))
    leftjoin = seqright.left
    assert type(leftjoin) is ops.LeftJoin and leftjoin.pos == at(7, 3)
    join = leftjoin.left
    assert type(join) is ops.Join and join.pos == at(6, 3)  # where the right operand starts
    bgp = join.left
    assert bgp.pos == at(4, 3)
    # a triple starts at its subject, after `;` at its predicate, after `,` at its object
    assert [t.pos for t in bgp.triples] == [at(4, 3), at(5, 6), at(5, 14)]
    seq = join.right
    assert type(seq) is ops.SeqJoin and seq.pos == at(6, 16)


def test_a_filter_is_where_the_first_filter_of_its_group_is():
    (q,) = parse_rules("SELECT * {\n ?s ?p ?o\n  FILTER(?o) FILTER(?s) }", "f.rq")
    assert type(q.pattern) is ops.Filter and q.pattern.pos == Pos("f.rq", 3, 3)


def test_combining_marks_stand_inside_names():
    """SPARQL [166] PN_CHARS (issue 19, item 5; W3C normalization-1): a
    combining mark (U+0300-U+036F), U+00B7 and U+203F-U+2040 may follow
    the first character of a prefixed name, a bare name or a blank node
    label."""
    q = query("PREFIX HR: <http://h/>\nSELECT * { _:e\u0301 HR:resume\u0301 :a\u00b7b . ?s :x\u203fy ?o }")
    (t1, t2) = q.pattern.triples
    assert (t1.p, t1.o) == ("<http://h/resume\u0301>", f"<{EX}a\u00b7b>")
    assert t2.p == f"<{EX}x\u203fy>"
    q = query("SELECT * { ?s hasPrice\u0301 ?o }")
    assert q.pattern.triples[0].p == f"<{EX}hasPrice\u0301>"


def test_collections_are_rdf_lists_in_patterns_and_templates():
    """SPARQL [102] Collection, [161] NIL (W3C syntax-lists-*, list-*)."""
    first, rest, nil = (f"<http://www.w3.org/1999/02/22-rdf-syntax-ns#{n}>" for n in ("first", "rest", "nil"))
    q = query("SELECT * { ?x :p ( ?z [ :q ?y ] ) . () :r ( ( ) ) }")
    assert [(t.s, t.p, t.o) for t in q.pattern.triples] == [
        (Var("x"), f"<{EX}p>", Var("_:b0")),
        (Var("_:b0"), first, Var("z")), (Var("_:b0"), rest, Var("_:b1")),
        (Var("_:b1"), first, Var("_:b2")), (Var("_:b1"), rest, nil), (Var("_:b2"), f"<{EX}q>", Var("y")),
        (nil, f"<{EX}r>", Var("_:b3")), (Var("_:b3"), first, nil), (Var("_:b3"), rest, nil)]
    q = query("CONSTRUCT { ?x :p ( ?z ) } WHERE { ?x :p ?z }")
    assert [(t.s, t.p, t.o) for t in q.template] == [
        (Var("x"), f"<{EX}p>", "_:b0"), ("_:b0", first, Var("z")), ("_:b0", rest, nil)]


def test_a_negated_property_set_is_a_triple_whose_predicate_is_none_of_the_set():
    """SPARQL [95]-[96] (W3C pp10): `!(p|^q)` is the union of a triple whose
    predicate is not p and a reverse one whose predicate is not q."""
    assert pattern("{ ?s !(:p|a|^:q) ?o }") == dedent(f"""\
        (union
          (filter (and (!= ?_:b0 <{EX}p>) (!= ?_:b0 <http://www.w3.org/1999/02/22-rdf-syntax-ns#type>))
            (bgp
              (triple ?s ?_:b0 ?o)))
          (filter (!= ?_:b1 <{EX}q>)
            (bgp
              (triple ?o ?_:b1 ?s))))""")
    assert pattern("{ ?s !() ?o }") == "(bgp\n  (triple ?s ?_:b0 ?o))"
    assert pattern("{ ?s !^:q ?o }") == f"(filter (!= ?_:b0 <{EX}q>)\n  (bgp\n    (triple ?o ?_:b0 ?s)))"
    with pytest.raises(QueryError, match=r"t.rq:3:21: a negated property set under \* is not supported"):
        query("SELECT * WHERE { ?s (!:p)* ?o }")
