"""The W3C evaluation cases on the Spark engine: a sample of the events
mode (every fifth case in manifest order, so that every folder and form is
drawn), judged against the same known_failures.txt as the local engine,
since both engines run the same compiled rules. The whole suite on Spark:
`python -m tests.w3c.run --engine spark` (about 2 s a case)."""

import pytest

from tests.w3c import run

SAMPLE = [c for c in run.cases() if c.mode == "events"][::5]
KNOWN = run.read_known()

pytestmark = pytest.mark.spark


@pytest.mark.parametrize("case", SAMPLE, ids=[c.key for c in SAMPLE])
def test_case_on_spark(case):
    failure = run.verdict(case, run.run_case(case, "spark"), KNOWN)
    assert failure is None, failure
