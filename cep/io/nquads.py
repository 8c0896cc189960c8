"""N-Quads and N-Triples streams: the line-based forms of the TriG layout.

Takes a .nq or .nt input, one triple (or quad) per line; gives events
tables (cep.events.EVENTS) in chunks of lines, and a Reject (file:line)
for every line it cannot use. Times are given as in TriG (cep.io.trig),
by triples about the event:

  N-Quads    a named graph is an event: the triples of graph G occur at the
             time the default graph gives G,
               <http://ex.org/tick1> <http://ex.org/price> "100" <http://ex.org/tick1> .
               <http://ex.org/tick1> <http://www.w3.org/ns/prov#generatedAtTime>
                   "2026-01-05T10:00:00Z"^^<http://www.w3.org/2001/XMLSchema#dateTime> .
             (as `cep run --format nq` writes CONSTRUCT answers). Other
             default-graph triples are metadata: reported in one Reject.
  N-Triples  a subject is an event: the triples of subject S occur at the
             time of S's own prov:generatedAtTime (or prov:startedAtTime and
             prov:endedAtTime) triple, which is not itself an event.

An event is one record, as a TriG graph is (docs/io.md, "Inputs"): its
rows share a source, the place of the time line that timed it, so a line
given twice in one event is one triple of it (cep.engine._records), and
the same triple at the same time in two graphs is two events.

The time is prov:generatedAtTime T (an instant) or prov:startedAtTime T1
with prov:endedAtTime T2 (an interval), xsd:dateTime literals, or the
predicates named instead (cep.io.event_time, whose rules and timing stage
TriG shares: a chunk is its unit). The
time lines may come before or after the event's triples, but within one
chunk of lines of them (the batch size, --batch-size lines): an event whose
time has not come by the end of the next chunk is rejected (so memory is
bounded by the chunk, not by the file). The time lines of an event in one
chunk are read together, as TriG reads a file's: two different values of
one predicate, an instant and an interval, a time that is not an
xsd:dateTime or an interval that ends before it starts cost the event's
triples (each a Reject). A time line that comes in a later chunk, once the
event's time is decided, is a Reject of its line (its events may be gone
already), unless it repeats a value given.

Lines are parsed column-wise (pyarrow.compute regular expressions, one per
chunk); terms go through the check of every reader (cep.io.check), and
blank node labels are scoped to the file (two files never share one), as
in TriG.
"""

from __future__ import annotations

import re
from functools import partial

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from cep.events import EVENTS, Reject
from cep.io import event_time
from cep.io.lines import line_chunks
from cep.io.tables import term_column
from cep.io.trig import BLANK_NODE, file_tag, label_text

_IRI = r'<[^<>"\x00-\x20]*>'
_BNODE = r'_:[^\s<>".]+(?:\.+[^\s<>".]+)*'
_LITERAL = r'"(?:[^"\\]|\\.)*"(?:@[A-Za-z]+(?:-[A-Za-z0-9]+)*|\^\^' + _IRI + ")?"
_WS = r"[ \t]*"
_END = _WS + r"\." + _WS + r"(?:#.*)?$"
_TRIPLE = (r"^" + _WS + r"(?P<s>" + _IRI + "|" + _BNODE + ")" + _WS + r"(?P<p>" + _IRI + ")" + _WS
           + r"(?P<o>" + _IRI + "|" + _BNODE + "|" + _LITERAL + ")" + _WS)
LINE = {"nt": _TRIPLE + _END, "nq": _TRIPLE + r"(?P<g>" + _IRI + "|" + _BNODE + ")?" + _END}
_NOTHING = r"^" + _WS + r"(?:#.*)?$"  # a blank line or a comment
_NAMES = {"nt": "N-Triples", "nq": "N-Quads"}


def nquads_batches(handle, source, rejects: list, rows: int):
    """The events of an N-Quads input (an open binary stream)."""
    return _batches(handle, source, rejects, rows, "nq")


def ntriples_batches(handle, source, rejects: list, rows: int):
    """The events of an N-Triples input (an open binary stream)."""
    return _batches(handle, source, rejects, rows, "nt")


def _batches(handle, source, rejects, rows, fmt):
    name = source.name
    timing = event_time.Timing(rejects, source.times, "graph" if fmt == "nq" else "subject")
    make = partial(_events, rejects)
    tag = file_tag(source.path)
    metadata, first = 0, None  # N-Quads: default-graph triples that are not times, the first of them
    for chunk in line_chunks(handle, name, rejects, rows, universal=True):
        quads = _parse(chunk, name, rejects, fmt, tag)
        is_time = pc.is_in(quads["p"], pa.array(source.times.all, pa.string()))
        if fmt == "nq":
            default = pc.equal(quads["g"], "")
            is_time = pc.and_(is_time, default)
            other = pc.and_(default, pc.invert(is_time))
            if pc.any(other).as_py():
                metadata += pc.sum(other).as_py()
                first = first or quads.filter(other).slice(0, 1).to_pylist()[0]
            events = quads.filter(pc.invert(pc.or_(is_time, default)))
            key = events["g"]
        else:
            events = quads.filter(pc.invert(is_time))
            key = events["s"]
        time = quads.filter(is_time)
        timing.take(zip(*(time[c].to_pylist() for c in ("s", "p", "o", "source"))))
        yield from timing.settle(events.append_column("key", key), make, last=False)
    yield from timing.settle(None, make, last=True)
    if metadata:
        rejects.append(Reject(name, f"{metadata} triple(s) of the default graph skipped: only "
                                    "the triples of named graphs are events (the default graph holds their "
                                    "timestamps)", f"{first['s']} {first['p']} {first['o']} ."))


def _parse(chunk, name, rejects, fmt, tag) -> pa.Table:
    """The well-formed quads of a chunk of lines: columns s, p, o, g ("" in
    the default graph) in canonical N-Triples text, and source."""
    numbers, texts = [], []
    for number, raw in chunk:
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            rejects.append(Reject(f"{name}:{number}", "not UTF-8 text", raw.decode("utf-8", "replace")))
            continue
        numbers.append(number)
        texts.append(text.lstrip("\ufeff") if number == 1 else text)
    lines = pa.array(texts, pa.string())
    found = pc.extract_regex(lines, LINE[fmt])
    parsed = pc.is_valid(found)
    blank = pc.match_substring_regex(lines, _NOTHING)
    bad = np.nonzero(~np.asarray(pc.or_(parsed, blank).to_numpy(zero_copy_only=False), dtype=bool))[0]
    for i in bad:
        rejects.append(Reject(f"{name}:{numbers[i]}", f"{_NAMES[fmt]} syntax error: {_syntax(texts[i], fmt)}",
                              texts[i]))
    keep = pc.and_(parsed, pc.invert(blank))
    found = found.filter(keep)
    lines = lines.filter(keep)
    where = pa.array(numbers, pa.int64()).filter(keep)
    reasons: dict[int, str] = {}

    def note(rows, reason):
        for i in rows:
            reasons.setdefault(int(i), reason)

    labels = {"s": "the subject", "p": "the predicate", "o": "the object"}
    cols = {c: term_column(_scoped(pc.struct_field(found, c), tag), c, note, labels[c]) for c in "spo"}
    if fmt == "nq":
        graph = pc.struct_field(found, "g")
        named = pc.not_equal(graph, "")
        checked = term_column(pc.if_else(named, _scoped(graph, tag), "<urn:x>"), "s", note, "the graph name")
        cols["g"] = pc.if_else(named, checked, "")
    else:
        cols["g"] = pa.nulls(len(found), pa.string())
    cols["source"] = pc.binary_join_element_wise(f"{name}:", pc.cast(where, pa.string()), "")
    table = pa.table(cols)
    if reasons:
        texts = lines.to_pylist()
        sources = cols["source"].to_pylist()
        for i in sorted(reasons):
            rejects.append(Reject(sources[i], reasons[i], texts[i]))
        mask = np.ones(len(table), dtype=bool)
        mask[list(reasons)] = False
        table = table.filter(pa.array(mask))
    return table


def _scoped(column, tag):
    """Blank node labels made the file's own (as cep.io.trig does), before
    the check of terms: a label of the characters the engine's labels
    take (ASCII letters, digits, "_", "-", ".") is kept after the file's
    tag; another that the grammar allows (_:café) is written in those
    characters as cep.io.trig writes it, after a "-" no label can start
    with (so it never meets one of the former); the rest stays as it is,
    for the check to refuse."""
    other = pc.and_(pc.starts_with(column, "_:"), pc.invert(pc.match_substring_regex(column, _ENGINE_LABEL)))
    column = pc.replace_substring_regex(column, _ENGINE_LABEL, f"_:n{tag}_\\1")
    if not pc.any(other).as_py():
        return column
    return pa.array([f"_:n{tag}_-{label_text(t[2:])}" if o and BLANK_NODE.fullmatch(t) else t
                     for t, o in zip(column.to_pylist(), other.to_pylist())], pa.string())


_ENGINE_LABEL = r"^_:([A-Za-z0-9_][A-Za-z0-9_.\-]*)$"  # cep.terms's blank node


_TOKEN = re.compile(r"\s*(?:(" + _IRI + ")|(" + _BNODE + ")|(" + _LITERAL + "))")


def _syntax(text: str, fmt: str) -> str:
    """What is wrong with a line that is not a triple (quad), in words."""
    slots = ["the subject (an IRI or a blank node)", "the predicate (an IRI)",
             "the object (an IRI, a blank node or a literal)"]
    if fmt == "nq":
        slots.append('the graph name (an IRI or a blank node) or the final "."')
    at = 0
    for slot in slots:
        m = _TOKEN.match(text, at)
        if m is None or (slot.startswith("the subject") and m.group(3)) or (slot.startswith("the pred") and not m.group(1)):
            rest = text[at:].lstrip()
            if slot.startswith("the graph") and rest.startswith("."):
                break
            return f"expected {slot} at column {len(text) - len(rest) + 1}, found {rest[:40]!r}"
        at = m.end()
    rest = text[at:].lstrip()
    if not rest.startswith("."):
        return f'expected the final "." at column {len(text) - len(rest) + 1}, found {rest[:40]!r}'
    return f"unexpected text after the final \".\" at column {len(text) - len(rest[1:].lstrip()) + 1}"


def _events(rejects: list, rows, outcome):
    """The timing stage's make (cep.io.event_time.Timing): of rows with a
    key column, those whose key has a time are events, one record each key
    (their source: the place of the time line that decided it), those whose
    key has a reason are each a Reject at its own line, the rest wait (None
    when none does)."""
    if rows is None or not rows.num_rows:
        return EVENTS.empty_table(), None
    unique = pc.unique(rows["key"])
    state = [outcome(k) for k in unique.to_pylist()]
    timed = [s if isinstance(s, event_time.Time) else None for s in state]
    index = pc.index_in(rows["key"], unique)
    starts, ends, records = (pa.array([t and t[i] for t in timed], kind).take(index)
                             for i, kind in enumerate((pa.int64(), pa.int64(), pa.string())))
    refused = pa.array([i for i, s in enumerate(state) if isinstance(s, str)], pa.int32())
    hit = pc.is_in(index, refused)
    if len(refused):
        for row, i in zip(rows.filter(hit).to_pylist(), index.filter(hit).to_pylist()):
            rejects.append(Reject(row["source"], state[i], f"{row['s']} {row['p']} {row['o']} ."))
    timed = pc.is_valid(starts)
    waiting = rows.filter(pc.and_(pc.invert(timed), pc.invert(hit)))
    events = pa.table({
        "s": rows["s"], "p": rows["p"], "o": rows["o"], "start": starts, "end": ends,
        "source": records, "stream": pa.nulls(rows.num_rows, pa.string())}, schema=EVENTS)
    return events.filter(timed), waiting if waiting.num_rows else None
