"""The tsunami app's infrastructure (examples/tsunami): the reader of NDBC
DART listings and every quirk of the format, the real Tohoku files when
../shared/data/dart is present, the generated sample, geo.pl's distances,
and the app's wiring on the sample with the in-process engine."""

from __future__ import annotations

import datetime as dt
import gzip
import json
from pathlib import Path

import pytest

from cep import terms
from examples.tsunami import dart, make_sample

ROOT = Path(__file__).resolve().parents[2]
SHARED_DART = ROOT.parent / "shared" / "data" / "dart"
HEADER = "#YY  MM DD hh mm ss T   HEIGHT\n#yr  mo dy hr mn  s -        m\n"


def ms(*args) -> int:
    return int(dt.datetime(*args, tzinfo=dt.timezone.utc).timestamp() * 1000)


def read(text: str, name="21418.txt"):
    return dart.read_listing(name, text=text)


def test_a_listing_gives_height_events_at_the_readings_times():
    listing = read(HEADER + "2011 03 11 06 15 00 1 5662.593\n2011 03 11 06 16 00 2 5662.738\n")
    assert listing.station == "21418"
    assert [(r.time_ms, r.record_type, r.height) for r in listing.readings] == [
        (ms(2011, 3, 11, 6, 15), 1, "5662.593"), (ms(2011, 3, 11, 6, 16), 2, "5662.738")]
    events = dart.to_events(listing.readings)
    assert events[0].s == "<http://example.org/dart#station21418>"
    assert events[0].p == "<http://example.org/dart#waterColumnHeight>"
    assert events[0].o == terms.literal("5662.593", terms.XSD_DECIMAL)
    assert events[0].start == events[0].end == ms(2011, 3, 11, 6, 15)
    assert events[0].source == "21418.txt:3"


def test_heights_are_canonical_decimals_with_their_digits():
    listing = read(HEADER + "2011 03 11 06 15 00 1 5662.370\n")
    (event,) = dart.to_events(listing.readings)
    assert event.o == '"5662.37"^^<http://www.w3.org/2001/XMLSchema#decimal>'


def test_the_record_type_is_an_event_on_request():
    listing = read(HEADER + "2011 03 11 06 15 00 3 5662.5\n")
    events = dart.to_events(listing.readings, record_types=True)
    assert [(e.p, e.o) for e in events] == [
        (dart.HEIGHT, '"5662.5"^^<http://www.w3.org/2001/XMLSchema#decimal>'),
        (dart.RECORD_TYPE, '"3"^^<http://www.w3.org/2001/XMLSchema#integer>')]
    assert len({(e.start, e.end) for e in events}) == 1


def test_both_header_lines_and_blank_lines_are_skipped_and_no_header_is_needed():
    with_header = read(HEADER + "\n2011 03 11 06 15 00 1 5662.593\n\n")
    without = read("2011 03 11 06 15 00 1 5662.593\n")
    assert with_header.readings == without.readings
    assert not with_header.rejects and not without.rejects


def test_two_digit_years_read_as_strptime_reads_them():
    listing = read("11 03 11 06 15 00 1 5662.593\n98 01 02 00 00 00 1 5000.0\n")
    assert [r.time_ms for r in listing.readings] == [ms(1998, 1, 2), ms(2011, 3, 11, 6, 15)]
    assert not listing.rejects


def test_a_three_digit_year_is_malformed():
    listing = read("011 03 11 06 15 00 1 5662.593\n")
    assert not listing.readings
    assert "year" in listing.rejects[0].reason


def test_missing_values_are_set_aside_and_reported():
    listing = read(HEADER + "2011 03 11 06 15 00 1 9999.000\n2011 03 11 06 15 00 2 5662.593\n"
                   "2011 03 11 06 30 00 1 9999.000\n")
    assert [(r.time_ms, r.record_type) for r in listing.readings] == [(ms(2011, 3, 11, 6, 15), 2)]
    assert [m.source for m in listing.missing] == ["21418.txt:3", "21418.txt:5"]
    assert "missing" in listing.missing[0].reason and "15-minute" in listing.missing[0].reason
    assert not listing.rejects
    assert len(dart.to_events(listing.readings)) == 1


def test_newest_first_and_oldest_first_give_the_same_events():
    rows = ["2011 03 11 06 14 00 2 5662.369", "2011 03 11 06 15 00 1 5662.590",
            "2011 03 11 06 15 00 2 5662.593", "2011 03 11 06 16 00 2 5662.738",
            "2011 03 11 06 16 15 3 5662.801"]
    oldest = read(HEADER + "\n".join(rows) + "\n")
    newest = read(HEADER + "\n".join(reversed(rows)) + "\n")
    assert not oldest.newest_first and newest.newest_first
    assert oldest.readings == newest.readings
    assert dart.to_events(oldest.readings) == dart.to_events(newest.readings)
    times = [r.time_ms for r in newest.readings]
    assert times == sorted(times)


def test_a_repeated_timestamp_keeps_the_finest_record_type():
    text = HEADER + ("2011 03 11 06 15 00 1 5662.590\n2011 03 11 06 15 00 2 5662.593\n"
                     "2011 03 11 06 16 00 3 5662.801\n2011 03 11 06 16 00 2 5662.738\n")
    listing = read(text)
    assert [(r.record_type, r.height) for r in listing.readings] == [(2, "5662.593"), (3, "5662.801")]
    assert listing.coarser == 2
    assert not listing.rejects


def test_an_exact_duplicate_row_is_read_once():
    listing = read(HEADER + "2011 03 11 06 15 00 2 5662.593\n2011 03 11 06 15 00 2 5662.593\n")
    assert len(listing.readings) == 1 and listing.duplicates == 1 and not listing.rejects


def test_two_heights_of_one_type_at_one_time_keep_the_first_and_report_the_second():
    listing = read(HEADER + "2011 03 11 06 15 00 2 5662.593\n2011 03 11 06 15 00 2 5662.700\n")
    assert [r.height for r in listing.readings] == ["5662.593"]
    assert listing.rejects[0].source == "21418.txt:4"
    assert "21418.txt:3" in listing.rejects[0].reason


@pytest.mark.parametrize("line, expected", [
    ("2011 03 11 06 15 00 1", "expected 8 columns"),
    ("2011 03 11 06 15 00 1 5662.5 7", "expected 8 columns"),
    ("2011 03 xx 06 15 00 1 5662.5", "day: expected an unsigned integer"),
    ("2011 02 30 06 15 00 1 5662.5", "no such time"),
    ("2011 03 11 24 15 00 1 5662.5", "no such time"),
    ("2011 03 11 06 15 00 4 5662.5", "record type T: expected 1 (15-minute), 2 (1-minute) or 3"),
    ("2011 03 11 06 15 00 1 5662,5", "height: expected a number"),
    ("2011 03 11 06 15 00 1 nan", "height: expected a decimal number"),
])
def test_a_malformed_line_is_reported_with_its_place_and_the_rest_is_read(line, expected):
    text = HEADER + "2011 03 11 06 14 00 2 5662.369\n" + line + "\n2011 03 11 06 16 00 2 5662.738\n"
    listing = read(text, "data/21418.txt")
    assert [r.height for r in listing.readings] == ["5662.369", "5662.738"]
    (bad,) = listing.rejects
    assert bad.source == "data/21418.txt:4"
    assert expected in bad.reason, bad.reason
    assert bad.text == line


def test_the_station_comes_from_the_ndbc_file_name(tmp_path):
    for name in ("21413.txt", "21413.dart", "21413t2011.txt.gz"):
        assert dart.station_of(name) == "21413"
    with pytest.raises(ValueError, match="station"):
        dart.station_of("tohoku.txt")
    path = tmp_path / "21413t2011.txt.gz"
    path.write_bytes(gzip.compress((HEADER + "2011 03 11 07 00 00 2 5824.904\n").encode()))
    (listing,) = dart.read_listings([tmp_path])
    assert listing.station == "21413" and len(listing.readings) == 1


def test_events_written_as_parquet_and_jsonl_read_back_through_cep_io(tmp_path):
    from cep.events import events_of
    from cep.io import read_events

    listing = read(HEADER + "2011 03 11 06 16 00 2 5662.738\n2011 03 11 06 15 00 1 5662.590\n")
    expected = [(e.s, e.p, e.o, e.start, e.end) for e in dart.to_events(listing.readings)]
    for name in ("e.parquet", "e.jsonl"):
        events, rejects = read_events([dart.write_events(listing.readings, tmp_path / name)])
        assert not rejects
        assert [(e.s, e.p, e.o, e.start, e.end) for e in events_of(events)] == expected


# ------------------------------------------------------- the real files

PROVENANCE = {  # rows, T=1, T=2, T=3, 9999, newest-first (shared/data/PROVENANCE.md)
    "21401": (5920, 2976, 2880, 64, 172, False),
    "21413": (2314, 339, 1975, 0, 0, True),
    "21418": (2952, 384, 2520, 48, 152, False),
    "21419": (2582, 312, 2270, 0, 0, True),
}


@pytest.mark.skipif(not SHARED_DART.is_dir(), reason=f"the Tohoku DART files are not there ({SHARED_DART}): "
                                                      "the real-data checks need ../shared/data/dart")
@pytest.mark.parametrize("station", sorted(PROVENANCE))
def test_the_tohoku_listings_read_as_provenance_counts_them(station):
    rows, t1, t2, t3, missing, newest_first = PROVENANCE[station]
    listing = dart.read_listing(SHARED_DART / f"{station}.txt")
    assert not listing.rejects
    assert len(listing.missing) == missing
    assert listing.newest_first == newest_first
    kept = len(listing.readings)
    assert kept + len(listing.missing) + listing.coarser + listing.duplicates == rows
    times = [r.time_ms for r in listing.readings]
    assert times == sorted(times) and len(set(times)) == kept
    assert sum(listing.counts().values()) == kept
    assert listing.counts()[3] == t3  # a 15-second reading is never dropped for another
    assert listing.counts()[1] <= t1 and listing.counts()[2] <= t2


@pytest.mark.skipif(not SHARED_DART.is_dir(), reason=f"the Tohoku DART files are not there ({SHARED_DART})")
def test_21418_at_the_crest_and_21401_in_its_quiet_days():
    crest = [r for r in dart.read_listing(SHARED_DART / "21418.txt").readings
             if r.time_ms == ms(2011, 3, 11, 6, 19)]
    assert [(r.record_type, r.height) for r in crest] == [(2, "5664.236")]  # PROVENANCE: crest 06:19:00
    quiet = [r for r in dart.read_listing(SHARED_DART / "21401.txt").readings
             if ms(2011, 3, 1) <= r.time_ms < ms(2011, 3, 9, 2, 45)]
    # 15-minute data only until the 1-minute rows that begin at 03-09 01:00,
    # before the foreshock of 02:45
    assert {r.record_type for r in quiet if r.time_ms < ms(2011, 3, 9, 1)} == {1}
    assert min(r.time_ms for r in quiet if r.record_type == 2) == ms(2011, 3, 9, 1)
    # 15-min readings of 03-01..03-08 and 03-09 00:00-00:45, then 1-min 01:00-02:44
    assert len(quiet) == 8 * 96 + 4 + 105


# ------------------------------------------------------------ the sample


def test_the_generator_reproduces_the_committed_sample():
    files = make_sample.generate()
    assert sorted(files) == sorted(p.name for p in make_sample.SAMPLE.glob("*.txt"))
    for name, text in files.items():
        committed = (make_sample.SAMPLE / name).read_bytes()
        assert text.encode("ascii") == committed, f"{name} differs: run python -m examples.tsunami.make_sample"
        assert len(committed) < 200_000


def test_the_sample_has_the_quirks_of_real_listings():
    listings = {listing.station: listing for listing in dart.read_listings([make_sample.SAMPLE])}
    assert sorted(listings) == ["99901", "99902"]
    assert listings["99901"].newest_first and not listings["99902"].newest_first
    for listing in listings.values():
        assert not listing.rejects
        assert listing.missing and listing.coarser  # 9999 in event mode; repeated timestamps
        assert all(listing.counts().values())  # all three record types


# ------------------------------------------------------------- geo.pl


def test_distance_km_tokyo_to_sendai_is_about_300_km():
    from pyswip import Prolog

    from cep.user_prolog import load_user_prolog

    user = load_user_prolog([ROOT / "examples" / "tsunami" / "geo.pl"])  # loaded into this process
    assert ("distance_km", 5) in user.predicates

    (solution,) = list(Prolog.query(f"{user.module}:distance_km(35.682, 139.769, 38.268, 140.870, Km)"))
    assert 295 < solution["Km"] < 310
    (zero,) = list(Prolog.query(f"{user.module}:distance_km(38.0, 140.0, 38.0, 140.0, Km)"))
    assert zero["Km"] == pytest.approx(0.0)


# ------------------------------------------------------------- the app


def test_the_app_on_the_sample_writes_warnings_and_pictures(tmp_path, capsys):
    """The app with its rules (examples/tsunami/ndbc.rq) on its own sample:
    both synthetic stations warn, the places near 99901 are Japan's."""
    from examples.tsunami import app

    out = tmp_path / "out"
    assert app.main(["--engine", "local", "--out", str(out), "--quiet"]) == 0
    for station in ("99901", "99902"):
        png = out / f"{station}.png"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    warnings = [json.loads(line) for line in (out / "warnings.jsonl").read_text().splitlines()]
    assert {w["station"] for w in warnings} == {"99901", "99902"}
    first = warnings[0]
    assert first["station"] == "99901" and first["direction"] == "rise" and first["residualMm"] > 30
    # each warning shows the reading it was compared at: observed - predicted is its residual
    assert all(abs((w["observed"] - w["predicted"]) * 1000 - w["residualMm"]) < 0.1 for w in warnings)
    names = [p["name"] for p in first["places"]]
    assert "Miyako" in names and "Honolulu" not in names
    assert all(p["distanceKm"] < app.DEFAULT_RADIUS_KM for w in warnings for p in w["places"])
    assert (out / "events" / "dart.parquet").is_file()
    assert "dart:thresholdMetres \"0.03\"" in (out / "settings.ttl").read_text()
    rejects = [json.loads(line) for line in (out / "rejects.jsonl").read_text().splitlines()]
    assert len(rejects) == 32 and all("missing" in r["reason"] for r in rejects)
    printed = capsys.readouterr().out
    assert "first tsunami warning" in printed and "Miyako" in printed


def test_the_demo_command_takes_the_threshold_and_the_radius(tmp_path):
    """A threshold of 1 m is more than the sample's waves: no warning; a
    radius of 300 km names fewer places than the default."""
    from cep.cli import main

    def warnings(out):
        return [json.loads(line) for line in (out / "warnings.jsonl").read_text().splitlines()]

    assert main(["demo", "tsunami", "--engine", "local", "--out", str(tmp_path / "high"), "--no-plots", "-q",
                 "--threshold-mm", "1000"]) == 0
    assert warnings(tmp_path / "high") == []
    assert main(["demo", "tsunami", "--engine", "local", "--out", str(tmp_path / "near"), "--no-plots", "-q",
                 "--radius-km", "300"]) == 0
    near = warnings(tmp_path / "near")
    assert near and all(p["distanceKm"] <= 300 for w in near for p in w["places"])
    assert any(not w["places"] for w in near)  # 99902 has no place within 300 km: warned all the same
    assert not list((tmp_path / "near").glob("*.png"))
    assert main(["demo", "nowhere"]) == 2


@pytest.mark.spark
def test_the_app_on_spark_warns_as_the_local_engine_does(tmp_path):
    from cep.spark import spark_session
    from examples.tsunami import app
    from tests.spark.support import TEST_CONF

    spark_session("local[2]", conf=TEST_CONF)  # the one session of the test run (tests/spark/conftest.py)
    for engine in ("local", "spark"):
        assert app.main(["--engine", engine, "--out", str(tmp_path / engine), "--no-plots", "-q"]) == 0
    local, spark = ((tmp_path / e / "warnings.jsonl").read_text() for e in ("local", "spark"))
    assert local and local == spark
