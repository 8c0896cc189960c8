"""One local Spark session for the Spark tests (spark_session returns the
running one to every caller)."""

import pytest


@pytest.fixture(scope="session")
def spark():
    from cep.spark import spark_session
    from tests.spark.support import TEST_CONF

    return spark_session("local[2]", conf=TEST_CONF)
