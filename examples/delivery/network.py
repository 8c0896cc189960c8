"""Road networks of the delivery app: a graph of places (nodes with planar
coordinates in metres) and directed road links, written as the Turtle
background knowledge the rules read, and read back from it.

Vocabulary (prefix `dl:` = NS):

    node dl:x 1200 ; dl:y 300 ; rdfs:label "Via Roma" .   coordinates in metres (integers)
    a dl:link b .    the map as built: a road from a to b (never changes)
    a dl:road b .    the road from a to b is open now: the rules' update
                     rules delete it on a closure and insert it again on a
                     reopening, so `dl:road` is the network as of each event

A two-way street is two links. The converters (osm.py, milan.py) and the
city generator (city.py) build a Network; `read_network` gives one back
from a Turtle file, for the scenario generator, the app and the plot.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

NS = "http://example.org/delivery/"
RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
EARTH_RADIUS_M = 6_371_000.0


# No property here is a subproperty of another: an update that deletes a
# dl:road triple must not take a dl:link with it, nor the reverse.
SCHEMA = """\
dl:Place a rdfs:Class ; rdfs:comment "A place of the road network: a junction, a dead end, a stop." .
dl:link a rdf:Property ; rdfs:domain dl:Place ; rdfs:range dl:Place ;
    rdfs:comment "A road from the subject to the object, on the map as built." .
dl:road a rdf:Property ; rdfs:domain dl:Place ; rdfs:range dl:Place ;
    rdfs:comment "The road from the subject to the object is open (changed by the update rules)." .
dl:x a rdf:Property ; rdfs:domain dl:Place ; rdfs:comment "Metres east of the map's origin." .
dl:y a rdf:Property ; rdfs:domain dl:Place ; rdfs:comment "Metres north of the map's origin." ."""


@dataclass
class Network:
    """Nodes by IRI -> (x, y) in metres, labels by IRI, and directed links
    (a, b) in a fixed order."""

    nodes: dict[str, tuple[int, int]] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)
    links: list[tuple[str, str]] = field(default_factory=list)
    _index: set = field(default_factory=set, repr=False)

    def add_link(self, a: str, b: str, both: bool = True):
        """A road from a to b (and from b to a unless `both` is false);
        loops and repeated links are left out."""
        for pair in ((a, b), (b, a)) if both else ((a, b),):
            if pair[0] != pair[1] and pair not in self._index:
                self.links.append(pair)
                self._index.add(pair)

    def segments(self) -> list[tuple[str, str]]:
        """The undirected road segments, each once (a < b), in link order:
        what a traffic event closes and reopens."""
        seen, out = set(), []
        for a, b in self.links:
            key = (a, b) if a < b else (b, a)
            if key not in seen:
                seen.add(key)
                out.append(key)
        return out

    def successors(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {n: [] for n in self.nodes}
        for a, b in self.links:
            out[a].append(b)
        return out

    def largest_component(self) -> list[str]:
        """The nodes of the largest strongly connected component (every node
        of it reaches every other one over the links), in node order: where
        delivery locations are drawn from, so that every leg has a route
        when no road is closed."""
        succ = self.successors()
        pred: dict[str, list[str]] = {n: [] for n in self.nodes}
        for a, b in self.links:
            pred[b].append(a)
        best: set = set()
        done: set = set()
        for start in self.nodes:
            if start in done:
                continue
            fwd, bwd = _reach(succ, start), _reach(pred, start)
            comp = fwd & bwd
            done |= comp
            if len(comp) > len(best):
                best = comp
        return [n for n in self.nodes if n in best]

    def to_turtle(self, title: str) -> str:
        """The network as Turtle: per node its coordinates and label, then
        its outgoing links, each as dl:link (as built) and dl:road (open)."""
        out = [f"# {line}".rstrip() for line in title.splitlines()]
        out += ["@prefix dl:   <%s> ." % NS,
                "@prefix rdf:  <http://www.w3.org/1999/02/22-rdf-syntax-ns#> .",
                "@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .", "", SCHEMA, ""]
        succ = self.successors()
        for node, (x, y) in self.nodes.items():
            parts = [f"dl:x {x}", f"dl:y {y}"]
            if node in self.labels:
                parts.append(f"rdfs:label {_literal(self.labels[node])}")
            if succ[node]:
                targets = ", ".join(f"<{b}>" for b in succ[node])
                parts += [f"dl:link {targets}", f"dl:road {targets}"]
            out.append(f"<{node}> " + " ;\n    ".join(parts) + " .")
        return "\n".join(out) + "\n"


def _reach(succ: dict, start: str) -> set:
    seen, todo = {start}, [start]
    while todo:
        for nxt in succ[todo.pop()]:
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def _literal(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def project(points: dict[str, tuple[float, float]]) -> dict[str, tuple[int, int]]:
    """(lat, lon) in degrees -> (x, y) in whole metres east and north of the
    south-west corner (equirectangular: exact enough across a town, and
    integers keep the rules' distance arithmetic exact on both engines)."""
    if not points:
        return {}
    lat0 = min(p[0] for p in points.values())
    lon0 = min(p[1] for p in points.values())
    mid = math.radians((lat0 + max(p[0] for p in points.values())) / 2)
    k = math.pi / 180 * EARTH_RADIUS_M
    return {n: (round((lon - lon0) * k * math.cos(mid)), round((lat - lat0) * k))
            for n, (lat, lon) in points.items()}


def read_network(path) -> Network:
    """A Network from a Turtle (or any background) file written as above:
    nodes with dl:x and dl:y, links from dl:link."""
    from cep.background.load import read_ontology
    from cep.terms import split

    coords: dict[str, dict] = {}
    net = Network()
    for s, p, o in read_ontology(Path(path)):
        if not s.startswith("<"):
            continue
        subject = split(s)[1]
        if p == f"<{NS}link>" and o.startswith("<"):
            net.add_link(subject, split(o)[1], both=False)
        elif p in (f"<{NS}x>", f"<{NS}y>"):
            coords.setdefault(subject, {})[p[-2]] = int(float(split(o)[1]))
        elif p == f"<{RDFS_LABEL}>":
            net.labels[subject] = split(o)[1]
    for node, xy in coords.items():
        if "x" in xy and "y" in xy:
            net.nodes[node] = (xy["x"], xy["y"])
    missing = sorted({n for link in net.links for n in link if n not in net.nodes})
    if missing:
        from cep.errors import OntologyError
        raise OntologyError(f"{len(missing)} road node(s) without dl:x/dl:y coordinates, "
                            f"e.g. <{missing[0]}>", str(path))
    return net
