"""MIN and MAX do not depend on the order their values came in (a window
holds a multiset). A NaN among the numbers is the result (XPath's fn:min
and fn:max; SPARQL's < and > are false with it, so a fold over the values
kept it or not by where it came), an xsd:double's before an xsd:float's;
of equal values (1 and 1.0E0, -0 and 0, a time in two zones) the result
is the one whose value's N-Triples text is the least. Hand-checked, on the
engine and on the reference, in every order."""

from itertools import permutations

import pytest

from cep import reference
from cep.engine import Engine
from cep.events import Event
from cep.rules import parse_rules

XSD = "http://www.w3.org/2001/XMLSchema#"
QUERY = parse_rules("""PREFIX : <http://e/>
SELECT (MIN(?o) AS ?min) (MAX(?o) AS ?max) FROM STREAM <http://e/s> [RANGE PT10S STEP PT10S] WHERE { ?s :p ?o }""")


def typed(lex, datatype):
    return f'"{lex}"^^<{XSD}{datatype}>'


CASES = [
    ([typed("NaN", "double"), typed("1", "double"), typed("2", "double")],
     typed("NaN", "double"), typed("NaN", "double")),
    ([typed("NaN", "float"), typed("1", "integer"), typed("NaN", "double")],
     typed("NaN", "double"), typed("NaN", "double")),
    ([typed("-0", "double"), typed("0", "double")], typed("-0.0E0", "double"), typed("-0.0E0", "double")),
    ([typed("1", "double"), typed("1", "integer"), typed("0.5", "decimal")],
     typed("0.5", "decimal"), typed("1", "integer")),
    ([typed("2026-01-01T01:00:00+01:00", "dateTime"), typed("2026-01-01T00:00:00Z", "dateTime")],
     typed("2026-01-01T00:00:00Z", "dateTime"), typed("2026-01-01T00:00:00Z", "dateTime")),
]


def _first_window(answers):
    first = min(answers, key=lambda a: a.end)
    return dict(first.bindings)


@pytest.mark.parametrize("values, low, high", CASES)
def test_min_and_max_whatever_the_order_of_their_values(values, low, high):
    for order in permutations(values):
        events = [Event("<http://e/a>", "<http://e/p>", o, 1000 * (i + 1), 1000 * (i + 1)) for i, o in enumerate(order)]
        with Engine(QUERY) as engine:
            got = _first_window(engine.push(events) + engine.flush())
        assert got == {"min": low, "max": high}, order
        assert _first_window(reference.evaluate(QUERY, events)) == {"min": low, "max": high}, order
