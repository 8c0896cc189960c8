"""What the tsunami picture shows (examples/tsunami/plot.py), read from the
figure's artists, not its pixels: one warning line per tsunami onset, the
first one set apart, and the seismic reports inside a tsunami told apart
from those outside it."""

from __future__ import annotations

import json

import numpy as np
import pytest

from examples.tsunami import app
from examples.tsunami.plot import SAME_TSUNAMI_MS, StationSeries, draw_station, tsunamis

MIN, HOUR = 60_000, 3_600_000


def marks(fig, axis=0) -> dict:
    """gid -> how many marks of that kind the axis draws (a line per
    warning, a tick per seismic report, a span per tsunami warned again)."""
    ax = fig.axes[axis]
    found: dict = {}
    for artist in [*ax.lines, *ax.patches]:
        gid = artist.get_gid()
        if gid:
            n = len(artist.get_xdata()) if gid.startswith("seismic") else 1
            found[gid] = found.get(gid, 0) + n
    return found


def series_with(warnings, seismic) -> StationSeries:
    """A station's readings every 15 minutes around its marks."""
    marked = [*warnings, *seismic]
    times = range(min(marked) - 10 * HOUR, max(marked) + 10 * HOUR, 15 * MIN)
    return StationSeries("99999", observed=[(t, 5000.0 + np.sin(t / HOUR), 1) for t in times],
                         warnings=list(warnings), seismic=list(seismic))


def test_warnings_that_follow_one_another_are_one_tsunami():
    tick = [10 * HOUR + i * 15 * MIN for i in range(10)]  # ten warnings, 15 minutes apart
    later = tick[-1] + SAME_TSUNAMI_MS + MIN               # and one long after
    found = tsunamis([later, *reversed(tick)])
    assert [(t.onset, t.last, t.warnings) for t in found] == [(tick[0], tick[-1], 10), (later, later, 1)]
    assert [t.warnings for t in tsunamis([0, SAME_TSUNAMI_MS])] == [2]  # within the span: the same one


def test_one_line_per_onset_and_the_first_set_apart():
    first = [10 * HOUR + i * 15 * MIN for i in range(10)]
    second = [24 * HOUR + i * 20 * MIN for i in range(3)]
    shaking = [9 * HOUR + 50 * MIN, 9 * HOUR + 55 * MIN]  # before the wave
    inside = [10 * HOUR + 40 * MIN, 24 * HOUR + 10 * MIN]  # during the two tsunamis
    fig = draw_station(series_with(first + second, shaking + inside))
    assert marks(fig) == {"first-warning": 1, "warning": 1, "warned-again": 2,
                          "seismic": 2, "seismic-in-tsunami": 2}
    first_line = next(a for a in fig.axes[0].lines if a.get_gid() == "first-warning")
    other = next(a for a in fig.axes[0].lines if a.get_gid() == "warning")
    assert first_line.get_linewidth() > other.get_linewidth()
    assert first_line.get_xdata()[0] == np.datetime64(first[0], "ms")
    assert any(t.get_text() == "first warning 10:00" for t in fig.axes[0].texts)
    assert "2 tsunamis (13 warnings)" in fig.axes[0].get_title()


@pytest.fixture(scope="module")
def sample_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("tsunami")
    assert app.main(["--engine", "local", "--out", str(out), "--no-plots", "-q"]) == 0
    return [json.loads(line) for line in (out / "warnings.jsonl").read_text().splitlines()], \
        [json.loads(line) for line in (out / "seismic.jsonl").read_text().splitlines()]


@pytest.mark.parametrize("station", ["99901", "99902"])
def test_the_sample_pictures_show_one_tsunami_per_buoy(sample_run, station):
    """The sample has one tsunami per buoy, which the rules warn of many
    times (each time the state begins again): one warning line each."""
    from cep.terms import parse_datetime_ms

    warnings, seismic = sample_run
    warned = [parse_datetime_ms(w["time"]) for w in warnings if w["station"] == station]
    shaken = [parse_datetime_ms(s["time"]) for s in seismic if s["station"] == station]
    assert len(warned) > 5
    fig = draw_station(series_with(warned, shaken))
    drawn = marks(fig)
    assert drawn["first-warning"] == 1 and "warning" not in drawn
    # the earthquake's shaking comes before the wave; the wave itself trips the seismic rule
    assert drawn["seismic"] >= 1 and drawn["seismic-in-tsunami"] >= 1
    assert drawn["seismic"] + drawn["seismic-in-tsunami"] == len(shaken)
