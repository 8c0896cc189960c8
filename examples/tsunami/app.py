"""The tsunami warning app: DART listings -> EP-SPARQL rules -> warnings.

    cep demo tsunami                              # the sample, on Spark (local mode)
    cep demo tsunami --engine local               # in this process
    cep demo tsunami --data ~/dart/ --threshold-mm 30 --radius-km 1200

Reads NDBC DART listings (examples/tsunami/dart.py; default: the app's own
sample, examples/tsunami/sample), writes them as events
(OUT/events/dart.parquet, which `cep run --events` reads too), runs the
rules (examples/tsunami/*.rq) over them with the background knowledge
(ontologies/dart-stations.ttl, ontologies/coastal-places.ttl and the run's
settings, OUT/settings.ttl) and the Prolog file examples/tsunami/geo.pl,
and writes to OUT (default out/tsunami):

    warnings.jsonl   one tsunami warning per line (station, time, observed,
                     predicted, residual, the places warned with their distance)
    seismic.jsonl    the seismic disturbances the rules told apart
    answers.jsonl    every answer of every query, as `cep run` writes them
    rejects.jsonl    the listings' lines set aside: malformed, conflicting, missing (9999)
    STATION.png      the picture of each buoy (examples/tsunami/plot.py)

and prints a summary: the first warning of each buoy and the places warned.

What the app reads from the rules (examples/tsunami/ndbc.rq; other queries
run too, and their answers go to answers.jsonl only):

    prediction  SELECT ?station ?observed ?predicted ?residual
                one answer per reading the predictor covers, at the reading's
                time: the plot's observed and predicted lines and residual panel
    detected    CONSTRUCT { ?station dart:tsunamiDetected "rise"|"fall" }
                a tsunami warning, at the minute it begins
    warning     SELECT ?station ?direction ?place ?placeName ?distanceKm
                the places a warning names, one answer per place; a warning
                with no place within the radius is a warning all the same
    seismic     SELECT ?station
                seismic shaking told apart from a tsunami, at the minute it begins

and the derived triples `?station dart:averageHeight ?h` (the averaged
points H*, plotted as dots) and `?station dart:predictedHeight ?h`, at their
answer's end time. ?station is the station IRI (dart:station21418), heights
and residuals are numbers in metres, ?distanceKm a number.

The rules read the run's settings as background triples (OUT/settings.ttl):

    dart:settings a dart:Settings ; dart:thresholdMetres 0.030 ; dart:radiusKm 1200 .
"""

from __future__ import annotations

import argparse
import bisect
import json
import math
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

from cep import terms
from cep.errors import CepError, UsageError
from cep.events import answers_of
from cep.io import answer_json, write_rejects

from examples.tsunami import dart

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SAMPLE = HERE / "sample"
ONTOLOGIES = (ROOT / "ontologies" / "dart-stations.ttl", ROOT / "ontologies" / "coastal-places.ttl")
PROLOG = HERE / "geo.pl"
DEFAULT_THRESHOLD_MM = 30.0
DEFAULT_RADIUS_KM = 1200.0

AVERAGE_P = dart.NS + "averageHeight"
PREDICTED_P = dart.NS + "predictedHeight"
DETECTED_P = dart.NS + "tsunamiDetected"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cep demo tsunami",
        description="Tsunami warnings from NOAA DART buoys: the NDBC detection algorithm as EP-SPARQL rules "
                    "(the EP-SPARQL paper's example application).")
    parser.add_argument("--data", nargs="+", metavar="PATH", default=[str(SAMPLE)],
                        help="DART listings as NDBC publishes them (NNNNN.txt, NNNNN.dart, NNNNNtYYYY.txt.gz) "
                             "or folders of them (default: the app's sample, examples/tsunami/sample)")
    parser.add_argument("--out", metavar="DIR", default="out/tsunami",
                        help="where to write warnings, pictures and events (default out/tsunami)")
    parser.add_argument("--engine", choices=("spark", "local"), default="spark",
                        help="spark: Spark Structured Streaming in local mode (default); local: in this process")
    parser.add_argument("--threshold-mm", type=float, default=DEFAULT_THRESHOLD_MM, metavar="MM",
                        help=f"warn when |observed - predicted| exceeds this (default {DEFAULT_THRESHOLD_MM:g} mm)")
    parser.add_argument("--radius-km", type=float, default=DEFAULT_RADIUS_KM, metavar="KM",
                        help="a warning names the coastal places within this distance of the buoy "
                             f"(default {DEFAULT_RADIUS_KM:g} km)")
    parser.add_argument("--rules", nargs="+", metavar="RULES.rq",
                        help="the rule files (default: examples/tsunami/*.rq)")
    parser.add_argument("--no-plots", action="store_true", help="write no pictures")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    return parser


# ------------------------------------------------------------------ input


def settings_turtle(threshold_m: float, radius_km: float) -> str:
    return ("@prefix dart: <http://example.org/dart#> .\n"
            "@prefix xsd:  <http://www.w3.org/2001/XMLSchema#> .\n\n"
            "# the settings of this run of the tsunami app (examples/tsunami/app.py)\n"
            f'dart:settings a dart:Settings ;\n'
            f'    dart:thresholdMetres "{_decimal_text(threshold_m)}"^^xsd:decimal ;\n'
            f'    dart:radiusKm "{_decimal_text(radius_km)}"^^xsd:decimal .\n')


def _decimal_text(x: float) -> str:
    text = f"{x:.6f}".rstrip("0")
    return text + "0" if text.endswith(".") else text


def known_stations() -> dict[str, str]:
    """Station id -> label, of the stations ontologies/dart-stations.ttl places."""
    import rdflib

    g = rdflib.Graph().parse(ONTOLOGIES[0], format="turtle")
    ns = rdflib.Namespace(dart.NS)
    geo_lat = rdflib.URIRef("http://www.w3.org/2003/01/geo/wgs84_pos#lat")
    out = {}
    for s, station_id in g.subject_objects(ns.stationId):
        if g.value(s, geo_lat) is not None:
            out[str(station_id)] = str(g.value(s, rdflib.RDFS.label) or f"DART {station_id}")
    return out


# ----------------------------------------------------------------- running


class _Collect:
    """A cep.io writer that keeps the answers (for the Spark console sink)."""

    def __init__(self):
        self.answers = []

    def write(self, answers):
        self.answers.extend(answers_of(answers))  # an answer table (cep.events.ANSWERS)

    def close(self):
        pass


def run_rules(queries, events_path: Path, readings, engine: str, background, prolog, say, quiet) -> tuple:
    """The answers of the rules over the readings, and the late or rejected
    records the engine reported."""
    if engine == "local":
        from cep.engine import Engine

        eng = Engine(queries, background=background, prolog=prolog)
        answers = []
        events = dart.to_events(readings)
        for i in range(0, len(events), 50_000):
            answers += eng.push(events[i:i + 50_000])
        answers += eng.flush()
        return answers, list(eng.late)
    from cep.spark import job, sinks

    collect, bad = _Collect(), []
    console = sinks.Console(collect, sys.stderr, bad.extend, Counter())
    options = job.Options(events=[str(events_path)], background=background, prolog=prolog, quiet=quiet,
                          lateness="1 minute")
    job.run(queries, options, console, say)
    return collect.answers, bad


# ----------------------------------------------------------------- results


def _station(term: str | None) -> str | None:
    if not term:
        return None
    kind = terms.split(term)
    value = kind[1]
    prefix = dart.NS + "station"
    return value[len(prefix):] if kind[0] == "iri" and value.startswith(prefix) else value


def _number(term: str | None) -> float | None:
    if not term:
        return None
    parts = terms.split(term)
    if parts[0] != "literal":
        return None
    try:
        return float(parts[1])
    except ValueError:
        return None


def _text(term: str | None) -> str | None:
    if not term:
        return None
    parts = terms.split(term)
    return parts[1]


def collect_results(answers, readings, labels: dict):
    """(per-station plot.StationSeries, warnings, seismic) from the answers."""
    from examples.tsunami.plot import StationSeries

    series = {}

    def of(station):
        if station not in series:
            series[station] = StationSeries(station, labels.get(station, f"DART {station}"))
        return series[station]

    for r in readings:
        of(r.station).observed.append((r.time_ms, r.metres, r.record_type))
    warned = defaultdict(list)  # (station, time) -> answers of the warning query (one per place)
    detected = {}  # (station, time) -> direction: a warning even with no place within the radius
    compared = defaultdict(list)  # station -> (time, observed, predicted, residual) of its compared readings
    seismic = []
    for a in answers:
        if a.triples:
            for s, p, o in a.triples:
                pred = terms.split(p)[1]
                if pred == DETECTED_P:
                    detected[(_station(s), a.end)] = _text(o)
                if pred in (AVERAGE_P, PREDICTED_P) and _number(o) is not None:
                    target = of(_station(s))
                    (target.averages if pred == AVERAGE_P else target.predicted).append((a.end, _number(o)))
            continue
        b = dict(a.bindings)
        station = _station(b.get("station"))
        if station is None:
            continue
        if a.query == "prediction":
            target = of(station)
            if _number(b.get("predicted")) is not None:
                target.predicted.append((a.end, _number(b["predicted"])))
            residual = _number(b.get("residual"))
            if residual is None and _number(b.get("observed")) is not None and _number(b.get("predicted")) is not None:
                residual = _number(b["observed"]) - _number(b["predicted"])
            if residual is not None:
                target.residuals.append((a.end, residual))
                compared[station].append((a.end, _number(b.get("observed")), _number(b.get("predicted")), residual))
            if _number(b.get("average")) is not None:
                target.averages.append((a.end, _number(b["average"])))
        elif a.query == "average" and _number(b.get("average")) is not None:
            of(station).averages.append((a.end, _number(b["average"])))
        elif a.query == "warning":
            warned[(station, a.end)].append(a)
        elif a.query == "seismic":
            of(station).seismic.append(a.end)
            seismic.append({"station": station, "time": terms.format_datetime_ms(a.end)})
    for s in series.values():
        for name in ("predicted", "averages", "residuals"):
            getattr(s, name).sort()
        s.seismic.sort()
    for readings in compared.values():
        readings.sort()
    warnings = []
    for key in detected:
        warned.setdefault(key, [])
    for (station, t), group in sorted(warned.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        first = dict(group[0].bindings) if group else {}
        places = {}
        for a in group:
            b = dict(a.bindings)
            if b.get("place"):
                places[_text(b["place"])] = {"place": _text(b["place"]), "name": _text(b.get("placeName")),
                                             "distanceKm": _round(_number(b.get("distanceKm")), 1)}
        # the reading that completed the detection: the station's latest
        # compared reading at the warning's time (rule 3, query prediction)
        readings = compared[station]
        i = bisect.bisect_right(readings, (t, math.inf))
        at, observed, predicted, residual = readings[i - 1] if i else (None, None, None, None)
        warnings.append({
            "station": station, "time": terms.format_datetime_ms(t),
            "direction": _text(first.get("direction")) or detected.get((station, t)),
            "reading": terms.format_datetime_ms(at) if at is not None else None,
            "observed": observed, "predicted": _round(predicted, 4),
            "residualMm": _round(residual * 1000, 1) if residual is not None else None,
            "places": sorted(places.values(), key=lambda p: (p["distanceKm"] is None, p["distanceKm"] or 0)),
        })
        of(station).warnings.append(t)
    for s in series.values():
        s.warnings.sort()
    seismic.sort(key=lambda d: (d["time"], d["station"]))
    return series, warnings, seismic


def _round(x, digits):
    return None if x is None else round(x, digits)


def _write_jsonl(path: Path, rows) -> None:
    with open(path, "w", encoding="utf-8") as out:
        for row in rows:
            out.write(json.dumps(row, ensure_ascii=False) + "\n")


def summary(listings, series, warnings, seismic) -> str:
    lines = []
    first = {}
    for w in warnings:
        first.setdefault(w["station"], w)
    for listing in listings:
        st = listing.station
        s = series.get(st)
        n_warn = sum(1 for w in warnings if w["station"] == st)
        n_seis = sum(1 for d in seismic if d["station"] == st)
        head = (f"{s.label if s else st}: {len(listing.readings):,} readings"
                f" ({len(listing.missing):,} missing set aside)")
        if st in first:
            w = first[st]
            names = ", ".join(p["name"] or p["place"] for p in w["places"][:8])
            more = len(w["places"]) - 8
            lines.append(f"{head}; first tsunami warning at {w['time']} ({w['direction']}, residual "
                         f"{w['residualMm']:+g} mm), "
                         f"{n_warn:,} in all" + (f"; {n_seis:,} seismic disturbances" if n_seis else ""))
            lines.append(f"    places warned: {names}" + (f" and {more} more" if more > 0 else "")
                         if w["places"] else "    places warned: none within the radius")
        else:
            lines.append(f"{head}; no tsunami warning" + (f"; {n_seis:,} seismic disturbances" if n_seis else ""))
    return "\n".join(lines)


# -------------------------------------------------------------------- main


def rule_files(given) -> list[Path]:
    if given:
        return [Path(p) for p in given]
    found = sorted(HERE.glob("*.rq"))
    if not found:
        raise UsageError(f"no rule files in {HERE} (*.rq)")
    return found


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    say = (lambda m: None) if args.quiet else (lambda m: print(f"tsunami: {m}", file=sys.stderr, flush=True))
    if args.threshold_mm <= 0 or args.radius_km < 0:
        raise UsageError("--threshold-mm must be positive and --radius-km not negative")
    began = time.monotonic()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    try:
        listings = dart.read_listings(args.data)
    except (FileNotFoundError, ValueError) as exc:
        raise UsageError(str(exc)) from None
    readings = [r for listing in listings for r in listing.readings]
    if not readings:
        raise UsageError(f"no readings in {' '.join(args.data)}")
    with open(out / "rejects.jsonl", "w", encoding="utf-8") as handle:
        for listing in listings:
            write_rejects(listing.rejects + listing.missing, handle)
    for listing in listings:
        c = listing.counts()
        say(f"{listing.station}: {len(listing.readings):,} readings ({c[1]:,} 15-min, {c[2]:,} 1-min, "
            f"{c[3]:,} 15-s), {len(listing.missing):,} missing, {len(listing.rejects):,} malformed"
            + (", newest-first" if listing.newest_first else ""))
        for bad in listing.rejects[:5]:
            say(f"  rejected {bad.source}: {bad.reason}")
    labels = known_stations()
    unknown = sorted({listing.station for listing in listings} - set(labels))
    if unknown:
        say(f"warning: {', '.join(unknown)} not in {ONTOLOGIES[0].name}: their warnings name no places "
            "(add the station's geo:lat and geo:long there)")
    events_path = dart.write_events(readings, out / "events" / "dart.parquet")
    settings = out / "settings.ttl"
    settings.write_text(settings_turtle(args.threshold_mm / 1000, args.radius_km), encoding="utf-8")

    from cep.background.knowledge import load_background, ontology_paths
    from cep.rules import load_rules
    from cep.user_prolog import check_calls, load_user_prolog

    queries = load_rules([str(p) for p in rule_files(args.rules)])
    for q in queries:
        for warning in q.warnings:
            say(f"warning: {warning}")
    background = load_background(ontology_paths(queries, [*ONTOLOGIES, settings]))
    prolog = load_user_prolog([str(PROLOG)])
    check_calls(queries, prolog)
    say(f"running {len(queries)} quer{'y' if len(queries) == 1 else 'ies'} over {len(readings):,} readings "
        f"on the {args.engine} engine")
    answers, bad = run_rules(queries, events_path, readings, args.engine, background, prolog, say, args.quiet)
    for r in bad[:5]:
        say(f"engine reported {r.source}: {r.reason}")

    answers.sort(key=lambda a: (a.end, a.start, a.query, a.bindings, a.triples))
    _write_jsonl(out / "answers.jsonl", (answer_json(a) for a in answers))
    series, warnings, seismic = collect_results(answers, readings, labels)
    _write_jsonl(out / "warnings.jsonl", warnings)
    _write_jsonl(out / "seismic.jsonl", seismic)
    if not args.no_plots:
        from examples.tsunami.plot import plot_station

        for station, s in sorted(series.items()):
            plot_station(s, out / f"{station}.png", args.threshold_mm / 1000)
    print(summary(listings, series, warnings, seismic))
    counts = Counter(a.query for a in answers)
    say("answers: " + (", ".join(f"{q.name} {counts[q.name]:,}" for q in queries)))
    say(f"wrote {out}/warnings.jsonl ({len(warnings):,} warnings)"
        + ("" if args.no_plots else f" and {len(series)} pictures ({out}/STATION.png)")
        + f" in {time.monotonic() - began:.1f} s")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except CepError as exc:
        print(f"tsunami: error: {exc}", file=sys.stderr)
        sys.exit(2)
