"""What flows into and out of the engine: timestamped triple occurrences and
answers. Terms are canonical N-Triples text (cep.terms); times are integer
epoch milliseconds (UTC).

Between the stages they travel as Arrow tables: the readers give an events
table (EVENTS), the engine takes it (Engine.push_table) and gives answer
tables (ANSWERS), which the writers write, on both engines. Event and
Answer are the same rows as objects, for tests and small programs
(events_table, events_of, answers_table, answers_of).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import NamedTuple

import pyarrow as pa

# stream: the IRI of the event's stream (<...>), null for none; source: its
# place in the input ("file:line"), for reports
EVENTS = pa.schema([("s", pa.string()), ("p", pa.string()), ("o", pa.string()),
                    ("start", pa.int64()), ("end", pa.int64()), ("source", pa.string()),
                    ("stream", pa.string())])
# bindings: SELECT's variable -> term (unbound variables left out);
# triples: CONSTRUCT's instantiated template, in template order; an ASK
# answer has neither (both null): it says "true" for its evaluation
TRIPLE = pa.struct([("s", pa.string()), ("p", pa.string()), ("o", pa.string())])
ANSWERS = pa.schema([("query", pa.string()), ("start", pa.int64()), ("end", pa.int64()),
                     ("bindings", pa.map_(pa.string(), pa.string())), ("triples", pa.list_(TRIPLE))])
# The answer rows a data engineer reads, one schema on both engines:
# cep.spark.detect's DataFrame (and the Spark engine's Parquet files) and
# the Parquet file of `cep run --format parquet` (docs/io.md, "One answer
# schema"): ANSWERS with times as UTC timestamps, kind "answer", and the
# columns of a late or rejected record (kind "late", "reject"): the event's
# s, p, o, its place (source), why (reason) and the record (text)
ANSWER_ROWS = pa.schema([("kind", pa.string()), ("query", pa.string()),
                         ("bindings", ANSWERS.field("bindings").type),
                         ("triples", pa.list_(pa.field("element", TRIPLE))),  # Parquet's (and Spark's) name
                         ("start", pa.timestamp("us", tz="UTC")), ("end", pa.timestamp("us", tz="UTC")),
                         *((name, pa.string()) for name in ("s", "p", "o", "source", "reason", "text"))])


@dataclass(frozen=True)
class Event:
    """A triple occurrence <<s, p, o>, start, end> of the paper (section 4.2)."""

    s: str
    p: str
    o: str
    start: int
    end: int
    source: str = field(default="", compare=False)  # "file:line", for reports
    # the IRI of the event's stream (N-Triples text, "<...>"); "": none, an
    # event of every stream. Two occurrences of one triple at one time in
    # two streams are two occurrences.
    stream: str = ""


class Answer(NamedTuple):
    """One answer of one query: a solution's projected binding (SELECT) or
    its instantiated template (CONSTRUCT), with the solution's interval.
    (A NamedTuple: runs make hundreds of thousands of these.)"""

    query: str
    start: int
    end: int
    bindings: tuple = ()  # SELECT: ((var name, N-Triples term), ...) sorted by name
    triples: tuple = ()  # CONSTRUCT: ((s, p, o), ...) in template order
    boolean: bool | None = None  # ASK: True (an evaluation without a solution gives no answer)

    def binding(self, var: str):
        return dict(self.bindings).get(var)


@dataclass(frozen=True)
class Reject:
    """An input record that could not be read; the stream goes on without it."""

    source: str  # "file:line" (or "file:graph <iri>")
    reason: str
    text: str = ""

    def __post_init__(self):
        # a record that is not UTF-8 is shown with U+FFFD where its bytes
        # were, so that a reject can be written anywhere (a file, Arrow)
        for name in ("source", "reason", "text"):
            value = getattr(self, name)
            if isinstance(value, str) and SURROGATE.search(value):
                object.__setattr__(self, name, SURROGATE.sub("\ufffd", value))


SURROGATE = re.compile("[\ud800-\udfff]")  # a lone one: Python text that is no Unicode text


def events_table(events) -> pa.Table:
    """Events as an events table (EVENTS)."""
    events = list(events)
    return pa.table({
        "s": [e.s for e in events], "p": [e.p for e in events], "o": [e.o for e in events],
        "start": [e.start for e in events], "end": [e.end for e in events],
        "source": [e.source for e in events], "stream": [e.stream or None for e in events],
    }, schema=EVENTS)


class EventRows:
    """An events table built row by row (the readers of text formats)."""

    def __init__(self):
        self.columns = {name: [] for name in EVENTS.names}

    def add(self, s: str, p: str, o: str, start: int, end: int, source: str, stream: str = "") -> None:
        for name, value in zip(EVENTS.names, (s, p, o, start, end, source, stream or None)):
            self.columns[name].append(value)

    def table(self) -> pa.Table:
        return pa.table(self.columns, schema=EVENTS)


def events_of(table: pa.Table) -> list[Event]:
    """An events table's rows as Events."""
    return [Event(r["s"], r["p"], r["o"], r["start"], r["end"], r["source"] or "", r["stream"] or "")
            for r in table.select(EVENTS.names).to_pylist()]


def answers_table(answers) -> pa.Table:
    """Answers as an answer table (ANSWERS)."""
    answers = list(answers)
    return pa.table({
        "query": [a.query for a in answers], "start": [a.start for a in answers], "end": [a.end for a in answers],
        "bindings": [None if a.triples or a.boolean is not None else list(a.bindings) for a in answers],
        "triples": [[{"s": s, "p": p, "o": o} for s, p, o in a.triples] if a.triples else None for a in answers],
    }, schema=ANSWERS)


def late_rejects(table: pa.Table, bound_ms: int, why: str) -> list[Reject]:
    """The events of `table` (EVENTS columns) refused as late: each ends
    before `bound_ms`, the time `why` names."""
    from cep.terms import format_datetime_ms

    return [Reject(row["source"] or "",
                   f"late: ends at {format_datetime_ms(row['end'])}, before {format_datetime_ms(bound_ms)}, {why}",
                   f"{row['s']} {row['p']} {row['o']}")
            for row in table.to_pylist()]


def answers_of(table: pa.Table) -> list[Answer]:
    """An answer table's rows (ANSWERS) as Answers."""
    return [Answer(r["query"], r["start"], r["end"],
                   bindings=tuple(sorted(r["bindings"] or ())),
                   triples=tuple((t["s"], t["p"], t["o"]) for t in r["triples"] or ()),
                   boolean=True if r["bindings"] is None and r["triples"] is None else None)
            for r in table.to_pylist()]


def answer_rows(answers: pa.Table) -> pa.Table:
    """An answer table (ANSWERS) as answer rows (ANSWER_ROWS)."""
    n = answers.num_rows
    columns = {"kind": pa.array(["answer"] * n, pa.string())}
    for field in ANSWER_ROWS:
        if field.name in ("start", "end"):
            columns[field.name] = answers[field.name].cast(pa.timestamp("ms", tz="UTC")).cast(field.type)
        elif field.name in ANSWERS.names:
            columns[field.name] = answers[field.name].cast(field.type)
        elif field.name != "kind":
            columns[field.name] = pa.nulls(n, field.type)
    return pa.table(columns, schema=ANSWER_ROWS)


def one_array(column) -> pa.Array:
    """A column as one array: a chunked array's only chunk as it is
    (combine_chunks copies even that), or its chunks combined."""
    if isinstance(column, pa.ChunkedArray):
        return column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()
    return column


INTEGER_SUFFIX = '"^^<http://www.w3.org/2001/XMLSchema#integer>'


def integer_literals(column: pa.Array) -> tuple[pa.Array, pa.Array]:
    """Which terms of a column are xsd:integer literals in canonical form
    ("digits"^^xsd:integer, no leading zero, optionally signed with -;
    "01" and "-0" are other terms), told by Arrow's string kernels, and
    each term's text between the quotes (its digits where it is one)."""
    import pyarrow.compute as pc

    body = pc.utf8_slice_codeunits(column, 1, -len(INTEGER_SUFFIX))
    digits = pc.if_else(pc.starts_with(body, "-"), pc.utf8_slice_codeunits(body, 1), body)
    canonical = pc.or_(pc.invert(pc.starts_with(digits, "0")), pc.equal(body, "0"))
    typed = pc.and_(pc.starts_with(column, '"'), pc.ends_with(column, INTEGER_SUFFIX))
    return pc.and_(typed, pc.and_(pc.ascii_is_decimal(digits), canonical)), body


SAMPLE_ROWS = 4096  # rows of a column of terms looked at before it is dictionary-encoded whole


def repeating(column, share: int = 2):
    """A column of terms dictionary-encoded, when at most 1/`share` of its
    values are distinct, so that what is done to each term is done once
    per distinct term; else None. SAMPLE_ROWS values spread over it are
    looked at first: when more than 1/`share` of them are distinct (a
    number in every event), it is not encoded, as encoding a column of
    mostly distinct terms costs more than the work it would spare."""
    import numpy as np
    import pyarrow.compute as pc

    column = one_array(column)
    n = len(column)
    if n <= 64:
        return None
    if n > SAMPLE_ROWS:
        sample = column.take(pa.array(np.linspace(0, n - 1, SAMPLE_ROWS).astype(np.int64)))
        if len(pc.unique(sample)) * share > SAMPLE_ROWS:
            return None
    encoded = pc.dictionary_encode(column)
    return encoded if len(encoded.dictionary) * share <= n else None
