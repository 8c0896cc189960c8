"""Reading background files (cep.background.load): every format, gzip,
blank node labels, the line reader against rdflib's N-Triples parser, the
exact file:line:column of every kind of error, OBO, and the shipped
sensors ontology."""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import pytest
import rdflib
from rdflib.compare import isomorphic

from cep import terms
from cep.background.load import read_ontology
from cep.errors import OntologyError

ROOT = Path(__file__).resolve().parents[2]
TAXSLIM = ROOT.parent / "shared" / "data" / "taxonomy" / "taxslim.obo.gz"
EX = "http://example.org/"
XSD = terms.XSD
RDF_TYPE = terms.iri(terms.RDF + "type")
SUBCLASSOF = terms.iri("http://www.w3.org/2000/01/rdf-schema#subClassOf")
LABEL = terms.iri("http://www.w3.org/2000/01/rdf-schema#label")
OWL_CLASS = terms.iri("http://www.w3.org/2002/07/owl#Class")
OBO = "http://purl.obolibrary.org/obo/"
BLANK = re.compile(r"_:bg[0-9a-f]{8}_[0-9]+\Z")


def ex(name: str) -> str:
    return terms.iri(EX + name)


# One graph, written in each format: a language tag in capitals, typed
# literals that rdflib would normalize (xsd:int "007", a dateTime with an
# offset), kept as written (RDF 1.1 term equality), and escapes.
EXPECTED = {
    (ex("Buoy"), SUBCLASSOF, ex("Platform")),
    (ex("Buoy"), LABEL, '"Boje"@de'),
    (ex("b1"), ex("depth"), f'"5662.369"^^<{XSD}decimal>'),
    (ex("b1"), ex("count"), f'"007"^^<{XSD}int>'),
    (ex("b1"), ex("seen"), f'"2011-03-11T06:19:00+09:00"^^<{XSD}dateTime>'),
    (ex("b1"), ex("note"), '"two\\nlines, \\"quoted\\", caf\u00e9"'),
}
TURTLE = f"""@prefix ex: <{EX}> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd: <{XSD}> .
ex:Buoy rdfs:subClassOf ex:Platform ; rdfs:label "Boje"@DE .
ex:b1 ex:depth 5662.369 ; ex:count "007"^^xsd:int ;
      ex:seen "2011-03-11T06:19:00+09:00"^^xsd:dateTime ;
      ex:note "two\\nlines, \\"quoted\\", caf\\u00e9" .
"""
RDFXML = f"""<?xml version="1.0" encoding="utf-8"?>
<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"
         xmlns:rdfs="http://www.w3.org/2000/01/rdf-schema#" xmlns:ex="{EX}">
  <rdf:Description rdf:about="{EX}Buoy">
    <rdfs:subClassOf rdf:resource="{EX}Platform"/>
    <rdfs:label xml:lang="DE">Boje</rdfs:label>
  </rdf:Description>
  <rdf:Description rdf:about="{EX}b1">
    <ex:depth rdf:datatype="{XSD}decimal">5662.369</ex:depth>
    <ex:count rdf:datatype="{XSD}int">007</ex:count>
    <ex:seen rdf:datatype="{XSD}dateTime">2011-03-11T06:19:00+09:00</ex:seen>
    <ex:note>two
lines, "quoted", caf\u00e9</ex:note>
  </rdf:Description>
</rdf:RDF>
"""
NTRIPLES_LINES = [
    f"<{EX}Buoy> <http://www.w3.org/2000/01/rdf-schema#subClassOf> <{EX}Platform> .",
    f'<{EX}Buoy> <http://www.w3.org/2000/01/rdf-schema#label> "Boje"@DE .',
    f'<{EX}b1> <{EX}depth> "5662.369"^^<{XSD}decimal> .',
    f'<{EX}b1> <{EX}count> "007"^^<{XSD}int> .',
    f'<{EX}b1> <{EX}seen> "2011-03-11T06:19:00+09:00"^^<{XSD}dateTime> .',
    f'<{EX}b1> <{EX}note> "two\\nlines, \\"quoted\\", caf\\u00E9" .',
]
SAMPLES = {
    "sample.ttl": TURTLE,
    "sample.rdf": RDFXML,
    "sample.owl": RDFXML,
    "sample.xml": RDFXML,
    "sample.nt": "# a comment line\n\n" + "\n".join(NTRIPLES_LINES) + "\n",
    # graph names are dropped, and a triple in two graphs is one triple
    "sample.nq": "\n".join(f"{line[:-1]} <{EX}g{i % 2}> ." for i, line in enumerate(NTRIPLES_LINES))
                 + f"\n{NTRIPLES_LINES[0][:-1]} <{EX}g9> .\n{NTRIPLES_LINES[0]}\n",
    "sample.trig": TURTLE.replace("ex:Buoy rdfs:subClassOf ex:Platform ;",
                                  "ex:g { ex:Buoy rdfs:subClassOf ex:Platform }\nex:Buoy"),
}


@pytest.mark.parametrize("name", SAMPLES)
def test_every_format_gives_the_same_canonical_triples(tmp_path, name):
    path = tmp_path / name
    path.write_text(SAMPLES[name], encoding="utf-8")
    triples = read_ontology(path)
    assert set(triples) == EXPECTED
    assert len(triples) == len(EXPECTED)


@pytest.mark.parametrize("name", ["sample.ttl", "sample.nt", "sample.rdf"])
def test_gzipped_files_read_as_the_plain_ones(tmp_path, name):
    path = tmp_path / (name + ".gz")
    path.write_bytes(gzip.compress(SAMPLES[name].encode("utf-8")))
    assert set(read_ontology(path)) == EXPECTED


def test_ntriples_come_out_in_file_order(tmp_path):
    path = tmp_path / "ordered.nt"
    path.write_text("\n".join(reversed(NTRIPLES_LINES)) + "\n", encoding="utf-8")
    assert [t[2] for t in read_ontology(path)][-1] == ex("Platform")


# ------------------------------------------------------------ blank nodes


def test_blank_nodes_are_labelled_per_file(tmp_path):
    text = f"_:b0 <{EX}p> _:b1 .\n_:b1 <{EX}p> _:b0 .\n"
    first, second = tmp_path / "one.nt", tmp_path / "two.nt"
    first.write_text(text)
    second.write_text(text)
    a, b = read_ontology(first), read_ontology(second)
    labels_a, labels_b = {a[0][0], a[0][2]}, {b[0][0], b[0][2]}
    assert all(BLANK.match(label) for label in labels_a | labels_b)
    assert len(labels_a) == 2 and not labels_a & labels_b
    assert a[1] == (a[0][2], a[0][1], a[0][0])  # one label per node within a file
    assert read_ontology(first) == a  # and the same labels on every read


def test_blank_nodes_of_rdflib_formats_are_labelled_the_same_way(tmp_path):
    path = tmp_path / "nodes.ttl"
    path.write_text(f"@prefix ex: <{EX}> .\nex:a ex:p [ ex:q _:x ] .\n_:x ex:r ex:b .\n")
    triples = read_ontology(path)
    assert triples == read_ontology(path)
    nodes = {t for triple in triples for t in triple if t.startswith("_:")}
    assert len(nodes) == 2 and all(BLANK.match(n) for n in nodes)


# A sample for the line reader against rdflib's own N-Triples parser:
# literals of many datatypes in canonical and other forms, escapes in
# literals and IRIs, language tags, blank nodes.
PARITY = [
    f'<{EX}s> <{EX}p> "plain" .',
    f'<{EX}s> <{EX}p> "tab\\there\\r\\n \\\\ \\" \\u00e9\\U0001F600 \u00e9" .',
    f'<{EX}s> <{EX}p> "Hallo"@de-AT .',
    f'<{EX}s> <{EX}p> "typed string"^^<{XSD}string> .',
    f'<{EX}s> <{EX}p> "007"^^<{XSD}int> .',
    f'<{EX}s> <{EX}p> "1.50"^^<{XSD}float> .',
    f'<{EX}s> <{EX}p> "+01"^^<{XSD}integer> .',
    f'<{EX}s> <{EX}p> "42"^^<{XSD}integer> .',
    f'<{EX}s> <{EX}p> "1_000"^^<{XSD}integer> .',
    f'<{EX}s> <{EX}p> "not a number"^^<{XSD}integer> .',
    f'<{EX}s> <{EX}p> "1.50"^^<{XSD}decimal> .',
    f'<{EX}s> <{EX}p> "-0.5"^^<{XSD}decimal> .',
    f'<{EX}s> <{EX}p> "1e3"^^<{XSD}double> .',
    f'<{EX}s> <{EX}p> "1.0E3"^^<{XSD}double> .',
    f'<{EX}s> <{EX}p> "1"^^<{XSD}boolean> .',
    f'<{EX}s> <{EX}p> "true"^^<{XSD}boolean> .',
    f'<{EX}s> <{EX}p> "2020-01-01T10:00Z"^^<{XSD}dateTime> .',
    f'<{EX}s> <{EX}p> "2020-01-01T10:00:00Z"^^<{XSD}dateTime> .',
    f'<{EX}s> <{EX}p> "2020-01-01T10:00:00.123456+02:00"^^<{XSD}dateTime> .',
    f'<{EX}s> <{EX}p> "2020-01-01"^^<{XSD}date> .',
    f'<{EX}s> <{EX}p> "P1Y2M"^^<{XSD}duration> .',
    f'<{EX}s> <{EX}p> "POINT(1 2)"^^<http://www.opengis.net/ont/geosparql#wktLiteral> .',
    f'<{EX}caf\\u00E9> <{EX}p> <{EX}x> .',
    f"_:a <{EX}p> _:b .",
    f'_:b <{EX}p> "blank"@en .',
    f"<{EX}s>\t<{EX}p>\t_:a\t.\t# a comment",
]


def test_the_line_reader_agrees_with_rdflibs_ntriples_parser(tmp_path):
    path = tmp_path / "parity.nt"
    path.write_text("\n".join(PARITY) + "\n", encoding="utf-8")
    ours = read_ontology(path)
    with terms.rdflib_as_written():
        theirs = [tuple(map(terms.from_rdflib, t)) for t in rdflib.Graph().parse(path, format="nt")]
    # blank node labels are the only freedom: rdflib draws random ones
    assert {t for t in ours if "_:" not in "".join(t)} == {t for t in theirs if "_:" not in "".join(t)}
    # every line is a triple of its own: literals keep their lexical form
    # (1e3 and 1.0E3, 1 and true are other terms of one value)
    assert len(ours) == len(set(theirs)) == len(PARITY)
    assert (ex("s"), ex("p"), f'"+01"^^<{XSD}integer>') in ours
    assert isomorphic(_graph(ours), _graph(theirs))


def _graph(triples) -> rdflib.Graph:
    return rdflib.Graph().parse(data="".join(f"{s} {p} {o} .\n" for s, p, o in triples), format="nt")


def test_a_40000_class_hierarchy_in_gzipped_n_triples(tmp_path):
    lines = []
    for i in range(1, 40000):
        lines.append(f"<{EX}C{i}> <http://www.w3.org/2000/01/rdf-schema#subClassOf> <{EX}C{(i - 1) // 3}> .")
        lines.append(f'<{EX}C{i}> <http://www.w3.org/2000/01/rdf-schema#label> "class {i}"@en .')
    path = tmp_path / "classes.nt.gz"
    path.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    triples = read_ontology(path)
    assert len(triples) == 79998


# ----------------------------------------------------------------- errors

XML_HEAD = ('<?xml version="1.0"?>\n<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" '
            'xmlns:x="http://x/">\n <rdf:Description rdf:about="http://x/a">\n')
ERRORS = [
    ("statement.ttl", "@prefix : <http://x/> .\n:a :b :c .\n:a :b \n  :c :d .\n",
     "4:6", "Turtle syntax error: expected '.' or '}' or ']' at end of statement"),
    ("eof.ttl", "@prefix : <http://x/> .\n:a :b :c .\n:a :b :c\n\n",
     "3:9", "Turtle syntax error: EOF found after object"),
    ("prefix.ttl", "@prefix : <http://x/> .\n:a :b :c .\n:a nope:b :c .\n",
     "3:4", 'Turtle syntax error: Prefix "nope:" not bound'),
    ("block.trig", "@prefix : <http://x/> .\n:g {\n :a :b :c .\n :a :b }\n",
     "4:7", "TriG syntax error: objectList expected"),
    ("tag.rdf", XML_HEAD + "  <x:p>v</x:q>\n </rdf:Description>\n</rdf:RDF>\n",
     "4:11", "RDF/XML syntax error: mismatched tag"),
    ("attributes.owl",
     XML_HEAD + '  <x:p rdf:resource="http://x/b" rdf:nodeID="n"/>\n </rdf:Description>\n</rdf:RDF>\n',
     "4:3", "RDF/XML error: Property element cannot have both rdf:nodeID and rdf:resource"),
    ("object.nt", "<http://x/a> <http://x/b> <http://x/c> .\n<http://x/a> <http://x/b> .\n",
     "2:27", 'N-Triples syntax error: expected the object, an IRI <...>, a blank node _:label or a literal "...", '
             "but found '.'"),
    ("string.nt", '<http://x/a> <http://x/b> "abc .\n',
     "1:27", 'N-Triples syntax error: expected the object, an IRI <...>, a blank node _:label or a literal "...", '
             "but found a string that does not end on this line"),
    ("iri.nt", "<http://x/a> <http://x/b c> <http://x/c> .\n",
     "1:14", "N-Triples syntax error: expected the predicate, an IRI <...>, but found <http://x/b c> "
             "(IRIs cannot hold spaces, quotes, <, >, {, }, |, ^, ` or backslashes)"),
    ("graph.nt", "<http://x/a> <http://x/b> <http://x/c> <http://x/g> .\n",
     "1:40", "N-Triples syntax error: expected '.' after the object, but found <http://x/g>"),
    ("trailing.nt", "<http://x/a> <http://x/b> <http://x/c> . junk\n",
     "1:41", "N-Triples syntax error: expected the end of the line after '.', but found 'junk'"),
    ("escape.nt", '<http://x/a> <http://x/b> "a\\qb" .\n',
     "1:27", "N-Triples syntax error: unknown escape \\q"),
    ("relative.nq", "<http://x/a> <http://x/b> <http://x/c> <http://x/g> .\n<a> <http://x/b> <http://x/c> .\n",
     "2:1", "N-Quads syntax error: relative IRI <a>: N-Triples needs absolute IRIs"),
    ("dot.nq", "<http://x/a> <http://x/b> <http://x/c> <http://x/g>\n",
     "1:52", "N-Quads syntax error: expected a graph name or '.' after the object, but found the end of the line"),
    ("parent.obo", "format-version: 1.2\n\n[Term]\nid: EX:1\nis_a: ! nothing\n",
     "5", "OBO syntax error: is_a: needs an id such as GO:0008150"),
    ("noid.obo", "[Term]\nid: EX:1\n\n[Term]\nname: nameless\n\n[Term]\nid: EX:3\n",
     "4", "OBO syntax error: this [Term] stanza has no id: line"),
    ("prefixless.obo", "[Term]\nid: EX:1\nis_a: thing\n",
     "3", "OBO syntax error: is_a: thing is neither PREFIX:LOCAL (GO:0008150) nor an http(s) IRI"),
    ("header.obo", "[Term]\nid: EX:1\n[Term\n",
     "3", "OBO syntax error: expected a stanza header such as [Term], but found '[Term'"),
    ("tagless.obo", "[Term]\nid: EX:1\njust words\n",
     "3", "OBO syntax error: expected `tag: value`, but found 'just words'"),
]


@pytest.mark.parametrize("name, text, where, message", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_name_the_file_line_and_column(tmp_path, name, text, where, message):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(OntologyError) as caught:
        read_ontology(path)
    assert caught.value.pos == f"{path}:{where}"
    assert str(caught.value) == f"{path}:{where}: {message}"


def test_errors_in_a_gzipped_file_count_its_lines(tmp_path):
    path = tmp_path / "bad.nt.gz"
    path.write_bytes(gzip.compress(b"<http://x/a> <http://x/b> <http://x/c> .\n\n<http://x/a> oops .\n"))
    with pytest.raises(OntologyError, match=r"bad\.nt\.gz:3:14: N-Triples syntax error: expected the predicate"):
        read_ontology(path)


def test_a_file_that_is_not_utf8(tmp_path):
    path = tmp_path / "latin1.ttl"
    path.write_bytes(b'@prefix : <http://x/> .\n:a :b "caf\xe9" .\n')
    with pytest.raises(OntologyError) as caught:
        read_ontology(path)
    assert str(caught.value) == f"{path}:2:11: not UTF-8 text (byte 35 of the file)"


def test_a_missing_file_and_an_unknown_type(tmp_path):
    with pytest.raises(OntologyError) as caught:
        read_ontology(tmp_path / "absent.ttl")
    assert str(caught.value) == f"{tmp_path / 'absent.ttl'}: no such file"
    path = tmp_path / "notes.txt"
    path.write_text("hello")
    with pytest.raises(OntologyError) as caught:
        read_ontology(path)
    assert str(caught.value) == (f"{path}: unknown background file type .txt; background files end in .ttl, "
                                 ".rdf, .owl, .xml, .trig, .nt, .nq, .obo, optionally followed by .gz")


def test_a_broken_gzip_file(tmp_path):
    path = tmp_path / "broken.ttl.gz"
    path.write_bytes(gzip.compress(b"@prefix : <http://x/> .\n")[:-6])
    with pytest.raises(OntologyError, match=r"broken\.ttl\.gz: not a complete gzip file"):
        read_ontology(path)


# -------------------------------------------------------------------- OBO

OBO_SAMPLE = """format-version: 1.2
ontology: example

[Term]
id: EX:1
name: thing \\! that bangs ! a comment

[Term]
id: EX:2
name: part
is_a: EX:1 {source="manual"} ! thing
is_obsolete: false

[Term]
id: EX:3
name: gone
is_a: EX:1
is_obsolete: true

[Term]
id: http://example.org/other
is_a: EX:2

[Typedef]
id: part_of
name: part of
"""


def test_obo_terms_become_classes(tmp_path):
    path = tmp_path / "sample.obo"
    path.write_text(OBO_SAMPLE)
    one, two, other = terms.iri(OBO + "EX_1"), terms.iri(OBO + "EX_2"), ex("other")
    assert read_ontology(path) == [
        (one, RDF_TYPE, OWL_CLASS),
        (one, LABEL, '"thing ! that bangs"'),
        (two, RDF_TYPE, OWL_CLASS),
        (two, LABEL, '"part"'),
        (two, SUBCLASSOF, one),
        (other, RDF_TYPE, OWL_CLASS),
        (other, SUBCLASSOF, two),
    ]


needs_taxslim = pytest.mark.skipif(
    not TAXSLIM.exists(), reason=f"{TAXSLIM} is absent (shared data, not in the repository)")


@needs_taxslim
def test_the_ncbi_taxonomy_slice():
    triples = read_ontology(TAXSLIM)
    assert sum(1 for t in triples if t[1:] == (RDF_TYPE, OWL_CLASS)) == 14907
    human, homo = terms.iri(OBO + "NCBITaxon_9606"), terms.iri(OBO + "NCBITaxon_9605")
    # taxslim.obo: "id: NCBITaxon:9606 / name: Homo sapiens / ... / is_a: NCBITaxon:9605 ! Homo"
    assert (human, SUBCLASSOF, homo) in triples
    assert (human, LABEL, '"Homo sapiens"') in triples
    # "id: NCBITaxon:10 / name: Cellvibrio / ... / is_a: NCBITaxon:1706371 ! Cellvibrionaceae"
    assert (terms.iri(OBO + "NCBITaxon_10"), SUBCLASSOF, terms.iri(OBO + "NCBITaxon_1706371")) in triples
    assert not any(t[0] == terms.iri(OBO + "NCBITaxon_1") and t[1] == SUBCLASSOF for t in triples)


# ------------------------------------------------------ the shipped sample


def test_the_sensors_ontology():
    triples = read_ontology(ROOT / "ontologies" / "sensors.ttl")
    s = "http://example.org/sensors#"
    sosa = "http://www.w3.org/ns/sosa/"
    assert (terms.iri(s + "DARTBuoy"), SUBCLASSOF, terms.iri(s + "TsunamiBuoy")) in triples
    assert (terms.iri(s + "waterColumnHeight"), terms.iri("http://www.w3.org/2000/01/rdf-schema#subPropertyOf"),
            terms.iri(sosa + "hasSimpleResult")) in triples
    assert (terms.iri(s + "station21418"), LABEL, '"DART 21418"') in triples
    assert len(triples) == len(set(triples)) == 46


@pytest.mark.parametrize("name, text", [
    # (rdflib's Turtle reader writes a bare integer token 01 as "1": the quoted form is kept)
    ("dates.ttl", f'@prefix xsd: <{XSD}> .\n<{EX}d> <{EX}p> "2006-08-23Z"^^xsd:date , "01"^^xsd:integer , 1.0e0 .\n'),
    ("dates.nt", f'<{EX}d> <{EX}p> "2006-08-23Z"^^<{XSD}date> .\n<{EX}d> <{EX}p> "01"^^<{XSD}integer> .\n'
                 f'<{EX}d> <{EX}p> "1.0e0"^^<{XSD}double> .\n'),
])
def test_background_literals_keep_their_lexical_form(tmp_path, name, text):
    """rdflib would drop the date's time zone and write 01 as 1 (issue 19)."""
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    assert {o for _, _, o in read_ontology(path)} == {
        f'"2006-08-23Z"^^<{XSD}date>', f'"01"^^<{XSD}integer>', f'"1.0e0"^^<{XSD}double>'}
