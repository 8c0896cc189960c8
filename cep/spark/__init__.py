"""The Spark engine: EP-SPARQL rule sets as a step of a Spark job.

    from cep.spark import detect, spark_session
    spark = spark_session()                       # local[*] unless configured
    events = spark.readStream.parquet("in/")      # columns s, p, o, t
    out = detect(events, "rules/stock.rq", lateness="10 seconds")
    out.writeStream.format("json").option("checkpointLocation", "ckpt/").start("out/")

`detect` takes a DataFrame of events, streaming or batch, with columns s, p,
o (RDF terms in N-Triples syntax), t (a timestamp, epoch milliseconds, or
xsd:dateTime text) and optionally t_end (interval events), and returns a
DataFrame with a row per answer and per late event:

    kind      "answer" or "late"
    query     the query's name
    bindings  map<string,string>: SELECT's variable -> N-Triples term
              (unbound variables left out)
    triples   array<struct<s,p,o>>: CONSTRUCT's triples
    start, end  the answer's interval (the paper's event-time interval), or
              the late event's
    s, p, o, reason   a late event and why it was set aside

Events are routed by each query's partition key (cep/spark/routing.py) to
groups that each run the compiled rules in SWI-Prolog (cep/spark/worker.py),
with their partial matches in Spark's state store. On a stream, events wait
in state until the watermark (the latest event time seen, minus `lateness`)
passes them, and are then processed in time order: answers do not depend on
the arrival order within the lateness. An event that arrives after its time
was processed is a `late` row, never dropped silently.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from cep.spark import routing
from cep.spark import worker

DEFAULT_BUCKETS = 8


@dataclass(frozen=True)
class Spec:
    """What the workers need, shipped with the job (no driver-local files)."""

    rules_hash: str
    classes: tuple  # routing.QueryClass
    buckets: tuple  # per class: its number of buckets


def spark_session(master: str | None = None, app: str = "cep"):
    """A SparkSession whose Python workers run this interpreter (so they
    import the same packages), local[*] unless a master is configured."""
    from pyspark import SparkConf
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    builder = SparkSession.builder.appName(app)
    if master or not SparkConf().contains("spark.master"):  # spark-submit's --master sets it
        builder = builder.master(master or "local[*]")
    return (builder
            .config("spark.sql.shuffle.partitions", str(DEFAULT_BUCKETS))
            .config("spark.sql.session.timeZone", "UTC")
            .config("spark.ui.enabled", "false")
            .config("spark.sql.execution.arrow.pyspark.enabled", "true")
            .getOrCreate())


def _queries(rules):
    from cep.algebra import ops
    from cep.rules import load_rules, parse_rules

    if isinstance(rules, (str, Path)) and Path(rules).exists():
        return list(load_rules([Path(rules)]))
    if isinstance(rules, str):
        return list(parse_rules(rules, "<rules>"))
    rules = list(rules)
    if all(isinstance(q, ops.Query) for q in rules):
        return rules
    return list(load_rules([Path(r) for r in rules]))


def plan(rules, buckets: int = DEFAULT_BUCKETS) -> Spec:
    from cep.compile import compile_queries

    queries = _queries(rules)
    classes = tuple(routing.classes(queries))
    counts = tuple(buckets if c.bucketed else 1 for c in classes)
    return Spec(compile_queries(queries).module, classes, counts)


def _times(df):
    """start and end in epoch milliseconds from t (and t_end)."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    def millis(name):
        kind = df.schema[name].dataType
        if isinstance(kind, (T.TimestampType, T.TimestampNTZType)):
            return F.unix_millis(F.col(name).cast("timestamp"))
        if isinstance(kind, (T.LongType, T.IntegerType)):
            return F.col(name).cast("long")
        return F.unix_millis(F.to_timestamp(F.col(name)))

    start = millis("t")
    end = millis("t_end") if "t_end" in df.columns else start
    return df.select("s", "p", "o", start.alias("start"), F.coalesce(end, start).alias("end"))


def _routed(df, spec: Spec):
    """The events, once per (class, bucket) that needs them."""
    from pyspark.sql import functions as F

    parts = []
    for c, buckets in zip(spec.classes, spec.buckets):
        match = None
        for route in c.routes:
            cond = F.lit(True)
            for slot, term in route.constants:
                cond = cond & (F.col(slot) == F.lit(term))
            match = cond if match is None else match | cond
        if buckets > 1:
            bucket = F.pmod(F.xxhash64(F.col(c.routes[0].key_slot)), F.lit(buckets)).cast("int")
        else:
            bucket = F.lit(0)
        parts.append(df.filter(match).select(F.lit(c.index).alias("cls"), bucket.alias("bucket"), *df.columns))
    out = parts[0]
    for p in parts[1:]:
        out = out.unionByName(p)
    return out


def _finish(raw):
    from pyspark.sql import functions as F

    bindings = F.from_json("bindings", "map<string,string>")
    triples = F.from_json("triples", "array<struct<s:string,p:string,o:string>>")
    return raw.select("kind", "query", bindings.alias("bindings"), triples.alias("triples"),
                      F.timestamp_millis("start").alias("start"), F.timestamp_millis("end").alias("end"),
                      "s", "p", "o", "reason")


def detect(events, rules, lateness: str = "10 seconds", buckets: int = DEFAULT_BUCKETS):
    """Answers (and late events) of a rule set over a DataFrame of events;
    see the module's docstring. `rules`: a rule file's path, EP-SPARQL
    text, or parsed queries."""
    from pyspark.sql import functions as F
    from pyspark.sql.streaming.state import GroupStateTimeout

    spec = plan(rules, buckets)
    df = _routed(_times(events), spec)
    if not events.isStreaming:
        raw = df.groupBy("cls", "bucket").applyInPandas(
            lambda key, pdf: worker.detect_static(spec, key, pdf), schema=worker.OUTPUT_DDL)
        return _finish(raw)
    df = df.withColumn("_at", F.timestamp_millis("end")).withWatermark("_at", lateness)
    # NoTimeout: Spark then hands late rows to the group, which reports them
    raw = df.groupBy("cls", "bucket").applyInPandasWithState(
        partial(worker.detect_streaming, spec), worker.OUTPUT_DDL, worker.STATE_DDL, "append",
        GroupStateTimeout.NoTimeout)
    return _finish(raw)
