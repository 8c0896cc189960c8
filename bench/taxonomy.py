"""Data for the stream-reasoning benchmark, "Test 2" of the EP-SPARQL paper:
a class hierarchy of tens of thousands of classes, depth >= 8, and a stream
of events `x rdf:type C` whose classes C are leaves under one root class, so
that a query on the root class matches only through rdfs:subClassOf chains.

The hierarchy is WordNet 3.0's nouns (Debian's wordnet-base, installed when
missing): each noun synset is an owl:Class labelled with its first lemma, a
subclass of each of its hypernyms (`@`) and instance hypernyms (`@i`). Its
IRI is http://wordnet-rdf.princeton.edu/wn30/{offset}-n, offset being the
8-digit WordNet 3.0 synset offset (that site's /id/ scheme numbers WordNet
3.1's synsets, whose offsets differ).

    wordnet_hierarchy(out)  data.noun -> out/wordnet30_nouns.nt (N-Triples)
    root_class(hierarchy)   the synset whose subclasses number closest to
                            40,000 among those with depth >= 8 below them
    events(n, out, seed)    out/taxonomy_{n}_seed{seed}.parquet: columns s, p,
                            o (N-Triples text) and t (epoch ms), as in
                            workloads.py: <x{i}> rdf:type <a leaf of the root>
                            at T0 + i ms, leaves drawn uniformly, seeded

Files are written once and reused. As a script it builds both and prints
their figures and how long each step took:

    python bench/taxonomy.py [n] [--out bench/out] [--seed 7]
"""

from __future__ import annotations

import argparse
import os
import random
import re
import subprocess
import time
from pathlib import Path
from typing import Iterator, NamedTuple

import pyarrow as pa
import pyarrow.parquet as pq

from workloads import EX, T0

DATA_NOUN = Path("/usr/share/wordnet/data.noun")
WN30 = "http://wordnet-rdf.princeton.edu/wn30/"
RDF_TYPE = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"
RDFS_LABEL = "<http://www.w3.org/2000/01/rdf-schema#label>"
RDFS_SUBCLASS = "<http://www.w3.org/2000/01/rdf-schema#subClassOf>"
OWL_CLASS = "<http://www.w3.org/2002/07/owl#Class>"
HYPERNYMS = {"@", "@i"}


def ensure_wordnet() -> Path:
    """Install Debian's wordnet-base if data.noun is missing, the way the
    Makefile installs SWI-Prolog."""
    if not DATA_NOUN.exists():
        sudo = [] if os.geteuid() == 0 else ["sudo"]
        # `env` because sudo drops the caller's environment; without
        # recommends, as only the data is needed (not the wordnet browser).
        apt = sudo + ["env", "DEBIAN_FRONTEND=noninteractive", "apt-get", "-qq"]
        install = apt + ["install", "-y", "--no-install-recommends", "wordnet-base"]
        if subprocess.run(install).returncode != 0:
            # a fresh machine may have no package lists yet
            subprocess.run(apt + ["update"], check=True)
            subprocess.run(install, check=True)
    return DATA_NOUN


class Synset(NamedTuple):
    offset: str
    lemma: str
    hypernyms: tuple[str, ...]  # offsets


def synsets(data_noun: Path) -> Iterator[Synset]:
    """The synsets of a WordNet data.noun file (format: wndb(5WN)):
    offset lex_filenum ss_type w_cnt(2 hex digits) {word lex_id}...
    p_cnt(3 decimal digits) {symbol offset pos source/target}... | gloss"""
    with data_noun.open(encoding="utf-8") as f:
        for line in f:
            if line.startswith("  "):  # the license header
                continue
            fields = line.partition(" | ")[0].split()
            offset, w_cnt = fields[0], int(fields[3], 16)
            p_at = 4 + 2 * w_cnt
            p_cnt = int(fields[p_at])
            pointers = fields[p_at + 1 :]
            if len(pointers) != 4 * p_cnt or fields[2] != "n":
                raise ValueError(f"{data_noun}: malformed synset {offset}")
            hypernyms = [pointers[i + 1] for i in range(0, len(pointers), 4)
                         if pointers[i] in HYPERNYMS and pointers[i + 2] == "n"]
            # dict.fromkeys: a synset never gets the same edge twice
            yield Synset(offset, fields[4], tuple(dict.fromkeys(hypernyms)))


def iri(offset: str) -> str:
    return f"<{WN30}{offset}-n>"


def literal(text: str) -> str:
    """A plain literal in canonical N-Triples."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
    return f'"{escaped}"'


def unliteral(term: str) -> str:
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "r": "\r"}.get(m[1], m[1]), term[1:-1])


def wordnet_hierarchy(out: Path) -> Path:
    """WordNet's noun hierarchy as N-Triples, written once."""
    path = out / "wordnet30_nouns.nt"
    if path.exists():
        return path
    out.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")  # no half file is ever taken as the cache
    with partial.open("w", encoding="utf-8") as f:
        for syn in synsets(ensure_wordnet()):
            s = iri(syn.offset)
            f.write(f"{s} {RDF_TYPE} {OWL_CLASS} .\n")
            f.write(f"{s} {RDFS_LABEL} {literal(syn.lemma)} .\n")
            for h in syn.hypernyms:
                f.write(f"{s} {RDFS_SUBCLASS} {iri(h)} .\n")
    partial.replace(path)
    return path


class Hierarchy(NamedTuple):
    labels: dict[str, str]  # class (N-Triples IRI) -> label
    children: dict[str, list[str]]  # class -> its direct subclasses


def read_hierarchy(path: Path) -> Hierarchy:
    """Read back the file wordnet_hierarchy wrote (one triple a line, terms
    separated by single spaces, labels the only literals)."""
    labels, children = {}, {}
    with path.open(encoding="utf-8") as f:
        for line in f:
            s, p, o = line[: -len(" .\n")].split(" ", 2)
            if p == RDFS_LABEL:
                labels[s] = unliteral(o)
            elif p == RDFS_SUBCLASS:
                children.setdefault(o, []).append(s)
    return Hierarchy(labels, children)


class Root(NamedTuple):
    iri: str
    label: str
    subclasses: int  # transitive, the root itself excluded
    depth: int  # edges on the longest subclass chain below the root
    leaves: tuple[str, ...]  # subclasses that have no subclass, sorted


def root_candidates(h: Hierarchy, floor: int = 10_000) -> list[Root]:
    """Every class with at least `floor` subclasses, most subclasses first."""
    depth, bound = {}, {}

    def visit(c: str) -> None:  # recursion as deep as the hierarchy: ~20
        if c not in depth:
            kids = h.children.get(c, [])
            for k in kids:
                visit(k)
            depth[c] = max((depth[k] + 1 for k in kids), default=0)
            # counts a class once per path to it: an upper bound, exact
            # only in a tree; it spares the exact count to most classes
            bound[c] = sum(bound[k] + 1 for k in kids)

    for c in h.labels:
        visit(c)
    found = []
    for c in h.labels:
        if bound[c] >= floor:
            below = subclasses(h, c)
            if len(below) >= floor:
                leaves = tuple(sorted(d for d in below if d not in h.children))
                found.append(Root(c, h.labels[c], len(below), depth[c], leaves))
    return sorted(found, key=lambda r: (-r.subclasses, r.iri))


def subclasses(h: Hierarchy, c: str) -> set[str]:
    seen, todo = set(), [c]
    while todo:
        for k in h.children.get(todo.pop(), []):
            if k not in seen:
                seen.add(k)
                todo.append(k)
    return seen


def root_class(h: Hierarchy, target: int = 40_000, min_depth: int = 8) -> Root:
    """The class deep enough below whose subclass count is closest to target
    (ties go to the smaller IRI)."""
    fits = [r for r in root_candidates(h) if r.depth >= min_depth]
    return min(fits, key=lambda r: (abs(r.subclasses - target), r.iri))


def events(n: int, out: Path, seed: int = 7) -> Path:
    """n events <x{i}> rdf:type <leaf> at T0 + i ms, written once."""
    path = out / f"taxonomy_{n}_seed{seed}.parquet"
    if path.exists():
        return path
    leaves = root_class(read_hierarchy(wordnet_hierarchy(out))).leaves
    o = random.Random(seed).choices(leaves, k=n)
    table = pa.table({
        "s": [f"<{EX}x{i}>" for i in range(n)],
        "p": pa.array([RDF_TYPE] * n),
        "o": o,
        "t": pa.array(range(T0, T0 + n), pa.int64()),
    })
    partial = path.with_name(path.name + ".partial")
    pq.write_table(table, partial)
    partial.replace(path)
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("n", type=int, nargs="?", default=1_000_000)
    ap.add_argument("--out", type=Path, default=Path("bench/out"))
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()

    def timed(what, f, *a):
        t = time.perf_counter()
        result = f(*a)
        print(f"{what}: {time.perf_counter() - t:.2f} s")
        return result

    mib = lambda p: f"{p.stat().st_size / 2**20:.1f} MiB"  # noqa: E731
    hierarchy = timed("hierarchy (WordNet -> N-Triples, or cached)", wordnet_hierarchy, args.out)
    h = timed("read hierarchy", read_hierarchy, hierarchy)
    edges = sum(len(k) for k in h.children.values())
    print(f"  {hierarchy} {mib(hierarchy)}: {len(h.labels)} classes, {edges} subClassOf edges")
    candidates = timed("root candidates", root_candidates, h)
    for r in candidates:
        print(f"  {r.label:<22} {r.subclasses:>6} subclasses  depth {r.depth:>2}  {len(r.leaves):>6} leaves  {r.iri}")
    root = root_class(h)
    print(f"root: {root.label} {root.iri}: {root.subclasses} subclasses, depth {root.depth}, {len(root.leaves)} leaves")
    stream = timed(f"events (n={args.n}, seed={args.seed}, or cached)", events, args.n, args.out, args.seed)
    print(f"  {stream} {mib(stream)}")


if __name__ == "__main__":
    main()
