"""The tsunami app's own sample: NDBC-format DART listings of two synthetic
stations, generated from a fixed seed (the same bytes on every run).

    python -m examples.tsunami.make_sample            # writes examples/tsunami/sample/
    python -m examples.tsunami.make_sample --out DIR

Nothing here is measured: the stations (99901 off Sanriku, 99902 off the
Kuril Islands, ontologies/dart-stations.ttl) and their signal are made up
to look like what a DART bottom pressure recorder reports:

- three days and three hours of 15-minute readings (record type 1) of a
  tide: the M2 (12.42 h) and K1 (23.93 h) harmonics, about 0.5 m together,
  over a water column of some 5.7 km, with 2 mm of noise;
- then an earthquake at 2025-01-09 03:00 UTC. Its seismic waves shake the
  recorder minutes later (spikes of 5-20 cm on a few 15-second readings),
  which puts the buoy into event mode: 15-second readings (type 3) for
  about a quarter of an hour, 1-minute readings (type 2) for four hours,
  and 9999.000 (missing) in the 15-minute rows meanwhile. Readings of two
  record types share a timestamp where their schedules meet.
- a tsunami wave reaches each buoy later (99901: 25 minutes after the
  quake, 0.45 m, a 30-minute period; 99902: 95 minutes after, 0.18 m, 25
  minutes), decaying over an hour or so.
- 99901's file runs newest-first, as NDBC serves its files; 99902's
  oldest-first.
"""

from __future__ import annotations

import argparse
import datetime as dt
import math
import random
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
SAMPLE = HERE / "sample"
SEED = 20250109

START = dt.datetime(2025, 1, 6, 0, 0, tzinfo=dt.timezone.utc)
QUAKE = dt.datetime(2025, 1, 9, 3, 0, tzinfo=dt.timezone.utc)
END = dt.datetime(2025, 1, 9, 12, 0, tzinfo=dt.timezone.utc)
M2_HOURS, K1_HOURS = 12.4206, 23.9345
NOISE_M = 0.002


@dataclass(frozen=True)
class Station:
    id: str
    depth: float  # mean water column, m
    m2: tuple  # (amplitude m, phase rad)
    k1: tuple
    seismic: tuple  # (seconds after the quake the shaking starts, how long, largest spike m)
    arrival_s: int  # seconds after the quake the wave arrives
    wave: tuple  # (amplitude m, period s, decay time s)
    newest_first: bool


STATIONS = (
    Station("99901", 5712.4, (0.31, 0.8), (0.19, 2.1), (120, 240, 0.20), 25 * 60, (0.45, 1800, 3600), True),
    Station("99902", 5390.8, (0.28, 2.6), (0.22, 0.4), (300, 180, 0.09), 95 * 60, (0.18, 1500, 3000), False),
)

EVENT_15S = 15 * 60  # seconds of 15-second readings, from the first shaking
EVENT_1MIN = 4 * 3600  # seconds of 1-minute readings


def _level(st: Station, seconds: float) -> float:
    """Tide and tsunami at `seconds` after START, without noise or shaking."""
    hours = seconds / 3600
    tide = (st.m2[0] * math.sin(2 * math.pi * hours / M2_HOURS + st.m2[1])
            + st.k1[0] * math.sin(2 * math.pi * hours / K1_HOURS + st.k1[1]))
    since = seconds - (QUAKE - START).total_seconds() - st.arrival_s
    wave = 0.0
    if since >= 0:
        amplitude, period, decay = st.wave
        wave = amplitude * math.exp(-since / decay) * math.sin(2 * math.pi * since / period)
    return st.depth + tide + wave


def _rows(st: Station, rng: random.Random) -> list[tuple[int, int, float | None]]:
    """(seconds after START, record type, height or None for missing)."""
    quake = int((QUAKE - START).total_seconds())
    end = int((END - START).total_seconds())
    shake_from = quake + st.seismic[0]
    shake_to = shake_from + st.seismic[1]
    mode_from = shake_from - shake_from % 15  # event mode: triggered by the shaking
    # the 15-second readings that the shaking disturbs: a few, spread over it
    shaken = sorted(rng.sample(range(shake_from, shake_to, 15), 7))
    spikes = {t: rng.choice((-1, 1)) * rng.uniform(0.05, st.seismic[2]) for t in shaken}

    def height(t: int) -> float:
        return _level(st, t) + rng.gauss(0.0, NOISE_M) + spikes.get(t, 0.0)

    rows = []
    for t in range(0, end + 1, 900):
        in_event = mode_from <= t < mode_from + EVENT_1MIN
        rows.append((t, 1, None if in_event else height(t)))
    first_minute = mode_from + (-mode_from) % 60
    for t in range(first_minute, mode_from + EVENT_1MIN, 60):
        rows.append((t, 2, height(t)))
    for t in range(mode_from, mode_from + EVENT_15S, 15):
        rows.append((t, 3, height(t)))
    rows.sort(key=lambda r: (r[0], r[1]))
    return rows


def listing(st: Station, rng: random.Random) -> str:
    """The station's listing as NDBC writes it."""
    lines = ["#YY  MM DD hh mm ss T   HEIGHT", "#yr  mo dy hr mn  s -        m"]
    rows = _rows(st, rng)
    if st.newest_first:
        rows.reverse()
    for seconds, kind, value in rows:
        t = START + dt.timedelta(seconds=seconds)
        text = "9999.000" if value is None else f"{value:.3f}"
        lines.append(f"{t:%Y %m %d %H %M %S} {kind} {text}")
    return "\n".join(lines) + "\n"


def generate() -> dict[str, str]:
    """{file name: text} of the sample, from SEED."""
    rng = random.Random(SEED)
    return {f"{st.id}.txt": listing(st, rng) for st in STATIONS}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=SAMPLE, help=f"folder to write to (default {SAMPLE})")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    for name, text in generate().items():
        (args.out / name).write_text(text, encoding="ascii", newline="\n")
        print(f"{args.out / name}: {text.count(chr(10)) - 2} readings")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
