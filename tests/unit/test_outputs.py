"""Outputs of cep.io.writers: the column-wise JSON Lines against the
per-answer form, the W3C SPARQL 1.1 results documents and the RDF
formats parsed back with rdflib, one file per query, and the command's
choice of format."""

from __future__ import annotations

import io
import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from cep import cli, terms
from cep.errors import UsageError
from cep.events import ANSWER_ROWS, ANSWERS, Answer, answers_of, answers_table
from cep.io import make_writer, output_format, readers, writers
from cep.io.terms_text import times

ROOT = Path(__file__).resolve().parents[2]
EX = "http://example.org/"
XSD = terms.XSD
T0 = terms.parse_datetime_ms("2026-01-01T00:00:00Z")

# terms that take every path of the column-wise kernels: the fast
# expressions and the Python fallback (escapes, controls, xsd:string, odd IRIs)
TERMS = [
    f"<{EX}a>", f"<{EX}caf\u00e9>", "<urn:x:a\\u0020b>", "_:b0", "_:n1a2b_x.y",
    '"plain"', '"with \\"quotes\\" and \\\\ and \\n\\r\\t"', '"tab\\u0001ctl\\u007F"', '"caf\u00e9 \U0001F600"',
    '"en"@en', '"x"@en-gb', f'"1.5"^^<{XSD}decimal>', f'"s"^^<{XSD}string>', f'"7"^^<{XSD}integer>',
    '"a, b; <c> & \'d\'"', '""', f'"2026-01-01T00:00:00Z"^^<{XSD}dateTime>', '"\u2028sep"',
]


def _random_answers(seed, n=300):
    rng = random.Random(seed)
    out = []
    for i in range(n):
        start = rng.choice([T0, 0, -1, T0 + rng.randrange(10**6), 253_402_300_799_999, -62_135_596_800_000,
                            253_402_300_800_000, -62_135_596_800_001, 10**15])
        end = start + rng.choice([0, 1, 999, 1000, 1250])
        form = rng.choice(["select", "select", "construct", "ask"])
        name = rng.choice(["q", "crash_recovery", 'odd "name"/1', "caf\u00e9"])
        if form == "select":
            names = sorted(rng.sample(["x", "y", "zed", "_v", "\u00e9t\u00e9"], rng.randrange(0, 4)))
            out.append(Answer(name, start, end, bindings=tuple((v, rng.choice(TERMS)) for v in names)))
        elif form == "construct":
            triples = tuple((rng.choice(TERMS[:5]), f"<{EX}p{k}>", rng.choice(TERMS)) for k in range(rng.randrange(1, 4)))
            out.append(Answer(name, start, end, triples=triples))
        else:
            out.append(Answer(name, start, end, boolean=True))
    return out


@pytest.mark.parametrize("seed,forms", [(1, "all"), (2, "all"), (3, "all"), (4, "select"), (5, "construct")])
def test_json_lines_column_wise_are_the_per_answer_json(seed, forms):
    answers = _random_answers(seed, 900)
    if forms == "select":  # a table of SELECT answers alone makes no other form's text
        answers = [a for a in answers if a.triples == () and a.boolean is None]
    elif forms == "construct":
        answers = [a for a in answers if a.triples]
    got = list(writers.json_lines(answers_table(answers)))
    want = [json.dumps(writers.answer_json(a), ensure_ascii=False) for a in answers]
    assert got == want


def test_json_lines_of_answers_that_bind_the_same_variables_are_the_per_answer_json():
    """A table of one shape (a query whose variables are all bound) is made
    a column per variable; columns of one kind of term and one datatype
    take the shortest kernels, and a term among them that needs the
    fallback (an escape) or another datatype still gets its own text."""
    integer, decimal = f"^^<{XSD}integer>", f"^^<{XSD}decimal>"
    same = ['"a\\"b"' + integer, '"caf\u00e9"' + integer, f'"{XSD}integer>"' + integer, '"a\\u0001"' + integer]
    for extra in ([], same, same + [f'"x"^^<{EX}integer>', '"7"' + decimal, '"1"@en']):
        values = [f'"{i}"{integer}' for i in range(2000)] + extra
        answers = [Answer("q", T0 + i, T0 + i + 5, bindings=(("k", f"<{EX}k{i % 7}>"), ("x", v)))
                   for i, v in enumerate(values)]
        got = list(writers.json_lines(answers_table(answers)))
        assert got == [json.dumps(writers.answer_json(a), ensure_ascii=False) for a in answers]
        assert json.loads(got[-1])["bindings"]["x"] == terms.to_json(values[-1])


# terms of one kind each (by their first and last bytes, as the kernels tell kinds), the
# expression of the kind vouching for some and not others: quotes, escapes, controls,
# commas (CSV) and shapes that only look like the kind
KINDS = {
    "iri": [f"<{EX}a>", "<>", "<urn:x<y>>", f"<{EX}caf\u00e9>", f'<{EX}a"b>', "<urn:a\\u0020b>", "<urn:a\tb>",
            "<urn:a,b>", "<urn:x", "<"],
    "plain": ['"plain"', '""', '"a, b"', '"a"b"', '"a\\"b"', '"tab\tx"', '"caf\u00e9"', '"'],
    "typed": [f'"7"^^<{XSD}integer>', '"a"^^<>', f'"1,5"^^<{XSD}decimal>', '"a"b"^^<x>', '"^^<a"b>', '"a"^^<x"y>',
              '"a"^^x>', '"a"^^<x>y>', '"a\\"b"^^<x>', '"\u0001"^^<x>', '"a"^<x>', '"a">'],
}


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("escaped,fmt", [(b"", "json"), (b",", "csv")])
def test_a_column_of_terms_is_vouched_for_at_once_only_where_the_expression_vouches_for_each(kind, escaped, fmt):
    """The bytes of a column of one kind tell at once that no term needs
    the fallback (terms_text._plain_bytes) only where the kind's expression
    vouches for every term; a column of terms it vouches for is told so."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from cep.io import terms_text

    pattern = {"json": terms_text._JSON_VALID, "csv": terms_text._CSV_VALID}[fmt][kind]
    rng = random.Random(7)
    pool = KINDS[kind]
    for size in range(1, 4):
        for _ in range(300):
            column = pa.array([rng.choice(pool) for _ in range(size)], pa.string())
            column = column.slice(rng.randrange(2)) if len(column) > 1 else column  # an offset into the buffers
            masks = terms_text._kinds(column)
            assert masks[kind].all(), column
            vouched = pc.all(pc.match_substring_regex(column, pattern)).as_py()
            assert terms_text._plain_bytes(column, kind, escaped) == vouched, column.to_pylist()


# well-formed terms whose text the kernels cut by bytes: blank nodes of several lengths,
# characters of several bytes beside the delimiters cut off, a datatype IRI of several bytes
CUT = [f"<{EX}caf\u00e9>", "<\u00e9>", "_:b", "_:b12", "_:bnode3", '"\u00e9"', '"\u00fc\u00e9x"', '""',
       f'"7"^^<{XSD}integer>', '"\u00e9"^^<http://example.org/d\u00e9>', '"\u00e9"@fr', '"x"@en-GB']


@pytest.mark.parametrize("fmt", ["json", "xml", "csv"])
def test_terms_made_column_wise_are_those_made_one_by_one(fmt):
    """Each format's text of a column of terms, made by cutting the
    terms' bytes, is the text of each term made alone; the pieces a line
    of JSON Lines takes make the same text."""
    import pyarrow as pa

    from cep.io import terms_text

    column_wise, one = {"json": (terms_text.json_terms, lambda t: json.dumps(terms.to_json(t), ensure_ascii=False)),
                        "xml": (terms_text.xml_terms, terms_text._xml_term),
                        "csv": (terms_text.csv_terms, terms_text._csv_term)}[fmt]
    rng = random.Random(11)
    for kind in ("<", "_:", '"', "^^", "@", ""):
        pool = [t for t in CUT if t.startswith(kind) or (kind in ("^^", "@") and kind in t)] if kind else CUT
        for size in (1, 3, 80):  # (80: more than a sample of repeating terms)
            column = pa.array([rng.choice(pool) for _ in range(size)], pa.string())
            assert column_wise(column).to_pylist() == [one(t) for t in column.to_pylist()], column.to_pylist()
            if fmt == "json":
                pieces = terms_text.json_term_pieces(column)
                assert terms_text.concat(*pieces).to_pylist() == [one(t) for t in column.to_pylist()]


def test_times_are_format_datetime_ms():
    values = [0, 1, -1, 999, 1000, T0 + 120, -62_135_596_800_000, 253_402_300_799_999, 253_402_300_800_000,
              -62_135_596_800_001, -10**15, 10**15]
    import pyarrow as pa

    assert times(pa.array(values, pa.int64())).to_pylist() == [terms.format_datetime_ms(v) for v in values]


def test_the_command_names_the_formats_the_readers_and_writers_have():
    assert cli.INPUT_FORMATS == tuple(readers._BATCHES) == tuple(dict.fromkeys(readers.FORMATS.values()))
    assert cli.OUTPUT_FORMATS == writers.OUTPUT_FORMATS


# ================================================== SPARQL results documents

SELECTS = [Answer("q", T0, T0 + 5, bindings=(("x", t), ("y", TERMS[i % 5]))) for i, t in enumerate(TERMS)]
SELECTS.append(Answer("q", T0 + 9, T0 + 9, bindings=(("y", f"<{EX}only-y>"),)))  # x unbound


def _document(fmt, answers, variables=("x", "y"), batches=1):
    out = io.StringIO()
    w = make_writer(fmt, out, list(variables))
    table = answers_table(answers)
    step = max(1, -(-len(answers) // batches))
    for k in range(0, len(answers), step):
        w.write(table.slice(k, step))
    w.close()
    return out.getvalue()


def _rdflib_rows(text, fmt):
    from rdflib.query import Result

    result = Result.parse(io.StringIO(text) if fmt != "sparql-xml" else io.BytesIO(text.encode()),
                          format={"sparql-json": "json", "sparql-xml": "xml", "sparql-csv": "csv",
                                  "sparql-tsv": "tsv"}[fmt])
    return [str(v) for v in result.vars], [
        {str(k): v for k, v in row.asdict().items()} for row in result]


def _as_rdflib(nt):
    from rdflib import BNode, Literal, URIRef

    kind = terms.split(nt)
    if kind[0] == "iri":
        return URIRef(kind[1])
    if kind[0] == "bnode":
        return BNode(kind[1])
    _, lex, dt, lang = kind
    return Literal(lex, lang=lang) if lang else Literal(lex, datatype=None if dt == terms.XSD_STRING else dt)


def _normal(row):
    """A row of rdflib terms with literals in rdflib's normal form (its
    parsers of the result formats do not all normalise)."""
    from rdflib import Literal

    return {k: Literal(str(v), lang=v.language, datatype=v.datatype) if isinstance(v, Literal) else v
            for k, v in row.items()}


@pytest.mark.parametrize("fmt", ["sparql-json", "sparql-xml", "sparql-tsv"])
@pytest.mark.parametrize("batches", [1, 4])
def test_sparql_results_documents_parse_back_as_the_answers(fmt, batches):
    # (rdflib's TSV parser does not take a \u escape, which Turtle allows in IRIs and strings)
    answers = [a for a in SELECTS if fmt != "sparql-tsv" or not any("\\u" in v for _, v in a.bindings)]
    text = _document(fmt, answers, batches=batches)
    assert text == _document(fmt, answers)  # streamed in batches: the same document
    names, rows = _rdflib_rows(text, fmt)
    assert names == ["x", "y"]
    want = [{k: _as_rdflib(v) for k, v in a.bindings} for a in answers]
    if fmt == "sparql-xml":  # XML 1.0 cannot hold the control character U+0001
        want = [{k: _as_rdflib(v.replace("\\u0001", "\ufffd")) for k, v in a.bindings} for a in answers]
    if fmt == "sparql-tsv":  # rdflib's TSV parser reads a blank node's label its own way
        rows = [{k: (BNodeLabel if type(v).__name__ == "BNode" else v) for k, v in r.items()} for r in rows]
        want = [{k: (BNodeLabel if type(v).__name__ == "BNode" else v) for k, v in r.items()} for r in want]
    assert [_normal(r) for r in rows] == [_normal(r) for r in want]


BNodeLabel = object()


def test_sparql_json_is_the_w3c_shape():
    doc = json.loads(_document("sparql-json", SELECTS[:2] + SELECTS[-1:]))
    assert doc["head"] == {"vars": ["x", "y"]}
    assert doc["results"]["bindings"][0] == {"x": {"type": "uri", "value": f"{EX}a"},
                                             "y": {"type": "uri", "value": f"{EX}a"}}
    assert doc["results"]["bindings"][-1] == {"y": {"type": "uri", "value": f"{EX}only-y"}}
    empty = json.loads(_document("sparql-json", []))
    assert empty == {"head": {"vars": ["x", "y"]}, "results": {"bindings": []}}


def test_sparql_csv_writes_values_bare_and_quotes_what_csv_needs():
    import csv

    text = _document("sparql-csv", SELECTS)
    assert "\r\n" in text
    rows = list(csv.reader(io.StringIO(text, newline="")))
    assert rows[0] == ["x", "y"]
    got = {r[0] for r in rows[1:]}
    assert {f"{EX}a", "_:b0", "plain", 'with "quotes" and \\ and \n\r\t', "en", "1.5", "a, b; <c> & 'd'",
            "caf\u00e9 \U0001F600"} <= got
    assert rows[-1] == ["", f"{EX}only-y"]
    _, parsed = _rdflib_rows(text, "sparql-csv")
    assert len(parsed) == len(SELECTS)


def test_a_results_document_refuses_other_forms_and_several_queries():
    from types import SimpleNamespace as Q

    with pytest.raises(UsageError, match="CONSTRUCT"):
        _document("sparql-json", [Answer("c", T0, T0, triples=((f"<{EX}a>", f"<{EX}p>", '"x"'),))])
    with pytest.raises(UsageError, match="one query's results.*2 SELECT queries"):
        writers.check_format("sparql-json", [Q(name="a", form="select"), Q(name="b", form="select")])
    writers.check_format("sparql-json", [Q(name="a", form="select"), Q(name="b", form="select")], per_query=True)


# ================================================================ RDF

CONSTRUCTS = [
    Answer("c", T0 + 1, T0 + 1250, triples=((f"<{EX}ACME>", f"<{EX}crashed>", '"yes"@en'),
                                            ("_:c0", f"<{EX}p>", f"<{EX}ACME>"))),
    Answer("c", T0 + 2000, T0 + 2000, triples=((f"<{EX}ACME>", f"<{EX}note>", '"line\\nbreak \\"q\\""'),)),
    Answer("odd name/1", T0, T0 + 86_400_000, triples=((f"<{EX}ACME>", f"<{EX}p>", f'"-4"^^<{XSD}integer>'),)),
]


def _written(fmt, answers, batches=1):
    out = io.StringIO()
    w = make_writer(fmt, out)
    table = answers_table(answers)
    for k in range(0, len(answers), -(-len(answers) // batches)):
        w.write(table.slice(k, -(-len(answers) // batches)))
    w.close()
    return out.getvalue()


@pytest.mark.parametrize("fmt", ["nt", "nq", "trig"])
def test_rdf_outputs_parse_with_rdflib_and_hold_the_triples(fmt):
    from rdflib import Dataset, Graph

    text = _written(fmt, CONSTRUCTS, batches=2)
    assert text == _written(fmt, CONSTRUCTS)
    want = {tuple(_as_rdflib(t) if not t.startswith("_:") else "_:" for t in triple)
            for a in CONSTRUCTS for triple in a.triples}
    if fmt == "nt":
        graph = Graph().parse(data=text, format="nt")
        got = {tuple(t if type(t).__name__ != "BNode" else "_:" for t in triple) for triple in graph}
        assert got == want
        return
    dataset = Dataset()
    dataset.parse(data=text, format="nquads" if fmt == "nq" else "trig")
    got = {tuple(t if type(t).__name__ != "BNode" else "_:" for t in (s, p, o))
           for s, p, o, g in dataset.quads((None, None, None, None))
           if g is not None and str(g).startswith("urn:cep:answer:")}
    assert got == want


@pytest.mark.parametrize("fmt", ["nq", "trig"])
def test_nquads_and_trig_answers_read_back_as_the_same_interval_events(tmp_path, fmt):
    from cep import io as cep_io
    from cep.events import events_of

    path = tmp_path / f"answers.{fmt}"
    path.write_text(_written(fmt, CONSTRUCTS, batches=3), encoding="utf-8")
    rejects = []
    events = events_of(cep_io.read_file(path, rejects))
    assert rejects == []
    got = sorted((e.s if not e.s.startswith("_:") else "_:", e.p, e.o, e.start, e.end) for e in events)
    want = sorted((s if not s.startswith("_:") else "_:", p, o, a.start, a.end) for a in CONSTRUCTS
                  for s, p, o in a.triples)
    assert got == want
    text = path.read_text()
    assert "<urn:cep:answer:c:1>" in text and "<urn:cep:answer:c:2>" in text
    assert "<urn:cep:answer:odd%20name%2F1:1>" in text


# ================================================================ the command


def test_output_format_by_the_out_suffix():
    assert output_format(None, "a.srj") == "sparql-json" and output_format(None, "a.XML") == "sparql-xml"
    assert output_format(None, "a.tsv") == "sparql-tsv" and output_format(None, "a.nq") == "nq"
    assert output_format(None, "a.csv") == "csv" and output_format(None, "a.txt") == "jsonl"
    assert output_format("jsonl", "a.srj") == "jsonl" and output_format(None, None) == "jsonl"


def _cep(*args, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "cep", *map(str, args)], capture_output=True, cwd=cwd, timeout=600)


def test_cli_writes_a_results_document_by_suffix_and_one_file_per_query(tmp_path):
    from rdflib.query import Result

    stock, ticks = ROOT / "rules/stock.rq", ROOT / "examples/stock/ticks.trig"
    plain = _cep("run", stock, "--events", ticks, "-q")
    assert plain.returncode == 0, plain.stderr.decode()
    lines = [json.loads(line) for line in plain.stdout.decode().splitlines()]
    assert lines
    done = _cep("run", stock, "--events", ticks, "-q", "--out", tmp_path / "answers.srj")
    assert done.returncode == 0, done.stderr.decode()
    result = Result.parse(open(tmp_path / "answers.srj", "rb"), format="json")
    assert [str(v) for v in result.vars] == ["company", "price1", "price2", "price3"]
    assert sorted(str(r["company"]) for r in result) == sorted(a["bindings"]["company"]["value"] for a in lines)

    derived = tmp_path / "derived.rq"
    derived.write_text("PREFIX : <http://example.org/>\nPREFIX xsd: <http://www.w3.org/2001/XMLSchema#>\n"
                       + stock.read_text().split("PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>\n", 1)[1]
                       + "\nREGISTER STREAM flagged AS\nCONSTRUCT { ?company :flagged ?price3 }\n"
                         "WHERE { { ?company :hasStockPrice ?price1 } SEQ { ?company :hasStockPrice ?price3 }\n"
                         "  FILTER (?price3 > ?price1 * 1.5) }\n")
    mixed = _cep("run", derived, "--events", ticks, "-q", "--format", "sparql-xml")
    assert mixed.returncode == 2 and b"flagged is a CONSTRUCT query" in mixed.stderr and b"--out DIR/" in mixed.stderr
    folder = tmp_path / "each"
    split = _cep("run", derived, "--events", ticks, "-q", "--format", "sparql-xml", "--out", f"{folder}/")
    assert split.returncode == 0, split.stderr.decode()
    assert sorted(p.name for p in folder.iterdir()) == ["crash_recovery.srx", "flagged.nq"]
    xml = Result.parse(open(folder / "crash_recovery.srx", "rb"), format="xml")
    assert len(list(xml)) == len(lines)
    from rdflib import Dataset

    flagged = Dataset()
    flagged.parse(folder / "flagged.nq", format="nquads")
    assert len(list(flagged.quads((None, None, None, None)))) > 0


# ================================================================== Parquet


def _parquet_answers(table):
    """Answer rows (ANSWER_ROWS) read back as Answers."""
    import pyarrow as pa

    times = {name: table[name].cast(pa.timestamp("ms", tz="UTC")).cast(pa.int64()) for name in ("start", "end")}
    return answers_of(pa.table({name: times.get(name, table[name]) for name in ANSWERS.names}))


@pytest.mark.parametrize("seed", [1, 2])
def test_parquet_holds_every_form_in_detects_schema_and_reads_back_as_the_answers(tmp_path, seed):
    import pyarrow.parquet as pq

    answers = _random_answers(seed)
    path = tmp_path / "answers.parquet"
    with open(path, "w") as out:  # a text stream, as the command opens --out: written through its bytes
        writer = make_writer("parquet", out)
        table = answers_table(answers)
        writer.write(table.slice(0, 100))
        writer.write(table.slice(100, 0))
        writer.write(table.slice(100))
        writer.close()
    back = pq.read_table(path)
    assert back.schema.remove_metadata() == ANSWER_ROWS
    assert back["kind"].to_pylist() == ["answer"] * len(answers)
    assert all(back[name].null_count == len(answers) for name in ("s", "p", "o", "source", "reason", "text"))
    assert _parquet_answers(back) == answers


def test_cli_writes_parquet_by_suffix_one_file_for_select_and_construct_or_one_file_per_query(tmp_path):
    import pyarrow.parquet as pq

    stock, ticks = ROOT / "rules/stock.rq", ROOT / "examples/stock/ticks.trig"
    derived = tmp_path / "derived.rq"
    derived.write_text(stock.read_text() + "\nREGISTER STREAM flagged AS\nCONSTRUCT { ?company :flagged ?price3 }\n"
                       "WHERE { { ?company :hasStockPrice ?price1 } SEQ { ?company :hasStockPrice ?price3 }\n"
                       "  FILTER (?price3 > ?price1 * 1.5) }\n")
    plain = _cep("run", derived, "--events", ticks, "-q")
    assert plain.returncode == 0, plain.stderr.decode()
    lines = plain.stdout.decode().splitlines()
    done = _cep("run", derived, "--events", ticks, "-q", "--out", tmp_path / "answers.parquet")
    assert done.returncode == 0, done.stderr.decode()
    both = pq.read_table(tmp_path / "answers.parquet")
    assert {"crash_recovery", "flagged"} <= set(both["query"].to_pylist())
    assert sorted(map(writers.answer_json, _parquet_answers(both)), key=json.dumps) == \
        sorted(map(json.loads, lines), key=json.dumps)
    folder = tmp_path / "each"
    split = _cep("run", derived, "--events", ticks, "-q", "--format", "parquet", "--out", f"{folder}/")
    assert split.returncode == 0, split.stderr.decode()
    assert sorted(p.name for p in folder.iterdir()) == ["crash_recovery.parquet", "flagged.parquet"]
    assert sum(pq.read_table(f).num_rows for f in folder.iterdir()) == both.num_rows
    nowhere = _cep("run", derived, "--events", ticks, "-q", "--format", "parquet")
    assert nowhere.returncode == 2
    assert nowhere.stderr.decode() == ("cep: error: --format parquet writes a file: give --out FILE.parquet "
                                       "(or --out DIR/, a file per query)\n")


@pytest.mark.parametrize("rules,direct", [
    ("REGISTER QUERY w AS SELECT ?k ?x ?y WHERE { ?k :a ?x } SEQ { ?k :b ?y }", True),
    ("REGISTER QUERY w AS SELECT ?k ?x ?nowhere WHERE { ?k :a ?x }", False),  # ?nowhere unbound
    ("REGISTER QUERY w AS SELECT ?k ?x WHERE { ?k :a ?x }\n"
     "REGISTER QUERY v AS SELECT ?y ?k WHERE { ?k :b ?y }", False),  # two queries' answers
    ("REGISTER QUERY v AS SELECT ?y ?k WHERE { ?k :b ?y }\n"
     "REGISTER QUERY w AS SELECT ?k ?x WHERE { ?k :a ?x }", False),  # ... the first answer the later query's
    ("REGISTER STREAM w AS CONSTRUCT { ?k :c ?x } WHERE { ?k :a ?x }", False),
])
def test_json_lines_of_an_engines_batch_are_those_of_its_answer_table(rules, direct):
    """The JSON Lines writer reads the usual batch of the in-process
    engine (one SELECT query, every variable bound) from its columns,
    without the answer table's maps: the same text, in the same order."""
    from cep.engine import Engine
    from cep.events import Event, events_table
    from cep.rules import parse_rules

    engine = Engine(parse_rules(f"PREFIX : <{EX}>\n" + rules, "w.rq"))
    events = [Event(f"<{EX}k{i % 3}>", f"<{EX}{'ab'[i % 2]}>", f'"{i}"^^<{XSD}integer>' if i % 4 else '"caf\u00e9"',
                    T0 + i, T0 + i) for i in range(200)]
    batch = engine.push_table(events_table(events)) + engine.flush_table(final=True)
    assert (batch.select_columns() is not None) == direct
    via_batch, via_table = io.StringIO(), io.StringIO()
    make_writer("jsonl", via_batch).write(batch)
    make_writer("jsonl", via_table).write(batch.answers())
    assert batch.answers().num_rows > 0
    assert via_batch.getvalue() == via_table.getvalue() == "".join(
        json.dumps(writers.answer_json(a), ensure_ascii=False) + "\n" for a in batch.to_list())

