"""The shipped ontologies are valid Turtle and describe what the shipped
samples mention."""

from pathlib import Path

import pytest
import rdflib
from rdflib.namespace import RDF, RDFS

ROOT = Path(__file__).resolve().parents[2]
ONTOLOGIES = sorted((ROOT / "ontologies").glob("*.ttl"))


@pytest.mark.parametrize("path", ONTOLOGIES, ids=lambda p: p.name)
def test_every_ontology_is_turtle_with_classes_and_properties(path):
    g = rdflib.Graph().parse(path, format="turtle")
    assert set(g.subjects(RDF.type, RDFS.Class))
    assert set(g.subjects(RDF.type, RDF.Property))
    # every class used as a type or superclass is declared
    declared = set(g.subjects(RDF.type, RDFS.Class))
    used = set(g.objects(None, RDFS.subClassOf)) | {
        o for s, o in g.subject_objects(RDF.type) if o not in (RDFS.Class, RDF.Property)}
    assert used <= declared


def test_the_stock_ontology_describes_the_stock_sample():
    onto = rdflib.Graph().parse(ROOT / "ontologies" / "stock.ttl", format="turtle")
    stream = rdflib.Dataset()
    stream.parse(ROOT / "examples" / "stock" / "ticks.trig", format="trig")
    companies = set(onto.subjects(RDF.type, rdflib.URIRef("http://example.org/ListedCompany")))
    properties = set(onto.subjects(RDF.type, RDF.Property))
    quads = [q for q in stream.quads() if q[3] is not None and q[3] != stream.default_graph.identifier]
    seen = {(s, p) for s, p, o, _ in quads if p != rdflib.URIRef("http://www.w3.org/ns/prov#generatedAtTime")}
    assert seen
    for s, p in seen:
        assert s in companies, s
        assert p in properties, p
