"""RSP-QL's named windows (its query grammar; docs/language.md, "Named
windows"): FROM NAMED WINDOW <w> ON STREAM <s> [window] and the WINDOW <w>
{ ... } / WINDOW ?w { ... } graph patterns. Answers checked by hand, each
also compared with the reference evaluator; the errors with positions."""

from __future__ import annotations

import pytest

from cep.errors import QueryError
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
    ("{ WINDOW ?w { ?a t:p ?b } }", "FROM NAMED WINDOW t:a ON <http://s/a> [RANGE 1m STEP 1m] "
                                    "FROM NAMED WINDOW t:b ON <http://s/a> [RANGE 2m STEP 1m]",
     "WINDOW ?w reads every named window, and a union of windows of different sizes is not supported"),
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
