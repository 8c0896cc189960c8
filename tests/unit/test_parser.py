"""The EP-SPARQL grammar and parser (cep/syntax): what it accepts, how it
lexes the tricky spots, the shape of its tree, and that the grammar file is
documented and built once."""

import re
from pathlib import Path

import pytest
from lark import Token, Tree

from cep.algebra import ops, sexpr
from cep.rules import parse_rules
from cep.syntax import parse
from cep.syntax.parser import GRAMMAR, parser

REPO = Path(__file__).resolve().parents[2]
EX = "http://example.org/"
HEADER = f"PREFIX : <{EX}>\nPREFIX xsd: <http://www.w3.org/2001/XMLSchema#>\n"


def tokens(tree: Tree, kind: str) -> list:
    return [str(t) for t in tree.scan_values(lambda v: isinstance(v, Token) and v.type == kind)]


def one(text: str) -> ops.Query:
    (q,) = parse_rules(HEADER + text)
    return q


# ----------------------------------------------------------------- parser


def test_the_parser_is_built_once():
    assert parser() is parser()


def test_every_grammar_rule_says_what_it_implements():
    """Each rule sits in a paragraph with a comment naming the SPARQL 1.1
    grammar rule ([n]) or the paper / project extension it implements."""
    text = GRAMMAR.read_text()
    grammar_part = text.split("// ---------------------------------------------------------------- terminals")[0]
    for paragraph in re.split(r"\n\s*\n", grammar_part):
        lines = paragraph.strip().splitlines()
        rules = [ln for ln in lines if re.match(r"[?_a-z]\w*\s*:", ln)]
        if not rules:
            continue
        comments = " ".join(ln for ln in lines if ln.lstrip().startswith("//"))
        assert re.search(r"\[\d+\]|paper|project", comments), f"undocumented rules: {rules}"


def test_the_tree_keeps_keywords_and_positions_and_drops_punctuation():
    tree = parse("SELECT ?x\nWHERE { ?x :p 1 . }", "t.rq")
    assert tree.data == "start"
    assert not tokens(tree, "LBRACE") and not tokens(tree, "DOT")
    (where,) = tree.find_data("where_clause")
    keyword = where.children[0]
    assert (keyword.type, keyword.line, keyword.column) == ("WHERE", 2, 1)
    (group,) = tree.find_data("group")
    assert (group.meta.line, group.meta.column) == (2, 7)


# --------------------------------------------------------- what it accepts


@pytest.mark.parametrize("n", range(1, 7))
def test_the_papers_queries_parse_as_printed(n):
    tree = parse((REPO / "rules" / "paper" / f"q{n}.rq").read_text())
    assert len(list(tree.find_data("query"))) == 1


def test_keywords_are_case_insensitive_but_a_is_not():
    lower = one("select distinct ?s where { ?s a ?o } seq { ?s :p ?o } optionalseq { ?s :q ?x } "
                "filter(bound(?x) && ?o in (1) && true) within 'PT1S'")
    upper = one("SELECT DISTINCT ?s WHERE { ?s a ?o } SEQ { ?s :p ?o } OPTIONALSEQ { ?s :q ?x } "
                "FILTER(BOUND(?x) && ?o IN (1) && TRUE) WITHIN 'PT1S'")
    assert sexpr.query(lower) == sexpr.query(upper)
    # `A` is a bare name, not rdf:type
    assert one("SELECT * { ?s A ?o }").pattern.triples[0].p == f"<{EX}A>"


def test_comments_run_to_the_end_of_the_line_but_not_inside_iris_and_strings():
    q = one('SELECT ?s # the company\n{ ?s <http://x.org/a#b> "#not a comment" } # done')
    assert q.pattern.triples[0].p == "<http://x.org/a#b>"
    assert q.pattern.triples[0].o == '"#not a comment"'


@pytest.mark.parametrize("name", ["seqNumber", "optionalPart", "filtered", "union-of", "equalsX",
                                  "within2", "in_", "notice", "True1", "select_me", "as_of"])
def test_names_that_start_like_keywords_are_names(name):
    q = one(f"SELECT * {{ ?s {name} ?o }}")
    assert q.pattern.triples[0].p == f"<{EX}{name}>"


def test_a_prefixed_name_is_one_token_even_when_its_prefix_looks_like_a_keyword():
    q = one("PREFIX seq: <http://s.org/>\nSELECT * { ?s seq:next ?o ; xsd:p ?x }")
    assert [t.p for t in q.pattern.triples] == ["<http://s.org/next>",
                                                "<http://www.w3.org/2001/XMLSchema#p>"]


def test_a_dot_after_a_number_or_a_name_ends_the_triple():
    q = one("SELECT * { ?s :p 1. ?s :q :o. ?s :r 1.5. }")
    assert [t.o for t in q.pattern.triples] == [
        '"1"^^<http://www.w3.org/2001/XMLSchema#integer>', f"<{EX}o>",
        '"1.5"^^<http://www.w3.org/2001/XMLSchema#decimal>']


def test_the_unparenthesized_select_items_of_the_paper():
    tree = parse(HEADER + "SELECT ?a ?b + 1 AS ?c ?d (?e AS ?f) !BOUND(?a) AS ?g WHERE { ?a :p ?b }")
    items = list(tree.find_data("select_item"))
    assert [tokens(item, "VAR")[-1] for item in items] == ["?a", "?c", "?d", "?f", "?g"]
    assert [len(item.children) for item in items] == [1, 3, 1, 3, 3]


def test_select_keeps_a_minus_after_an_item_as_a_binary_operator():
    tree = parse("SELECT ?a -1 AS ?b { ?a ?p ?o }")
    (item,) = tree.find_data("select_item")
    assert item.children[0].data == "binary"


def test_several_queries_per_file_and_prologue_between_them():
    text = ("PREFIX : <http://a.org/>\nSELECT * { ?s :p ?o }\n"
            "BASE <http://b.org/>\nPREFIX : <x/>\n@policy recent\nSELECT * { ?s :p <o> }\n")
    first, second = parse_rules(text, "two.rq")
    assert first.pattern.triples[0].p == "<http://a.org/p>"
    assert (second.pattern.triples[0].p, second.pattern.triples[0].o) == (
        "<http://b.org/x/p>", "<http://b.org/o>")
    assert second.options == (("policy", "recent"),)


def test_bare_names_stand_in_every_triple_position():
    q = one("SELECT * { company hasStockPrice price }")
    t = q.pattern.triples[0]
    assert (t.s, t.p, t.o) == (f"<{EX}company>", f"<{EX}hasStockPrice>", f"<{EX}price>")


def test_the_paper_template_without_braces_and_construct_where():
    braced = one("CONSTRUCT { ?c downratedby ?a . } WHERE { ?r rater ?a ; rated ?c }")
    unbraced = one("CONSTRUCT ?c downratedby ?a { ?r rater ?a ; rated ?c }")
    assert sexpr.query(braced) == sexpr.query(unbraced)


def test_blank_node_property_lists_as_subject_and_object():
    q = one("SELECT * { [ :p ?x ] . [ :q ?y ] :r [ :s [] ] }")
    assert len(q.pattern.triples) == 4


def test_long_strings_may_span_lines_and_hold_quotes():
    q = one('SELECT * { ?s :p """a "quoted"\nline""" }')
    assert q.pattern.triples[0].o == '"a \\"quoted\\"\\nline"'


def test_documented_examples_parse():
    """Every complete example in docs/language.md (no `...`) is accepted,
    as if it were a file of rules/ run with --allow-from ontologies (so
    that FROM <../ontologies/...> names a file of the repository)."""
    doc = (REPO / "docs" / "language.md").read_text()
    blocks = re.findall(r"```sparql\n(.*?)```", doc, re.S)
    complete = [b for b in blocks if "..." not in b]
    assert len(complete) >= 10
    for block in complete:
        assert parse_rules(HEADER + block, str(REPO / "rules" / "doc.rq"), allow_from=[REPO / "ontologies"])
