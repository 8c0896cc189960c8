"""The TriG reader streams (cep.io.trig): a file is read a window of
top-level statements at a time, and what it gives does not depend on
where the windows are cut, nor on how the bytes arrive; a block whose
braces, quotes or comments would fool a naive splitter is cut whole."""

from __future__ import annotations

import re

import pyarrow as pa
import pytest

from cep import terms
from cep.events import EVENTS, events_of
from cep.io import trig
from cep.io.event_time import FAR
from cep.io.readers import Input

EX = "http://example.org/"
T0 = terms.parse_datetime_ms("2026-01-01T00:00:00Z")

# Every statement a splitter could cut wrongly, a malformed block, prefixes
# declared late, and both forms of time (with each graph's time in its own
# statement, next to its block, as a stream has it).
DOCUMENT = """\ufeff@prefix : <http://example.org/> .
@prefix prov: <http://www.w3.org/ns/prov#> .
PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>
# a comment with a brace { and a "quote
:g1 { :a :label "a } and a # in a string" }
:g1 prov:generatedAtTime "2026-01-01T00:00:01Z"^^xsd:dateTime .
:g2 { :a :note \"\"\"a long string
over lines, with } and { and # and a dot .
:g9 { :not :a :graph }
\"\"\" . :a :label 'it\\'s } ' }   # a comment after a block {
:g2 prov:generatedAtTime "2026-01-01T00:00:02Z"^^xsd:dateTime .
:g3 { :a :b 3 ;;; , }
:g3 prov:generatedAtTime "2026-01-01T00:00:03Z"^^xsd:dateTime .
@prefix late: <http://example.org/late/> .
late:g4 { late:a :b "é4" }
late:g4 prov:startedAtTime "2026-01-01T00:00:04Z"^^xsd:dateTime ;
        prov:endedAtTime "2026-01-01T00:00:05Z"^^xsd:dateTime .
:g5 prov:generatedAtTime "2026-01-01T00:00:06Z"^^xsd:dateTime .
GRAPH :g5 { :a :b :c . :a :label '''a
long } string''' }
:g6 { :a :b 6 }
:g6 prov:generatedAtTime "2026-01-01T00:00:07Z"^^xsd:dateTime .
"""


def read(path, statements: int, step: int | None = None):
    """The events (sorted) and rejects of a TriG file read in windows of
    `statements` statements; `step`: the bytes the stream gives at a time."""

    class Trickle:  # a stream that gives at most `step` bytes a read (read1)
        def __init__(self, data):
            self.data, self.at = data, 0

        def read1(self, n):
            chunk = self.data[self.at:self.at + min(n, step or n)]
            self.at += len(chunk)
            return chunk

    rejects = []
    tables = list(trig.trig_batches(Trickle(path.read_bytes()), Input(str(path), "trig"), rejects, statements))
    assert all(t.schema == EVENTS and t.num_rows <= statements for t in tables)
    events = pa.concat_tables(tables) if tables else EVENTS.empty_table()
    return sorted(events_of(events), key=repr), [(r.source, r.reason) for r in rejects]


@pytest.fixture
def document(tmp_path):
    path = tmp_path / "s.trig"
    path.write_text(DOCUMENT, encoding="utf-8")
    return path


def test_a_document_read_whole(document):
    events, rejects = read(document, 10_000)
    assert sorted({int(e.source.rsplit(":", 1)[1]) for e in events}) == [5, 7, 15, 19, 21]  # g1 g2 g4 g5 g6
    assert len(events) == 7
    assert f'"a }} and a # in a string"' in {e.o for e in events}
    assert any("with } and { and # and a dot .\\n:g9" in e.o for e in events)  # one string, not a graph
    assert '"it\'s } "' in {e.o for e in events}
    assert [(e.start, e.end) for e in events if e.s == f"<{EX}late/a>"] == [(T0 + 4000, T0 + 5000)]
    assert [source for source, _ in rejects] == [f"{document}:12"]  # g3's block, and nothing else
    assert rejects[0][1].startswith("TriG syntax error:")


@pytest.mark.parametrize("statements, step", [(1, None), (2, 7), (3, 1), (5, 64), (10_000, 5)])
def test_the_windows_and_the_reads_do_not_change_what_is_read(document, statements, step):
    assert read(document, statements, step) == read(document, 10_000)


def test_the_first_events_come_before_the_file_is_read(tmp_path, monkeypatch):
    monkeypatch.setattr(trig, "WINDOW_CHARS", 256)
    lines = ["@prefix : <http://example.org/> .", "@prefix prov: <http://www.w3.org/ns/prov#> ."]
    for i in range(2000):
        lines += [f':g{i} {{ :a :b {i} }}', f':g{i} prov:generatedAtTime "2026-01-01T00:00:00Z"^^'
                                            "<http://www.w3.org/2001/XMLSchema#dateTime> ."]
    data = "\n".join(lines).encode()

    class Counted:
        def __init__(self):
            self.at = 0

        def read1(self, n):
            self.at += min(n, 4096)
            return data[self.at - min(n, 4096):self.at]

    stream, rejects = Counted(), []
    batches = trig.trig_batches(stream, Input("s.trig", "trig"), rejects, 100)
    first = next(batches)
    assert first.num_rows == 100 and stream.at < len(data) // 4  # windows of 100 statements: ~50 graphs
    assert [t.num_rows for t in batches] == [100] * 19 and rejects == []


def test_a_time_is_looked_for_in_its_window_and_the_next(tmp_path):
    time = '"2026-01-0{}T00:00:00Z"^^<http://www.w3.org/2001/XMLSchema#dateTime>'
    path = tmp_path / "far.trig"
    path.write_text("@prefix : <http://example.org/> .\n@prefix prov: <http://www.w3.org/ns/prov#> .\n"
                    ":g1 { :a :b 1 }\n:x :y 1 .\n"
                    f":g2 {{ :a :b 2 }}\n:g2 prov:generatedAtTime {time.format(1)} .\n"
                    f":g3 {{ :a :b 3 }}\n:g2 prov:generatedAtTime {time.format(2)} .\n"
                    f":g3 prov:generatedAtTime {time.format(1)} .\n"
                    f":g4 {{ :a :b 4 }}\n:g1 prov:generatedAtTime {time.format(1)} .\n")
    integer = '"{}"^^<http://www.w3.org/2001/XMLSchema#integer>'
    no_time = ("graph <{0}{1}> has no timestamp: add `<{0}{1}> prov:generatedAtTime "
               '"2026-01-01T00:00:00Z"^^xsd:dateTime .` (or prov:startedAtTime and prov:endedAtTime) to the '
               "default graph")
    skipped = ("1 triple(s) of the default graph skipped: only the triples of timestamped named graphs are "
               "events (the default graph holds their timestamps)")
    events, rejects = read(path, 10_000)  # one window: the file is read as a whole
    assert [e.o for e in events] == [integer.format(1), integer.format(3)]
    assert rejects == [(f"{path}:5", f"graph <{EX}g2> has 2 different prov:generatedAtTime values; give exactly one"),
                       (f"{path}:10", no_time.format(EX, "g4")), (str(path), skipped)]
    # windows of a block each (and what follows it): g1's time comes two windows after its
    # block; g2 is read with its time, in its block's window, before the second one comes
    events, rejects = read(path, 1)
    assert [e.o for e in events] == [integer.format(2), integer.format(3)]
    assert rejects == [(f"{path}:3", no_time.format(EX, "g1") + FAR),
                       (f"{path}:graph <{EX}g2>", f"graph <{EX}g2> has its time already; this "
                                                  "prov:generatedAtTime is skipped"),
                       (f"{path}:10", no_time.format(EX, "g4")), (str(path), skipped)]


def test_an_interval_may_end_in_the_window_after_its_start(tmp_path):
    time = '"2026-01-01T00:00:0{}Z"^^<http://www.w3.org/2001/XMLSchema#dateTime>'
    path = tmp_path / "half.trig"
    path.write_text("@prefix : <http://example.org/> .\n@prefix prov: <http://www.w3.org/ns/prov#> .\n"
                    f":g1 {{ :a :b 1 }}\n:g1 prov:startedAtTime {time.format(1)} .\n"
                    f":g2 {{ :a :b 2 }}\n:g1 prov:endedAtTime {time.format(3)} .\n"
                    f":g2 prov:generatedAtTime {time.format(2)} .\n")
    for statements in (1, 10_000):
        events, rejects = read(path, statements)
        assert sorted((e.o[1], e.start - T0, e.end - T0) for e in events) == [("1", 1000, 3000), ("2", 2000, 2000)]
        assert rejects == []


def test_a_blank_node_label_names_one_node_in_the_whole_file(tmp_path):
    time = '"2026-01-01T00:00:0{}Z"^^<http://www.w3.org/2001/XMLSchema#dateTime>'
    text = ("@prefix : <http://example.org/> .\n@prefix prov: <http://www.w3.org/ns/prov#> .\n"
            f':g1 {{ _:b :p "_:b" ; :q [ :r _:b ] }}\n:g1 prov:generatedAtTime {time.format(1)} .\n'
            f":g2 {{ :a :p (_:b), _:b.c , _:é }} # _:b\n:g2 prov:generatedAtTime {time.format(2)} .\n"
            f"_:g {{ _:b :p 3 }}\n_:g prov:generatedAtTime {time.format(3)} .\n")
    path, other = tmp_path / "one.trig", tmp_path / "two.trig"
    path.write_text(text, encoding="utf-8")
    other.write_text(text, encoding="utf-8")
    whole, rejects = read(path, 10_000)
    assert rejects == [] and len(whole) == 9
    for statements in (1, 2):  # a block (and its time) a window: labelled nodes as in one window
        assert anonymous_as_one(read(path, statements)[0]) == anonymous_as_one(whole)

    b = {e.s for e in whole if e.p == f"<{EX}p>" and e.o in ('"_:b"', terms.literal("3", terms.XSD_INTEGER))}
    assert len(b) == 1 and next(iter(b)).startswith("_:")  # g1's and the blank graph's
    (label,) = b
    assert {e.o for e in whole if e.p == f"<{EX}r>"} == b  # in an anonymous node's
    assert {e.o for e in whole if e.p == f"<{terms.RDF}first>"} == b  # in a list, in another window
    assert '"_:b"' in {e.o for e in whole}  # a string's "_:b" is a string
    objects = {e.o for e in whole if e.p == f"<{EX}p>" and e.s == f"<{EX}a>"}
    assert len(objects) == 3 and label not in objects  # the list, _:b.c, _:é
    anonymous = [e.o for e in whole if e.p == f"<{EX}q>"]
    assert len(anonymous) == 1 and anonymous[0] not in b
    assert label not in {e.s for e in read(other, 1)[0]}  # another file's _:b is another node


def anonymous_as_one(events):
    """The events with every anonymous blank node ([], a list's cells) as one
    label: theirs depend on the window they are parsed in."""

    def one(term):
        return re.sub(r"\A_:t[0-9a-f]{8}(?:w[0-9]+)?_[0-9]+_[A-Za-z0-9_]+\Z", "_:anonymous", term)

    return sorted((one(e.s), e.p, one(e.o), e.start, e.end, e.source) for e in events)


def test_a_label_is_only_read_where_a_term_starts(tmp_path):
    time = ':{} prov:generatedAtTime "2026-01-01T00:00:01Z"^^<http://www.w3.org/2001/XMLSchema#dateTime> .\n'
    path = tmp_path / "l.trig"
    path.write_text("@prefix : <http://example.org/> .\n@prefix prov: <http://www.w3.org/ns/prov#> .\n"
                    ':g1 { :a :p "x"^^_:d }\n' + time.format("g1") +
                    ":g2 { :a_:b :p :c_:d }\n" + time.format("g2"))
    events, rejects = read(path, 1)
    assert [(e.s, e.o) for e in events] == [(f"<{EX}a_:b>", f"<{EX}c_:d>")]  # prefixed names
    assert rejects == [(f"{path}:3", 'TriG syntax error: a blank node is not a datatype ("x"^^_:d); '
                                     "this statement is skipped")]
