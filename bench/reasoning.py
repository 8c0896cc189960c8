"""Stream reasoning benchmark, "Test 2" of the EP-SPARQL paper, on the
in-process engine: events `x rdf:type C` with C a leaf of a WordNet class
hierarchy (bench/taxonomy.py), and a query on a root class with tens of
thousands of subclasses, which matches them only through rdfs:subClassOf.

    python bench/reasoning.py                 # 1,000,000 events
    python bench/reasoning.py --events 200000 --rounds 3

Printed, in one run:
- the ontology's load time, by step: reading the N-Triples file, the RDFS
  closure (cep.background.rdfs.Schema), the facts' batch text, asserting
  them in Prolog, and compiling and loading the rules (whose leaf rule
  carries the root's subclasses as a table);
- events/s of `SELECT ?x WHERE { ?x a <root> }` with the ontology
  (reasoning), and of `SELECT ?x WHERE { ?x a ?c }` without it (no
  reasoning, and the same one answer per event), over the same events
  read from Parquet, pushed in batches of --batch-size; the two alternate
  for --rounds rounds, each with a fresh engine, and the best round of
  each is compared: the cost of reasoning is 1 - reasoning / plain.
Targets (issue): reasoning costs at most 10% of throughput; the 40k-class
ontology loads in under 10 s.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import pyarrow.parquet as pq  # noqa: E402

import taxonomy  # noqa: E402


def load(nt: Path) -> tuple:
    """(background, {step: seconds}) for the hierarchy file."""
    from cep.background.knowledge import background_of, files_digest
    from cep.background.load import read_ontology
    from cep.runtime.session import session

    steps = {}
    t0 = time.perf_counter()
    triples = read_ontology(nt)
    steps["read the N-Triples file"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    background = background_of(triples, [str(nt)], files_digest([nt]))  # as load_background names it
    steps["RDFS closure and schema"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    facts = background.facts()
    steps["facts as batch text"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    session().load_background(background.module, facts)
    steps["facts asserted in Prolog"] = time.perf_counter() - t0
    return background, steps, len(triples)


def run(query: str, background, table, batch: int) -> tuple[float, int, float]:
    """(seconds pushing, answers, seconds to compile and load the rules)."""
    from cep.engine import Engine
    from cep.rules import parse_rules

    t0 = time.perf_counter()
    engine = Engine(parse_rules(query), background=background)
    setup = time.perf_counter() - t0
    answers = 0
    t0 = time.perf_counter()
    for i in range(0, table.num_rows, batch):
        answers += len(engine.push_table(table.slice(i, batch), checked=True))
    answers += len(engine.flush_table(final=True))
    return time.perf_counter() - t0, answers, setup


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--batch-size", type=int, default=100_000)
    ap.add_argument("--out", type=Path, default=HERE / "out")
    args = ap.parse_args()

    args.out.mkdir(parents=True, exist_ok=True)
    nt = taxonomy.wordnet_hierarchy(args.out)
    root = taxonomy.root_class(taxonomy.read_hierarchy(nt))
    table = pq.read_table(taxonomy.events(args.events, args.out))
    table = table.rename_columns(["s", "p", "o", "start"]).append_column("end", table["t"])
    print(f"hierarchy: {nt.name}; root {root.iri} ({root.label}): {root.subclasses:,} subclasses, "
          f"depth {root.depth}, {len(root.leaves):,} leaves; {table.num_rows:,} events", flush=True)

    t0 = time.perf_counter()
    background, steps, asserted = load(nt)
    total = time.perf_counter() - t0
    print(f"\nontology load: {asserted:,} triples read, {len(background.triples):,} after the RDFS closure")
    for step, seconds in steps.items():
        print(f"  {step:<28} {seconds:6.2f} s")
    print(f"  {'total':<28} {total:6.2f} s   (target: under 10 s)", flush=True)

    reasoning = f"SELECT ?x WHERE {{ ?x a {root.iri} }}"
    plain = "SELECT ?x WHERE { ?x a ?c }"
    best = {}
    print(f"\nevents/s, batches of {args.batch_size:,} (rules compiled and loaded before the clock):")
    for r in range(args.rounds):
        for name, query, bg in (("plain", plain, None), ("reasoning", reasoning, background)):
            seconds, answers, setup = run(query, bg, table, args.batch_size)
            rate = table.num_rows / seconds
            best[name] = max(best.get(name, 0), rate)
            print(f"  round {r + 1} {name:<10} {rate:>10,.0f} events/s  {answers:>9,} answers  "
                  f"({seconds:.2f} s; rules compiled and loaded in {setup:.2f} s)", flush=True)
    cost = 1 - best["reasoning"] / best["plain"]
    print(f"\nbest rounds: reasoning {best['reasoning']:,.0f} events/s, plain {best['plain']:,.0f} events/s: "
          f"reasoning costs {100 * cost:.1f}% of throughput (target: at most 10%)")


if __name__ == "__main__":
    main()
