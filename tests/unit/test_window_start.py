"""RSP-QL's t0 in a window's brackets, START (docs/language.md, "A
window's start"): the windows (t0 + i*step, t0 + i*step + range], i >= 0,
on both the engine and the reference (checked_answers compares them), and
what is refused."""

import pytest

from cep.errors import QueryError
from cep.rules import parse_rules
from tests.unit.test_report_policies import SPARSE
from tests.unit.test_windows import PREFIX, run, table

T0 = '"1970-01-01T00:05:00Z"^^<http://www.w3.org/2001/XMLSchema#dateTime>'  # minute 5


def counts(window):
    return table(run(f"""SELECT ?c (COUNT(*) AS ?n) FROM STREAM <http://e/s> [{window}]
WHERE {{ ?c :price ?p }} GROUP BY ?c""", SPARSE), "c", "n")


def test_start_shifts_the_windows():
    # acme at 10, 12 and 50: tumbling 20-minute windows from minute 5
    assert counts(f"RANGE 20m TUMBLING START {T0}") == [(5, 25, "acme", "2"), (45, 65, "acme", "1")]
    assert counts("RANGE 20m TUMBLING") == [(0, 20, "acme", "2"), (40, 60, "acme", "1")]


def test_nothing_before_the_start_is_in_a_window():
    late = '"1970-01-01T00:10:00Z"'  # a simple literal of the form will do
    # the first window is (10, 30]: the reading at 10 is in none; 12 is in
    # (10, 30] only, 50 in (30, 50] and (40, 60]
    assert counts(f"RANGE 20m STEP 10m START {late}") == [
        (10, 30, "acme", "1"), (30, 50, "acme", "1"), (40, 60, "acme", "1")]


def test_periodic_evaluations_count_from_the_first_close():
    # first close 25; every 15 minutes: 25 and 40 over (5, 25], 55 over
    # (25, 45] (empty), 70 over (45, 65]
    assert counts(f"RANGE 20m TUMBLING START {T0} REPORT EVERY 15m") == [
        (5, 25, "acme", "2"), (5, 40, "acme", "2"), (45, 70, "acme", "1")]


@pytest.mark.parametrize("text, message", [
    (f"SELECT ?c FROM STREAM <http://e/s> [TRIPLES 3 START {T0}] WHERE {{ ?c :price ?p }}",
     r"q\.rq:2:\d+: START gives the time a sequence of time-based windows starts at"),
    ('SELECT ?c FROM STREAM <http://e/s> [RANGE 1m TUMBLING START "10:00"] WHERE { ?c :price ?p }',
     r"q\.rq:2:\d+: START takes the time the windows start at, an xsd:dateTime"),
    ("SELECT ?c FROM STREAM <http://e/s> [RANGE 1m TUMBLING] "
     f"FROM STREAM <http://e/t> [RANGE 1m TUMBLING START {T0}] WHERE {{ ?c :price ?p }}",
     r"the streams the patterns outside GRAPH read have one window: the window on <http://e/t> differs"),
])
def test_start_refused(text, message):
    with pytest.raises(QueryError, match=message):
        from cep.engine import Engine
        Engine(parse_rules(PREFIX + text, "q.rq"))
