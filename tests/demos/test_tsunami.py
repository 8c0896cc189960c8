"""The tsunami rules (examples/tsunami/ndbc.rq) through the app: their
prediction against an independent computation of NDBC's formula on the
app's sample, and the Tohoku tsunami of 2011-03-11 on the four real DART
listings of ../shared/data/dart when they are there (PROVENANCE.md there
gives the wave's arrival at each buoy)."""

from __future__ import annotations

import bisect
import json
from datetime import datetime, timezone
from pathlib import Path

import pytest

from cep import terms
from examples.tsunami import app, dart

ROOT = Path(__file__).resolve().parents[2]
SHARED_DART = ROOT.parent / "shared" / "data" / "dart"
WEIGHTS = (1.16818457031250, -0.28197558593750, 0.14689746093750, -0.03310644531250)
MIN, HOUR = 60_000, 3_600_000
THRESHOLD = 0.030

needs_dart = pytest.mark.skipif(not SHARED_DART.is_dir(), reason=(
    f"the Tohoku DART listings are not there ({SHARED_DART}): put the shared data beside the "
    "project to run the tsunami detections on real data"))


def ms(text: str) -> int:
    return int(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000)


def utc(day: int, hh: int, mm: int, ss: int = 0) -> int:
    return int(datetime(2011, 3, day, hh, mm, ss, tzinfo=timezone.utc).timestamp() * 1000)


QUAKE = utc(11, 5, 46, 24)
ARRIVAL = {"21418": utc(11, 6, 15), "21401": utc(11, 6, 45), "21413": utc(11, 7, 0), "21419": utc(11, 7, 7)}


def run_app(out: Path, *options) -> dict:
    """The app on the local engine: its warnings, seismic reports and
    `prediction` answers (station, time, observed, predicted, residual)."""
    assert app.main(["--engine", "local", "--out", str(out), "--no-plots", "-q", *options]) == 0

    def lines(name):
        return [json.loads(line) for line in (out / name).read_text().splitlines()]

    predictions = []
    for a in lines("answers.jsonl"):
        if a["query"] == "prediction":
            b = {k: v["value"] for k, v in a["bindings"].items()}
            station = b["station"].removeprefix(dart.NS + "station")
            predictions.append((station, ms(a["end"]), float(b["observed"]), float(b["predicted"]),
                                float(b["residual"])))
    return {"warnings": lines("warnings.jsonl"), "seismic": lines("seismic.jsonl"), "predictions": predictions}


def ndbc_predictions(readings) -> dict:
    """NDBC's formula computed directly (the oracle of rules 1-3): for a
    reading at t, Hp = sum of w(i) * H*(tau - i h), where tau is the last
    whole minute before t and H*(x) the mean of the readings in
    (x - 10 min, x]; none where a mean has no reading."""
    times = [r.time_ms for r in readings]
    heights = [float(r.metres) for r in readings]

    def mean(x):
        i, j = bisect.bisect_right(times, x - 10 * MIN), bisect.bisect_right(times, x)
        return sum(heights[i:j]) / (j - i) if j > i else None

    out = {}
    for t, h in zip(times, heights):
        tau = (t - 1) // MIN * MIN
        points = [mean(tau - i * HOUR) for i in range(4)]
        if None not in points:
            out[t] = (h, sum(w * p for w, p in zip(WEIGHTS, points)))
    return out


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    return run_app(tmp_path_factory.mktemp("sample"))


def test_the_rules_predict_every_reading_as_ndbc_s_formula_does(sample):
    """Every reading the formula covers has its prediction, to 1e-9 m, and
    no other reading has one."""
    for listing in dart.read_listings([app.SAMPLE]):
        expected = ndbc_predictions(listing.readings)
        got = {t: (obs, hp) for st, t, obs, hp, _ in sample["predictions"] if st == listing.station}
        assert len(expected) > 200 and got.keys() == expected.keys()
        for t, (obs, hp) in expected.items():
            assert got[t][0] == pytest.approx(obs, abs=1e-9) and got[t][1] == pytest.approx(hp, abs=1e-9)


def test_the_sample_s_waves_are_warned_after_their_seismic_shaking(sample):
    """99901's wave begins at 03:25 after shaking at 03:02-03:06, 99902's
    at 04:35 after shaking at 03:05-03:08 (examples/tsunami/make_sample.py):
    each station reports its shaking as seismic, and warns of the wave
    only after it arrives."""
    wave = {"99901": ms("2025-01-09T03:25:00Z"), "99902": ms("2025-01-09T04:35:00Z")}
    for station, arrival in wave.items():
        first = min(ms(w["time"]) for w in sample["warnings"] if w["station"] == station)
        assert arrival <= first <= arrival + 10 * MIN
        shaking = [ms(s["time"]) for s in sample["seismic"] if s["station"] == station]
        assert shaking and min(shaking) < arrival


@pytest.fixture(scope="module")
def tohoku(tmp_path_factory):
    return run_app(tmp_path_factory.mktemp("tohoku"), "--data", str(SHARED_DART))


@needs_dart
@pytest.mark.parametrize("station", sorted(ARRIVAL))
def test_each_buoy_warns_within_ten_minutes_of_the_wave_and_not_before(tohoku, station):
    """The first warning of each buoy comes in [arrival, arrival + 10 min]:
    the seismic shaking that trips a plain 30 mm detector from 05:48 on
    raises none (it is reported as seismic, between the quake and the
    wave)."""
    arrival = ARRIVAL[station]
    warnings = sorted(ms(w["time"]) for w in tohoku["warnings"] if w["station"] == station)
    assert warnings and arrival <= warnings[0] <= arrival + 10 * MIN
    first = next(w for w in tohoku["warnings"] if w["station"] == station)
    assert first["direction"] == "rise" and first["places"]
    shaking = [ms(s["time"]) for s in tohoku["seismic"] if s["station"] == station]
    assert any(QUAKE <= t < arrival for t in shaking)
    plain = [t for st, t, _, _, r in tohoku["predictions"] if st == station and abs(r) > THRESHOLD]
    assert min(t for t in plain if t >= QUAKE) < arrival  # what a plain detector would have warned of


@needs_dart
def test_21401_is_silent_over_its_quiet_days_and_its_foreshock(tohoku):
    """No warning and no seismic report at 21401 from 03-01 to the M7.3
    foreshock of 03-09 02:45; the foreshock's shaking is seismic, and no
    warning comes before the Tohoku wave. Where the rules compared a
    reading with its prediction before the quake, outside the foreshock's
    hour, it stayed within the threshold."""
    quiet_end, foreshock = utc(9, 2, 44), utc(9, 2, 45)
    of_21401 = [ms(w["time"]) for w in tohoku["warnings"] if w["station"] == "21401"]
    assert min(of_21401) >= ARRIVAL["21401"]
    shaking = [ms(s["time"]) for s in tohoku["seismic"] if s["station"] == "21401"]
    assert not [t for t in shaking if t < quiet_end]
    assert [t for t in shaking if foreshock <= t < foreshock + 15 * MIN]
    for station in ARRIVAL:
        before = [r for st, t, _, _, r in tohoku["predictions"]
                  if st == station and t < QUAKE and not foreshock <= t < foreshock + HOUR]
        assert len(before) > 50 and max(abs(r) for r in before) < THRESHOLD
