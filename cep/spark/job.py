"""`cep run --engine spark`: event files -> the engine on Spark -> a sink.

One streaming query: the files (cep.spark.sources) go through the engine
(cep.spark.run) to a file sink or the console (cep.spark.sinks), with its
checkpoint in --checkpoint (or a temporary folder).

A bounded run (no --follow) reads the files that are there, then marks the
end of the input (cep.spark.end_input) and runs once more, so that the
events still waiting for the watermark are processed too: the answers are
those of the whole input. A followed run keeps watching until interrupted;
its last `lateness` of events waits for later events, as on any stream.
Rerunning with the same checkpoint continues where the last run stopped,
when it is the same run: the same rules, options, input and output
(cep.spark.checkpoint).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from cep.errors import CepError, UsageError

CHECK_SECONDS = 5.0  # how often a followed run looks for event files it does not read
END_FOLDER = "cep-end"  # inside the checkpoint: the end-of-input marks


@dataclass
class Options:
    events: list
    out: str | None = None
    fmt: str = "jsonl"
    checkpoint: str | None = None
    follow: bool = False
    trigger: str | None = None
    lateness: str = "10 seconds"
    files_per_batch: int | None = None
    master: str | None = None
    conf: dict = field(default_factory=dict)  # --conf KEY=VALUE: Spark settings
    buckets: int = 8
    quiet: bool = False
    progress_json: str | None = None  # append each micro-batch's progress to this file (cep.spark.progress)
    background: object = None  # cep.background.Background
    prolog: object = None  # cep.user_prolog.UserProlog
    limits: object = None  # cep.limits.Limits
    services: object = None  # cep.service.options.ServiceOptions
    service_reports: bool = False  # the console also takes the SERVICE reports (sinks.Console.service_log)
    policy: str | None = None  # --policy (the queries carry it: recorded in the checkpoint)
    times: object = None  # cep.io.event_time.TimePredicates of the RDF inputs (None: PROV's)


def quiet_spark() -> None:
    """No pandas-version warnings from the Python workers (Spark's log is
    silenced once the session exists): the run's own progress lines
    are what the user reads."""
    os.environ.setdefault("PYTHONWARNINGS", "ignore::FutureWarning")
    import warnings

    warnings.filterwarnings("ignore", category=FutureWarning, module="pyspark")


def session(master: str | None, conf: dict | None = None):
    from cep.spark import spark_session

    quiet_spark()
    spark = spark_session(master, conf=conf, own_stderr=True)
    # A failed query is reported by the run itself (a message, or an internal
    # error with Spark's reason): Spark's log of it, hundreds of lines of
    # Java stack from the executor, the task set and the query, buried it.
    spark.sparkContext.setLogLevel("FATAL")
    return spark


STOP_POLL_SECONDS = 1.0  # how soon a stop asked for by a signal is seen


class _Signals:
    """Ctrl-C (SIGINT) and SIGTERM while the run calls the JVM, from the
    session's start to the query's end: the handler only notes the signal,
    and the run stops where it looks (`stop_if_asked`, between two calls to
    the JVM; `_await` stops a running query first). Raised inside a call,
    the interrupt leaves py4j's connection mid-answer: py4j logs a
    traceback, and PySpark's own handler (SparkContext's, which `arm`
    replaces again) calls the JVM from within the call. A second signal
    acts at once."""

    def __init__(self):
        self.asked: list[int] = []
        self.previous: dict = {}

    def arm(self) -> None:
        import signal

        try:
            for sig in (signal.SIGINT, signal.SIGTERM):
                handler = signal.signal(sig, self._note)
                self.previous.setdefault(sig, handler)  # the command's, not SparkContext's
        except ValueError:  # not the main thread: signals reach the thread that handles them
            pass

    def _note(self, signum, frame):
        from cep.spark import jvm_stderr

        if self.asked:  # the second: do not wait for the query to stop
            raise KeyboardInterrupt
        self.asked.append(signum)
        jvm_stderr.interrupted()  # the tasks the stop cuts off are no error

    def disarm(self) -> None:
        import signal

        for sig, handler in self.previous.items():
            signal.signal(sig, handler)
        self.previous = {}

    def stop_if_asked(self) -> None:
        """The signal noted, raised again for the command to report (its
        handlers, cep.cli.main, outside any JVM call)."""
        import signal

        if self.asked:
            self.disarm()
            signal.raise_signal(self.asked[0])
            raise KeyboardInterrupt  # (where no handler raises)


def _await(query, progress, signals: _Signals, check=None) -> None:
    """Wait for the query (progress: its cep.spark.progress.ProgressListener,
    which has received every micro-batch's progress when this returns);
    stop it once `signals` notes one."""
    import time

    from cep.spark import jvm_stderr

    jvm_stderr.running()
    try:
        last = time.monotonic()
        while not query.awaitTermination(STOP_POLL_SECONDS):
            if signals.asked:
                query.stop()
                break
            if check is not None and time.monotonic() - last >= CHECK_SECONDS:
                last = time.monotonic()
                check()
    except KeyboardInterrupt:
        query.stop()
        raise
    signals.stop_if_asked()
    progress.wait(query)
    if query.exception() is not None:
        raise query.exception()


def _warn_unread(streams, told: set, say) -> None:
    """A followed run reads the types of event file its folders held when
    it began (its checkpoint keeps its streams): say so, once per folder
    and type, when files of another type appear."""
    from cep.spark.checkpoint import reads
    from cep.spark.sources import unread

    for folder, fmt, first in unread(streams):
        if (folder, fmt) not in told:
            told.add((folder, fmt))
            say(f"warning: {folder}: .{fmt} event files have appeared ({first.name} ...), which this run does not "
                f"read: {reads(streams, folder)}; give them to a run of their own")


def _checkpoint_folder(given: str | None) -> Path:
    """The checkpoint's folder, made if need be, as one path however it is
    written (Spark's checkpoint holds the paths it was given)."""
    folder = Path(given or tempfile.mkdtemp(prefix="cep-checkpoint-")).resolve()
    try:
        (folder / END_FOLDER).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"--checkpoint {given}: cannot be made a folder: {exc.strerror or exc}") from None
    return folder


def run(queries, options: Options, console=None, say=print):
    """Run the rule set over the event files; answers go to options.out (a
    folder, Spark's file sink) or to `console` (a sinks.Console). A
    checkpoint given is resumed (cep.spark.checkpoint: when it is the
    same run's). Returns the run's cep.spark.progress.ProgressListener
    (its rows and micro-batches)."""
    from cep.spark import checkpoint as checkpoints
    from cep.spark import end_input, failures, plan
    from cep.spark import run as engine
    from cep.spark import sinks, sources
    from cep.spark.progress import ProgressListener, observed

    if options.out and Path(options.out).is_file():
        raise UsageError(f"{options.out}: is a file; the Spark engine writes a folder of files "
                         "(Spark's file sink): give a folder")
    streams = sources.sources(options.events, options.follow)
    signals = _Signals()
    signals.arm()
    spark = progress = None
    own_checkpoint = options.checkpoint is None
    checkpoint = ends = None
    try:
        spark = session(options.master, options.conf)
        signals.arm()  # again: SparkContext put its own handler in place
        if not options.quiet:  # where to watch the job (its port moves on when 4040 is taken)
            url = spark.sparkContext.uiWebUrl
            say(f"Spark UI: {url}" if url else "Spark UI off (spark.ui.enabled=false)")
        spec = plan(queries, options.buckets, options.background, spark, prolog=options.prolog,
                    limits=options.limits, services=options.services, service_reports=options.service_reports)
        signals.stop_if_asked()
        checkpoint = _checkpoint_folder(options.checkpoint)
        ends = checkpoint / END_FOLDER
        streams = checkpoints.resume(checkpoint, checkpoints.record(spec, options, streams, checkpoint)) or streams
        events = sources.event_stream(spark, streams, options.files_per_batch, options.times)
        raw = observed(engine(events, spec, options.lateness, str(ends)))
        if options.out:
            variables = [f for layout in spec.layouts(queries) if layout.form == "select" for f in layout.fields]
            writer = sinks.file_sink(raw, options.fmt, str(Path(options.out).absolute()),
                                     list(dict.fromkeys(variables)))
        else:
            writer = raw.writeStream.foreachBatch(console)
        writer = writer.option("checkpointLocation", str(checkpoint)).queryName("cep")
        progress = ProgressListener(None if options.quiet else say, options.progress_json)
        spark.streams.addListener(progress)
        signals.stop_if_asked()
        if options.follow:
            _await(writer.trigger(processingTime=options.trigger or "0 seconds").start(), progress, signals,
                   partial(_warn_unread, streams, set(), say))
        else:
            _await(writer.trigger(availableNow=True).start(), progress, signals)
            end_input(ends)
            signals.stop_if_asked()
            _await(writer.trigger(availableNow=True).start(), progress, signals)
        return progress
    except KeyboardInterrupt:
        # the query has stopped (_await): stop Spark too before the command
        # reports and exits, so its Python workers are shut down by their
        # daemon rather than cut off mid-answer when the JVM dies with us
        # (PySpark's daemon prints a BrokenPipeError traceback then)
        if spark is not None:
            spark.stop()
        raise
    except CepError:
        raise
    except Exception as exc:
        # a failure in a console's micro-batch reaches Spark as text: the console kept it
        for failed in (getattr(console, "failure", None), exc):
            known = failed is not None and failures.user_error(failed, checkpoint)
            if known:
                raise known from None
        raise
    finally:
        signals.disarm()
        if progress is not None:
            spark.streams.removeListener(progress)
            progress.close()
        if own_checkpoint and checkpoint is not None:
            shutil.rmtree(checkpoint, ignore_errors=True)
