"""RSP-QL's report policies in a window's brackets (docs/language.md,
"Report policies"): what each reports on both the engine and the
reference (checked_answers compares them), and the combinations refused
with the position of the window."""

import pytest

from cep.errors import QueryError
from cep.rules import parse_rules
from tests.unit.test_windows import MIN, PREFIX, price, run, table

# acme at 10, 12 and 50 minutes; windows [RANGE 30m STEP 10m] close every 10 minutes
SPARSE = [price("acme", 1, 10), price("acme", 2, 12), price("acme", 3, 50)]


def counted(policy, form="SELECT ?c (COUNT(*) AS ?n)", group="GROUP BY ?c"):
    return run(f"""SELECT {form.split(' ', 1)[1] if form.startswith('SELECT') else form}
FROM STREAM <http://e/s> [RANGE 30m STEP 10m {policy}]
WHERE {{ ?c :price ?p }} {group}""", SPARSE)


def test_the_window_close_reports_every_close():
    # (c - 30, c] at 10 (1), 20 (2), 30 (2), 40 (1: 12), 50 (1: 50), 60, 70 (50)
    assert table(counted("REPORT ON CLOSE"), "c", "n") == table(counted(""), "c", "n") == [
        (-20, 10, "acme", "1"), (-10, 20, "acme", "2"), (0, 30, "acme", "2"), (10, 40, "acme", "1"),
        (20, 50, "acme", "1"), (30, 60, "acme", "1"), (40, 70, "acme", "1")]


def test_a_content_change_reports_what_entered_or_left():
    # 30 holds what 20 held; 40 lost 10; 50 lost 12 and got 50; 60, 70 hold 50 alone
    assert table(counted("REPORT ON CHANGE"), "c", "n") == [
        (-20, 10, "acme", "1"), (-10, 20, "acme", "2"), (10, 40, "acme", "1"), (20, 50, "acme", "1")]


def test_a_change_is_of_solutions_not_of_their_counts():
    # 40 and 50 both count 1 for acme, from different readings: both report
    rows = table(counted("REPORT ON CHANGE"), "c", "n")
    assert (10, 40, "acme", "1") in rows and (20, 50, "acme", "1") in rows


def test_non_empty_content_leaves_no_evaluation_at_an_empty_window():
    dstream = "SELECT DSTREAM ?c"
    # the close: acme leaves at 80 (the first empty window); non-empty: never
    assert table(counted("", dstream), "c") == [(50, 80, "acme")]
    assert counted("REPORT NON EMPTY", dstream) == []


def test_report_every_is_computed_every():
    every = table(counted("REPORT EVERY 15m"), "c", "n")
    computed = table(run("""REGISTER QUERY q COMPUTED EVERY 15m AS
SELECT ?c (COUNT(*) AS ?n) FROM STREAM <http://e/s> [RANGE 30m STEP 10m]
WHERE { ?c :price ?p } GROUP BY ?c""", SPARSE), "c", "n")
    assert every == computed
    assert [end for _, end, *_ in every] == [15, 30, 45, 60, 75]


def test_a_count_window_reports_on_change():
    # [TRIPLES 2] at each instant: {10}, {10, 12}, {12, 50}: each a change
    answers = run("""SELECT ?p FROM STREAM <http://e/s> [TRIPLES 2 REPORT ON CHANGE]
WHERE { ?c :price ?p }""", SPARSE)
    assert sorted(a.end // MIN for a in answers) == [10, 12, 12, 50, 50]


@pytest.mark.parametrize("text, message", [
    ("REGISTER QUERY q COMPUTED EVERY 5m AS SELECT ?c FROM STREAM <http://e/s> [RANGE 30m STEP 10m REPORT ON CLOSE] "
     "WHERE { ?c :price ?p }", r"q\.rq:2:\d+: COMPUTED EVERY evaluates the query periodically, its window's REPORT ON CLOSE"),
    ("REGISTER QUERY q COMPUTED EVERY 5m AS SELECT ?c FROM STREAM <http://e/s> [RANGE 30m STEP 10m REPORT EVERY 15m] "
     "WHERE { ?c :price ?p }", r"COMPUTED EVERY and the window's REPORT EVERY give two periods"),
    ("SELECT ?c FROM STREAM <http://e/s> [TRIPLES 3 REPORT EVERY 15m] WHERE { ?c :price ?p }",
     r"q\.rq:2:\d+: REPORT EVERY reports a time-based window periodically"),
    ("SELECT ?c FROM STREAM <http://e/s> [RANGE 30m STEP 10m] FROM STREAM <http://e/t> [RANGE 30m STEP 10m REPORT ON CHANGE] "
     "WHERE { ?c :price ?p }", r"the report policy of the window on <http://e/t> differs"),
])
def test_combinations_refused(text, message):
    with pytest.raises(QueryError, match=message):
        parse_rules(PREFIX + text, "q.rq")


@pytest.mark.parametrize("window", ["RANGE 30m STEP 10m REPORT ON CHANGE TICK TIME", "TRIPLES 2 TICK BATCH"])
def test_the_tick_the_engine_has_is_accepted(window):
    assert parse_rules(PREFIX + f"SELECT ?c FROM STREAM <http://e/s> [{window}] WHERE {{ ?c :price ?p }}")


@pytest.mark.parametrize("window, message", [
    ("TRIPLES 2 TICK TUPLE", r"q\.rq:2:\d+: TICK TUPLE would evaluate a window between two events of one instant"),
    ("RANGE 30m STEP 10m TICK TUPLE", r"TICK TUPLE would evaluate"),
    ("TRIPLES 2 TICK TIME", r"a count window's content changes only when events come"),
    ("RANGE 30m STEP 10m TICK BATCH", r"evaluating it only at the instants of events is not supported"),
])
def test_other_ticks_refused(window, message):
    with pytest.raises(QueryError, match=message):
        parse_rules(PREFIX + f"SELECT ?c FROM STREAM <http://e/s> [{window}] WHERE {{ ?c :price ?p }}", "q.rq")
