"""OpenStreetMap XML (0.6) -> the delivery app's road network (network.py).

    python -m examples.delivery.osm ../shared/data/roads/santagata_bolognese_map.osm -o santagata.ttl

Takes an .osm file (plain, .bz2 or .gz); returns a Network whose nodes are
the road network's junctions and dead ends, named by their OSM node IRIs
(https://www.openstreetmap.org/node/ID), with coordinates in metres from
the extract's south-west corner and, as label, the name of a street
through them.

- Roads are the ways tagged `highway=` with a value vans drive on
  (DRIVABLE: motorway down to residential, service and living streets,
  and their _link ramps); footways, paths, cycleways, steps, tracks and
  the like are left out.
- `oneway=yes|true|1` gives links in the way's direction only,
  `oneway=-1` against it, and `junction=roundabout` implies one-way.
- Nodes that only shape a street (on one way, not at its ends) are
  dropped: a link joins consecutive junctions along a way. A dispatch
  system routes between junctions, and it keeps the graph a few times
  smaller, which is what the rules' transitive closures walk.

A file that is not well-formed XML, or a way that names a node the file
does not hold, is an OntologyError naming the file and line.
"""

from __future__ import annotations

import argparse
import bz2
import gzip
import sys
import xml.parsers.expat
from pathlib import Path

from cep.errors import OntologyError
from examples.delivery.network import Network, project

NODE = "https://www.openstreetmap.org/node/"
DRIVABLE = frozenset({
    "motorway", "trunk", "primary", "secondary", "tertiary", "unclassified", "residential",
    "motorway_link", "trunk_link", "primary_link", "secondary_link", "tertiary_link",
    "living_street", "service", "road",
})


def _open(path: Path):
    name = path.name.lower()
    if name.endswith(".bz2"):
        return bz2.open(path, "rb")
    if name.endswith(".gz"):
        return gzip.open(path, "rb")
    return open(path, "rb")


class _Reader:
    """Collects nodes and highway ways with expat, which knows the line of
    every element (for error messages)."""

    def __init__(self, name: str):
        self.name = name
        self.parser = xml.parsers.expat.ParserCreate()
        self.parser.StartElementHandler = self.start
        self.parser.EndElementHandler = self.end
        self.points: dict[str, tuple[float, float]] = {}
        self.ways: list[tuple[int, list[str], dict]] = []  # (line, node ids, tags)
        self.way = None
        self.root = None

    def where(self) -> str:
        return f"{self.name}:{self.parser.CurrentLineNumber}"

    def start(self, tag, attrs):
        if self.root is None:
            self.root = tag
            if tag != "osm":
                raise OntologyError(f"not an OpenStreetMap XML file: the root element is <{tag}>, "
                                    "not <osm>", self.where())
        if tag == "node":
            try:
                self.points[attrs["id"]] = (float(attrs["lat"]), float(attrs["lon"]))
            except (KeyError, ValueError):
                raise OntologyError("a <node> needs an id and numeric lat and lon attributes",
                                    self.where()) from None
        elif tag == "way":
            self.way = (self.parser.CurrentLineNumber, [], {})
        elif self.way is not None and tag == "nd":
            if "ref" not in attrs:
                raise OntologyError("an <nd> needs a ref attribute", self.where())
            self.way[1].append(attrs["ref"])
        elif self.way is not None and tag == "tag":
            self.way[2][attrs.get("k", "")] = attrs.get("v", "")

    def end(self, tag):
        if tag == "way":
            if self.way[2].get("highway") in DRIVABLE:
                self.ways.append(self.way)
            self.way = None

    def read(self, stream):
        try:
            self.parser.ParseFile(stream)
        except xml.parsers.expat.ExpatError as exc:
            raise OntologyError(f"malformed XML: {xml.parsers.expat.ErrorString(exc.code)}",
                                f"{self.name}:{exc.lineno}:{exc.offset + 1}") from None
        except (OSError, EOFError) as exc:
            raise OntologyError(f"cannot read the file: {exc}", self.name) from None


def read_osm(path) -> Network:
    path = Path(path)
    if not path.exists():
        raise OntologyError("no such file", str(path))
    reader = _Reader(str(path))
    with _open(path) as stream:
        reader.read(stream)
    if reader.root is None:
        raise OntologyError("empty file: no <osm> element", str(path))
    for line, refs, _ in reader.ways:
        for ref in refs:
            if ref not in reader.points:
                raise OntologyError(f"the way refers to node {ref}, which the file does not hold",
                                    f"{path}:{line}")
    # a junction is a node on two ways, or used twice by one (a loop), or a way's end
    uses: dict[str, int] = {}
    for _, refs, _ in reader.ways:
        for ref in refs:
            uses[ref] = uses.get(ref, 0) + 1
    keep = {ref for ref, n in uses.items() if n > 1}
    keep |= {refs[i] for _, refs, _ in reader.ways if refs for i in (0, -1)}
    net = Network()
    names: dict[str, str] = {}
    for _, refs, tags in reader.ways:
        stops = [ref for ref in refs if ref in keep]
        oneway = tags.get("oneway", "").lower()
        forward = oneway in ("yes", "true", "1") or tags.get("junction") == "roundabout"
        if oneway == "-1":
            stops.reverse()
        for a, b in zip(stops, stops[1:]):
            net.add_link(NODE + a, NODE + b, both=not (forward or oneway == "-1"))
        if "name" in tags:
            for ref in stops:
                names.setdefault(ref, tags["name"])
    used = {n for link in net.links for n in link}
    xy = project({NODE + ref: reader.points[ref] for ref in sorted(keep, key=int)
                  if NODE + ref in used})
    net.nodes.update(xy)
    net.labels.update({NODE + ref: name for ref, name in names.items() if NODE + ref in used})
    return net


def main(argv=None):
    ap = argparse.ArgumentParser(description="Convert OpenStreetMap XML to the delivery app's Turtle road graph.")
    ap.add_argument("osm", help="an .osm file (.osm.bz2, .osm.gz too)")
    ap.add_argument("-o", "--out", help="the Turtle file to write (default: standard output)")
    args = ap.parse_args(argv)
    try:
        net = read_osm(args.osm)
    except OntologyError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    text = net.to_turtle(f"Road network converted from {Path(args.osm).name} by examples/delivery/osm.py.\n"
                         "Map data (c) OpenStreetMap contributors, ODbL 1.0.")
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    print(f"{len(net.nodes)} junctions, {len(net.links)} links, {len(net.segments())} segments",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
