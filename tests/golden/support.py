"""Reading and writing the golden files (see test_golden.py for the layout).

- streams/<case>.trig: RSP-QL TriG, read here with rdflib's Dataset (the
  driver keeps its own small reader so that the oracle's input does not
  depend on the code under test; test_golden compares it with cep.io).
- matches/<case>.jsonl: expected answers, the JSON Lines form of
  cep.io.writers (SPARQL 1.1 Query Results JSON terms, ISO 8601 UTC times).
- algebra/<case>.sexpr: per query a line `-- NAME` and the algebra text
  (cep.algebra.sexpr.query; read back by cep.algebra.sexpr.read_query),
  blocks separated by blank lines. NAME is the
  golden name of the query; answers are matched to queries by position, so
  the names need not be those the parser gives.
"""

from __future__ import annotations

import json
from pathlib import Path

from cep import terms
from cep.algebra import sexpr
from cep.events import Answer, Event
from cep.io import writers

PROV = "http://www.w3.org/ns/prov#"
GENERATED, STARTED, ENDED = PROV + "generatedAtTime", PROV + "startedAtTime", PROV + "endedAtTime"


# ----------------------------------------------------------------- streams


def read_stream(path: Path) -> list[Event]:
    """Events of an RSP-QL TriG file: each named graph is one timestamped
    graph, its time in the default graph (`G prov:generatedAtTime T`, or
    `G prov:startedAtTime T1; prov:endedAtTime T2` for a lasting one)."""
    from rdflib import Dataset
    from rdflib.graph import DATASET_DEFAULT_GRAPH_ID

    ds = Dataset()
    with terms.rdflib_as_written():  # literals as written, as the project's reader keeps them
        ds.parse(str(path), format="trig")
    times: dict = {}
    graphs: dict = {}
    for s, p, o, g in ds.quads((None, None, None, None)):
        gid = getattr(g, "identifier", g)
        if gid == DATASET_DEFAULT_GRAPH_ID:
            times.setdefault(terms.from_rdflib(s), {})[str(p)] = terms.parse_datetime_ms(str(o))
        else:
            graphs.setdefault(terms.from_rdflib(gid), []).append((s, p, o))
    events = []
    # in the project's reader's order (cep/io/trig.py), which a [TRIPLES n]
    # window reads: the graphs as written (rdflib's order is not; here by
    # time and name, as the golden streams write them), each graph's triples
    # in the order of their terms
    for graph, triples in sorted(graphs.items(), key=lambda item: (_times(times[item[0]]), item[0])):
        start, end = _times(times[graph])
        for s, p, o in sorted(tuple(terms.from_rdflib(x) for x in triple) for triple in triples):
            events.append(Event(s, p, o, start, end, f"{path.name} {graph}"))
    return events


def _times(t: dict) -> tuple[int, int]:
    return (t[GENERATED], t[GENERATED]) if GENERATED in t else (t[STARTED], t[ENDED])


# ----------------------------------------------------------------- matches


def answer_from_json(obj: dict) -> Answer:
    start, end = terms.parse_datetime_ms(obj["start"]), terms.parse_datetime_ms(obj["end"])
    if "triples" in obj:
        triples = tuple(tuple(terms.from_json(t[k]) for k in "spo") for t in obj["triples"])
        return Answer(obj["query"], start, end, triples=triples)
    if "boolean" in obj:  # ASK
        return Answer(obj["query"], start, end, boolean=obj["boolean"])
    bindings = tuple(sorted((k, terms.from_json(v)) for k, v in obj["bindings"].items()))
    return Answer(obj["query"], start, end, bindings=bindings)


answer_to_json = writers.answer_json  # the form `cep run` writes


def read_matches(path: Path) -> list[Answer]:
    return [answer_from_json(json.loads(line)) for line in path.read_text().splitlines() if line.strip()]


# ----------------------------------------------------------------- algebra


def algebra_text(named_queries) -> str:
    """[(golden name, Query)] -> the text of an algebra file."""
    return "\n\n".join(f"-- {name}\n{sexpr.query(q)}" for name, q in named_queries) + "\n"


def read_algebra(path: Path) -> list[tuple[str, str]]:
    """[(golden name, algebra text)] of an algebra file, in query order."""
    blocks = []
    for line in path.read_text().splitlines():
        if line.startswith("-- "):
            blocks.append([line[3:].strip(), []])
        elif blocks:
            blocks[-1][1].append(line)
    return [(name, "\n".join(body).strip()) for name, body in blocks]
