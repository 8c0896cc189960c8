"""Writing answers and rejects: the back of the pipeline.

Takes answer tables (cep.events.ANSWERS), as both engines give them
(cep.engine.AnswerBatch.answers, cep.spark's output), and writes them to a
text stream, answer by answer, in one of three formats:

    jsonl   one JSON object per answer (SELECT, CONSTRUCT and ASK):
              {"query": "q", "bindings": {"x": TERM, ...}, "start": T, "end": T}
              {"query": "q", "triples": [{"s": TERM, "p": TERM, "o": TERM}, ...],
               "start": T, "end": T}
              {"query": "q", "boolean": true, "start": T, "end": T}  (ASK: an
               evaluation without a solution gives no answer)
            TERM is the W3C SPARQL 1.1 Query Results JSON form of a term
            ({"type": "uri", "value": ...}); an unbound variable is left out;
            T is an ISO 8601 UTC time (2026-01-01T00:00:05Z, milliseconds
            only when not zero).
    csv     SELECT answers only: columns query, start, end, then one column
            per variable (the SELECT variables of the rule set, in the order
            the queries name them), terms in N-Triples syntax, an unbound
            variable as an empty cell.
    trig    CONSTRUCT answers only: each answer is a named graph
            <urn:cep:answer:QUERY:N> holding its triples, with
            prov:startedAtTime and prov:endedAtTime in the default graph:
            cep.io.trig reads it back as the same interval events.

Rejects are written as JSON Lines: {"source": "file:line", "reason": ..., "text": ...}.
"""

from __future__ import annotations

import csv
import json
from urllib.parse import quote

from cep import terms
from cep.errors import UsageError
from cep.events import ANSWERS, Answer, Reject

OUTPUT_FORMATS = ("jsonl", "csv", "trig")


# ---------------------------------------------------------------- JSON Lines


ROWS_AT_ONCE = 10_000  # answers made Python values at a time: the memory of a large batch stays bounded


def rows(answers):
    """An answer table's rows as (query, start, end, bindings, triples):
    bindings as (variable, term) pairs, triples as {s, p, o} dicts, each
    None or empty when the answer has none."""
    for offset in range(0, answers.num_rows, ROWS_AT_ONCE):
        part = answers.slice(offset, ROWS_AT_ONCE)
        yield from zip(*(part[name].to_pylist() for name in ANSWERS.names))


def answer_json(answer: Answer) -> dict:
    """The JSON object of one Answer (see the module docstring)."""
    bindings = None if answer.boolean is not None else answer.bindings
    return row_json(answer.query, answer.start, answer.end, bindings,
                    [{"s": s, "p": p, "o": o} for s, p, o in answer.triples])


def row_json(query, start, end, bindings, triples) -> dict:
    """The JSON object of one answer row (rows)."""
    out = {"query": query}
    if bindings is None and not triples:  # ASK (cep.events.ANSWERS)
        out["boolean"] = True
    elif triples:
        out["triples"] = [{"s": terms.to_json(t["s"]), "p": terms.to_json(t["p"]), "o": terms.to_json(t["o"])}
                          for t in triples]
    else:
        out["bindings"] = {name: terms.to_json(term) for name, term in sorted(bindings or ()) if term}
    out["start"] = terms.format_datetime_ms(start)
    out["end"] = terms.format_datetime_ms(end)
    return out


def json_lines(answers):
    """The JSON Lines of an answer table, a line each (without its newline)."""
    for row in rows(answers):
        yield json.dumps(row_json(*row), ensure_ascii=False)


class JsonlWriter:
    def __init__(self, stream):
        self.stream = stream

    def write(self, answers) -> None:
        for line in json_lines(answers):
            self.stream.write(line + "\n")

    def close(self) -> None:
        self.stream.flush()


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
        for query, start, end, bindings, triples in rows(answers):
            if triples or bindings is None:
                form = "a CONSTRUCT" if triples else "an ASK"
                raise UsageError(f"query {query} is {form} query: --format csv writes SELECT "
                                 "answers only; use --format jsonl")
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


# ---------------------------------------------------------------------- TriG

PROV = "http://www.w3.org/ns/prov#"


class TrigWriter:
    """CONSTRUCT answers as timestamped named graphs (readable by cep.io.trig)."""

    def __init__(self, stream):
        self.stream = stream
        self.counts: dict[str, int] = {}
        stream.write(f"@prefix prov: <{PROV}> .\n@prefix xsd: <{terms.XSD}> .\n")

    def write(self, answers) -> None:
        for query, start, end, bindings, triples in rows(answers):
            if not triples:
                form = "an ASK" if bindings is None else "a SELECT"
                raise UsageError(f"query {query} is {form} query: --format trig writes CONSTRUCT "
                                 "answers only; use --format jsonl")
            n = self.counts.get(query, 0) + 1
            self.counts[query] = n
            graph = terms.iri(f"urn:cep:answer:{quote(query, safe='')}:{n}")
            body = "".join(f"  {t['s']} {t['p']} {t['o']} .\n" for t in triples)
            self.stream.write(
                f"\n{graph} {{\n{body}}}\n"
                f'{graph} prov:startedAtTime "{terms.format_datetime_ms(start)}"^^xsd:dateTime ;\n'
                f'    prov:endedAtTime "{terms.format_datetime_ms(end)}"^^xsd:dateTime .\n')

    def close(self) -> None:
        self.stream.flush()


# ---------------------------------------------------------------- choosing


def check_format(fmt: str, queries) -> None:
    """UsageError when the rule set has answers the format cannot hold."""
    if fmt not in OUTPUT_FORMATS:
        raise UsageError(f"unknown output format {fmt!r}; choose one of {', '.join(OUTPUT_FORMATS)}")
    if fmt in ("csv", "trig"):
        asks = [q.name for q in queries if q.form == "ask"]
        if asks:
            raise UsageError(f"--format {fmt} cannot hold the answers of ASK "
                             f"{'query' if len(asks) == 1 else 'queries'} {', '.join(asks)}; use --format jsonl")
    if fmt == "csv":
        bad = [q.name for q in queries if q.form == "construct"]
        if bad:
            raise UsageError(f"--format csv writes SELECT answers only, and {', '.join(bad)} "
                             f"{'is a CONSTRUCT query' if len(bad) == 1 else 'are CONSTRUCT queries'}; "
                             "use --format jsonl (both forms) or --format trig (CONSTRUCT)")
    if fmt == "trig":
        bad = [q.name for q in queries if q.form == "select"]
        if bad:
            raise UsageError(f"--format trig writes CONSTRUCT answers only, and {', '.join(bad)} "
                             f"{'is a SELECT query' if len(bad) == 1 else 'are SELECT queries'}; "
                             "use --format jsonl (both forms) or --format csv (SELECT)")


def make_writer(fmt: str, stream, variables=None):
    """A writer for `fmt` on `stream`; `variables` fixes the CSV columns."""
    if fmt == "jsonl":
        return JsonlWriter(stream)
    if fmt == "csv":
        return CsvWriter(stream, variables)
    if fmt == "trig":
        return TrigWriter(stream)
    raise UsageError(f"unknown output format {fmt!r}; choose one of {', '.join(OUTPUT_FORMATS)}")


# -------------------------------------------------------------------- rejects


def reject_json(reject: Reject) -> dict:
    return {"source": reject.source, "reason": reject.reason, "text": reject.text}


def write_rejects(rejects, stream) -> None:
    for reject in rejects:
        stream.write(json.dumps(reject_json(reject), ensure_ascii=False) + "\n")
