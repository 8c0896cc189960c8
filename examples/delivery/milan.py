"""Milan's metro and tram stop lists -> the delivery app's network (network.py).

    python -m examples.delivery.milan ../shared/data/roads/milan_gtfs_2019/metro.csv \\
        ../shared/data/roads/milan_gtfs_2019/tram.csv -o milan.ttl

Takes CSV files with the columns route_id, stop_name, stop_lat, stop_lon
and stop_sequence (the ordered stops of each line, as extracted from
Milan's GTFS feed; other columns are ignored); returns a Network of stops
(IRIs under NS + "milan/stop/", labelled with the stop's name) where
consecutive stops of a line are linked both ways (the lists give one
direction; the lines run both).

Interchanges are joined, as PROVENANCE.md of the data describes:
- stops of the same name are one stop (CENTRALE FS on M2 and M3), and a
  name differs in case only, or by line suffixes such as " M1" or " m1 m3",
  is the same name (DUOMO M1, DUOMO M3 and the tram's "duomo m1 m3"; the
  stop is placed at its platforms' mean position);
- stops of different names closer than `walk_m` metres (default 150) are
  linked both ways, a walk between platforms (CADORNA FN M1 and the tram's
  "cadorna m1 m2").

A row that cannot be read (a missing column, a coordinate that is not a
number) is an OntologyError naming the file and line.
"""

from __future__ import annotations

import argparse
import csv
import math
import re
import sys
from pathlib import Path
from urllib.parse import quote

from cep.errors import OntologyError
from examples.delivery.network import NS, Network, project

STOP = NS + "milan/stop/"
COLUMNS = ("route_id", "stop_name", "stop_sequence", "stop_lat", "stop_lon")
_SUFFIX = re.compile(r"(\s+m\d)+$", re.IGNORECASE)


def stop_key(name: str) -> str:
    """The interchange name: upper case, single spaces, line suffixes off."""
    name = " ".join(name.split()).upper()
    return _SUFFIX.sub("", name) or name


def read_lines(path) -> list[tuple[str, list[tuple[str, float, float]]]]:
    """[(line, [(stop name, lat, lon), ...] in stop_sequence order)] of one file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise OntologyError("no such file", str(path)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise OntologyError(f"cannot read the file: {exc}", str(path)) from None
    reader = csv.DictReader(text.splitlines())
    missing = [c for c in COLUMNS if c not in (reader.fieldnames or ())]
    if missing:
        raise OntologyError(f"missing column(s) {', '.join(missing)} in the header "
                            f"(expected {', '.join(COLUMNS)})", f"{path}:1")
    lines: dict[str, list] = {}
    for row in reader:
        where = f"{path}:{reader.line_num}"
        try:
            seq = int(row["stop_sequence"])
            lat, lon = float(row["stop_lat"]), float(row["stop_lon"])
        except (TypeError, ValueError):
            raise OntologyError("stop_sequence must be an integer and stop_lat, stop_lon numbers: "
                                f"{row.get('stop_sequence')!r}, {row.get('stop_lat')!r}, "
                                f"{row.get('stop_lon')!r}", where) from None
        if not (row["stop_name"] or "").strip() or not (row["route_id"] or "").strip():
            raise OntologyError("empty route_id or stop_name", where)
        lines.setdefault(row["route_id"].strip(), []).append((seq, row["stop_name"], lat, lon))
    return [(line, [(name, lat, lon) for _, name, lat, lon in sorted(stops, key=lambda s: s[0])])
            for line, stops in lines.items()]


def read_milan(paths, walk_m: float = 150.0) -> Network:
    platforms: dict[str, list[tuple[float, float]]] = {}
    labels: dict[str, str] = {}
    sequences = []
    for path in paths:
        for line, stops in read_lines(path):
            keys = []
            for name, lat, lon in stops:
                key = stop_key(name)
                platforms.setdefault(key, []).append((lat, lon))
                labels.setdefault(key, key)
                keys.append(key)
            sequences.append(keys)
    iri = {key: STOP + quote(key.lower().replace(" ", "_"), safe="_.-") for key in platforms}
    where = {iri[k]: (sum(p[0] for p in ps) / len(ps), sum(p[1] for p in ps) / len(ps))
             for k, ps in platforms.items()}
    net = Network()
    net.nodes.update(project(where))
    net.labels.update({iri[k]: labels[k] for k in platforms})
    for keys in sequences:
        for a, b in zip(keys, keys[1:]):
            net.add_link(iri[a], iri[b])
    names = sorted(platforms)
    for i, a in enumerate(names):  # walks between nearby platforms of other names
        for b in names[i + 1:]:
            if _metres(where[iri[a]], where[iri[b]]) < walk_m:
                net.add_link(iri[a], iri[b])
    return net


def _metres(p, q) -> float:
    k = math.pi / 180 * 6_371_000.0
    return math.hypot((p[0] - q[0]) * k, (p[1] - q[1]) * k * math.cos(math.radians(p[0])))


def main(argv=None):
    ap = argparse.ArgumentParser(description="Convert Milan's metro/tram stop lists to the delivery app's "
                                             "Turtle network.")
    ap.add_argument("csv", nargs="+", help="stop list CSV files (metro.csv, tram.csv)")
    ap.add_argument("-o", "--out", help="the Turtle file to write (default: standard output)")
    ap.add_argument("--walk", type=float, default=150.0, metavar="METRES",
                    help="link stops of different names closer than this (default 150)")
    args = ap.parse_args(argv)
    try:
        net = read_milan(args.csv, args.walk)
    except OntologyError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    text = net.to_turtle("Milan metro/tram network converted by examples/delivery/milan.py from "
                         + ", ".join(Path(p).name for p in args.csv)
                         + ".\nStop lists from the GTFS feed of AMAT / Comune di Milano (2019).")
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    print(f"{len(net.nodes)} stops, {len(net.links)} links", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
