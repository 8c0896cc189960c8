"""One local Spark session for the Spark tests (spark_session returns the
running one to every caller)."""

import pytest


@pytest.fixture(scope="session")
def spark():
    from cep.spark import spark_session

    return spark_session("local[2]")
