"""The W3C SPARQL 1.0 and 1.1 query test suites through the `cep` command
(tests/w3c/run.py says how each case runs). A case listed in
known_failures.txt must fail and any other must pass, so that the list can
only shrink: regenerate it with `python -m tests.w3c.run --update-known`."""

import pytest

from tests.w3c import run

CASES = run.cases()
KNOWN = run.read_known()


@pytest.mark.parametrize("case", CASES, ids=[c.key for c in CASES])
def test_case(case):
    failure = run.verdict(case, run.run_case(case), KNOWN)
    assert failure is None, failure


def test_known_failures_name_cases():
    """Every entry of the list names a case the runner runs (a test renamed
    or out of scope leaves no stale entry behind)."""
    keys = {c.key for c in CASES}
    assert sorted(k for k in KNOWN if k not in keys) == []
