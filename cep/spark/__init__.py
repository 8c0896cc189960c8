"""The Spark engine: EP-SPARQL rule sets as a step of a Spark job.

    from cep.spark import detect, spark_session
    spark = spark_session()                       # local[*] unless configured
    events = spark.readStream.parquet("in/")      # columns s, p, o, t
    out = detect(events, "rules/stock.rq", lateness="10 seconds")
    out.writeStream.format("json").option("checkpointLocation", "ckpt/").start("out/")

`detect` takes a DataFrame of events, streaming or batch, with columns s, p,
o (RDF terms in N-Triples syntax), t (a timestamp, epoch milliseconds, or
xsd:dateTime text) and optionally t_end (interval events), and returns a
DataFrame with a row per answer and per late or rejected event, in the
answer rows' schema (cep.events.ANSWER_ROWS, docs/io.md "One answer
schema"; `cep run --format parquet` writes the same rows in process):

    kind      "answer", "late" or "reject"
    query     the query's name
    bindings  map<string,string>: SELECT's variable -> N-Triples term
              (unbound variables left out)
    triples   array<struct<s,p,o>>: CONSTRUCT's triples
    start, end  the answer's interval (the paper's event-time interval), or
              the late event's
    s, p, o, source, reason, text   a late or rejected event, where it
              was, why it was set aside, and the record as read

Events are routed by each query's partition key (cep/spark/routing.py) to
groups that each run the compiled rules in SWI-Prolog (cep/spark/worker.py),
with their partial matches in Spark's state store. Background knowledge
(`ontology=`) is compiled into the rules and its facts reach the workers as
a broadcast variable, loaded once per worker process; so does the text of
the user's Prolog files (`prolog=`) whose predicates the expressions call.
On a stream, events wait in state until the watermark (the latest event
time seen, minus `lateness`) passes them, and are then processed in time
order: answers do not depend on the arrival order within the lateness. An
event that arrives after its time was processed is a `late` row, never
dropped silently.
"""

from __future__ import annotations

import hashlib
import operator
import os
import re
import sys
import time
from dataclasses import dataclass
from functools import partial, reduce
from pathlib import Path

import pandas as pd

from cep.spark import routing
from cep.spark import worker

DEFAULT_BUCKETS = 8


@dataclass(frozen=True)
class Spec:
    """What the workers need, shipped with the job (no driver-local files)."""

    rules_hash: str
    classes: tuple  # routing.QueryClass
    buckets: tuple  # per class: its number of buckets
    compiled: tuple  # per class: its cep.compile.CompiledRules
    background_module: str | None = None  # the Prolog module of the background facts
    facts: object = None  # a Spark Broadcast of the background facts (Background.facts())
    user_module: str | None = None  # the Prolog module of the user's Prolog files
    user_files: object = None  # a Spark Broadcast of their (source id, text) (UserProlog.sources)
    update_routes: tuple = ()  # routing.Route of the events the update rules read (every group's)
    instances: object = None  # with update rules: a Broadcast of Background.instance_facts()
    limits: object = None  # cep.limits.Limits: the engines' (None: the defaults)
    services: object = None  # cep.service.options.ServiceOptions: the SERVICE endpoints and views
    service_reports: bool = False  # the workers return each SERVICE evaluation's QoS report (a `service` row)

    @property
    def timed(self) -> bool:
        """Whether event time alone makes a query answer (a window, a
        NOTSEQ): its groups need event-time timeouts (run)."""
        return any(routing.timed(q) for c in self.classes for q in c.queries)

    def layouts(self, queries) -> list:
        """The answer layouts of the queries, in their order."""
        by_name = {layout.name: layout for c in self.compiled for layout in c.layouts}
        return [by_name[q.name] for q in queries]


def spark_session(master: str | None = None, app: str = "cep", conf: dict | None = None, own_stderr: bool = False):
    """A SparkSession, local[*] unless a master is given or configured.
    `conf`: Spark settings (`cep run --conf KEY=VALUE`), which win over the
    ones set here. The Python workers run spark.pyspark.python where it is
    set (a cluster's executors: the interpreter of an environment shipped
    with the job, docs/deploy.md), else this interpreter, so that they
    import the same packages. `own_stderr`: the JVM this starts writes its
    standard error through this process (cep.spark.jvm_stderr)."""
    from pyspark import SparkConf
    from pyspark.sql import SparkSession

    conf = dict(conf or {})
    defaults = SparkConf()  # spark-defaults.conf, and spark-submit's settings
    python = conf.get("spark.pyspark.python") or defaults.get("spark.pyspark.python")
    if python:  # Spark's order: the setting, then the variable (which PySpark reads)
        os.environ["PYSPARK_PYTHON"] = python
    else:
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    options = {"spark.app.name": app}
    if master or not (defaults.contains("spark.master") or "spark.master" in conf):  # spark-submit's --master sets it
        options["spark.master"] = master or "local[*]"
    # Spark's UI keeps its default (on, port 4040 or the next free one):
    # what a Spark user expects to find; `--conf spark.ui.enabled=false` turns it off
    ours = {"spark.sql.session.timeZone": "UTC", "spark.ui.showConsoleProgress": "false",
            "spark.sql.execution.arrow.pyspark.enabled": "true"}
    options.update({**ours, **conf})
    if own_stderr:
        from cep.spark import jvm_stderr

        jvm_stderr.launch(options)
    builder = SparkSession.builder
    for key, value in options.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    # Unless configured: a shuffle partition per core, not Spark's 200.
    # Every partition of a stateful operator is a task and a state store
    # commit per micro-batch (measured on local[2]: 2 partitions instead of
    # 8 took a no-op stateful micro-batch of 100k rows from 1.4 s to 1.0 s).
    # Arrow batches of up to 100k rows into the workers, as the engine
    # takes a group's rows as one table anyway. Parquet times as int64
    # microseconds (UTC), the type Parquet readers agree on and the one
    # `cep run --format parquet` writes (cep.events.ANSWER_ROWS), not
    # Spark's legacy INT96.
    for key, value in (("spark.sql.shuffle.partitions", spark.sparkContext.defaultParallelism),
                       ("spark.sql.execution.arrow.maxRecordsPerBatch", 100_000),
                       ("spark.sql.parquet.outputTimestampType", "TIMESTAMP_MICROS")):
        if not defaults.contains(key) and key not in conf:
            spark.conf.set(key, str(value))
    return spark


def _queries(rules, allow_from=()):
    from cep.algebra import ops
    from cep.errors import QueryError
    from cep.rules import load_rules, parse_rules

    if isinstance(rules, Path) or isinstance(rules, str) and Path(rules).exists():
        return list(load_rules([Path(rules)], allow_from=allow_from))
    if isinstance(rules, str):
        try:
            return list(parse_rules(rules, "<rules>", allow_from=allow_from))
        except QueryError as exc:
            if "\n" in rules.strip():  # several lines: query text, as the parser says
                raise
            # one line that is no query: most likely a mistyped rule file's path
            raise QueryError(f"no rule file {rules} (and the text is not a query either: {exc})") from None
    rules = list(rules)
    if all(isinstance(q, ops.Query) for q in rules):
        return rules
    return list(load_rules([Path(r) for r in rules], allow_from=allow_from))


def plan(rules, buckets: int = DEFAULT_BUCKETS, background=None, spark=None, prolog=None, limits=None,
         services=None, service_reports: bool = False) -> Spec:
    """What the workers run: the rule set in routing classes, each compiled
    here; with `background` (cep.background.Background), its facts go to
    the workers as a broadcast variable of `spark` (default: the active
    session), read once per worker process; with `prolog`
    (cep.user_prolog.UserProlog), the text of the user's Prolog files
    likewise. `limits`: the engines' cep.limits.Limits. `services`: the
    SERVICE options (cep.service.options.ServiceOptions): each group's
    engine keeps its own views, and its state the entries its keys need;
    the initial pull is named for this run (ServiceOptions.snapshot), so
    the groups one worker process serves share one download of it.
    `service_reports`: the workers also return the QoS report of each
    SERVICE evaluation, as a row of kind `service` (worker._service_rows)."""
    import dataclasses

    from cep.compile import compile_queries
    from cep.service.maintenance import check_allowed
    from cep.service.view import service_specs
    from cep.user_prolog import check_calls

    queries = _queries(rules)
    check_calls(queries, prolog)  # the whole rule set's calls, before Spark is asked for anything
    schema = background.schema if background is not None else None
    # Update rules change the background every group reads: each group runs
    # them all, on copies of the events they read (_routed)
    updates = tuple(q for q in queries if q.form == "update")
    routing.refuse_derived_updates(queries, schema)
    classes = tuple(routing.classes([q for q in queries if q.form != "update"], schema))
    if not classes:  # updates alone: one group runs them
        classes = (routing.QueryClass(0, (), (), ()),)
    counts = tuple(buckets if c.bucketed else 1 for c in classes)
    compiled = tuple(compile_queries(c.queries + updates, background, prolog, limits) for c in classes)
    for c in compiled:  # endpoints the run does not allow: refused here, before any worker calls one
        check_allowed(service_specs(c.plan), services)
    if services is not None and services.snapshot is None:  # the groups of a worker share one initial pull
        services = dataclasses.replace(services, snapshot=f"{os.getpid()}-{time.time_ns()}")
    # The workers keep engines by this key: the programs' hashes leave out
    # the names of queries and variables, which the answers carry.
    names = repr([(c.module, [(q.name, layout.form, layout.fields) for q, layout in zip(c.queries, c.layouts)])
                  for c in compiled])
    rules_hash = hashlib.sha256(names.encode()).hexdigest()[:16]
    spec = Spec(rules_hash, classes, counts, compiled, update_routes=routing.update_routes(updates, schema),
                limits=limits, services=services, service_reports=service_reports)
    calls_user = any(c.user_module for c in compiled)
    if background is None and not calls_user:
        return spec
    if spark is None:
        from pyspark.sql import SparkSession

        spark = SparkSession.active()
    if background is not None:
        spec = dataclasses.replace(spec, background_module=background.module,
                                   facts=spark.sparkContext.broadcast(background.facts()))
        if updates:  # the files' own triples, which deletions take away (Session.load_instances)
            spec = dataclasses.replace(spec, instances=spark.sparkContext.broadcast(background.instance_facts()))
    if calls_user:
        spec = dataclasses.replace(spec, user_module=prolog.module,
                                   user_files=spark.sparkContext.broadcast(prolog.sources))
    return spec


def _times(df, stored_millis=()):
    """The events of a DataFrame with columns s, p, o, t [, t_end, source,
    stream, reason, text] as the engine takes them (reason: why the source
    refused the row, text: the row as it was read): start and end in epoch milliseconds,
    and a reason (and text) on each row whose time the readers would
    refuse (cep.io.check: unreadable, or outside the supported range) or
    whose text is not UTF-8; such a row has no start or end, so it neither
    moves the watermark nor fails an arithmetic (the engine reports it as a
    reject). The terms themselves are checked by the workers
    (cep.io.tables.checked_rows), with the readers' own code.
    `stored_millis`: the time columns that hold a Parquet timestamp's
    stored milliseconds, read as integers (cep.spark.sources): such a time
    is shown as the timestamp it is."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    from cep.io import check

    def millis(name):
        """(epoch ms, reason or null, the time as the reject's text shows
        it) of a time column."""
        kind = df.schema[name].dataType
        given = F.make_valid_utf8(F.col(name).cast("string"))
        if isinstance(kind, (T.TimestampType, T.TimestampNTZType)) or name in stored_millis:
            ms = F.col(name).cast("long") if name in stored_millis else F.unix_millis(F.col(name).cast("timestamp"))
            given = shown = _datetime_text(ms)
        elif isinstance(kind, (T.LongType, T.IntegerType, T.ShortType, T.ByteType)):
            ms = F.col(name).cast("long")
            shown = F.concat(ms.cast("string"), F.lit(" ms"))
        else:  # text (or a number of another type, as text): the readers' own parser
            parsed = _parse_times(given, F.lit(name))
            return parsed["ms"], parsed["reason"], given
        outside = F.concat(F.lit(f"column {name}: "), shown,
                           F.lit(f" is outside the supported time range, {check.TIME_RANGE}"))
        return ms, (F.when(ms.isNull(), F.lit(f"column {name} is empty"))
                    .when(~ms.between(check.TIME_MIN_MS, check.TIME_MAX_MS), outside)), given

    start, start_bad, start_given = millis("t")
    end, end_bad, end_given = millis("t_end") if "t_end" in df.columns else (start, None, None)
    # a reason the source gave (a record that is no event: cep.spark.sources.json_events) comes first
    reasons = [F.col("reason").cast("string")] if "reason" in df.columns else []
    reasons += [F.when(~F.is_valid_utf8(F.col(c).cast("string")), F.lit(f"column {c}: not UTF-8 text"))
                for c in ("s", "p", "o", "stream") if c in df.columns]
    reasons += [start_bad] + ([] if end_bad is None else [F.when(F.col("t_end").isNotNull(), end_bad)])
    reason = F.coalesce(*reasons)
    # as the readers show a rejected row (cep.io.tables): "s p o @ t [.. t_end]"
    shown = F.concat_ws(" ", *(F.make_valid_utf8(F.col(c).cast("string")) for c in ("s", "p", "o")))
    shown = F.concat(shown, F.lit(" @ "), F.coalesce(start_given, F.lit("None")))
    if end_given is not None:
        shown = F.concat_ws(" .. ", shown, end_given)
    if "text" in df.columns:  # the record as the source shows it
        shown = F.coalesce(F.make_valid_utf8(F.col("text").cast("string")), shown)
    source = F.col("source").cast("string") if "source" in df.columns else F.lit(None).cast("string")
    valid = lambda c: F.when(reason.isNull(), c)  # noqa: E731
    return df.select(*(valid(F.col(c).cast("string")).alias(c) for c in ("s", "p", "o")),  # a number: no term
                     valid(start).alias("start"),
                     valid(F.coalesce(end, start)).alias("end"),
                     F.when(reason.isNull(), source).otherwise(F.coalesce(source, F.lit(""))).alias("source"),
                     valid(_stream_column(df)).alias("stream"), reason.alias("reason"),
                     F.when(reason.isNotNull(), shown).alias("text"))


def _datetime_text(ms):
    """A column of epoch ms as cep.terms.format_datetime_ms writes it, for
    any year (Spark's own date functions overflow about 292,000 years from
    1970): H. Hinnant's civil_from_days in exact integer arithmetic, as in
    cep.terms, each intermediate bound once (let)."""
    from pyspark.sql import functions as F

    def div(a, b: int):  # floor division, exact for any long (in decimal: a - pmod may overflow a long)
        return ((a.cast("decimal(20,0)") - F.pmod(a, F.lit(b))) / F.lit(b)).cast("long")

    def let(value, body):
        return F.transform(F.array(value), body)[0]

    def digits(n, width: int):  # at least `width` digits
        text = F.abs(n).cast("string")
        return F.when(F.length(text) < width, F.lpad(text, width, "0")).otherwise(text)

    def civil(days):
        return let(days + 719_468, lambda z: let(div(z, 146_097), lambda era: let(z - era * 146_097, lambda doe: let(
            div(doe - div(doe, 1460) + div(doe, 36_524) - div(doe, 146_096), 365), lambda yoe: let(
                doe - (yoe * 365 + div(yoe, 4) - div(yoe, 100)), lambda doy: let(
                    div(doy * 5 + 2, 153), lambda mp: let(
                        F.when(mp < 10, mp + 3).otherwise(mp - 9), lambda month: let(
                            yoe + era * 400 + (month <= 2).cast("long"), lambda year: F.concat(
                                F.when(year < 0, F.lit("-")).otherwise(F.lit("")), digits(year, 4), F.lit("-"),
                                digits(month, 2), F.lit("-"), digits(doy - div(mp * 153 + 2, 5) + 1, 2))))))))))

    return let(div(ms, 1000), lambda seconds: let(F.pmod(seconds, F.lit(86_400)), lambda rest: F.concat(
        civil(div(seconds, 86_400)), F.lit("T"), digits(div(rest, 3600), 2), F.lit(":"),
        digits(F.pmod(div(rest, 60), F.lit(60)), 2), F.lit(":"), digits(F.pmod(rest, F.lit(60)), 2),
        F.when(F.pmod(ms, F.lit(1000)) > 0,
               F.concat(F.lit("."), F.regexp_replace(digits(F.pmod(ms, F.lit(1000)), 3), "0+$", "")))
        .otherwise(F.lit("")), F.lit("Z"))))


def _parse_times(texts, name):
    """struct(ms, reason) of a column of time texts (a pandas UDF)."""
    from pyspark.sql.functions import pandas_udf

    return pandas_udf(_time_cells, "ms long, reason string")(texts, name)


def _time_cells(values: pd.Series, names: pd.Series) -> pd.DataFrame:
    """Epoch ms and reason of each time text, by cep.io.check.time, the
    readers' own parser: a text gets the same verdict on both engines."""
    from cep.io import check

    ms, reasons = [], []
    for value, column in zip(values, names):
        try:
            ms.append(check.time(value, column))
            reasons.append(None)
        except check.Invalid as bad:
            ms.append(None)
            reasons.append(str(bad))
    return pd.DataFrame({"ms": pd.array(ms, dtype="Int64"), "reason": reasons})


def _stream_column(df):
    """The events' stream IRIs (<...>; a bare IRI gets its brackets), null
    when the events have no stream column."""
    from pyspark.sql import functions as F

    if "stream" not in df.columns:
        return F.lit(None).cast("string")
    g = F.trim(F.col("stream").cast("string"))
    return (F.when(g.isNull() | (g == ""), F.lit(None).cast("string"))
            .when(g.startswith("<"), g).otherwise(F.concat(F.lit("<"), g, F.lit(">"))))


def _matches(routes):
    """The condition that an event takes one of the routes (None for none)."""
    from pyspark.sql import functions as F

    match = None
    for route in routes:
        cond = F.lit(True)
        for slot, term in route.constants:
            cond = cond & (F.col(slot).isin(sorted(term)) if isinstance(term, frozenset)
                           else F.col(slot) == F.lit(term))
        match = cond if match is None else match | cond
    return match


def _routed(df, spec: Spec):
    """The events, once per (class, bucket) that needs them, in one pass
    over the input (a union of filters would read it once per class).
    Rows that carry a reason (rejected by the reader) go to one group,
    which reports them. With update rules, an event they read also goes
    to every other group, as a copy for its update rules alone (column
    copy, worker.COPY_*); one copy reports the event (late or malformed)
    when no group has it as its own."""
    from pyspark.sql import functions as F

    def target(cls, bucket, copy=None):
        return F.struct(F.lit(cls).alias("cls"), F.lit(bucket).alias("bucket") if isinstance(bucket, int)
                        else bucket.alias("bucket"), F.lit(copy).cast("string").alias("copy"))

    targets, owners = [], []
    for c, buckets in zip(spec.classes, spec.buckets):
        match = _matches(c.routes)
        if match is None:  # a class of no queries (the update rules alone)
            owners.append((F.lit(False), F.lit(0)))
            continue
        bucket = (F.pmod(F.xxhash64(F.col(c.routes[0].key_slot)), F.lit(buckets)).cast("int")
                  if buckets > 1 else F.lit(0))
        targets.append(F.when(match, target(c.index, bucket)))
        owners.append((match, bucket))
    read = _matches(spec.update_routes)
    if read is not None:
        owned = F.lit(False)
        for match, _ in owners:
            owned = owned | match
        for i, (c, buckets) in enumerate(zip(spec.classes, spec.buckets)):
            match, bucket = owners[i]
            for b in range(buckets):
                copy = target(c.index, b, worker.COPY_QUIET)
                if i == 0 and b == 0:
                    copy = F.when(owned, copy).otherwise(target(c.index, b, worker.COPY_REPORTS))
                own = match if buckets == 1 else match & (bucket == b)  # the group has the event itself
                targets.append(F.when(read & ~own, copy))
    if "reason" in df.columns:
        rejected = F.col("reason").isNotNull()
        targets = [F.when(~rejected, t) for t in targets] + [F.when(rejected, target(spec.classes[0].index, 0))]
    groups = F.filter(F.array(*targets), lambda g: g.isNotNull())
    return (df.select(F.explode(groups).alias("_g"), *df.columns)
            .select(F.col("_g.cls").alias("cls"), F.col("_g.bucket").alias("bucket"), F.col("_g.copy").alias("copy"),
                    *df.columns))


def _end_rows(spark, folder: str, spec: Spec, rejects: bool):
    """A row for every group per file that appears in `folder` (end_input):
    the groups then process every event they hold."""
    from pyspark.sql import functions as F

    groups = [F.struct(F.lit(c.index).alias("cls"), F.lit(b).alias("bucket"))
              for c, n in zip(spec.classes, spec.buckets) for b in range(n)]
    none = F.lit(None)
    return (spark.readStream.format("text").load(folder)
            .select(F.explode(F.array(*groups)).alias("g"))
            .select(F.col("g.cls").alias("cls"), F.col("g.bucket").alias("bucket"),
                    none.cast("string").alias("s"), none.cast("string").alias("p"), none.cast("string").alias("o"),
                    none.cast("long").alias("start"), none.cast("long").alias("end"),
                    none.cast("string").alias("copy"), none.cast("string").alias("source"),
                    none.cast("string").alias("stream"), none.cast("timestamp").alias("_at"),
                    *([none.cast("string").alias("reason"), none.cast("string").alias("text")] if rejects else []),
                    F.lit(worker.END).alias("ctl")))


_UNITS_MS = {"millisecond": 1, "ms": 1, "second": 1_000, "s": 1_000, "minute": 60_000, "min": 60_000,
             "hour": 3_600_000, "h": 3_600_000, "day": 86_400_000, "d": 86_400_000}


def interval_ms(text: str) -> int:
    """Milliseconds of a Spark interval text such as "10 seconds" or
    "1 minute 30 seconds" (what withWatermark takes)."""
    import re

    from cep.errors import UsageError

    parts = re.findall(r"(\d+(?:\.\d+)?)\s*([a-z]+)", text.strip().lower())
    rest = re.sub(r"(\d+(?:\.\d+)?)\s*([a-z]+)", "", text.strip().lower()).strip()
    total = 0.0
    for number, unit in parts:
        base = _UNITS_MS.get(unit) or _UNITS_MS.get(unit.rstrip("s"))
        if base is None:
            raise UsageError(f"lateness {text!r}: unknown unit {unit!r} (use milliseconds, seconds, "
                             "minutes, hours or days)")
        total += float(number) * base
    if not parts or rest:
        raise UsageError(f"lateness {text!r}: expected an interval such as '10 seconds' or '2 minutes'")
    return round(total)


def end_input(folder) -> Path:
    """Mark the end of a stream's input for a detect(..., end_markers=folder)
    query: when the mark is read, every group processes all the events it
    holds, without waiting for the watermark; events that come later and
    end before them are late. Returns the mark's file."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    name = f"end-{time.time_ns()}.txt"
    hidden = folder / f".{name}"  # Spark's file source skips dot files: the mark appears whole
    hidden.write_text("end\n")
    return hidden.rename(folder / name)


def _finish(raw):
    """The workers' raw rows as answer rows, cep.events.ANSWER_ROWS: times
    as timestamps (bindings and triples are typed columns already:
    worker.OUTPUT_DDL)."""
    from pyspark.sql import functions as F

    from cep.events import ANSWER_ROWS

    return raw.select(*(F.timestamp_millis(name).alias(name) if name in ("start", "end") else name
                        for name in ANSWER_ROWS.names))


def detect(events, rules, ontology=None, lateness: str = "10 seconds", buckets: int = DEFAULT_BUCKETS,
           end_markers: str | None = None, prolog=None, policy: str | None = None, allow_from=(),
           limits=None, services=None):
    """Answers (and late and rejected events) of a rule set over a DataFrame
    of events; see the module's docstring. `rules`: a rule file's path
    (a Path, or a str that names a file), EP-SPARQL text, or parsed
    queries; one line that is neither is reported as a missing rule file. `ontology`: background knowledge,
    ontology files (a path or a list of them; docs/language.md) or a
    cep.background.Background, with the files the rules name by FROM. `prolog`: Prolog files whose predicates the
    expressions call (a path, a list of them, or a cep.user_prolog.UserProlog;
    docs/language.md), loaded here first: a file that does not load raises
    PrologFileError. `end_markers`: a folder watched for the marks of
    end_input (streams only). `policy`: the consumption policy of the
    queries without an @policy annotation (cep.rules.with_policy).
    `allow_from`: folders (a path or a list) whose files the rules may
    name with FROM, beyond the rule file's folder (the current one for
    EP-SPARQL text) and the `ontology` files, as cep.rules.load_rules takes
    it; rules given parsed were checked when they were parsed.
    `limits`: a cep.limits.Limits (README, "Limits"; default: its
    defaults). `services`: a cep.service.options.ServiceOptions, the
    endpoints the rules' SERVICE patterns may call and how their views
    are kept (docs/language.md, "SERVICE")."""
    from cep.background.knowledge import given_files, run_background
    from cep.rules import with_policy
    from cep.user_prolog import load_user_prolog

    queries = with_policy(_queries(rules, [*given_files(allow_from), *given_files(ontology)]), policy)
    background = run_background(queries, ontology)
    spec = plan(queries, buckets, background, events.sparkSession, prolog=load_user_prolog(prolog), limits=limits,
                services=services)
    return _finish(run(_times(events), spec, lateness, end_markers))


def run(events, spec: Spec, lateness: str = "10 seconds", end_markers: str | None = None):
    """The worker's raw rows (worker.OUTPUT_DDL, times in epoch ms) for
    events with columns s, p, o, start, end (epoch ms) and source."""
    from pyspark.sql import functions as F
    from pyspark.sql.streaming.state import GroupStateTimeout

    if "stream" not in events.columns:  # events of no stream
        events = events.withColumn("stream", F.lit(None).cast("string"))
    if not events.isStreaming:
        return _outputs(_routed(events, spec).groupBy("cls", "bucket").applyInPandas(
            lambda key, pdf: worker.detect_static(spec, key, pdf), schema=worker.raw_ddl(spec)), spec)
    # Spark's event time is an event's end plus 1 ms, and its delay the
    # lateness plus 1 ms: its watermark is then the engine's (the latest end
    # less the lateness), and a stateful operator with timeouts, which drops
    # the rows at or before its watermark, drops only the events that end
    # before the engine's watermark, those the engine reports late (with
    # the end itself, an event at the watermark, or at 1970-01-01T00:00Z in
    # the first micro-batch, would be lost). It is taken on every event,
    # before the routing: an event that no query reads moves event time
    # too, as in process (cep/io/follow.py: the latest end read), and
    # closes the windows that it passes.
    delay = f"{interval_ms(lateness) + 1} milliseconds"
    events = events.withColumn("_at", F.timestamp_millis(F.col("end") + 1)).withWatermark("_at", delay)
    df = _routed(events, spec).withColumn("ctl", F.lit(None).cast("string"))
    if end_markers:
        if "://" not in str(end_markers):  # a local folder: Spark's file source needs it to exist
            Path(end_markers).mkdir(parents=True, exist_ok=True)
        df = df.unionByName(_end_rows(events.sparkSession, str(end_markers), spec,
                                         "reason" in events.columns))
    # No timeouts, unless a query has a window or a NOTSEQ: with event-time timeouts
    # Spark drops late rows unseen (without them the group reports them),
    # and processing-time ones make Spark run a micro-batch after every
    # micro-batch, so a bounded run never ends. A window must close when
    # the watermark passes it, even in a group no row reaches: there the
    # group asks for an event-time timeout at its next window.
    function = partial(worker.detect_streaming, spec, interval_ms(lateness))
    if os.environ.get("CEP_WORKER_PROFILE"):  # where the workers spend their time (bench/spark.py --profile)
        function = partial(worker.profiled, os.environ["CEP_WORKER_PROFILE"], function)
    return _outputs(df.groupBy("cls", "bucket").applyInPandasWithState(
        function, worker.raw_ddl(spec), worker.STATE_DDL,
        "append", GroupStateTimeout.EventTimeTimeout if spec.timed else GroupStateTimeout.NoTimeout), spec)


def _outputs(raw, spec: Spec):
    """The workers' rows (worker.raw_schema) as worker.OUTPUT_DDL's: each
    SELECT answer's bindings made a map here, in the JVM, from its field
    columns (its variables in the order of the engine's answer tables,
    cep.engine.binding_order; the unbound left out), and the columns of a
    row that is not an answer read from its JSON (column detail; null: an
    answer)."""
    from pyspark.sql import functions as F

    from cep.engine import binding_order

    types = dict(f.split(" ", 1) for f in worker.OUTPUT_DDL.split(", "))
    raw = raw.withColumn("detail", F.from_json("detail", worker.DETAIL_DDL))
    bindings = F.lit(None)
    for layout in {layout.name: layout for c in spec.compiled for layout in c.layouts}.values():
        if layout.form == "select":
            fields = [(name, F.col(f"f{i - 3}")) for name, i in binding_order(layout)]
            made = F.create_map()
            if fields:
                # every variable bound (the common case): the map made at once,
                # in generated code; else through a filter of its entries, a
                # higher-order function that Spark interprets row by row
                whole = F.create_map(*(x for name, value in fields for x in (F.lit(name), value)))
                entries = [F.struct(F.lit(name).alias("key"), value.alias("value")) for name, value in fields]
                some = F.map_from_entries(F.filter(F.array(*entries), lambda e: e["value"].isNotNull()))
                made = F.when(reduce(operator.and_, (value.isNotNull() for _, value in fields)),
                              whole).otherwise(some)
            bindings = F.when(F.col("query") == layout.name, made.cast(types["bindings"])).otherwise(bindings)
    triples = F.col("triples") if "triples" in raw.columns else F.lit(None)
    kind = F.when(F.col("detail").isNull(), F.lit("answer")).otherwise(F.col("detail.kind"))  # nullable, as before
    made = {"bindings": bindings, "triples": triples, "kind": kind,
            **{c: F.col(f"detail.{c}") for c in worker.DETAIL_COLUMNS if c != "kind"}}
    return raw.select(*(made[c].cast(types[c]).alias(c) if c in made else F.col(c) for c in worker.OUTPUT_COLUMNS))
