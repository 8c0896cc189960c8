"""A query's variable names never meet the names the compiler makes
(issue 17, item 8): each query below, whose compiled form holds names of
its own making (hoisted subexpressions of a SEQ filter, aggregates,
blank nodes, property path steps, the ends timestamp() reads, Skolem
fields of a CONSTRUCT, Prolog variables), gives the same answers with
variables named like those as with ordinary names."""

import pytest

from cep import reference
from cep.events import Event
from cep.rules import parse_rules
from tests.unit.support import checked_answers

EX = "http://example.org/"
T0 = 1_767_225_600_000  # 2026-01-01T00:00:00Z
PREFIX = f"PREFIX : <{EX}>\n"

# {0}, {1}, ... are the query's variables
QUERIES = {
    "hoisted": "SELECT ?{0} ?{1} ?{2} ?{3} WHERE {{ ?{0} :price ?{1} . ?{0} :tag ?{3} }} "
               "SEQ {{ ?{0} :price ?{2} }} FILTER(?{2} < ?{1} * 0.7 && ?{2} + 1 > ?{1} - 100)",
    "aggregate": "SELECT ?{0} (SUM(?{1}) AS ?{2}) (COUNT(*) AS ?{3}) FROM STREAM <http://example.org/s> "
                 "[RANGE 10s STEP 10s] WHERE {{ ?{0} :price ?{1} }} GROUP BY ?{0} HAVING (AVG(?{1}) > 1)",
    "timestamp": "SELECT ?{0} ?{1} (timestamp(?{1}) AS ?{2}) FROM STREAM <http://example.org/s> "
                 "[RANGE 10s STEP 10s] WHERE {{ ?{0} :price ?{1} }}",
    "blank nodes and paths": "SELECT * WHERE {{ ?{0} :price ?{1} . ?{0} :tag/:label ?{2} . [] :tag ?{3} }}",
    "construct": "CONSTRUCT {{ ?{0} :fell [ :from ?{1} ; :to ?{2} ] . _:b0 :by ?{3} }} WHERE "
                 "{{ ?{0} :price ?{1} . ?{0} :tag ?{3} }} SEQ {{ ?{0} :price ?{2} }} FILTER(?{2} < ?{1})",
}
ORDINARY = ("company", "before", "after", "extra")
# names of the compiler's own making, as a query could write them
LOOKALIKES = ["_hoisted0", "_hoisted1", "hoisted0", "agg0", "_agg0", "_b0", "b0", "_end0", "end0",
              "X0", "X1", "X2", "_G1", "_N0", "P0", "B0", "F0", "Ts", "Te", "A", "S", "P", "O"]


def events():
    def ev(i, s, p, o):
        return Event(f"<{EX}{s}>", f"<{EX}{p}>", o, T0 + 1000 * i, T0 + 1000 * i)

    def num(n):
        return f'"{n}"^^<http://www.w3.org/2001/XMLSchema#integer>'

    return [ev(1, "acme", "price", num(100)), ev(1, "acme", "tag", f"<{EX}t1>"),
            ev(1, "t1", "label", '"steel"'), ev(2, "acme", "price", num(60)),
            ev(3, "acme", "price", num(90)), ev(4, "bolt", "price", num(10)),
            ev(4, "bolt", "tag", f"<{EX}t1>"), ev(5, "bolt", "price", num(5))]


def answers(text, names):
    """The answers, with the variables named back to ORDINARY."""
    back = dict(zip(names, ORDINARY))
    queries = parse_rules(PREFIX + text.format(*names), "names.rq")
    got = checked_answers(queries, events())
    return reference.multiset(a._replace(bindings=tuple(sorted((back[n], t) for n, t in a.bindings)))
                              for a in got)


@pytest.mark.parametrize("case", QUERIES)
@pytest.mark.parametrize("shift", range(0, len(LOOKALIKES), 4))
def test_variables_named_like_the_compilers_give_the_same_answers(case, shift):
    lookalikes = (LOOKALIKES[shift:] + LOOKALIKES)[:len(ORDINARY)]
    expected = answers(QUERIES[case], ORDINARY)
    assert expected, "the case must have answers"
    assert answers(QUERIES[case], lookalikes) == expected
