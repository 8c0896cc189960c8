"""Run by tests/spark/test_cluster.py with the Python of the installed
package (outside the checkout): cep.spark.detect on a Spark standalone
cluster, and the in-process engine on the same events, as JSON on
standard output.

    python cluster_job.py MASTER RULES EVENTS ONTOLOGY CONF_JSON
"""

import json
import sys
from pathlib import Path

import cep
from cep.background.knowledge import load_background
from cep.engine import Engine
from cep.io import read_events
from cep.rules import load_rules
from cep.spark import detect, spark_session


def where(_):
    """Where an executor's Python found cep, and which Python it is."""
    import sys

    import cep

    return cep.__file__, sys.executable


def main(master, rules, events, ontology, conf):
    events, _ = read_events([Path(events)])
    table = events.select(["s", "p", "o", "start"]).rename_columns(["s", "p", "o", "t"])

    spark = spark_session(master, conf=json.loads(conf))
    try:
        found = spark.sparkContext.parallelize(range(4), 4).map(where).collect()
        rows = detect(spark.createDataFrame(table.to_pandas()), rules, ontology=ontology).collect()
    finally:
        spark.stop()
    on_spark = [[r["query"], dict(r["bindings"]), round(r["start"].timestamp() * 1000),
                 round(r["end"].timestamp() * 1000)] for r in rows if r["kind"] == "answer"]

    engine = Engine(list(load_rules([Path(rules)])), background=load_background([Path(ontology)]))
    in_process = []
    for answers in (engine.push_table(events).answers(), engine.flush_table(final=True).answers()):
        in_process += [[a["query"], dict(a["bindings"]), a["start"], a["end"]] for a in answers.to_pylist()]

    print(json.dumps({"driver": cep.__file__, "executors": found, "spark": sorted(on_spark, key=json.dumps),
                      "in_process": sorted(in_process, key=json.dumps)}))


if __name__ == "__main__":
    main(*sys.argv[1:])
