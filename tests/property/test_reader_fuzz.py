"""Fuzzing the readers (issue 17): random and adversarial bytes, terms and
times never give a traceback or a hang in any event reader (JSON Lines,
CSV, Parquet, TriG) nor in the term check the ontology formats share; a
term and a time get one verdict in every format; and a bad record costs
only itself: the good records around it give exactly the events, and the
engine exactly the answers, of the stream without it.

A failure report shows the seed: replay it with CEP_SEED=<seed>.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import signal
from collections import Counter

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from cep import terms
from cep.engine import Engine
from cep.errors import OntologyError
from cep.events import EVENTS, events_of
from cep.io import check, read_file
from cep.rules import parse_rules
from tests.property.strategies import examples, multiset, note_seed, seeded

EX = "http://example.org/"
XSD = terms.XSD
T0 = terms.parse_datetime_ms("2026-01-01T00:00:00Z")
TRIG_PREFIXES = (f"@prefix : <{EX}> .\n@prefix prov: <http://www.w3.org/ns/prov#> .\n"
                 f"@prefix xsd: <{XSD}> .\n")
QUERIES = parse_rules(f"""PREFIX : <{EX}>
SELECT ?k ?a ?b WHERE {{ ?k :p ?a }} SEQ {{ ?k :p ?b }}
""", "<fuzz>")


def _settings(n):
    return settings(max_examples=examples(n), deadline=None, print_blob=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.function_scoped_fixture])


@contextlib.contextmanager
def no_hang(seconds=120):
    """A guard, not a speed claim: an example that runs for minutes fails."""
    def stop(signum, frame):
        raise AssertionError(f"no answer after {seconds} s: a hang")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


# ------------------------------------------------------------ strategies

ODD_TERMS = [
    "<a>", "<>", "<http://e.org/a b>", "<http://e.org/a\\u0020b>", "<http://e.org/\\u003E>", "<http://e.org/\\",
    "<http://e.org/a>b>", "_:", "_:a b", "_:-a", '"', '"a', '"a"b', '"\\"', '"\\ud800"', '"\\uDFFF"', '"\\U00110000"',
    '"\\U0010FFFF"', '"\\x41"', '"\\u12"', '"a"@', '"a"@1', '"a"@en-', '"a"^^', '"a"^^<>', '"a"^^<dt>', '"a"^^xsd:int',
    f'"1"^^<{XSD}integer>', f'"01"^^<{XSD}integer>', f'"x"^^<{XSD}integer>', f'"{"9" * 4001}"^^<{XSD}integer>',
    f'"1e999"^^<{XSD}double>', f'"NaN"^^<{XSD}double>', f'"-0.0"^^<{XSD}decimal>', f'"P1Y"^^<{XSD}duration>',
    f'"0.{"3" * 100}"^^<{XSD}decimal>', f'"{"7" * 3000}.{"1" * 999}"^^<{XSD}decimal>', f'"1e-400"^^<{XSD}double>',
    f'"P{"9" * 30}D"^^<{XSD}duration>', f'"0000-01-01T00:00:00Z"^^<{XSD}dateTime>',
    f'"{"9" * 40}-01-01T00:00:00Z"^^<{XSD}dateTime>', '"tab\there"', '"new\nline"', " <http://e.org/pad> ",
    "<http://e.org/\u00e9>", '"\u0000"', "<javascript:alert(1)>", "'x'", "x", "", " ", "null",
]
ODD_TIMES = [
    "0", "-0", "+5", "1767225600000", "253402300799999", "253402300800000", "-62135596800000", "-62135596800001",
    "9223372036854775807", "-9223372036854775808", "18446744073709551615", "1" * 25, "9" * 5000, "1e3", "1.5",
    "NaN", "inf", "2026-01-01T00:00:00Z", "2026-01-01T00:00:00", "2026-01-01T24:00:00Z", "2026-01-01T24:00:01Z",
    "2026-02-29T00:00:00Z", "2024-02-29T00:00:00Z", "9999-12-31T23:59:59.999Z", "9999-12-31T23:00:00-05:00",
    "0001-01-01T00:00:00+01:00", "0000-01-01T00:00:00Z", "-0001-01-01T00:00:00Z", "10000-01-01T00:00:00Z",
    "2026-01-01T00:00:00+14:00", "2026-01-01T00:00:00+14:01", "2026-01-01T00:00:00.123456789Z",
    f'"2026-01-01T00:00:00Z"^^<{XSD}dateTime>', '"2026-01-01T00:00:00Z"', "2026-1-1T0:0:0Z", "", " ", "yesterday",
]
PIECES = ["<", ">", '"', "\\", "\\u", "\\U", "_:", "@", "^^", " ", "\n", "\r", "\t", "\x00", "\x7f", "é", "\ufffd",
          "{", "}", ",", "'", '"""', ".", "#", "http://e.org/", "\u2028", "\U0001F600"]


def adversarial_text():
    """Text, with no lone surrogate (no file of text can hold one)."""
    alphabet = st.characters(blacklist_categories=("Cs",))
    return st.one_of(
        st.sampled_from(ODD_TERMS + ODD_TIMES),
        st.text(alphabet, max_size=12),
        st.lists(st.one_of(st.sampled_from(PIECES), st.text(alphabet, max_size=4)), max_size=6).map("".join),
    )


def good_term(slot):
    if slot == "p":
        return st.just(f"<{EX}p>")
    if slot == "s":
        return st.sampled_from([f"<{EX}k1>", f"<{EX}k2>", "_:b"])
    return st.sampled_from([f"<{EX}o1>", '"a"', f'"2"^^<{XSD}integer>', '"x"@en', f'"1.5"^^<{XSD}decimal>'])


@st.composite
def rows(draw, adversarial=True):
    """A row of s, p, o, t as text: each field good or (sometimes) odd."""
    row = {}
    for slot in ("s", "p", "o"):
        odd = adversarial and draw(st.integers(0, 3)) == 0
        row[slot] = draw(adversarial_text() if odd else good_term(slot))
    odd = adversarial and draw(st.integers(0, 3)) == 0
    row["t"] = draw(adversarial_text()) if odd else str(T0 + draw(st.integers(0, 5)) * 1000)
    return row


def jsonl_bytes(rs):
    return "".join(json.dumps(r) + "\n" for r in rs).encode()


def csv_bytes(rs):
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n", quoting=csv.QUOTE_ALL)  # a lone \r too
    writer.writerow(["s", "p", "o", "t"])
    writer.writerows([[r["s"], r["p"], r["o"], r["t"]] for r in rs])
    return buf.getvalue().encode()


def parquet_bytes(rs):
    sink = pa.BufferOutputStream()
    pq.write_table(pa.table({c: pa.array([r[c] for r in rs], pa.string()) for c in ("s", "p", "o", "t")}), sink)
    return sink.getvalue().to_pybytes()


def trig_bytes(rs):
    """A graph per row: its terms as the row has them, its time a literal."""
    out = [TRIG_PREFIXES]
    for k, r in enumerate(rs):
        digits = r["t"].strip().lstrip("-").isdigit() and len(r["t"].strip()) < 20
        time = terms.format_datetime_ms(int(r["t"])) if digits else r["t"]
        out.append(f":g{k} {{ {r['s']} {r['p']} {r['o']} }}\n"
                   f':g{k} prov:generatedAtTime "{time}"^^xsd:dateTime .\n')
    return "".join(out).encode()


WRITERS = {"jsonl": jsonl_bytes, "csv": csv_bytes, "parquet": parquet_bytes, "trig": trig_bytes}


def read(fmt, data, name="fuzz"):
    """The events and rejects of a file's bytes, each event checked as
    every reader must leave it: canonical terms that the check takes, in
    their places, a time in the range."""
    rejects = []
    with no_hang():
        table = read_file(f"{name}.{fmt}", rejects, data)
    assert table.schema == EVENTS
    events = events_of(table)
    for e in events:
        assert check.term(e.s, "s") == e.s and check.term(e.p, "p") == e.p and check.term(e.o, "o") == e.o, e
        assert check.TIME_MIN_MS <= e.start <= e.end <= check.TIME_MAX_MS, e
    for r in rejects:
        assert r.source.startswith(f"{name}.{fmt}") and r.reason, r
        r.reason.encode(), r.text.encode()  # a reject can be written anywhere: no lone surrogate
    return events, rejects


def occurrences(events):
    """The events as a multiset; a blank node as "_:" (a TriG file read in
    pieces scopes its labels per piece)."""
    return Counter(tuple("_:" if t.startswith("_:") else t for t in (e.s, e.p, e.o)) + (e.start, e.end)
                   for e in events)


def answers(events):
    engine = Engine(QUERIES)
    with no_hang():
        found = engine.push(sorted(events, key=lambda e: (e.end, e.start))) + engine.flush()
    return multiset(found)


# ------------------------------------------------------------------ tests


@seeded
@_settings(60)
@given(rs=st.lists(rows(), min_size=1, max_size=6))
def test_a_row_gets_one_verdict_in_every_table_format(rs):
    """The same rows, written as JSON Lines, CSV and Parquet (text cells),
    give the same events and reject the same rows."""
    note_seed()
    assume(all(any(v.strip() for v in r.values()) for r in rs))  # CSV skips a row of blanks
    csv_lines = [2]  # where each CSV row starts: a quoted field may hold line ends (\n, \r or both)
    for r in rs[:-1]:
        csv_lines.append(csv_lines[-1] + len(io.StringIO(csv_bytes([r]).decode(), newline="").readlines()) - 1)
    verdicts = {}
    for fmt, row_of in (("jsonl", lambda place: int(place) - 1),
                        ("csv", lambda place: csv_lines.index(int(place)) if int(place) in csv_lines else None),
                        ("parquet", lambda place: int(place.removeprefix("row ")) - 1)):
        events, rejects = read(fmt, WRITERS[fmt](rs))
        # (a refused CSV row of several lines has them read again as rows: their rejects are left out)
        places = sorted(i for i in (row_of(r.source.rsplit(":", 1)[1]) for r in rejects) if i is not None)
        verdicts[fmt] = (sorted((e.s, e.p, e.o, e.start, e.end) for e in events), places)
    assert verdicts["csv"] == verdicts["jsonl"]
    assert verdicts["parquet"] == verdicts["jsonl"]


@seeded
@_settings(40)
@given(rs=st.lists(rows(), min_size=1, max_size=4))
def test_a_trig_graph_gets_the_verdict_of_its_row(rs):
    """A row as a TriG graph is taken or refused as JSON Lines takes or
    refuses it, where TriG can hold the row's terms as they are."""
    note_seed()
    assume(all(r["t"].strip().lstrip("-").isdigit() and len(r["t"].strip()) < 16 for r in rs))
    assume(all(check.TIME_MIN_MS <= int(r["t"]) <= check.TIME_MAX_MS for r in rs))
    taken, _ = read("jsonl", jsonl_bytes(rs))
    graphs, _ = read("trig", trig_bytes(rs))
    # Turtle reads some texts N-Triples has not (a bare number, a prefixed
    # name): TriG may take more; a blank node gets the file's own label
    def shown(events):
        return {tuple("_:" if t.startswith("_:") else t for t in (e.s, e.p, e.o)) + (e.start,) for e in events}

    assert shown(taken) <= shown(graphs)


@st.composite
def mutated(draw, fmt):
    """A file of good records with bytes changed, inserted or removed."""
    data = bytearray(WRITERS[fmt](draw(st.lists(rows(adversarial=False), min_size=1, max_size=5))))
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(data)))
        junk = draw(st.one_of(st.binary(max_size=8), adversarial_text().map(str.encode),
                              st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b'"""', b"\x00", b"\r", b"{"])))
        cut = draw(st.integers(0, 6))
        data[at:at + cut] = junk
    return bytes(data)


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "trig", "parquet"])
@seeded
@_settings(60)
@given(data=st.data())
def test_any_bytes_are_read_without_a_traceback(fmt, data):
    note_seed()
    read(fmt, data.draw(mutated(fmt)))


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**40), 10**40) | st.floats() | st.text(max_size=8)
    | adversarial_text() | st.sampled_from(["\ud800", "a\udfff", "\udc80"]),  # lone surrogates, as JSON escapes them
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=6)


@seeded
@_settings(100)
@given(rs=st.lists(st.fixed_dictionaries({}, optional={k: json_values for k in ("s", "p", "o", "t", "t_end",
                                                                                "stream")}), max_size=4),
       raw=st.sampled_from(["", "[" * 100_000, "{" * 50_000, '{"t": ' + "9" * 5000 + "}", "1e400", "NaN", "\x00"]))
def test_json_values_of_any_type_are_read_without_a_traceback(rs, raw):
    note_seed()
    read("jsonl", ("".join(json.dumps(r) + "\n" for r in rs) + raw + "\n").encode())


BAD_VALUES = ["<a>", "<http://e.org/a b>", "<http://e.org/\\u0020>", '"\\ud800"', '"a', "_:", '"x"^^<dt>', "\x00",
              "9" * 30, "0000-01-01T00:00:00Z", "9999-12-31T24:00:00Z", "18446744073709551615", '"""', "\\"]


@st.composite
def bad_rows(draw):
    """A row that no reader takes: a good row with a field made bad."""
    row = draw(rows(adversarial=False))
    slot = draw(st.sampled_from(["s", "p", "o", "t"]))
    row[slot] = draw(st.sampled_from(BAD_VALUES)) + draw(st.sampled_from(["", " ", "x", "\n", '"', ",", "\\"]))
    return row


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "trig", "parquet"])
@seeded
@_settings(40)
@given(good=st.lists(rows(adversarial=False), min_size=1, max_size=6), bad=st.lists(bad_rows(), min_size=1,
                                                                                     max_size=2), data=st.data())
def test_a_bad_record_costs_only_itself(fmt, good, bad, data):
    """Good rows with bad ones among them give the events, and the engine
    the answers, of the good rows alone."""
    note_seed()
    mixed = list(good)
    for b in bad:
        mixed.insert(data.draw(st.integers(0, len(mixed))), b)
    alone, _ = read(fmt, WRITERS[fmt](bad))
    assume(not alone)  # a field made bad may still be a row Turtle takes (a TriG graph of a prefixed name)
    without, _ = read(fmt, WRITERS[fmt](good))
    with_bad, rejects = read(fmt, WRITERS[fmt](mixed))
    assert rejects
    assert occurrences(with_bad) == occurrences(without)
    if not any(e.s.startswith("_:") for e in without):  # labels differ: the answers' bindings too
        assert answers(with_bad) == answers(without)


def damaged(data, fmt, junk):
    """Good rows in a file of `fmt`, one of them with `junk` put inside its
    text: (the file's bytes, the rows left whole)."""
    good = data.draw(st.lists(rows(adversarial=False), min_size=2, max_size=6))
    k = data.draw(st.integers(0, len(good) - 1))
    text = WRITERS[fmt](good)
    record = WRITERS[fmt]([good[k]])
    if fmt == "csv":
        record = record.split(b"\n", 1)[1]
    elif fmt == "trig":
        record = record[len(TRIG_PREFIXES):].replace(b":g0", f":g{k}".encode())
    at = text.index(record) + data.draw(st.integers(1, len(record.rstrip(b"\n")) - 1))
    return text[:at] + data.draw(st.sampled_from(junk)) + text[at:], [r for i, r in enumerate(good) if i != k]


@seeded
@_settings(40)
@given(data=st.data())
def test_bytes_that_are_not_utf8_cost_only_their_record(data):
    """An undecodable byte inside a good record of a text format costs that
    record: the others are read as they are."""
    note_seed()
    fmt = data.draw(st.sampled_from(["jsonl", "csv", "trig"]))
    text, kept = damaged(data, fmt, [b"\xff", b"\xc3(", b"\xed\xa0\x80"])
    events, rejects = read(fmt, text)
    # one reject; in TriG a second when the byte spoils a graph's time (the graph has none then)
    assert "not UTF-8" in rejects[0].reason and len(rejects) <= (2 if fmt == "trig" else 1)
    assert occurrences(events) == occurrences(read(fmt, WRITERS[fmt](kept))[0])


QUOTES = {"jsonl": [b'"'], "csv": [b'"'], "trig": [b'"', b"'", b'"' * 3, b"'" * 3]}


@seeded
@_settings(60)
@given(data=st.data())
def test_a_stray_quote_costs_only_its_record(data):
    """A quote that opens a string (or a quoted CSV field) and never closes
    it costs its record, not the records after it."""
    note_seed()
    fmt = data.draw(st.sampled_from(["jsonl", "csv", "trig"]))
    text, kept = damaged(data, fmt, QUOTES[fmt])
    events, _ = read(fmt, text)
    assert occurrences(events) >= occurrences(read(fmt, WRITERS[fmt](kept))[0])


@seeded
@_settings(300)
@given(text=adversarial_text())
def test_the_term_check_refuses_with_a_reason_or_gives_a_canonical_term(text):
    """cep.terms.checked, the check of every reader and background file:
    a TermError, or a term it takes again unchanged."""
    try:
        term = terms.checked(text)
    except terms.TermError as exc:
        assert str(exc)
        return
    assert terms.checked(term) == term


@pytest.mark.parametrize("suffix", [".nt", ".obo"])
@seeded
@_settings(60)
@given(data=st.data())
def test_an_ontology_file_is_read_or_refused_with_its_place(tmp_path, suffix, data):
    from cep.background.load import read_ontology

    note_seed()
    if suffix == ".nt":
        lines = [f"{data.draw(good_term('s').filter(lambda t: not t.startswith('_')))} <{EX}p> "
                 f"{data.draw(st.one_of(good_term('o'), adversarial_text()))} ."
                 for _ in range(data.draw(st.integers(1, 4)))]
    else:
        lines = ["format-version: 1.2", "", "[Term]", f"id: {data.draw(st.one_of(st.just('GO:1'), adversarial_text()))}",
                 f"name: {data.draw(adversarial_text())}", f"is_a: {data.draw(adversarial_text())}"]
    path = tmp_path / f"fuzz{suffix}"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    try:
        with no_hang():
            triples = read_ontology(path)
    except OntologyError as exc:
        assert str(exc).startswith(str(path))
        return
    for triple in triples:  # N-Triples terms, their IRIs as every reader takes them
        for t in triple:
            parts = terms.split(t)
            assert parts[0] != "iri" or terms.absolute_iri(parts[1]) == t, triple
