"""Writing answers and rejects: the back of the pipeline.

Takes answer tables (cep.events.ANSWERS), as both engines give them
(cep.engine.AnswerBatch.answers, cep.spark's output), or the in-process
engine's AnswerBatch itself (JSON Lines reads the columns of its usual
batch as they are: AnswerBatch.select_columns), and writes each
batch to a text stream as it comes, column-wise (cep.io.terms_text: no
Python object per answer), in one of these formats (docs/io.md):

    table        (every query form) a table per query for a person at a terminal:
                 times, then the bindings (SELECT) or triples (CONSTRUCT); kept
                 until the end of the run, or TABLE_ROWS answers.
    jsonl        (every query form) one JSON object per answer:
                   {"query": "q", "bindings": {"x": TERM, ...}, "start": T, "end": T}
                   {"query": "q", "triples": [{"s": TERM, "p": TERM, "o": TERM}, ...],
                    "start": T, "end": T}
                   {"query": "q", "boolean": true, "start": T, "end": T}  (ASK: an
                    evaluation without a solution gives no answer)
                 TERM is the W3C SPARQL 1.1 Query Results JSON form of a term
                 ({"type": "uri", "value": ...}); an unbound variable is left out;
                 T is an ISO 8601 UTC time (2026-01-01T00:00:05Z, milliseconds
                 only when not zero).
    csv          SELECT: columns query, start, end, then one column per variable
                 (the SELECT variables of the rule set, in the order the queries
                 name them), terms in N-Triples syntax, an unbound variable empty.
    sparql-json  SELECT, one query: a W3C SPARQL 1.1 Query Results document
    sparql-xml   (JSON, XML, CSV or TSV) of the query's answers, streamed: the
    sparql-csv   head when the run starts, a result per answer as it comes,
    sparql-tsv   the end when the run ends. A results document holds a
                 solution's bindings only, not its interval.
    nt           CONSTRUCT: the answers' triples, N-Triples (without their times).
    nq           CONSTRUCT: each answer a named graph <urn:cep:answer:QUERY:N>,
    trig         its time in the default graph (prov:startedAtTime,
                 prov:endedAtTime): `--events` reads both back as the same events.
    parquet      (every query form) one Parquet file of answer rows
                 (cep.events.ANSWER_ROWS), the columns and types of
                 cep.spark.detect's rows; a row group per batch, the file whole
                 once the writer is closed.

Rejects are written as JSON Lines: {"source": "file:line", "reason": ..., "text": ...}.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from urllib.parse import quote

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from cep import terms
from cep.errors import UsageError
from cep.events import ANSWER_ROWS, ANSWERS, Answer, Reject, answer_rows
from cep.io import terms_text
from cep.io.terms_text import concat

OUTPUT_FORMATS = ("jsonl", "table", "csv", "sparql-json", "sparql-xml", "sparql-csv", "sparql-tsv", "nt", "nq", "trig",
                  "parquet")
SPARQL_RESULTS = ("sparql-json", "sparql-xml", "sparql-csv", "sparql-tsv")
# the query forms each format holds
FORMS = {"jsonl": ("select", "construct", "ask"), "table": ("select", "construct", "ask"),
         "parquet": ("select", "construct", "ask"),
         "csv": ("select",), "nt": ("construct",),
         "nq": ("construct",), "trig": ("construct",), **{f: ("select",) for f in SPARQL_RESULTS}}
# --out FILE: the format its name says, when --format does not
SUFFIXES = {".jsonl": "jsonl", ".csv": "csv", ".srj": "sparql-json", ".json": "sparql-json",
            ".srx": "sparql-xml", ".xml": "sparql-xml", ".tsv": "sparql-tsv",
            ".nt": "nt", ".nq": "nq", ".trig": "trig", ".parquet": "parquet"}
# one file per query (--out DIR/): the extension of each format's files
EXTENSIONS = {"jsonl": ".jsonl", "table": ".txt", "csv": ".csv", "sparql-json": ".srj", "sparql-xml": ".srx",
              "sparql-csv": ".csv", "sparql-tsv": ".tsv", "nt": ".nt", "nq": ".nq", "trig": ".trig",
              "parquet": ".parquet"}
# ... and the format of a query whose form the chosen one cannot hold
FALLBACK = {"select": "sparql-json", "construct": "nq", "ask": "jsonl"}


# ------------------------------------------------------------- the columns


ROWS_AT_ONCE = 10_000  # answers made Python values at a time (rows): the memory of a large batch stays bounded
# answers made a column of text at a time (JSON Lines: about 20 MB of text, less than
# the engine's own text of a batch of 100,000 events; each call of a kernel costs as
# much as it does on some hundred rows, so fewer, longer calls)
TEXT_ROWS = 50_000


def rows(answers):
    """An answer table's rows as (query, start, end, bindings, triples):
    bindings as (variable, term) pairs, triples as {s, p, o} dicts, each
    None or empty when the answer has none."""
    for offset in range(0, answers.num_rows, ROWS_AT_ONCE):
        part = answers.slice(offset, ROWS_AT_ONCE)
        yield from zip(*(part[name].to_pylist() for name in ANSWERS.names))


def _column(answers, name):
    column = answers[name]
    if isinstance(column, pa.ChunkedArray):  # (one chunk, the usual case, as it is: combining would copy it)
        return column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()
    return column


_ENTRY = pa.list_(pa.struct([("key", pa.string()), ("value", pa.string())]))


def _bindings(answers):
    """The bound variables of the answers: (row of each, variable, term),
    sorted by row and variable; unbound ones (null or empty) left out."""
    lists = _column(answers, "bindings").cast(_ENTRY)
    parents = np.asarray(pc.list_parent_indices(lists).to_numpy(zero_copy_only=False), dtype=np.int64)
    flat = pc.list_flatten(lists)
    keys, values = pc.struct_field(flat, "key"), pc.struct_field(flat, "value")
    bound = pc.fill_null(pc.not_equal(values, ""), False)
    entries = pa.table({"row": parents, "key": keys, "value": values}).filter(bound)
    row, key = entries["row"].to_numpy(), entries["key"].combine_chunks()
    if len(row) > 1:  # the engine gives them sorted (cep.events.ANSWERS): sort only when they are not
        same_row = pa.array(row[1:] == row[:-1])
        in_order = pc.or_(pc.invert(same_row), pc.less(key.slice(0, len(key) - 1), key.slice(1)))
        if not pc.all(in_order).as_py():
            entries = entries.sort_by([("row", "ascending"), ("key", "ascending")])
            row, key = entries["row"].to_numpy(), entries["key"].combine_chunks()
    return row, key, entries["value"].combine_chunks()


def _triples(answers):
    """The triples of the answers: (row of each, s, p, o), in template order."""
    lists = _column(answers, "triples")
    parents = np.asarray(pc.list_parent_indices(lists).to_numpy(zero_copy_only=False), dtype=np.int64)
    flat = pc.list_flatten(lists)
    return parents, pc.struct_field(flat, "s"), pc.struct_field(flat, "p"), pc.struct_field(flat, "o")


def _joined(parents, pieces, n: int, separator: str) -> pa.Array:
    """Per answer row, its pieces (sorted by row) joined with `separator`
    ("" for a row with none)."""
    offsets = np.zeros(n + 1, dtype=np.int32)
    np.cumsum(np.bincount(parents, minlength=n), out=offsets[1:])
    return pc.binary_join(pa.ListArray.from_arrays(pa.array(offsets), pieces), separator)


def _by_variable(parents, keys, values, n: int, variables) -> list:
    """A column per variable of the answer rows: its term, null when unbound."""
    names = keys.to_numpy(zero_copy_only=False)
    out = []
    for name in variables:
        picked = np.nonzero(names == name)[0]
        index = np.full(n, -1, dtype=np.int64)
        index[parents[picked]] = picked
        out.append(values.take(pa.array(index, mask=index < 0)))
    return out


def _forms(answers):
    """Masks of the CONSTRUCT and ASK answer rows (the others are SELECT's)."""
    triples = _column(answers, "triples")
    construct = pc.fill_null(pc.greater(pc.list_value_length(triples), 0), False)
    ask = pc.and_(pc.is_null(_column(answers, "bindings")), pc.invert(construct))
    return construct, ask


# ---------------------------------------------------------------- JSON Lines


def answer_table(answers) -> pa.Table:
    """The answer table of what an engine gives: an answer table as it
    is; the in-process engine's AnswerBatch (cep.engine) made one."""
    return answers.answers() if callable(getattr(answers, "answers", None)) else answers


def select_columns(answers):
    """An AnswerBatch's answers as a column per variable, when they are
    all one SELECT query's and bind every variable
    (AnswerBatch.select_columns); else (an answer table too) None."""
    select_columns = getattr(answers, "select_columns", None)
    return select_columns() if select_columns is not None else None


def json_lines_column(answers, end: str = "") -> pa.Array:
    """The JSON Lines of an answer table (see the module docstring), one
    string per answer, column-wise, each followed by `end`. The answers
    are taken in groups that share the shape of their line (a SELECT
    answer's bound variables, CONSTRUCT, ASK): a group's lines are made
    by one concatenation of its columns, a column per bound variable, so
    that no text is made per binding and joined again per answer. Most
    tables are one group (a query whose variables are all bound)."""
    n = answers.num_rows
    if not n:
        return pa.array([], pa.string())
    queries = pc.unique(_column(answers, "query"))  # most tables are one query's: its name a constant
    query = json.dumps(queries[0].as_py(), ensure_ascii=False) if len(queries) == 1 and queries.null_count == 0 \
        else terms_text.json_strings(_column(answers, "query"))
    head = ['{"query": ', query, ", "]
    tail = _times_tail(answers, end)
    groups, lines = [], []
    for rows, middle in _line_middles(answers):
        if rows is not None:
            groups.append(rows)
        lines.append(concat(*_taken(head, rows), *middle, *_taken(tail, rows)))
    if len(lines) == 1:
        return lines[0]
    order = np.empty(n, dtype=np.int64)
    order[np.concatenate(groups)] = np.arange(n)
    return pa.concat_arrays(lines).take(pa.array(order))


def _times_tail(table, end: str) -> list:
    """The pieces of the text of answer lines after the bindings: the times."""
    return [', "start": "', *terms_text.time_pieces(_column(table, "start")),
            '", "end": "', *terms_text.time_pieces(_column(table, "end")), '"}' + end]


def _bindings_middle(variables, columns) -> list:
    """The pieces of the text of answer lines that bind `variables`, a
    column of terms each."""
    middle = ['"bindings": {']
    for j, (variable, column) in enumerate(zip(variables, columns)):
        middle += [(", " if j else "") + json.dumps(variable, ensure_ascii=False) + ": ",
                   *terms_text.json_term_pieces(column)]
    return middle + ["}"]


def select_lines_column(query: str, variables, table: pa.Table, end: str = "") -> pa.Array:
    """The JSON Lines of SELECT answers of one query that bind each of
    its variables (AnswerBatch.select_columns: start, end, then a column
    per variable), as json_lines_column writes them."""
    head = '{"query": ' + json.dumps(query, ensure_ascii=False) + ", "
    return concat(head, *_bindings_middle(variables, table.columns[2:]), *_times_tail(table, end))


def _taken(pieces, rows) -> list:
    """Pieces (str constants and columns) over `rows` (None: all)."""
    return pieces if rows is None else [p if isinstance(p, str) else p.take(rows) for p in pieces]


def _one_shape(shapes, counts, keys) -> bool:
    """Whether the answers are all SELECT answers that bind the same
    variables (the usual table: told without making a text per row)."""
    if shapes.any() or not len(keys):
        return not shapes.any()
    m = int(counts[0])
    if not (counts == m).all():
        return False
    names = pc.unique(keys)
    codes = np.asarray(pc.index_in(keys, names).to_numpy(zero_copy_only=False)).reshape(-1, m)
    return bool((codes == codes[0]).all())


def _line_middles(answers):
    """(rows, pieces) per group of answers whose lines have one shape: the
    rows (numpy indices; None: every row) and the pieces (str constants
    and columns over those rows) of the text between the query and the
    times."""
    n = answers.num_rows
    construct, ask = _forms(answers)
    shapes = np.asarray(pc.fill_null(pc.if_else(construct, 1, pc.if_else(ask, 2, 0)), 0)
                        .to_numpy(zero_copy_only=False), dtype=np.int64)  # 0 SELECT, 1 CONSTRUCT, 2 ASK
    row, keys, values = _bindings(answers)
    counts = np.bincount(row, minlength=n)
    first = np.zeros(n, dtype=np.int64)  # each row's first entry
    np.cumsum(counts[:-1], out=first[1:])
    if not _one_shape(shapes, counts, keys):  # a SELECT row's shape: its variables, their numbers in a string
        codes = pc.cast(pc.index_in(keys, pc.unique(keys)), pa.string())
        signature = pc.dictionary_encode(_joined(row, codes, n, ","))
        shapes = np.where(shapes == 0, 3 + np.asarray(signature.indices.to_numpy(zero_copy_only=False)), shapes)
    kinds = np.unique(shapes)
    for shape in kinds:
        rows = None if len(kinds) == 1 else np.flatnonzero(shapes == shape)
        if shape == 2:
            yield rows, ['"boolean": true']
        elif shape == 1:
            at, s, p, o = _triples(answers if rows is None else answers.take(pa.array(rows)))
            triples = _joined(at, concat('{"s": ', terms_text.json_terms(s), ', "p": ', terms_text.json_terms(p),
                                          ', "o": ', terms_text.json_terms(o), "}"),
                              n if rows is None else len(rows), ", ")
            yield rows, ['"triples": [', triples, "]"]
        else:
            example = int(np.flatnonzero(shapes == shape)[0])
            variables = keys.slice(first[example], counts[example]).to_pylist()
            starts = first if rows is None else first[rows]
            yield rows, _bindings_middle(variables, [values.take(pa.array(starts + j)) for j in range(len(variables))])


def json_lines(answers):
    """The JSON Lines of an answer table, a line each (without its newline)."""
    for offset in range(0, answers.num_rows, ROWS_AT_ONCE):
        yield from json_lines_column(answers.slice(offset, ROWS_AT_ONCE)).to_pylist()


def answer_json(answer: Answer) -> dict:
    """The JSON object of one Answer (see the module docstring), for
    programs that hold Answers."""
    out = {"query": answer.query}
    if answer.triples:
        out["triples"] = [{"s": terms.to_json(s), "p": terms.to_json(p), "o": terms.to_json(o)}
                          for s, p, o in answer.triples]
    elif answer.boolean is not None:
        out["boolean"] = True
    else:
        out["bindings"] = {name: terms.to_json(term) for name, term in sorted(answer.bindings) if term}
    out["start"] = terms.format_datetime_ms(answer.start)
    out["end"] = terms.format_datetime_ms(answer.end)
    return out


class _TextWriter:
    """A writer of a text stream: `text(answers)` gives the text of a batch."""

    def __init__(self, stream):
        self.stream = stream

    def write(self, answers) -> None:
        answers = answer_table(answers)
        for offset in range(0, answers.num_rows, ROWS_AT_ONCE):
            text = self.text(answers.slice(offset, ROWS_AT_ONCE))
            if text:
                self.stream.write(text)

    def text(self, answers) -> str:
        raise NotImplementedError

    def close(self) -> None:
        self.stream.flush()


def write_text(stream, column) -> None:
    """The strings of a column, one after the other, to a text stream: to a
    UTF-8 stream's bytes at once, straight from the column's data (no
    Python string of them)."""
    if not len(column):
        return
    offsets = np.frombuffer(column.buffers()[1], dtype=np.int32)[column.offset:column.offset + len(column) + 1]
    data = column.buffers()[2][int(offsets[0]):int(offsets[-1])]
    binary = getattr(stream, "buffer", None)
    if binary is not None and (getattr(stream, "encoding", "") or "").lower().replace("-", "") == "utf8":
        stream.flush()  # what was written as text goes first
        binary.write(data)
    else:
        stream.write(data.to_pybytes().decode("utf-8"))


class JsonlWriter(_TextWriter):
    def write(self, answers) -> None:
        selected = select_columns(answers)
        if selected is not None:  # the usual batch: from its columns, without the answer table's maps
            query, variables, table = selected
            for offset in range(0, table.num_rows, TEXT_ROWS):
                write_text(self.stream, select_lines_column(query, variables, table.slice(offset, TEXT_ROWS), "\n"))
            return
        answers = answer_table(answers)
        for offset in range(0, answers.num_rows, TEXT_ROWS):
            write_text(self.stream, json_lines_column(answers.slice(offset, TEXT_ROWS), end="\n"))


# ----------------------------------------------------------------------- CSV

_FIXED = ("query", "start", "end")


class CsvWriter:
    """SELECT answers as CSV. With `variables` the header is written at
    once and rows follow as answers come; without, rows are kept until
    `close` and the columns are the variables in the order answers bind
    them first."""

    def __init__(self, stream, variables=None):
        self.stream = stream
        self.out = csv.writer(stream, lineterminator="\n")
        self.variables = list(dict.fromkeys(variables)) if variables is not None else None
        self.pending = []
        if self.variables is not None:
            self._header()

    def _header(self):
        # a variable named like a fixed column keeps its "?" to stay apart
        self.out.writerow(list(_FIXED) + [("?" + v if v in _FIXED else v) for v in self.variables])

    def write(self, answers) -> None:
        answers = answer_table(answers)
        _only(answers, "csv")
        for query, start, end, bindings, triples in rows(answers):
            row = (query, start, end, dict(bindings or ()))
            if self.variables is None:
                self.pending.append(row)
                continue
            unknown = [v for v in row[3] if v not in self.variables]
            if unknown:
                raise ValueError(f"answer of {query} binds {unknown}, not in the CSV header")
            self.out.writerow(self._row(*row))

    def _row(self, query, start, end, bindings):
        return ([query, terms.format_datetime_ms(start), terms.format_datetime_ms(end)]
                + [bindings.get(v, "") for v in self.variables])

    def close(self) -> None:
        if self.variables is None:
            self.variables = list(dict.fromkeys(name for row in self.pending for name in sorted(row[3])))
            self._header()
            for row in self.pending:
                self.out.writerow(self._row(*row))
            self.pending = []
        self.stream.flush()


TABLE_ROWS = 1_000  # answers a table shows at once: a longer run prints a table per this many
TABLE_WIDTH = 48  # a longer value is cut, with "…"
_SHORT_TYPES = {terms.XSD + t for t in ("integer", "decimal", "double", "boolean")}


def table_term(nt: str) -> str:
    """A term as a terminal table shows it: a number or boolean by its
    value, a plain string in quotes, an IRI in <>, anything else in
    N-Triples syntax."""
    kind, *rest = terms.split(nt)
    if kind == "literal":
        lex, datatype, lang = rest
        if datatype in _SHORT_TYPES:
            return lex
        if datatype == terms.XSD_STRING:
            return json.dumps(lex, ensure_ascii=False)
        if datatype == terms.XSD + "dateTime":
            return lex
    return nt


class TableWriter:
    """Answers as tables for a person at a terminal (--format table), a
    table per query: its answers' times and bindings (SELECT), triples
    (CONSTRUCT) or "true" (ASK), columns as wide as their widest value.
    Answers are kept until `close` or `flush` (a followed run's pause), or
    until TABLE_ROWS of them, so that a small run prints one table per
    query."""

    def __init__(self, stream):
        self.stream = stream
        self.pending = []

    def write(self, answers) -> None:
        self.pending += rows(answer_table(answers))
        if len(self.pending) >= TABLE_ROWS:
            self.flush()

    def flush(self) -> None:
        by_query: dict = {}
        for query, start, end, bindings, triples in self.pending:
            by_query.setdefault(query, []).append((start, end, bindings, triples))
        self.pending = []
        for query, found in by_query.items():
            self.stream.write(self._table(query, found) + "\n")
        self.stream.flush()

    def _table(self, query: str, found: list) -> str:
        variables = list(dict.fromkeys(v for _, _, bindings, _ in found for v, _ in sorted(bindings or ())))
        triples = any(t for _, _, _, t in found)
        head = ["start", "end"] + (["s", "p", "o"] if triples else variables or ["answer"])
        lines = []
        for start, end, bindings, made in found:
            times = [terms.format_datetime_ms(start), terms.format_datetime_ms(end)]
            if triples:
                lines += [times + [table_term(t[c]) for c in "spo"] for t in made or ()]
            elif variables:
                bound = dict(bindings or ())
                lines.append(times + [table_term(bound[v]) if bound.get(v) else "" for v in variables])
            else:
                lines.append(times + ["true"])
        lines = [[_cut(cell) for cell in line] for line in lines]
        widths = [max(len(str(cell)) for cell in column) for column in zip(head, *lines)]
        shown = ["  ".join(cell.ljust(w) for cell, w in zip(line, widths)).rstrip() for line in [head, *lines]]
        title = f"{query}: {len(found):,} answer{'s' if len(found) != 1 else ''}"
        return "\n".join([title, shown[0], "  ".join("-" * w for w in widths), *shown[1:]]) + "\n"

    def close(self) -> None:
        self.flush()


def _cut(text: str) -> str:
    return text if len(text) <= TABLE_WIDTH else text[:TABLE_WIDTH - 1] + "…"


def _only(answers, fmt: str) -> None:
    """UsageError when the answers hold a form `fmt` cannot."""
    if not answers.num_rows:
        return
    construct, ask = _forms(answers)
    forms = {"construct": construct, "ask": ask,
             "select": pc.invert(pc.or_(construct, ask))}
    for form, mask in forms.items():
        if form not in FORMS[fmt] and pc.any(mask).as_py():
            query = answers.filter(mask)["query"][0].as_py()
            article = "an" if form == "ask" else "a"
            raise UsageError(f"query {query} is {article} {form.upper()} query: --format {fmt} writes "
                             f"{' and '.join(f.upper() for f in FORMS[fmt])} answers only; use --format jsonl")


# ------------------------------------------------- SPARQL 1.1 results documents


class SparqlResultsWriter(_TextWriter):
    """The answers of one SELECT query as a W3C SPARQL 1.1 Query Results
    document: JSON, XML, CSV or TSV. The head is written at once, a result
    per answer as answers come, the end at close."""

    def __init__(self, stream, fmt: str, variables):
        super().__init__(stream)
        self.fmt, self.variables, self.first = fmt, list(dict.fromkeys(variables)), True
        names = self.variables
        stream.write({
            "sparql-json": '{"head": {"vars": ' + json.dumps(names, ensure_ascii=False) + '},\n'
                           ' "results": {"bindings": [\n',
            "sparql-xml": '<?xml version="1.0" encoding="UTF-8"?>\n'
                          '<sparql xmlns="http://www.w3.org/2005/sparql-results#">\n  <head>\n'
                          + "".join(f'    <variable name="{v}"/>\n' for v in names) + "  </head>\n  <results>\n",
            "sparql-csv": ",".join(names) + "\r\n",
            "sparql-tsv": "\t".join("?" + v for v in names) + "\n",
        }[fmt])

    def text(self, answers) -> str:
        _only(answers, self.fmt)
        n = answers.num_rows
        if not n:
            return ""
        row, keys, values = _bindings(answers)
        if self.fmt == "sparql-json":
            pieces = concat(terms_text.json_strings(keys), ": ", terms_text.json_terms(values))
            results = concat("{", _joined(row, pieces, n, ", "), "}").to_pylist()
            text = ("" if self.first else ",\n") + ",\n".join(results)
        elif self.fmt == "sparql-xml":
            pieces = concat('      <binding name="', keys, '">', terms_text.xml_terms(values), "</binding>\n")
            text = "".join(concat("    <result>\n", _joined(row, pieces, n, ""), "    </result>\n").to_pylist())
        else:
            columns = _by_variable(row, keys, values, n, self.variables)
            if self.fmt == "sparql-csv":
                columns = [terms_text.csv_terms(c) for c in columns]
            separator, end = ("\t", "\n") if self.fmt == "sparql-tsv" else (",", "\r\n")
            if columns:
                lines = pc.binary_join_element_wise(*(pc.fill_null(c, "") for c in columns), separator)
                text = "".join(s + end for s in lines.to_pylist())
            else:
                text = end * n
        self.first = False
        return text

    def close(self) -> None:
        self.stream.write({"sparql-json": "\n]}}\n", "sparql-xml": "  </results>\n</sparql>\n"}.get(self.fmt, ""))
        self.stream.flush()


# ------------------------------------------------- RDF: N-Triples, N-Quads, TriG

PROV = "http://www.w3.org/ns/prov#"
_STARTED, _ENDED = terms.iri(PROV + "startedAtTime"), terms.iri(PROV + "endedAtTime")
_DATETIME = f"^^<{terms.XSD_DATETIME}>"


class RdfWriter(_TextWriter):
    """CONSTRUCT answers as RDF. nt: their triples. nq and trig: each
    answer a named graph <urn:cep:answer:QUERY:N> (N counts the query's
    answers from 1) holding its triples, with prov:startedAtTime and
    prov:endedAtTime in the default graph: cep.io reads it back as the
    same interval events."""

    def __init__(self, stream, fmt: str):
        super().__init__(stream)
        self.fmt = fmt
        self.counts: dict[str, int] = {}
        if fmt == "trig":
            stream.write(f"@prefix prov: <{PROV}> .\n@prefix xsd: <{terms.XSD}> .\n")

    def _graphs(self, answers) -> pa.Array:
        """The graph name of each answer (counting on from earlier batches)."""
        queries = _column(answers, "query")
        number = np.zeros(len(queries), dtype=np.int64)
        for query in pc.unique(queries).to_pylist():
            at = np.nonzero(np.asarray(pc.equal(queries, query).to_numpy(zero_copy_only=False), dtype=bool))[0]
            first = self.counts.get(query, 0)
            number[at] = np.arange(first + 1, first + len(at) + 1)
            self.counts[query] = first + len(at)
        return concat(_graph_prefixes(queries), pc.cast(pa.array(number), pa.string()), ">")

    def text(self, answers) -> str:
        _only(answers, self.fmt)
        n = answers.num_rows
        if not n:
            return ""
        row, s, p, o = _triples(answers)
        if self.fmt == "nt":
            return "".join(t + " .\n" for t in pc.binary_join_element_wise(s, p, o, " ").to_pylist())
        graphs = self._graphs(answers)
        start, end = terms_text.times(_column(answers, "start")), terms_text.times(_column(answers, "end"))
        if self.fmt == "nq":
            body = _joined(row, concat(pc.binary_join_element_wise(s, p, o, graphs.take(pa.array(row)), " "), " .\n"),
                           n, "")
            text = concat(body, graphs, f' {_STARTED} "', start, f'"{_DATETIME} .\n',
                           graphs, f' {_ENDED} "', end, f'"{_DATETIME} .\n')
        else:
            body = _joined(row, concat("  ", pc.binary_join_element_wise(s, p, o, " "), " .\n"), n, "")
            text = concat("\n", graphs, " {\n", body, "}\n", graphs, ' prov:startedAtTime "', start,
                           '"^^xsd:dateTime ;\n    prov:endedAtTime "', end, '"^^xsd:dateTime .\n')
        return "".join(text.to_pylist())


def _graph_prefixes(queries) -> pa.Array:
    unique = pc.unique(queries)
    made = pa.array([f"<urn:cep:answer:{quote(q, safe='')}:" for q in unique.to_pylist()], pa.string())
    return made.take(pc.index_in(queries, unique))


# ------------------------------------------------------------------- Parquet


class ParquetWriter:
    """Answer tables as answer rows (cep.events.ANSWER_ROWS) in one Parquet
    file: what cep.spark.detect gives and the Spark engine's Parquet files
    hold, so that both are read the same way. A row group per batch; the
    file can be read once it is closed (Parquet keeps its index at its
    end). `stream`: a binary stream, or a text stream's bytes (its buffer)."""

    def __init__(self, stream):
        import pyarrow.parquet as pq

        self.writer = pq.ParquetWriter(getattr(stream, "buffer", stream), ANSWER_ROWS)

    def write(self, answers) -> None:
        answers = answer_table(answers)
        if answers.num_rows:
            self.writer.write_table(answer_rows(answers))

    def close(self) -> None:
        self.writer.close()


# ---------------------------------------------------------------- choosing


def output_format(fmt: str | None, out) -> str:
    """The answer format: --format, else the one --out's name says (SUFFIXES), else jsonl."""
    if fmt:
        return fmt
    if out and not str(out).endswith("/"):
        return SUFFIXES.get(Path(str(out)).suffix.lower(), "jsonl")
    return "jsonl"


def _forms_of(queries) -> dict:
    out: dict = {}
    for q in queries:
        out.setdefault(q.form, []).append(q.name)
    return out


def check_format(fmt: str, queries, per_query: bool = False) -> None:
    """UsageError when the rule set has answers the format cannot hold (in
    one output; `per_query`: one file per query, where a query the format
    cannot hold goes to FALLBACK)."""
    if fmt not in OUTPUT_FORMATS:
        raise UsageError(f"unknown output format {fmt!r}; choose one of {', '.join(OUTPUT_FORMATS)}")
    if per_query:
        return
    forms = _forms_of(queries)
    asks = forms.get("ask", [])
    if asks and "ask" not in FORMS[fmt]:
        raise UsageError(f"--format {fmt} cannot hold the answers of ASK "
                         f"{'query' if len(asks) == 1 else 'queries'} {', '.join(asks)}; use --format jsonl")
    for form, other in (("construct", "nq (CONSTRUCT)"), ("select", "csv or sparql-json (SELECT)")):
        names = forms.get(form, [])
        if names and form not in FORMS[fmt]:
            raise UsageError(f"--format {fmt} writes {' and '.join(f.upper() for f in FORMS[fmt])} answers only, "
                             f"and {', '.join(names)} "
                             f"{'are ' + form.upper() + ' queries' if len(names) > 1 else 'is a ' + form.upper() + ' query'}"
                             f"; use --format jsonl (both forms), --format {other}, or --out DIR/ (one file per query)")
    if fmt in SPARQL_RESULTS and len(forms.get("select", [])) > 1:
        raise UsageError(f"--format {fmt} writes one query's results, and the rules have "
                         f"{len(forms['select'])} SELECT queries ({', '.join(forms['select'])}); "
                         "use --out DIR/ (one file per query) or --format jsonl")


def make_writer(fmt: str, stream, variables=None):
    """A writer for `fmt` on `stream`; `variables` fixes the CSV columns
    and the variables of a SPARQL results document."""
    if fmt == "jsonl":
        return JsonlWriter(stream)
    if fmt == "table":
        return TableWriter(stream)
    if fmt == "csv":
        return CsvWriter(stream, variables)
    if fmt in SPARQL_RESULTS:
        return SparqlResultsWriter(stream, fmt, variables or [])
    if fmt in ("nt", "nq", "trig"):
        return RdfWriter(stream, fmt)
    if fmt == "parquet":
        return ParquetWriter(stream)
    raise UsageError(f"unknown output format {fmt!r}; choose one of {', '.join(OUTPUT_FORMATS)}")


class PerQueryWriter:
    """One file per query in a folder: FOLDER/QUERY.EXT, each in `fmt`
    when it holds the query's form, else in FALLBACK[form]."""

    def __init__(self, folder, fmt: str, layouts, opener):
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        self.writers, self.files = {}, []
        for layout in layouts:
            form = layout.form
            chosen = fmt if form in FORMS[fmt] else FALLBACK[form]
            name = quote(layout.name, safe="") + EXTENSIONS[chosen]
            handle = opener(folder / name)
            self.files.append(handle)
            self.writers[layout.name] = make_writer(chosen, handle, list(layout.fields) if form == "select" else None)

    def write(self, answers) -> None:
        answers = answer_table(answers)
        if not answers.num_rows:
            return
        queries = _column(answers, "query")
        for query in pc.unique(queries).to_pylist():
            self.writers[query].write(answers.filter(pc.equal(queries, query)))

    def close(self) -> None:
        for writer in self.writers.values():
            writer.close()
        for handle in self.files:
            handle.close()


# -------------------------------------------------------------------- rejects


def reject_json(reject: Reject) -> dict:
    return {"source": reject.source, "reason": reject.reason, "text": reject.text}


def write_rejects(rejects, stream) -> None:
    for reject in rejects:
        stream.write(json.dumps(reject_json(reject), ensure_ascii=False) + "\n")
