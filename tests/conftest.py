"""Settings shared by the whole test suite.

Hypothesis runs without a deadline (the first engine of a process loads
SWI-Prolog, and Prolog calls vary in time on a busy machine) and prints the
@reproduce_failure blob of a failing example. The property tests of
tests/property also print the seed they ran from: set CEP_SEED to replay it,
and CEP_EXAMPLES_SCALE (e.g. 10) to run that many times more examples.
The golden tests rewrite their algebra files when CEP_GOLDEN_UPDATE=1.
"""

from hypothesis import HealthCheck, settings

settings.register_profile(
    "cep",
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("cep")
