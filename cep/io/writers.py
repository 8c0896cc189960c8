"""Writing answers and rejects: the back of the pipeline.

Takes Answers (cep.events) as the engine produces them and writes them to a
text stream, one answer at a time, in one of three formats:

    jsonl   one JSON object per answer (SELECT and CONSTRUCT):
              {"query": "q", "bindings": {"x": TERM, ...}, "start": T, "end": T}
              {"query": "q", "triples": [{"s": TERM, "p": TERM, "o": TERM}, ...],
               "start": T, "end": T}
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
from cep.events import Answer, Reject

OUTPUT_FORMATS = ("jsonl", "csv", "trig")


# ---------------------------------------------------------------- JSON Lines


def answer_json(answer: Answer) -> dict:
    """The JSON object of one answer (see the module docstring)."""
    out = {"query": answer.query}
    if answer.triples:
        out["triples"] = [{"s": terms.to_json(s), "p": terms.to_json(p), "o": terms.to_json(o)}
                          for s, p, o in answer.triples]
    else:
        out["bindings"] = {name: terms.to_json(term) for name, term in answer.bindings if term}
    out["start"] = terms.format_datetime_ms(answer.start)
    out["end"] = terms.format_datetime_ms(answer.end)
    return out


class JsonlWriter:
    def __init__(self, stream):
        self.stream = stream

    def write(self, answers) -> None:
        for answer in answers:
            self.stream.write(json.dumps(answer_json(answer), ensure_ascii=False) + "\n")

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
        for answer in answers:
            if answer.triples:
                raise UsageError(f"query {answer.query} is a CONSTRUCT query: --format csv writes SELECT "
                                 "answers only; use --format jsonl or --format trig")
            if self.variables is None:
                self.pending.append(answer)
                continue
            row = dict(answer.bindings)
            unknown = [v for v in row if v not in self.variables]
            if unknown:
                raise ValueError(f"answer of {answer.query} binds {unknown}, not in the CSV header")
            self.out.writerow(self._row(answer, row))

    def _row(self, answer, row):
        return ([answer.query, terms.format_datetime_ms(answer.start), terms.format_datetime_ms(answer.end)]
                + [row.get(v, "") for v in self.variables])

    def close(self) -> None:
        if self.variables is None:
            self.variables = list(dict.fromkeys(name for a in self.pending for name, _ in a.bindings))
            self._header()
            for answer in self.pending:
                self.out.writerow(self._row(answer, dict(answer.bindings)))
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
        for answer in answers:
            if not answer.triples:
                raise UsageError(f"query {answer.query} is a SELECT query: --format trig writes CONSTRUCT "
                                 "answers only; use --format jsonl or --format csv")
            n = self.counts.get(answer.query, 0) + 1
            self.counts[answer.query] = n
            graph = terms.iri(f"urn:cep:answer:{quote(answer.query, safe='')}:{n}")
            body = "".join(f"  {s} {p} {o} .\n" for s, p, o in answer.triples)
            self.stream.write(
                f"\n{graph} {{\n{body}}}\n"
                f'{graph} prov:startedAtTime "{terms.format_datetime_ms(answer.start)}"^^xsd:dateTime ;\n'
                f'    prov:endedAtTime "{terms.format_datetime_ms(answer.end)}"^^xsd:dateTime .\n')

    def close(self) -> None:
        self.stream.flush()


# ---------------------------------------------------------------- choosing


def check_format(fmt: str, queries) -> None:
    """UsageError when the rule set has answers the format cannot hold."""
    if fmt not in OUTPUT_FORMATS:
        raise UsageError(f"unknown output format {fmt!r}; choose one of {', '.join(OUTPUT_FORMATS)}")
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
