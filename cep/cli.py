"""The `cep` command: run EP-SPARQL rules over an RDF event stream, show how
they compile, or write the generated Prolog program.

Takes the command line; returns the exit status: 0 on success, 2 when the
user can fix the problem (a query error, a missing file, a wrong option: a
CepError, reported as one message without a traceback), 1 on an internal
error (a bug, reported with its traceback).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
import traceback
from collections import Counter
from pathlib import Path

from cep.errors import CepError, UsageError, for_terminal

DISTRIBUTION = "ep-sparql"  # pyproject.toml: the name on PyPI, where "cep" is another project's
ENGINES = ("local", "spark")
INPUT_FORMATS = ("trig", "nq", "nt", "jsonl", "csv", "parquet")  # cep.io.readers
OUTPUT_FORMATS = ("jsonl", "table", "csv", "sparql-json", "sparql-xml", "sparql-csv", "sparql-tsv",
                  "nt", "nq", "trig", "parquet")  # cep.io.writers
DEMOS = ("tsunami", "delivery")  # examples/APP/app.py, each with main(argv) -> exit status
DEFAULT_BATCH = 50_000
LATENESS = "10 seconds"  # --lateness: how late an event may arrive (Spark's watermark delay)
# exit status (docs/io.md, "Exit status")
EXIT_OK = 0  # the run completed (rejected records are reported, and do not fail it without --strict)
EXIT_BUG = 1  # an internal error: a bug, reported with its traceback
EXIT_ERROR = 2  # the command line, a rule file, a Prolog or background file is wrong: the message says where
EXIT_REJECTED = 3  # --strict: the run completed, and input records were rejected (or late)
EXIT_INTERRUPTED = 130  # Ctrl-C (SIGINT): 128 + 2, as shells report it
EXIT_TERMINATED = 143  # SIGTERM: 128 + 15
PROGRESS_SECONDS = 5.0
REJECTS_SHOWN = 20

DESCRIPTION = """\
cep is a complex event processing engine for RDF streams. It runs EP-SPARQL
queries (Anicic et al., "EP-SPARQL: a unified language for event processing
and stream reasoning", WWW 2011): SPARQL graph patterns over timestamped
triples, combined in time with SEQ (one pattern strictly before another),
EQUALS (at the same time), OPTIONALSEQ and EQUALSOPTIONAL, and filtered with
getDURATION(), getSTARTTIME(), getENDTIME() and C-SPARQL's timestamp(?v).
Queries are compiled to event-driven Prolog rules that detect each answer as
soon as its last event arrives; CONSTRUCT queries feed their triples back
into the stream.
"""

COMMANDS = """\
examples, by command:
  run       run rules over event files and write the answers
              cep run rules/stock.rq --events examples/stock/ticks.trig
              cep run rules/*.rq --events data/ --engine local --format csv \\
                  --out answers.csv --rejects rejects.jsonl
  explain   show each stage of compilation: algebra, binarized plan, Prolog rules
              cep explain rules/stock.rq
  compile   write the generated Prolog program
              cep compile rules/stock.rq -o stock.pl
  demo      run an example application (examples/APP/README.md): tsunami, delivery
              cep demo tsunami --engine local
              cep demo delivery --agents 3 --out out/delivery

Run `cep COMMAND --help` for the options of a command.
"""

FORMATS_HELP = """\
event files (--events; a directory stands for its event files, by name order;
- is standard input, with --events-format; FILE.gz is gzip-compressed):
  .trig     RSP-QL TriG: each named graph is a set of triples that occur
            together; its time is in the default graph:
              :tick1 { :ACME :hasStockPrice 100 }
              :tick1 prov:generatedAtTime "2026-01-05T10:00:00Z"^^xsd:dateTime .
            or, for an interval, prov:startedAtTime and prov:endedAtTime
            (prov: = <http://www.w3.org/ns/prov#>)
  .nq       N-Quads: a named graph is an event, timed as in TriG by quads of
            the default graph
  .nt       N-Triples: a subject is an event, timed by its own
            prov:generatedAtTime triple (docs/io.md)
  .jsonl    one JSON object per line:
              {"s": "<http://ex.org/ACME>", "p": "<http://ex.org/hasStockPrice>",
               "o": "\\"100\\"^^<http://www.w3.org/2001/XMLSchema#integer>",
               "t": "2026-01-05T10:00:00Z"}
  .csv      a header row s,p,o,t[,t_end], then one triple per row
  .parquet  columns s, p, o, t [, t_end]
  s, p, o are RDF terms in N-Triples syntax; t and t_end are xsd:dateTime text
  (UTC when no zone is given) or integer epoch milliseconds; t_end defaults to t.
  An optional column stream names the event's stream (an IRI); --events IRI=PATH
  gives the stream IRI to the events of PATH that name none (FROM STREAM, GRAPH).
  Input need not be in time order: the local engine sorts it in bounded memory
  (spilling sorted runs to TMPDIR) before it is processed. With --follow, event
  files (nt, nq, jsonl, csv) and standard input are read as they grow, each
  event processed in time order once the watermark (--lateness) passes it.
  tcp://HOST:PORT (spark engine, --follow): a socket of
  JSON Lines, one event per line.
  Records that cannot be read are skipped and reported (--rejects).

answers (--format; default: by the --out file's extension, else jsonl):
  table        (every form) a table per query, for a person at a terminal; kept
               until the run ends (or 1,000 answers, or a --follow pause)
  jsonl        (every form) one JSON object per answer:
                 {"query": "crash_recovery", "bindings": {"company": {"type": "uri",
                  "value": "http://example.org/ACME"}, ...},
                  "start": "2026-01-05T10:00:00Z", "end": "2026-01-25T10:00:00Z"}
               CONSTRUCT answers carry "triples": [{"s": ..., "p": ..., "o": ...}]
               terms are in the W3C SPARQL 1.1 Query Results JSON form
  csv          SELECT answers: query,start,end then one column per variable,
               terms in N-Triples syntax
  sparql-json  (.srj .json)  W3C SPARQL 1.1 Query Results documents of one
  sparql-xml   (.srx .xml)   SELECT query's answers (their bindings, not
  sparql-csv                 their times), streamed
  sparql-tsv   (.tsv)
  nt nq trig   CONSTRUCT answers: N-Triples (the triples), N-Quads and TriG
               (one named graph per answer, with prov:startedAtTime and
               prov:endedAtTime: readable again by --events)
  parquet      (every form; --out FILE) one Parquet file with the columns and
               types of cep.spark.detect's rows: kind, query, bindings, triples,
               start, end (timestamps), ... (docs/io.md, "One answer schema")
  --out DIR/   one file per query, DIR/QUERY.EXT, in --format where it holds
               the query's form (else SELECT: sparql-json, CONSTRUCT: nq)

rejects (--rejects FILE): JSON Lines {"source": "file:line", "reason": ..., "text": ...}

exit status: 0 success (rejected records are reported, not an error), 2 error
in a query, a file or the command line (the message says where), 3 records were
rejected and --strict was given, 130 interrupted (Ctrl-C), 143 terminated
(SIGTERM), 1 internal error (a bug).
"""


# ----------------------------------------------------------------- parser


def _version() -> str:
    """`cep --version`: the command's version and its distribution's name
    (what `pip install` takes)."""
    from importlib import metadata

    return f"cep {metadata.version(DISTRIBUTION)} (the {DISTRIBUTION} distribution)"


def build_parser() -> argparse.ArgumentParser:
    raw = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(
        prog="cep", formatter_class=raw, description=DESCRIPTION, epilog=COMMANDS + "\n" + FORMATS_HELP)
    parser.add_argument("--version", action="version", version=_version())
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands")

    run = sub.add_parser(
        "run", formatter_class=raw, help="run rules over event files and write the answers",
        description="Run EP-SPARQL rules over event files and write every answer as soon as it is "
                    "detected.",
        epilog="examples:\n"
               "  cep run rules/stock.rq --events examples/stock/ticks.trig\n"
               "  cep run a.rq b.rq --events day1.parquet day2.parquet --format csv --out answers.csv\n"
               "  cep run rules.rq --events stream/ --engine local --rejects rejects.jsonl --batch-size 10000\n"
               "  cep run rules.rq --events incoming/ --follow --checkpoint ckpt/ --out answers/\n\n"
               + FORMATS_HELP)
    run.add_argument("rules", nargs="*", metavar="RULES.rq",
                     help="EP-SPARQL rule files (before or after the options; after --events, "
                          "the names ending in .rq)")
    run.add_argument("--events", nargs="+", required=True, metavar="PATH",
                     help="event files or directories (.trig, .nq, .nt, .jsonl, .csv, .parquet, each "
                          "optionally gzipped: .gz), - for standard input (with --events-format; local engine), "
                          "or tcp://HOST:PORT, a socket of JSON Lines (spark engine, with --follow); IRI=PATH: "
                          "the events of PATH that name no stream are of the stream IRI (FROM STREAM)")
    run.add_argument("--events-format", choices=INPUT_FORMATS, metavar="FORMAT",
                     help=f"the format of standard input (--events -) and of event files whose name does not "
                          f"say it: {', '.join(INPUT_FORMATS)}")
    _time_predicate_options(run)
    run.add_argument("--engine", choices=ENGINES,
                     help="where the rules run: local = in this process; spark = Spark Structured "
                          "Streaming, local mode unless --master says otherwise. Default: local for "
                          "event files and standard input (followed or not), spark for a folder of events or a "
                          "Spark option (--master, --conf, --checkpoint, --trigger, --files-per-batch)")
    run.add_argument("--format", choices=OUTPUT_FORMATS, metavar="FORMAT",
                     help="answer format: " + ", ".join(OUTPUT_FORMATS) + " (the spark engine writes jsonl, csv "
                          "and parquet to --out DIR); default: the one the --out file's extension says, else jsonl "
                          "(docs/io.md)")
    run.add_argument("--out", metavar="PATH",
                     help="write answers to PATH instead of standard output; PATH/ (a folder): one file per "
                          "query, PATH/QUERY.EXT (spark engine: a folder, written by Spark's exactly-once "
                          "file sink)")
    run.add_argument("--rejects", metavar="PATH",
                     help="write rejected input records to PATH as JSON Lines (default: report them "
                          "on standard error)")
    run.add_argument("--batch-size", type=int, default=DEFAULT_BATCH, metavar="N",
                     help=f"events pushed to the engine at a time (default {DEFAULT_BATCH:,})")
    run.add_argument("--strict", action="store_true",
                     help=f"exit with status {EXIT_REJECTED} when input records were rejected or late (the run "
                          "still completes; without it they are reported and the status is 0)")
    run.add_argument("--follow", action="store_true",
                     help="keep reading until interrupted (Ctrl-C): event files and standard input are followed "
                          "as they grow, a line at a time (nt, nq, jsonl, csv; in this process), answers written "
                          "as the watermark (--lateness) passes the events; Ctrl-C ends the input (the events "
                          "waiting are processed) and the run; event folders are watched for new files (Spark). "
                          "Without it the run reads what is there and stops")
    run.add_argument("-q", "--quiet", action="store_true", help="no progress lines and no summary")
    run.add_argument("--progress-json", metavar="FILE",
                     help="append each input batch's (spark: micro-batch's) progress to FILE as a JSON line "
                          "(rows, rates, duration, watermark, state, answers, late and rejected records; "
                          "docs/deploy.md, \"Monitoring\")")
    _ontology_option(run)
    _prolog_option(run)
    _policy_option(run)
    _service_options(run)
    _limit_options(run, derived=True)
    spark = run.add_argument_group("spark engine")
    spark.add_argument("--master", metavar="URL",
                       help="Spark master (default: spark.master of the Spark configuration, else local[*])")
    spark.add_argument("--conf", action="append", default=[], type=_spark_setting, metavar="KEY=VALUE",
                       help="a Spark setting, as spark-submit takes it (again for each; e.g. "
                            "--conf spark.archives=env.tar.gz#environment, docs/deploy.md)")
    spark.add_argument("--checkpoint", metavar="DIR",
                       help="keep the query's progress and state in DIR: a rerun with the same DIR, rules, "
                            "options and --out resumes (any other is refused)")
    spark.add_argument("--trigger", metavar="INTERVAL",
                       help="with --follow: the micro-batch interval, e.g. '10 seconds' (default: as soon "
                            "as the last one ends)")
    spark.add_argument("--lateness", metavar="INTERVAL",
                       help=f"how late an event may arrive (the watermark delay; default '{LATENESS}'): "
                            "events wait this long in event time and are then processed in time order "
                            "(also of --follow in this process; a run in this process without --follow "
                            "reads its whole input in time order, and has no use for it)")
    spark.add_argument("--files-per-batch", type=int, metavar="N",
                       help="read at most N new files per micro-batch (default: all)")
    run.set_defaults(func=cmd_run, command_parser=run)

    explain = sub.add_parser(
        "explain", formatter_class=raw, help="show the algebra, binarized plan and Prolog rules",
        description="Show how rules compile: each query's algebra (S-expressions), the binarized plan of "
                    "intermediate events, and the generated Prolog rules.",
        epilog="example:\n  cep explain rules/stock.rq")
    explain.add_argument("rules", nargs="+", metavar="RULES.rq", help="EP-SPARQL rule files")
    _ontology_option(explain)
    _prolog_option(explain)
    _policy_option(explain)
    _limit_options(explain)
    explain.set_defaults(func=cmd_explain, command_parser=explain)

    comp = sub.add_parser(
        "compile", formatter_class=raw, help="write the generated Prolog program",
        description="Compile rules to an event-driven backward-chaining Prolog program and write it.",
        epilog="examples:\n  cep compile rules/stock.rq\n  cep compile rules/stock.rq -o stock.pl")
    comp.add_argument("rules", nargs="+", metavar="RULES.rq", help="EP-SPARQL rule files")
    comp.add_argument("-o", "--out", metavar="FILE", help="write to FILE instead of standard output")
    _ontology_option(comp)
    _prolog_option(comp)
    _policy_option(comp)
    _limit_options(comp)
    comp.set_defaults(func=cmd_compile, command_parser=comp)

    demo = sub.add_parser(
        "demo", formatter_class=raw, help="run an example application (examples/APP)",
        description="Run one of the example applications (examples/ of the checkout, or the copy an installed "
                    "package carries) on its own sample, with its own options (cep demo APP --help).",
        epilog="examples:\n  cep demo tsunami --engine local\n  cep demo delivery --agents 3 --out out/delivery")
    demo.add_argument("app", choices=DEMOS, help="the application")
    demo.add_argument("options", nargs=argparse.REMAINDER, help="the application's options")
    demo.set_defaults(func=cmd_demo, command_parser=demo)
    return parser


def _spark_setting(text: str) -> tuple[str, str]:
    """--conf KEY=VALUE as (key, value)."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, not {text!r}")
    return key.strip(), value


def _ontology_option(parser):
    parser.add_argument("--ontology", action="append", default=[], metavar="PATH",
                        help="background knowledge: an RDF file (.ttl .nt .nq .trig .rdf .owl, or .obo "
                             "is_a hierarchies; may be gzipped) whose RDFS closure the rules match "
                             "events against and join with (repeatable; with the files the rules name "
                             "with FROM <file>, one background graph; at most 256 MiB of text each, "
                             "CEP_MAX_BACKGROUND_SIZE in the environment sets another limit)")
    parser.add_argument("--allow-from", action="append", default=[], metavar="DIR",
                        help="a folder whose files the rules may name with FROM <file>, beyond the rule "
                             "file's own folder and the --ontology files (repeatable)")


def _allow_from(args) -> list:
    """What FROM may read beyond each rule file's folder: the --allow-from
    folders and the --ontology files."""
    for folder in args.allow_from:
        if not Path(folder).is_dir():
            raise UsageError(f"--allow-from {folder}: not a folder")
    return [*args.allow_from, *args.ontology]


def _background(args, queries):
    """The run's background knowledge, one graph of the --ontology files and
    the files the queries name with FROM, read before any event: a malformed
    file stops the run here."""
    from cep.background.knowledge import load_background, ontology_paths

    return load_background(ontology_paths(queries, args.ontology))


def _prolog_option(parser):
    parser.add_argument("--prolog", action="append", default=[], metavar="FILE.pl",
                        help="a Prolog file whose predicates FILTER and SELECT expressions may call by name, "
                             "e.g. FILTER(near(?a, ?b)) (repeatable; see docs/language.md)")


def _service_options(parser):
    parser.add_argument("--service-allow", action="append", default=[], metavar="IRI",
                        help="an endpoint (or an origin, http://host:port) the queries' SERVICE patterns may "
                             "call (repeatable; default none: see docs/language.md, SERVICE)")
    parser.add_argument("--service-policy", default="", metavar="KEY=VALUE,...",
                        help="how SERVICE views are kept: view=on|off, proposer=WSJ|GNR|WST, "
                             "ranker=RND|LRU|WBM, gamma=N or rho=SECONDS, timeout=SECONDS, seed=N, "
                             "alpha=FRACTION (warn when an answer's estimated freshness is below it); "
                             "a query's own `@service KEY=VALUE, ...` line overrides these for its SERVICE views")
    parser.add_argument("--service-report", metavar="FILE",
                        help="write each SERVICE evaluation's report (refreshes, latency, estimated freshness, "
                             "stale) to FILE as JSON Lines; on Spark (without --out) with each report's "
                             "group and bucket")


def _services(args):
    """The run's cep.service.options.ServiceOptions, from the options."""
    from cep.service.options import ServiceOptions

    try:
        return ServiceOptions.parse(args.service_allow, args.service_policy)
    except ValueError as e:
        raise UsageError(str(e)) from None


def _policy_option(parser):
    from cep.binarize import POLICIES

    parser.add_argument("--policy", choices=POLICIES, metavar="POLICY",
                        help="the consumption policy of the queries that carry no @policy annotation: "
                             f"{', '.join(POLICIES)} (default: unrestricted; see docs/language.md)")


def _limit_options(parser, derived=False):
    from cep import limits

    if derived:
        parser.add_argument("--max-derived", type=int, default=limits.DERIVED, metavar="N",
                            help="stop the run with an error when the CONSTRUCT rules derive more than N triples "
                                 f"at one instant: a cycle of rules that never ends (default {limits.DERIVED:,})")
        parser.add_argument("--max-partial-matches", type=int, default=limits.PARTIAL_MATCHES, metavar="N",
                            help="stop the run with an error when one event makes more than N partial matches "
                                 "(solutions of a query's parts, stored to be joined): patterns whose matches "
                                 f"multiply with each event (default {limits.PARTIAL_MATCHES:,})")
    parser.add_argument("--max-window-evaluations", type=int, default=limits.WINDOW_EVALUATIONS, metavar="N",
                        help="refuse a time-based window evaluated more than N times with each instant in it "
                             f"(RANGE / STEP; default {limits.WINDOW_EVALUATIONS:,})")


def _time_predicate_options(parser) -> None:
    times = parser.add_argument_group("event times in TriG, N-Quads and N-Triples (docs/io.md)")
    times.add_argument("--time-predicate", metavar="IRI",
                       help="the predicate of an event's instant (default prov:generatedAtTime)")
    times.add_argument("--start-predicate", metavar="IRI",
                       help="the predicate of the start of an event's interval (default prov:startedAtTime; "
                            "RSP-QL's example: http://example.org/startsAt)")
    times.add_argument("--end-predicate", metavar="IRI",
                       help="the predicate of the end of an event's interval (default prov:endedAtTime)")
    times.add_argument("--interval-predicate", metavar="IRI",
                       help="the predicate linking an event to a blank node that gives its interval's start "
                            "and end (default none; RSP-QL's example: http://example.org/validBetween)")


def _time_predicates(args):
    """The TimePredicates the options name (cep.io.event_time)."""
    from cep.io.event_time import time_predicates

    try:
        return time_predicates(args.time_predicate, args.start_predicate, args.end_predicate,
                               args.interval_predicate)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _limits(args):
    """The run's cep.limits.Limits, from the options."""
    from cep.limits import Limits

    given = {"derived": getattr(args, "max_derived", None), "window_evaluations": args.max_window_evaluations,
             "partial_matches": getattr(args, "max_partial_matches", None)}
    for name, value in given.items():
        if value is not None and value < 1:
            option = {"derived": "--max-derived", "window_evaluations": "--max-window-evaluations",
                      "partial_matches": "--max-partial-matches"}[name]
            raise UsageError(f"{option} must be at least 1, not {value}")
    return Limits(**{name: value for name, value in given.items() if value is not None})


def _warn_state(queries):
    """A warning for each query whose partial matches grow with the stream."""
    from cep.compile import state_warnings

    for warning in state_warnings(queries):
        _say(f"warning: {warning}")


def _user_prolog(args, queries):
    """The run's Prolog files, loaded before any event (a file that does
    not load stops the run here), with the queries' calls of their
    predicates checked against them."""
    from cep.user_prolog import check_calls, load_user_prolog

    user = load_user_prolog(args.prolog)
    for warning in user.warnings if user is not None else ():
        _say(f"warning: {warning}")
    check_calls(queries, user)
    return user


# ---------------------------------------------------------------- commands


def _say(message: str) -> None:
    """A line on standard error, its control characters escaped (for_terminal)."""
    print(f"cep: {for_terminal(message)}", file=sys.stderr, flush=True)


def load_queries(paths, policy=None, allow_from=()):
    """The queries of the rule files, with the run's default `policy`
    (--policy) and what FROM may read beyond the rule files' folders
    (_allow_from); each query's warnings go to stderr."""
    for path in paths:
        p = Path(path)
        if not p.exists():
            raise UsageError(f"{path}: no such rules file")
        if p.is_dir():
            raise UsageError(f"{path}: is a directory; give the rule files (for example {path}/*.rq)")
    from cep.rules import load_rules

    queries = load_rules([str(p) for p in paths], policy, allow_from)
    for query in queries:
        for warning in query.warnings:
            _say(f"warning: {warning}")
    if not queries:
        raise UsageError(f"no queries in {', '.join(map(str, paths))}")
    return queries


def _open_out(path, what):
    try:
        return open(path, "w", encoding="utf-8", newline="")
    except OSError as exc:
        raise UsageError(f"{path}: cannot write the {what}: {exc.strerror or exc}") from None


def _select_variables(queries, engine):
    """CSV columns: the SELECT variables of the rule set in the order the
    queries name them (what the compiled layouts record)."""
    layouts = getattr(engine, "layouts", None)
    if layouts is not None:
        return [f for layout in layouts if layout.form == "select" for f in layout.fields]
    names = []
    for q in queries:
        if q.form != "select":
            continue
        if q.projection is None:
            return None  # SELECT * without layouts: let the writer find the columns
        names.extend(item.var.name for item in q.projection)
    return names


def _plural(n, word):
    return f"{n:,} {word}" + ("" if n == 1 else "s")


class _Rejects:
    """Where rejects go: a JSON Lines file, or stderr (the first few in full)."""

    def __init__(self, path):
        from cep.io import write_rejects

        self.write = write_rejects
        self.handle = _open_out(path, "rejects") if path else None
        self.count = 0

    def report(self, rejects):
        if self.handle:
            self.write(rejects, self.handle)
            self.handle.flush()
            self.count += len(rejects)
            return
        for r in rejects:
            self.count += 1
            if self.count <= REJECTS_SHOWN:
                text = r.text if len(r.text) <= 300 else f"{r.text[:300]}... ({len(r.text):,} characters)"
                _say(f"rejected {r.source}: {r.reason}" + (f"\n    {text}" if text else ""))

    def close(self):
        if self.handle:
            self.handle.close()
        elif self.count > REJECTS_SHOWN:
            _say(f"... and {self.count - REJECTS_SHOWN:,} more rejected records "
                 "(use --rejects FILE to keep them all)")


RULE_SUFFIX = ".rq"
SPARK_OPTIONS = ("master", "conf", "checkpoint", "trigger", "files_per_batch")


def _rules_after_events(args) -> None:
    """`cep run --events a.trig rules.rq`: --events takes every path after
    it, so rule files given after it are told by their name (.rq)."""
    if args.rules:
        return
    while args.events and args.events[-1].endswith(RULE_SUFFIX):
        args.rules.insert(0, args.events.pop())
    if not args.rules:
        raise UsageError(f"no rule file given (RULES{RULE_SUFFIX}, before --events or after it)")
    if not args.events:
        raise UsageError("--events names no event file or folder")


def _engine(args) -> tuple[str, str]:
    """The engine of a run, and why: the one asked for, else Spark where
    the run is a stream (a folder of events) or asks for Spark by an
    option, else the in-process engine, which starts in a second."""
    if args.engine:
        return args.engine, "--engine"
    given = [f"--{name.replace('_', '-')}" for name in SPARK_OPTIONS if getattr(args, name)]
    if given:
        return "spark", given[0]
    from cep.io.readers import SOCKET, split_stream

    if any(split_stream(e)[1].startswith(SOCKET) for e in args.events):
        return "spark", "a TCP socket"
    if any(Path(split_stream(e)[1]).is_dir() for e in args.events):
        return "spark", "a folder of events"
    return "local", "event files"


def _say_engine(args) -> None:
    """Which engine runs, where the user did not choose it (once the
    run's arguments are checked)."""
    if args.quiet or args.engine_reason == "--engine":
        return
    _say(f"running on Spark Structured Streaming ({args.engine_reason}; --engine local runs in this process)"
         if args.engine == "spark" else
         f"running in this process ({args.engine_reason}; --engine spark runs on Spark)")


def cmd_run(args) -> int:
    _rules_after_events(args)
    args.engine, args.engine_reason = _engine(args)
    if args.engine == "spark":
        return _run_spark(args)
    given = [f"--{name.replace('_', '-')}" for name in SPARK_OPTIONS if getattr(args, name)]
    if given:
        raise UsageError(f"{', '.join(given)}: options of the spark engine, not of --engine local")
    return _run_local(args)


def _run_spark(args) -> int:
    from cep.io import check_format
    from cep.spark import job, sinks

    from cep.io.readers import STDIN, split_stream

    if any(split_stream(e)[1] == STDIN for e in args.events) or args.events_format:
        raise UsageError(f"--events {STDIN} and --events-format: Spark's sources read files (by their extension), "
                         "folders and sockets, not the standard input of this process: run it here "
                         "(--engine local), or serve it on a socket (--events tcp://HOST:PORT, JSON Lines)")
    args.format = args.format or "jsonl"
    if args.format not in sinks.FILE_FORMATS and (args.out or args.format != "table"):
        raise UsageError(f"--format {args.format}: the local engine writes it (--engine local); the spark "
                         f"engine writes {', '.join(sinks.FILE_FORMATS)}")
    if args.format == "parquet" and not args.out:
        raise UsageError("--format parquet needs --out DIR")
    if args.files_per_batch is not None and args.files_per_batch < 1:
        raise UsageError(f"--files-per-batch must be at least 1, not {args.files_per_batch}")
    if args.trigger and not args.follow:
        raise UsageError("--trigger sets the interval of a followed run: use it with --follow")
    limits = _limits(args)
    queries = load_queries(args.rules, args.policy, _allow_from(args))
    if args.format != "parquet":
        check_format(args.format, queries)
    options = job.Options(events=args.events, out=args.out, fmt=args.format, checkpoint=args.checkpoint,
                          follow=args.follow, trigger=args.trigger, lateness=args.lateness or LATENESS,
                          files_per_batch=args.files_per_batch, master=args.master, conf=dict(args.conf),
                          quiet=args.quiet, times=_time_predicates(args), progress_json=args.progress_json,
                          policy=args.policy,
                          background=_background(args, queries), prolog=_user_prolog(args, queries),
                          limits=limits, services=_services(args), service_reports=bool(args.service_report))
    _warn_state(queries)
    _say_engine(args)
    began = time.monotonic()
    counts = Counter()
    rejects = _Rejects(args.rejects)
    console = service_log = None
    if not args.out:
        from cep.io import make_writer

        writer = make_writer(args.format, sys.stdout, _select_variables(queries, None))
        service_log = _open_out(args.service_report, "service reports") if args.service_report else None
        console = sinks.Console(writer, sys.stdout, rejects.report, counts, {q.name for q in queries if q.order},
                                service_log)
    elif args.service_report:
        raise UsageError("--service-report with --engine spark and --out: the file sink writes the answers, "
                         "late and rejected records alone; run without --out (answers on the console) "
                         "to write the SERVICE reports")
    elif args.strict:
        raise UsageError("--strict with --engine spark and --out: late and rejected records are written "
                         f"beside the answers, in {args.out}/kind=late and {args.out}/kind=reject, not counted")
    elif args.rejects:
        raise UsageError("--rejects with --engine spark and --out: late and rejected records are written "
                         f"beside the answers, in {args.out}/kind=late and {args.out}/kind=reject")
    try:  # a failure the user can act on is a CepError (cep.spark.failures), any other a bug
        progress = job.run(queries, options, console, _say)
        if console:
            console.writer.close()
    except KeyboardInterrupt as stop:  # the query was stopped (cep.spark.job): its checkpoint is whole
        raise Interrupted("the query stopped" + (f"; run again with --checkpoint {args.checkpoint} to resume"
                                                 if args.checkpoint else ""),
                          getattr(stop, "code", EXIT_INTERRUPTED)) from None
    finally:
        rejects.close()
        if service_log is not None:
            service_log.close()
    if not args.quiet:
        elapsed = time.monotonic() - began
        _say(f"{progress.rows:,} rows in {progress.batches:,} micro-batch{'es' if progress.batches != 1 else ''}, {elapsed:.1f} s"
             + (f", {rejects.count:,} late or rejected" if rejects.count else ""))
        if console:
            _say("answers: " + ", ".join(f"{q.name} {counts[q.name]:,}" for q in queries))
        else:
            _say(f"answers, late and rejected records written to {args.out}")
    return EXIT_REJECTED if args.strict and rejects.count else EXIT_OK


class _RejectSink:
    """The readers' list of rejects, reported as each is appended: a
    broken input is reported as it is read and never held in memory."""

    def __init__(self, rejects: _Rejects):
        self.rejects = rejects

    def append(self, reject) -> None:
        self.rejects.report([reject])


def _run_local(args) -> int:
    from cep.io import (
        PerQueryWriter, check_format, event_batches, in_time_order, inputs, make_writer, output_format, time_ordered,
    )
    from cep.io.follow import Watermark, check_followed, followed_batches, watermarked
    from cep.runtime.progress import ProgressLog

    if args.batch_size < 1:
        raise UsageError(f"--batch-size must be at least 1, not {args.batch_size}")
    from cep.io.readers import SOCKET

    sockets = [e for e in args.events if e.startswith(SOCKET)]
    if sockets:
        raise UsageError(f"--events {sockets[0]}: a TCP socket is read by the spark engine (--engine spark)")
    files = inputs(args.events, args.events_format, _time_predicates(args))  # missing paths and unknown types fail before any work
    if args.follow or args.lateness:
        from cep.spark import interval_ms  # (Spark's interval text; imports pandas, not pyspark)

        lateness_ms = interval_ms(args.lateness or LATENESS)
    if args.follow:
        check_followed(files)
    elif args.lateness:
        # the input is read whole and put in time order: no event is late, as a watermark
        # does nothing in Spark's batch queries (SPARK-20373); a script may give it to every run
        _say(f"warning: --lateness {args.lateness!r} has no effect without --follow in this process: the "
             "input is read whole and processed in time order, so no event is late")
    limits = _limits(args)
    queries = load_queries(args.rules, args.policy, _allow_from(args))
    fmt = output_format(args.format, args.out)
    if fmt == "parquet" and not args.out:
        raise UsageError("--format parquet writes a file: give --out FILE.parquet (or --out DIR/, a file per query)")
    per_query = bool(args.out) and (str(args.out).endswith("/") or Path(args.out).is_dir())
    check_format(fmt, queries, per_query)
    background = _background(args, queries)
    user = _user_prolog(args, queries)
    _warn_state(queries)
    _say_engine(args)

    began = time.monotonic()
    out = _open_out(args.out, "answers") if args.out and not per_query else sys.stdout  # fail before the long work
    rejects = _Rejects(args.rejects)
    progress = service_log = None
    done = 0
    late = 0  # the engine's late events reported so far
    try:
        from cep.engine import Engine
        from cep.runtime.session import interruptible
        from cep.service.maintenance import ReportLog

        engine = Engine(queries, background=background, prolog=user, limits=limits, services=_services(args))
        progress = ProgressLog(args.progress_json, engine.state_size) if args.progress_json else None
        service_log = ReportLog(args.service_report, engine.services) if args.service_report else None
        counts = Counter()
        if per_query:
            writer = PerQueryWriter(args.out, fmt, engine.layouts, lambda path: _open_out(path, "answers"))
        else:
            writer = make_writer(fmt, out, _select_variables(queries, engine))
        last_report = time.monotonic()
        warned = 0  # engine.warnings said so far
        # the input read in batches, put in time order in bounded memory (cep.io.order); or followed
        # as it grows, in time order up to the watermark, each pause completing what the watermark
        # passed (cep.io.follow); its late events are reported with the engine's
        watermark = Watermark(lateness_ms, engine.late) if args.follow else None
        stop = _FollowStop()
        if args.follow:
            batches = watermarked(followed_batches(files, _RejectSink(rejects), args.batch_size, stop.event),
                                  watermark)
        else:
            batches = time_ordered(event_batches(files, _RejectSink(rejects), args.batch_size), args.batch_size,
                                   in_time_order(files, args.batch_size))
        try:
            with stop.handled(args.follow, interruptible):
                for batch in batches:
                    pushed = time.monotonic()
                    if batch is None:  # a followed input's pause: no event before the watermark will come
                        answers = _complete(engine, watermark.time)
                    else:
                        answers = engine.push_table(batch, checked=True)  # the readers checked it
                        done += batch.num_rows
                    warned = _say_warnings(engine.warnings, warned)
                    if service_log:
                        service_log.write()
                    rejects.report(engine.late[late:])  # late events, reported as they are found
                    late = len(engine.late)
                    found = _count(counts, answers)  # before writing: a reader may act on an answer (Ctrl-C) as soon as it is out
                    writer.write(answers)
                    if batch is None:
                        getattr(writer, "flush", lambda: None)()  # a table writer keeps its answers until a pause
                    out.flush()
                    if progress:
                        progress.note(0 if batch is None else batch.num_rows, pushed, found, late,
                                      rejects.count - late, watermark and watermark.time,
                                      always=batch is not None)
                    now = time.monotonic()
                    if not args.quiet and now - last_report >= PROGRESS_SECONDS:
                        rate = done / max(now - began, 1e-9)
                        _say(f"{done:,} events processed, {_plural(sum(counts.values()), 'answer')} "
                             f"({rate:,.0f} events/s)")
                        last_report = now
                pushed = time.monotonic()
                answers = engine.flush_table(final=True)
                _say_warnings(engine.warnings, warned)
                if service_log:
                    service_log.write()
                writer.write(answers)
                found = _count(counts, answers)
        except KeyboardInterrupt as interrupt:
            writer.close()  # a results document ends where the run stopped: it stays well-formed
            raise Interrupted(_how_far(done, counts, args.out), getattr(interrupt, "code", EXIT_INTERRUPTED)) from None
        writer.close()
        rejects.report(engine.late[late:])
        late = len(engine.late)
        if progress:  # the end of the input: what its end completed
            progress.note(0, pushed, found, late, rejects.count - late,
                          watermark and watermark.time)
        if stop.code is not None:  # a followed run, whose input ended with Ctrl-C
            raise Interrupted(_how_far(done, counts, args.out), stop.code)
    finally:
        if progress:
            progress.close()
        if service_log:
            service_log.close()
        rejects.close()
        if out is not sys.stdout:
            out.close()

    if not args.quiet:
        elapsed = time.monotonic() - began
        _say(f"{_plural(done, 'event')} read from {_plural(len(files), 'file')}, "
             f"{rejects.count:,} rejected" + (f" ({late:,} late)" if late else ""))
        _say("answers: " + ", ".join(f"{q.name} {counts[q.name]:,}" for q in queries))
        _say(f"{elapsed:.2f} s, {done / max(elapsed, 1e-9):,.0f} events/s")
    return EXIT_REJECTED if args.strict and rejects.count else EXIT_OK


def _complete(engine, watermark: int | None):
    """The answers of a followed run's pause: the engine completes the
    instant it holds back, and its windows and NOTSEQ deadlines before the
    watermark (no event before it will come)."""
    answers = engine.flush_table(final=False)
    if watermark is None or not engine.timed:
        return answers
    return answers + engine.close_windows(watermark)


class _FollowStop:
    """Ctrl-C (SIGINT) or SIGTERM on a followed run ends its input (`event`
    stops cep.io.follow's reading at its next look): the events the
    watermark holds are processed in time order and the end of the
    stream's answers written, as a run without --follow over the events
    read writes them; then the run ends as interrupted (`code`). A second
    signal stops at once, where the run is. A run that is not followed
    stops at once. Stopping at once stops the engine's Prolog call too
    (`interruptible`, cep.runtime.session), which its batch can keep for
    minutes."""

    def __init__(self):
        import threading

        self.event = threading.Event()
        self.code: int | None = None
        self.signals = 0  # the signals interruptible saw (in its thread)

    @contextlib.contextmanager
    def handled(self, follow: bool, interruptible):
        """The signals handled so within (on a followed run)."""
        import signal

        try:
            previous = {s: signal.signal(s, self._signalled) for s in (signal.SIGINT, signal.SIGTERM)} if follow else {}
        except ValueError:  # not the main thread (a test's): the signals keep their handlers
            previous = {}
        try:
            with interruptible(self._stops if follow else lambda signum: True):
                yield
        finally:
            for number, handler in previous.items():
                signal.signal(number, handler)

    def _stops(self, signum) -> bool:
        """Whether a signal stops a followed run at once: the second does."""
        self.signals += 1
        return self.signals > 1

    def _signalled(self, number, frame):
        import signal

        code = EXIT_TERMINATED if number == signal.SIGTERM else EXIT_INTERRUPTED
        if self.event.is_set():
            raise Interrupted(code=code)
        self.code = code
        self.event.set()


def _how_far(done: int, counts: Counter, out) -> str:
    """What an interrupted run says it did."""
    return (f"{_plural(done, 'event')} processed, {_plural(sum(counts.values()), 'answer')} written"
            + (f" to {out}" if out else ""))


def _count(counts: Counter, answers) -> int:
    """Add the answers of each query in an engine's AnswerBatch to
    `counts`; returns how many it holds."""
    import pyarrow.compute as pc

    from cep.io.writers import answer_table, select_columns

    selected = select_columns(answers)
    if selected is not None:  # one query's (the writer reads the same; answers() is not made)
        counts[selected[0]] += selected[2].num_rows
        return selected[2].num_rows
    table = answer_table(answers)
    for item in pc.value_counts(table["query"]).to_pylist():
        counts[item["values"]] += item["counts"]
    return table.num_rows


def _say_warnings(warnings, said: int) -> int:
    """The warnings after the first `said`; returns how many are said."""
    for warning in warnings[said:]:
        _say(f"warning: {warning}")
    return len(warnings)


def cmd_explain(args) -> int:
    from cep.compile import explain

    from cep.spark import routing

    limits = _limits(args)
    queries = load_queries(args.rules, args.policy, _allow_from(args))
    background = _background(args, queries)
    text = explain(queries, background, _user_prolog(args, queries), limits=limits)
    _warn_state(queries)
    text = (text if text.endswith("\n") else text + "\n") + "== partitioning (spark engine)\n"
    sys.stdout.write(text + routing.explain(queries, background.schema if background else None) + "\n")
    return 0


def cmd_compile(args) -> int:
    from cep.compile import compile_rules

    limits = _limits(args)
    queries = load_queries(args.rules, args.policy, _allow_from(args))
    text = compile_rules(queries, _background(args, queries), _user_prolog(args, queries), limits=limits)
    if not text.endswith("\n"):
        text += "\n"
    if args.out:
        with _open_out(args.out, "Prolog program") as handle:
            handle.write(text)
    else:
        sys.stdout.write(text)
    return 0


def cmd_demo(args) -> int:
    """`cep demo APP ...`: examples.APP.app.main(options), from the checkout's
    examples/ or the copy an installed package carries (cep.resources)."""
    import importlib

    from cep.resources import data_dir

    root = str(data_dir("examples").parent)
    if root not in sys.path:
        sys.path.insert(0, root)
    return importlib.import_module(f"examples.{args.app}.app").main(args.options)


# ------------------------------------------------------------------- main


class Interrupted(KeyboardInterrupt):
    """Ctrl-C (SIGINT) or SIGTERM where the program was, with what the
    user should know of the state it left (`note`)."""

    def __init__(self, note: str = "", code: int = EXIT_INTERRUPTED):
        super().__init__(note)
        self.note, self.code = note, code


def _terminated(signum, frame):
    raise Interrupted(code=EXIT_TERMINATED)


def main(argv=None) -> int:
    """The command; its exit status (EXIT_* above). Ctrl-C and SIGTERM end
    it with a line on standard error, not a traceback. Without `argv` it is
    the process's own command (cep, python -m cep), and ends the process."""
    code = _handled(argv)
    if argv is None:
        _exit(code)
    return code


def _exit(code: int):
    """End the process with `code` once the atexit callbacks ran (pyswip's
    halts Prolog, PySpark's stops its JVM), with the command's handlers
    still taking the signals (_end_on_signals): the interpreter's
    finalization after them restores the default handlers, and its
    teardown of modules took half a second in which Ctrl-C killed the
    process (status -2). Nothing is left to finalize that outlives it."""
    import atexit
    import os

    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):  # a closed pipe: what was written stays written
            stream.flush()
    atexit._run_exitfuncs()
    os._exit(code)


def _handled(argv) -> int:
    import signal

    previous = {}
    command = argv is None  # the process's own command (cep, python -m cep): it ends when this returns
    try:
        try:
            # SIGINT is how a run is stopped (a --follow run: `kill -INT`),
            # also where it was ignored when the command started (a script's
            # background job): ignored until a followed run took it, a signal
            # during start-up was lost, and the run went on for ever
            previous = {signal.SIGTERM: signal.signal(signal.SIGTERM, _terminated),
                        signal.SIGINT: signal.signal(signal.SIGINT, signal.default_int_handler)}
        except ValueError:  # not the main thread (a test's): the signals keep their handlers
            pass
        # (imported here, where Ctrl-C is reported: it takes a while)
        import pyarrow as pa

        # pyarrow puts its own SIGINT and SIGTERM handlers in place during its
        # long operations (the answers' CSV read, cep.engine._read_lines) and
        # loses about one signal in a hundred there: the command takes them
        pa.enable_signal_handlers(False)
        return _main(argv)
    except KeyboardInterrupt as stop:
        if command and previous:
            _end_on_signals(previous)
        note = getattr(stop, "note", "")
        _say(("terminated" if getattr(stop, "code", EXIT_INTERRUPTED) == EXIT_TERMINATED else "interrupted")
             + (f"; {note}" if note else ""))
        return getattr(stop, "code", EXIT_INTERRUPTED)
    finally:
        if command and previous:
            _end_on_signals(previous)
        else:
            for number, handler in previous.items():
                signal.signal(number, handler)


def _end_on_signals(signals) -> None:
    """Once the command's work is done the process exits, which takes a
    while (_exit): a signal then ends it as one during the run does, where
    the handler the process started with killed it (status -2) or a
    KeyboardInterrupt in an atexit callback printed a traceback."""
    import signal

    for number in signals:
        signal.signal(number, _ended)


def _ended(signum, frame):
    import os
    import signal

    code = EXIT_TERMINATED if signum == signal.SIGTERM else EXIT_INTERRUPTED
    with contextlib.suppress(Exception):  # what was written stays written
        sys.stdout.flush()
    _say("terminated" if code == EXIT_TERMINATED else "interrupted")
    os._exit(code)


def _main(argv) -> int:
    parser = build_parser()
    try:
        args, unknown = parser.parse_known_args(argv)
        if unknown:  # reported with the usage of the command it was given to
            (getattr(args, "command_parser", None) or parser).error(f"unrecognized arguments: {' '.join(unknown)}")
    except SystemExit as exc:  # --help (0) or a command-line error (2, message printed)
        return exc.code if isinstance(exc.code, int) else EXIT_ERROR
    if not getattr(args, "command", None):
        parser.print_help(sys.stderr)
        return EXIT_ERROR
    if hasattr(sys.stdout, "reconfigure"):
        try:  # answers hold any Unicode text; do not depend on the locale
            sys.stdout.reconfigure(encoding="utf-8")
        except (ValueError, OSError):
            pass
    try:
        return args.func(args)
    except CepError as exc:
        _say(f"error: {exc}")
        return EXIT_ERROR
    except BrokenPipeError:  # the reader went away (cep run ... | head): not an error
        try:
            sys.stdout = open("/dev/null", "w")  # noqa: SIM115 - keep Python's exit flush quiet
        except OSError:
            pass
        return EXIT_OK
    except Exception:  # noqa: BLE001 - a bug: say so, with what is needed to report it
        _say("internal error (this is a bug in cep; please report it with the traceback below)")
        traceback.print_exc()
        return EXIT_BUG


if __name__ == "__main__":
    sys.exit(main())
