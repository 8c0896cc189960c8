"""A real Spark standalone cluster (issue 22, item 2): a master and two
workers as separate processes on this machine (tests/spark/cluster.py),
the package installed from its wheel into a fresh virtual environment
outside the checkout (tests/packaging/install.py), and that environment
shipped with the job as Spark documents it (a packed environment given by
spark.archives, its Python as spark.pyspark.python; docs/deploy.md).
The executors cannot import the checkout. A rule set with a background
ontology gives the same answers on the cluster as in process, through
cep.spark.detect and through `cep run --master spark://...`."""

from __future__ import annotations

import json
import subprocess
import tarfile
from pathlib import Path

import pytest

from tests.packaging.install import ROOT, build_wheel, clean_env, fresh_venv, stock_work
from tests.spark.cluster import Cluster
from tests.spark.support import TEST_CONF

pytestmark = pytest.mark.spark

HERE = Path(__file__).resolve().parent
RULES = """PREFIX :     <http://example.org/>
PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>

REGISTER QUERY labelled_highs AS
SELECT ?label ?price
WHERE { ?company :hasStockPrice ?price . ?company rdfs:label ?label . FILTER (?price > 150) }
"""


def pack(venv_root: Path, archive: Path) -> Path:
    """The environment as one archive, its folder's contents at the top
    (what venv-pack writes; Spark unpacks it under the name after #)."""
    with tarfile.open(archive, "w:gz") as tar:
        for path in sorted(venv_root.iterdir()):
            tar.add(path, arcname=path.name)
    return archive


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    base = tmp_path_factory.mktemp("cluster")
    venv = fresh_venv(base / "venv", build_wheel(base))
    archive = pack(venv.root, base / "environment.tar.gz")
    env = clean_env(XDG_CACHE_HOME=str(base / "cache"))  # the executors build the C helper here
    spark = Cluster(base / "spark", env)
    try:
        url = spark.start()
        conf = {"spark.archives": f"{archive}#environment", "spark.pyspark.python": "./environment/bin/python",
                "spark.executor.memory": "1g", "spark.executor.cores": "1", "spark.cores.max": "2",
                "spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1", **TEST_CONF}
        work = stock_work(base / "work", RULES)
        yield url, conf, venv, work, env, base
    finally:
        spark.stop()


def test_detect_on_the_cluster_gives_the_in_process_answers(cluster):
    url, conf, venv, work, env, base = cluster
    done = subprocess.run([str(venv.python), str(HERE / "cluster_job.py"), url, "labelled.rq", "ticks.trig",
                           "stock.ttl", json.dumps(conf)], cwd=work, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-5000:]
    result = json.loads(done.stdout.splitlines()[-1])
    assert result["driver"].startswith(str(venv.root))
    for module, python in result["executors"]:  # the shipped environment, unpacked by each executor
        assert "/environment/" in module and not module.startswith(str(ROOT)), module
        assert python.endswith("environment/bin/python"), python
    assert result["spark"] == result["in_process"]
    labels = sorted(bindings["label"] for query, bindings, _, _ in result["spark"])
    assert labels == ['"Initech"'] * 9  # its nine quotes above 150, labelled from the ontology
    assert list((base / "cache").glob("cep/cep_fast-*.so"))  # built on first use, on the executors


def test_cep_run_on_the_cluster_gives_the_local_engines_answers(cluster):
    url, conf, venv, work, env, _ = cluster
    argv = [str(venv.cep), "run", "-q", "labelled.rq", "stock.rq", "--events", "ticks.trig",
            "--ontology", "stock.ttl"]
    local = subprocess.run([*argv, "--engine", "local"], cwd=work, env=env, capture_output=True, text=True,
                           timeout=600)
    assert local.returncode == 0, local.stderr
    settings = [a for key, value in conf.items() for a in ("--conf", f"{key}={value}")]
    spark = subprocess.run([*argv, "--master", url, *settings], cwd=work, env=env, capture_output=True,
                           text=True, timeout=600)
    assert spark.returncode == 0, spark.stderr[-5000:]
    assert sorted(spark.stdout.splitlines()) == sorted(local.stdout.splitlines())
    assert {json.loads(line)["query"] for line in local.stdout.splitlines()} == {"labelled_highs", "crash_recovery"}
