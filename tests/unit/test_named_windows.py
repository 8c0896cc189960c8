"""RSP-QL's named windows (its query grammar; docs/language.md, "Named
windows"): FROM NAMED WINDOW <w> ON STREAM <s> [window] and the WINDOW <w>
{ ... } / WINDOW ?w { ... } graph patterns. Answers checked by hand, each
also compared with the reference evaluator; the errors with positions."""

from __future__ import annotations

import pytest

from cep.errors import QueryError
from cep.events import Event
from cep.rules import parse_rules
from tests.unit.support import checked_answers
from tests.unit.test_streams import CAM, M, TOLL, ev, rows

HEAD = """PREFIX t: <http://t/>
SELECT ?w ?car
FROM NAMED WINDOW t:tolls ON STREAM <http://streams.org/tollgates> [RANGE 5m TUMBLING]
FROM NAMED WINDOW t:cams ON STREAM <http://streams.org/cameras> [RANGE 5m TUMBLING]
"""


def bound(answers):
    return sorted((a.start // M, a.end // M, dict(a.bindings).get("w"), dict(a.bindings)["car"]) for a in answers)


def test_a_named_window_reads_the_events_of_its_stream():
    """Hand-checked: window (0, 5m]. car1 registered on the tollgates'
    stream at 1, car2 on the cameras' at 2, car3 of no stream (of every
    stream) at 3. WINDOW t:tolls reads car1 and car3; WINDOW ?w reads each
    window, binding ?w: tolls car1, tolls car3, cams car2, cams car3."""
    events = [ev("g", "registers", "car1", 1, TOLL), ev("c", "registers", "car2", 2, CAM),
              ev("x", "registers", "car3", 3)]
    tolls = parse_rules(HEAD.replace("?w ?car", "?car") + "WHERE { WINDOW t:tolls { ?g t:registers ?car } }")
    tolls = checked_answers(tolls, events)
    assert bound(tolls) == [(0, 5, None, "<http://t/car1>"), (0, 5, None, "<http://t/car3>")]
    each = checked_answers(parse_rules(HEAD + "WHERE { WINDOW ?w { ?g t:registers ?car } }"), events)
    assert bound(each) == [(0, 5, "<http://t/cams>", "<http://t/car2>"), (0, 5, "<http://t/cams>", "<http://t/car3>"),
                           (0, 5, "<http://t/tolls>", "<http://t/car1>"), (0, 5, "<http://t/tolls>", "<http://t/car3>")]


def test_two_windows_of_one_stream_read_it_over_two_sizes():
    """Hand-checked: a start in the last minute joined with the stops of
    the last 5 minutes of the same stream. Evaluated every minute while
    the 1-minute window holds a start: at 4 (start at 4, stop at 1 in
    (-1, 4]) and at 7 (start at 7; (2, 7] no longer holds the stop)."""
    text = """PREFIX t: <http://t/>
SELECT ?x ?z
FROM NAMED WINDOW t:last ON STREAM <http://streams.org/tollgates> [RANGE 1m STEP 1m]
FROM NAMED WINDOW t:recent ON STREAM <http://streams.org/tollgates> [RANGE 5m STEP 1m]
WHERE { WINDOW t:last { ?x t:starts ?y } WINDOW t:recent { ?x t:stops ?z } }"""
    events = [ev("m", "stops", "s1", 1, TOLL), ev("m", "starts", "n1", 4, TOLL), ev("m", "starts", "n2", 7, TOLL)]
    got = checked_answers(parse_rules(text), events)
    assert rows(got) == [(3, 4, (("x", "<http://t/m>"), ("z", "<http://t/s1>")))]


@pytest.mark.parametrize("where, froms, message", [
    ("{ WINDOW t:nope { ?a t:p ?b } }", None,
     "2:197: WINDOW <http://t/nope>: the query names no such window; its windows are <http://t/tolls>, "
     "<http://t/cams> (FROM NAMED WINDOW)"),
    ("{ WINDOW t:tolls { ?a t:p ?b } }", "", "2:19: WINDOW t:tolls names a window, and the query names none"),
    ("{ GRAPH <http://streams.org/cameras> { ?a t:p ?b } }", None,
     "2:196: GRAPH <http://streams.org/cameras>: the query reads that stream through its named windows"),
    ("{ ?a t:p ?b }", "FROM NAMED WINDOW t:a ON <http://s/a> [RANGE 1m STEP 1m] "
                      "FROM NAMED WINDOW t:a ON <http://s/b> [RANGE 1m STEP 1m]",
     "the query names the window <http://t/a> twice"),
])
def test_named_window_errors_say_where_and_why(where, froms, message):
    froms = HEAD.split("\n", 2)[2].replace("\n", " ") if froms is None else froms
    text = f"PREFIX t: <http://t/>\nSELECT * {froms} WHERE {where}"
    with pytest.raises(QueryError) as err:
        parse_rules(text, "x.rq")
    assert message in str(err.value)
    assert str(err.value).startswith("x.rq:")


SIZES = """PREFIX t: <http://t/>
SELECT {select}
FROM NAMED WINDOW t:last ON STREAM <http://streams.org/tollgates> [RANGE 1m STEP 1m{last}]
FROM NAMED WINDOW t:recent ON STREAM <http://streams.org/tollgates> [RANGE 3m STEP {recent}]
WHERE {where}"""
STARTS = [ev("m", "starts", "n1", 1, TOLL), ev("m", "stops", "s1", 2, TOLL), ev("m", "starts", "n2", 4, TOLL)]


def sizes(where, select="?w ?x ?y", last="", recent="1m"):
    return SIZES.format(select=select, last=last, recent=recent, where=where)


def test_window_var_over_windows_of_different_sizes_is_the_union_of_each_window_at_tau():
    """Hand-checked (RSP-QL's eval(SDS, SE, t), ?w bound to each window's
    name): t:last is the last minute, t:recent the last 3, both moved by a
    minute; the query is evaluated every minute while either window holds
    a start, each answer over the query's (t:last's) window at tau. Starts
    n1 at 1 and n2 at 4: at 1 both windows hold n1; at 2 and 3 only t:recent
    ((-1, 2], (0, 3]); at 4 both hold n2; at 5 and 6 t:recent ((2, 5],
    (3, 6]); at 7 (4, 7] holds nothing."""
    got = checked_answers(parse_rules(sizes("{ WINDOW ?w { ?x t:starts ?y } }")), STARTS)
    last, recent = "<http://t/last>", "<http://t/recent>"
    assert [(s, e, dict(b)["w"], dict(b)["y"][-3:-1]) for s, e, b in rows(got)] == [
        (0, 1, last, "n1"), (0, 1, recent, "n1"), (1, 2, recent, "n1"), (2, 3, recent, "n1"),
        (3, 4, last, "n2"), (3, 4, recent, "n2"), (4, 5, recent, "n2"), (5, 6, recent, "n2")]


def test_window_var_beside_a_named_window_reads_each_window_in_a_join_and_optional():
    """Hand-checked: WINDOW t:last and WINDOW ?w in one query, evaluated
    when t:last holds a start (at 1 and 4). Joined: at 4 the stop s1 (at 2)
    is in t:recent's (1, 4] only (and in its last 2 triples, as a count
    window); at 1 no window holds a stop. As OPTIONAL,
    the start at 1 stands alone."""
    join = sizes("{ WINDOW t:last { ?x t:starts ?y } WINDOW ?w { ?x t:stops ?z } }", "?w ?y ?z")
    got = checked_answers(parse_rules(join), STARTS)
    assert [(s, e, dict(b)["w"]) for s, e, b in rows(got)] == [(3, 4, "<http://t/recent>")]
    # not leading, WINDOW ?w may read a count window: the last 2 triples at 4 are s1 and n2
    got = checked_answers(parse_rules(join.replace("RANGE 3m STEP 1m", "TRIPLES 2")), STARTS)
    assert [(s, e, dict(b)["w"]) for s, e, b in rows(got)] == [(3, 4, "<http://t/recent>")]
    optional = join.replace("WINDOW ?w { ?x t:stops ?z }", "OPTIONAL { WINDOW ?w { ?x t:stops ?z } }")
    got = checked_answers(parse_rules(optional), STARTS)
    assert [(s, e, dict(b).get("w"), dict(b)["y"]) for s, e, b in rows(got)] == [
        (0, 1, None, "<http://t/n1>"), (3, 4, "<http://t/recent>", "<http://t/n2>")]


def test_window_var_over_a_count_window_is_evaluated_at_every_instant_it_counts():
    """Hand-checked: t:last the last minute, moved by a minute; t:recent the
    last 2 triples, a window evaluated at every instant a triple comes
    into it (1, 2, 4). The query is evaluated at the union of both
    windows' times, each read as taken at tau, an answer over t:last's
    window closed last: at 1 both hold n1; at 2 t:last (1, 2] no start,
    t:recent n1 and s1; at 3 t:recent still; at 4 t:last n2, t:recent s1
    and n2. The end: t:recent's last evaluation is the last instant, 4;
    t:last's the first window starting at or after it, (4, 5]: at 5
    t:recent still holds n2. With t:recent first (the query's window), the
    same windows are read at the same times, each answer over [the oldest
    instant of the last 2 triples, tau]."""
    text = sizes("{ WINDOW ?w { ?x t:starts ?y } }").replace("RANGE 3m STEP 1m", "TRIPLES 2")
    got = checked_answers(parse_rules(text), STARTS)
    last, recent = "<http://t/last>", "<http://t/recent>"
    assert [(s, e, dict(b)["w"], dict(b)["y"][-3:-1]) for s, e, b in rows(got)] == [
        (0, 1, last, "n1"), (0, 1, recent, "n1"), (1, 2, recent, "n1"), (2, 3, recent, "n1"),
        (3, 4, last, "n2"), (3, 4, recent, "n2"), (4, 5, recent, "n2")]
    first = text.replace("FROM NAMED WINDOW t:last ON STREAM <http://streams.org/tollgates> [RANGE 1m STEP 1m]\n", "")
    first = first.replace("[TRIPLES 2]", "[TRIPLES 2]\nFROM NAMED WINDOW t:last ON STREAM "
                          "<http://streams.org/tollgates> [RANGE 1m STEP 1m]")
    got = checked_answers(parse_rules(first), STARTS)
    assert [(s, e, dict(b)["w"], dict(b)["y"][-3:-1]) for s, e, b in rows(got)] == [
        (1, 1, last, "n1"), (1, 1, recent, "n1"), (1, 2, recent, "n1"), (1, 3, recent, "n1"),
        (2, 4, last, "n2"), (2, 4, recent, "n2"), (2, 5, recent, "n2")]


def test_a_grouped_query_led_by_a_count_window_gives_the_empty_groups_row_at_the_time_windows_evaluations_too():
    """Hand-checked (CEP_SEED=2944695567, shrunk): w0 the last triple,
    first; w1 the last millisecond. An event at [0, 0] and one at [0, 1].
    At 0 both windows hold the first: a row per window, COUNT 1. At 1
    w0 holds the second, whose solution [0, 1] starts before w0's span
    [1, 1], and w1 (0, 1] none: no solution; a count window holds its
    instants' events, so the grouped query has the empty group's row
    (COUNT 0, ?w unbound: the W3C test agg-empty-group), over [1, 1]. At
    2, w1's last evaluation (its window (1, 2] starts at the last
    instant), w0 still holds the second: the empty group's row again, over
    [1, 2]. The engine went idle there (no window held a solution) and
    left that row out."""
    text = """PREFIX : <http://example.org/>
SELECT ?w (COUNT(*) AS ?n)
FROM NAMED WINDOW :w0 ON STREAM <http://example.org/s> [TRIPLES 1]
FROM NAMED WINDOW :w1 ON STREAM <http://example.org/s> [RANGE 1ms STEP 1ms]
WHERE { WINDOW ?w { ?x :p ?y } } GROUP BY ?w"""
    zero = '"0"^^<http://www.w3.org/2001/XMLSchema#integer>'
    events = [Event("<http://example.org/s1>", "<http://example.org/p>", zero, 0, 0),
              Event("<http://example.org/s1>", "<http://example.org/p>", zero, 0, 1)]
    got = checked_answers(parse_rules(text), events)
    assert sorted((a.start, a.end, a.binding("w"), a.binding("n")[1:2]) for a in got) == [
        (0, 0, "<http://example.org/w0>", "1"), (0, 0, "<http://example.org/w1>", "1"),
        (1, 1, None, "0"), (1, 2, None, "0")]


def test_window_var_over_a_window_of_infinite_width_ends_with_the_stream():
    """Hand-checked: t:last the last minute, moved by a minute; t:ever
    RANGE UNBOUNDED from 0, moved by 2 minutes: (0, 2], (0, 4], ...
    Evaluated at both windows' times, each read as it closed last at tau;
    at the end of the stream (its last instant 4) t:last ends at 5, the
    first (4, 5] starting at 4, t:ever at 4, (0, 4] holding it: the
    evaluations are at 1 to 5, not at 6. At 1 t:last holds n1 and t:ever
    has not closed; at 2 and 3 t:ever (0, 2] holds n1, t:last no start; at
    4 t:last holds n2, t:ever (0, 4] n1 and n2; at 5 t:ever still."""
    text = sizes("{ WINDOW ?w { ?x t:starts ?y } }").replace(
        "FROM NAMED WINDOW t:recent ON STREAM <http://streams.org/tollgates> [RANGE 3m STEP 1m]",
        'FROM NAMED WINDOW t:ever ON STREAM <http://streams.org/tollgates> [RANGE UNBOUNDED STEP 2m '
        'START "1970-01-01T00:00:00Z"^^<http://www.w3.org/2001/XMLSchema#dateTime>]')
    got = checked_answers(parse_rules(text), STARTS)
    last, ever = "<http://t/last>", "<http://t/ever>"
    assert [(s, e, dict(b)["w"], dict(b)["y"][-3:-1]) for s, e, b in rows(got)] == [
        (0, 1, last, "n1"), (1, 2, ever, "n1"), (2, 3, ever, "n1"),
        (3, 4, ever, "n1"), (3, 4, ever, "n2"), (3, 4, last, "n2"), (4, 5, ever, "n1"), (4, 5, ever, "n2")]


@pytest.mark.parametrize("text, message", [
    # a report policy belongs to the query's window: another named window's would be ignored
    (sizes("{ WINDOW ?w { ?x t:starts ?y } }", recent="1m REPORT ON CHANGE"),
     "4:1: the query is evaluated when its window on <http://streams.org/tollgates> is: the report "
     "policy of the named window <http://t/recent> differs from it"),
    (sizes("{ WINDOW ?w { ?x t:starts ?y } }", last=" REPORT EVERY 2m", recent="1m REPORT EVERY 3m"),
     "4:1: the query is evaluated when its window on <http://streams.org/tollgates> is: the report "
     "policy of the named window <http://t/recent> differs from it"),
    (sizes("{ WINDOW t:last { ?x t:starts ?y } OPTIONAL { WINDOW t:recent { ?x t:stops ?z } } }",
           "*", recent="1m REPORT NON EMPTY"),
     "4:1: the query is evaluated when its window on <http://streams.org/tollgates> is: the report "
     "policy of the named window <http://t/recent> differs from it"),
])
def test_window_var_over_windows_the_query_cannot_evaluate_together_is_refused(text, message):
    with pytest.raises(QueryError) as err:
        checked_answers(parse_rules(text, "x.rq"), STARTS)
    assert str(err.value).startswith(f"x.rq:{message}")


def test_window_var_over_windows_of_other_steps_and_starts_is_evaluated_at_each_windows_times():
    """Hand-checked, the starts of the first test. t:recent moved by 2
    minutes: it closes at 2, 4, 6, and at each minute reads the window it
    closed last, (-1, 2] at 2 and 3, (1, 4] at 4 and 5, (3, 6] at 6 and 7;
    t:last as before. With START 2:30 t:recent closes at 5:30, 6:30, ...
    ((2:30, 5:30], (3:30, 6:30]) and holds nothing before: n2 from its
    close at 5:30 (over t:last's window at 5:30, (4, 5]) through 7,
    twice in (5, 6] (at 6 and at 6:30). DSTREAM over the first test's
    windows: a solution leaves at the evaluation after the last that held
    it, n1 of t:last at 2 and of t:recent at 4, n2 of t:last at 5 and of
    t:recent at 7."""
    last, recent = "<http://t/last>", "<http://t/recent>"
    every_2m = checked_answers(parse_rules(sizes("{ WINDOW ?w { ?x t:starts ?y } }", recent="2m")), STARTS)
    assert [(s, e, dict(b)["w"], dict(b)["y"][-3:-1]) for s, e, b in rows(every_2m)] == [
        (0, 1, last, "n1"), (1, 2, recent, "n1"), (2, 3, recent, "n1"), (3, 4, last, "n2"), (3, 4, recent, "n2"),
        (4, 5, recent, "n2"), (5, 6, recent, "n2"), (6, 7, recent, "n2")]
    start = (sizes("{ WINDOW ?w { ?x t:starts ?y } }", recent='1m START "1970-01-01T00:02:30Z"^^xsd:dateTime')
             .replace("PREFIX t:", "PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>\nPREFIX t:"))
    started = checked_answers(parse_rules(start), STARTS)
    assert [(s, e, dict(b)["w"], dict(b)["y"][-3:-1]) for s, e, b in rows(started)] == [
        (0, 1, last, "n1"), (3, 4, last, "n2"), (4, 5, recent, "n2"), (5, 6, recent, "n2"), (5, 6, recent, "n2"),
        (6, 7, recent, "n2")]
    leaving = checked_answers(parse_rules(sizes("{ WINDOW ?w { ?x t:starts ?y } }", "DSTREAM ?w ?x ?y")), STARTS)
    assert [(s, e, dict(b)["w"], dict(b)["y"][-3:-1]) for s, e, b in rows(leaving)] == [
        (1, 2, last, "n1"), (3, 4, recent, "n1"), (4, 5, last, "n2"), (6, 7, recent, "n2")]


def test_window_var_with_one_report_policy_on_every_window_reports_by_it():
    """Hand-checked: REPORT ON CHANGE on both windows; the evaluations of
    the first test, reported when the content of either window (its
    part's solutions in it, docs/language.md "The empty group") changed:
    at 1 (n1 enters both), 2 (n1 leaves t:last), 4 (n2 enters both), 5
    (n2 leaves t:last, n1 t:recent); not at 3 nor 6 (t:last stays empty,
    t:recent's (0, 3] and (3, 6] hold what (-1, 2] and (2, 5] did)."""
    text = sizes("{ WINDOW ?w { ?x t:starts ?y } }", last=" REPORT ON CHANGE", recent="1m REPORT ON CHANGE")
    got = checked_answers(parse_rules(text), STARTS)
    assert sorted({(s, e) for s, e, _ in rows(got)}) == [(0, 1), (1, 2), (3, 4), (4, 5)]


def test_window_var_under_optional_beside_a_pattern_of_the_query_window():
    """Hand-checked: ?x t:at ?a reads the cameras' stream over the query's
    window (the last minute); the OPTIONAL WINDOW ?w reads the tollgates'
    through t:last and t:recent. At 2, a0 with s1 (at 2) from both windows;
    at 4, a1 with s1 from t:recent's (1, 4] only."""
    text = sizes("{ ?x t:at ?a OPTIONAL { WINDOW ?w { ?x t:stops ?z } } }", "?a ?w")
    text = text.replace("FROM NAMED", "FROM STREAM <http://streams.org/cameras> [RANGE 1m STEP 1m]\nFROM NAMED", 1)
    events = STARTS + [ev("m", "at", "a0", 2, CAM), ev("m", "at", "a1", 4, CAM)]
    got = checked_answers(parse_rules(text), events)
    assert [(s, e, dict(b)["a"][-3:-1], dict(b)["w"]) for s, e, b in rows(got)] == [
        (1, 2, "a0", "<http://t/last>"), (1, 2, "a0", "<http://t/recent>"), (3, 4, "a1", "<http://t/recent>")]
