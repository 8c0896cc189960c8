"""Kafka, Spark's usual source and sink, around `cep.spark.detect`.

Spark's Kafka source (`spark.readStream.format("kafka")`, the
spark-sql-kafka connector) gives a row per record with the columns key and
value (binary), topic (string), partition (int), offset (long), timestamp
(the record's timestamp) and timestampType; its sink takes key and value
(string or binary) and optionally topic. `kafka_events` maps the source's
columns to the events `detect` takes, `kafka_records` maps detect's output
to the sink's (docs/deploy.md, "Kafka"):

    records = spark.readStream.format("kafka").option("kafka.bootstrap.servers", HOSTS) \\
        .option("subscribe", "events").load()
    out = detect(kafka_events(records), "rules.rq")
    kafka_records(out).writeStream.format("kafka").option("kafka.bootstrap.servers", HOSTS) \\
        .option("topic", "answers").option("checkpointLocation", CKPT).start()

A record's value is one event as a line of a .jsonl event file holds it:
{"s": ..., "p": ..., "o": ..., "t": ...} (t_end and stream optional),
terms in N-Triples syntax; without "t" the event's time is the record's
timestamp. A record that is not such an object is a reject row naming
its place, topic:partition:offset.

An answer record's value is the JSON line `cep run` writes (docs/io.md),
its key the query's name (a query's answers go to one partition, in
order); a late or rejected event's value is {"source", "reason", "text"},
its key "late" or "reject".
"""

from __future__ import annotations

def kafka_events(records):
    """The events (columns s, p, o, t, t_end, stream, source) of a DataFrame
    with the Kafka source's columns value, topic, partition, offset and
    timestamp."""
    from pyspark.sql import functions as F

    from cep.spark.sources import json_events

    # the record's timestamp as the text the readers parse (cep.io.check.time)
    stamp = F.date_format(F.col("timestamp"), "yyyy-MM-dd'T'HH:mm:ss.SSSXXX")
    place = F.concat_ws(":", F.col("topic"), F.col("partition").cast("string"), F.col("offset").cast("string"))
    return json_events(records, F.col("value").cast("string"), stamp, place)


def kafka_records(out, topic: str | None = None):
    """The rows of detect's output as Kafka records: key (the query's name,
    or the kind of a late or rejected event) and value (its JSON line, as
    `cep run --format jsonl` writes it), and the column topic when given."""
    from pyspark.sql import functions as F

    raw = out.select("kind", "query", "bindings", "triples", F.unix_millis("start").alias("start"),
                     F.unix_millis("end").alias("end"), "s", "p", "o", "source", "reason", "text")
    key = F.when(F.col("kind") == "answer", F.col("query")).otherwise(F.col("kind"))
    records = raw.withColumn("key", key).mapInArrow(_json_lines_keyed, "key string, value string")
    return records.withColumn("topic", F.lit(topic)) if topic else records


def _json_lines_keyed(batches):
    """mapInArrow: rows with their key -> (key, JSON line) (sinks._json_lines)."""
    import pyarrow as pa

    from cep.spark.sinks import _json_lines

    for batch in batches:
        keys = batch.column("key")
        for lines in _json_lines([batch]):
            yield pa.RecordBatch.from_pydict({"key": keys, "value": lines.column("value")})
