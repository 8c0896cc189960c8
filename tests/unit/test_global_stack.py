"""A call of the rules gives back the global stack it used. Whatever a call
puts there (the batch text itself, the terms of its events and answers)
is garbage once it returns, and discarding the call's frame takes it back
at once, unless something froze the stack above it: SWI-Prolog freezes it
(nothing below can be taken back but by a garbage collection) whenever a
global variable is set to a compound term (nb_setval/2, nb_setarg/3 with
a term). The runtime set one at every push (the room of cep_match/3), so
each batch's text stayed behind it, and one at every triple a rule
derived (its count against the limits), so all the call had made up to
it stayed. The collector runs only when the stack is full, and grows the
stack when it is: on bench/memory.py's W3 with two windows the process
grew by 60 MB a million events while the engine's state stayed level."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# In a fresh process, with Prolog's garbage collector off (so that only
# what the calls themselves leave counts): a windowed query, a sequence,
# and a rule whose triples a query reads (each derived triple is counted
# against the limits in a global variable, cep_runtime:count_derived/4),
# 20 batches of 2,000 events pushed; the global stack in use after the
# second batch and after the last.
CODE = r"""
import pyarrow as pa
from cep.engine import Engine
from cep.rules import parse_rules

QUERY = '''PREFIX : <http://example.org/>
REGISTER QUERY avg AS
SELECT ?k (AVG(?v) AS ?a) (COUNT(*) AS ?n)
FROM STREAM <http://example.org/s> [RANGE 10s STEP 5s]
WHERE { ?k :p ?v }
GROUP BY ?k
REGISTER QUERY pairs AS
SELECT ?k ?x ?y WHERE { ?k :p ?x } SEQ { ?k :q ?y }
REGISTER STREAM made AS
CONSTRUCT { ?k :r ?v } WHERE { ?k :q ?v }
REGISTER QUERY reads AS
SELECT ?k ?v WHERE { ?k :r ?v }
'''
engine = Engine(parse_rules(QUERY, "q.rq"))
prolog = engine.session.prolog
list(prolog.query("set_prolog_flag(gc, false)"))
used = []
for b in range(20):
    n = 2000
    rows = range(b * n, (b + 1) * n)
    table = pa.table({
        "s": [f"<http://example.org/k{i % 50}>" for i in rows],
        "p": ["<http://example.org/p>" if i % 3 else "<http://example.org/q>" for i in rows],
        "o": [f'"{i % 997}.5"^^<http://www.w3.org/2001/XMLSchema#decimal>' for i in rows],
        "start": [1_000_000 + 10 * i for i in rows]})
    engine.push_table(table)
    engine.flush_table(final=False)
    used.append(list(prolog.query("statistics(globalused, G)"))[0]["G"])
print(used[1], used[-1])
"""


def test_pushing_batches_leaves_nothing_on_the_global_stack():
    proc = subprocess.run([sys.executable, "-c", CODE], cwd=ROOT, env=dict(os.environ), capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    second, last = (int(x) for x in proc.stdout.split()[-2:])
    # the room set at each push kept 2.7 MB (18 batch texts of 150 KB); each
    # derived triple's count kept all the call had made up to it, 14 MB
    assert last - second < 200_000, f"the global stack grew by {last - second:,} bytes over 18 batches"
