"""A valid query's rules load without a word from SWI-Prolog on standard
error: an expression reading a variable that its clause never binds (a
FILTER's BOUND(?x) of a variable only MINUS's right side has, over a
window's content) compiled to nonvar(X) on a variable of its own, and
SWI-Prolog warned "Test is always false: nonvar(X4)" at load time. In a
process of its own: a rule set is loaded once per process."""

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PREFIX = "PREFIX : <http://example.org/>\nPREFIX xsd: <http://www.w3.org/2001/XMLSchema#>\n"
QUERIES = [
    "SELECT ?t FROM STREAM <http://example.org/s> [RANGE 10s STEP 10s] WHERE { ?t :p ?y MINUS { ?s :q ?x } "
    "FILTER(BOUND(?x)) }",
    "SELECT (COUNT(*) AS ?n) FROM STREAM <http://example.org/s> [RANGE 10s STEP 10s] WHERE { ?t :p ?y "
    "MINUS { ?s :q ?x } FILTER(!BOUND(?x) && getDURATION() < \"PT1S\"^^xsd:duration) }",
]


def test_an_expression_over_a_variable_its_clause_never_binds_loads_silently():
    script = ("import sys\n"
              "from cep.engine import Engine\n"
              "from cep.rules import parse_rules\n"
              "for text in sys.argv[1:]:\n"
              "    print('--', file=sys.stderr, flush=True)\n"
              "    Engine(parse_rules(text)).close()\n")
    done = subprocess.run([sys.executable, "-c", script, *(PREFIX + q for q in QUERIES)], cwd=REPO,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert [line for line in done.stderr.splitlines() if line != "--"] == [], done.stderr

