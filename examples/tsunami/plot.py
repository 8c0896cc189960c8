"""One picture per buoy: the water column, the prediction, the warnings.

    plot_station(series, "out/tsunami/21418.png", threshold_m=0.03)

Takes a StationSeries (the station's readings, and what the rules answered
about it: predictions, averages, warnings, seismic disturbances; see
examples/tsunami/app.py) and writes a PNG (matplotlib, Agg backend):

- top: the whole record, observed water column and predicted height, with
  one red line per tsunami onset (the first one thicker and labelled with
  its time), the span over which the rules warned again shaded, and the
  seismic disturbances as ticks: orange before a tsunami (shaking of the
  recorder), grey inside one (the wave's own ups and downs trip the
  seismic rule);
- middle: the same, zoomed on the event (from an hour before the first
  mark to three hours after it), with the averaged points;
- bottom: the residual, observed minus predicted, in mm over the zoomed
  interval, with the warning threshold.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import matplotlib

matplotlib.use("Agg")

import matplotlib.dates as mdates  # noqa: E402  (after the backend is chosen)
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

HOUR_MS = 3_600_000
# A warning within this of the station's previous one is the same tsunami:
# the predictions it was compared with still hold the wave's readings (the
# detection window of ndbc.rq's `detected` rule, 3 h 21 min).
SAME_TSUNAMI_MS = (3 * 60 + 21) * 60_000


@dataclass
class StationSeries:
    station: str
    label: str = ""
    observed: list = field(default_factory=list)  # (time ms, metres, record type)
    predicted: list = field(default_factory=list)  # (time ms, metres)
    averages: list = field(default_factory=list)  # (time ms, metres)
    residuals: list = field(default_factory=list)  # (time ms, metres)
    warnings: list = field(default_factory=list)  # time ms
    seismic: list = field(default_factory=list)  # time ms


@dataclass
class Tsunami:
    onset: int  # time ms of its first warning
    last: int  # time ms of its last warning
    warnings: int  # how many warnings the rules gave in it


def tsunamis(warnings) -> list[Tsunami]:
    """The warnings of one station grouped by tsunami: each onset, and the
    warnings that followed it within SAME_TSUNAMI_MS of one another."""
    found: list[Tsunami] = []
    for t in sorted(warnings):
        if found and t - found[-1].last <= SAME_TSUNAMI_MS:
            found[-1].last, found[-1].warnings = t, found[-1].warnings + 1
        else:
            found.append(Tsunami(t, t, 1))
    return found


def _times(ms) -> np.ndarray:
    return np.asarray(ms, dtype="int64").astype("datetime64[ms]")


def _zoom(series: StationSeries) -> tuple[int, int] | None:
    marks = sorted(series.warnings + series.seismic)
    if marks:
        return marks[0] - HOUR_MS, max(marks[0] + 3 * HOUR_MS, min(marks[-1], marks[0] + 6 * HOUR_MS) + HOUR_MS // 2)
    if series.residuals:
        t, _ = max(series.residuals, key=lambda r: abs(r[1]))
        return t - 2 * HOUR_MS, t + 2 * HOUR_MS
    return None


def _within(points, lo, hi):
    return [p for p in points if lo <= p[0] <= hi]


def _marks(ax, series, lo=None, hi=None, label=True):
    """The tsunamis and seismic disturbances within [lo, hi], each artist
    with a gid saying what it marks (the tests read them)."""
    def keep(t):
        return (lo is None or lo <= t) and (hi is None or t <= hi)

    found = tsunamis(series.warnings)
    for i, tsunami in enumerate(found):
        first = i == 0
        if tsunami.last > tsunami.onset and keep(tsunami.onset):
            span = ax.axvspan(_times([tsunami.onset])[0], _times([tsunami.last])[0], color="tab:red", alpha=0.08,
                              lw=0, label="warned again" if label and first else None)
            span.set_gid("warned-again")
        if not keep(tsunami.onset):
            continue
        line = ax.axvline(_times([tsunami.onset])[0], color="tab:red", lw=2.5 if first else 1.2,
                          label=("first tsunami warning" if first else "tsunami warning") if label else None)
        line.set_gid("first-warning" if first else "warning")
        if first and label:
            ax.annotate(f"first warning {_times([tsunami.onset])[0].astype(object):%H:%M}",
                        (_times([tsunami.onset])[0], 1.0), xycoords=("data", "axes fraction"),
                        xytext=(4, -12), textcoords="offset points", color="tab:red", fontsize=8,
                        fontweight="bold", zorder=6,  # above the legend, which may cover it
                        bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.9})
    inside = [t for t in series.seismic if any(s.onset <= t <= s.last for s in found)]
    for times, gid, colour, text in (
            ([t for t in series.seismic if t not in inside], "seismic", "tab:orange", "seismic disturbance"),
            (inside, "seismic-in-tsunami", "tab:gray", "seismic rule inside a tsunami (the wave)")):
        times = [t for t in times if keep(t)]
        if times:
            ticks, = ax.plot(_times(times), np.zeros(len(times)), "|", color=colour, ms=14, mew=2,
                             transform=ax.get_xaxis_transform(), clip_on=False, label=text if label else None)
            ticks.set_gid(gid)


def _heights(ax, series, lo=None, hi=None, averages=False):
    obs = series.observed if lo is None else _within(series.observed, lo, hi)
    if obs:
        ax.plot(_times([o[0] for o in obs]), [o[1] for o in obs], color="tab:blue", lw=0.8,
                label="observed water column")
    pred = series.predicted if lo is None else _within(series.predicted, lo, hi)
    if pred:
        ax.plot(_times([p[0] for p in pred]), [p[1] for p in pred], color="black", lw=0.8, ls="--",
                label="predicted (NDBC tide predictor)")
    avg = series.averages if lo is None else _within(series.averages, lo, hi)
    if averages and avg:
        ax.plot(_times([a[0] for a in avg]), [a[1] for a in avg], ".", color="tab:green", ms=3,
                label="averaged points H*")
    ax.set_ylabel("height (m)")
    ax.ticklabel_format(axis="y", useOffset=False)
    ax.grid(alpha=0.3)


def plot_station(series: StationSeries, path, threshold_m: float = 0.03) -> None:
    fig = draw_station(series, threshold_m)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def draw_station(series: StationSeries, threshold_m: float = 0.03):
    """The station's figure (plot_station saves it)."""
    zoom = _zoom(series)
    rows = 3 if zoom else 1
    fig, axes = plt.subplots(rows, 1, figsize=(11, 3.2 * rows + 0.6), squeeze=False,
                             height_ratios=[1.0, 1.2, 0.8][:rows])
    axes = axes[:, 0]
    top = axes[0]
    _heights(top, series)
    _marks(top, series)
    title = series.label or f"DART {series.station}"
    n, w = len(tsunamis(series.warnings)), len(series.warnings)
    top.set_title(f"{title}: {len(series.observed):,} readings, {n:,} tsunami{'s' if n != 1 else ''} "
                  f"({w:,} warning{'s' if w != 1 else ''}), "
                  f"{len(series.seismic):,} seismic disturbance{'s' if len(series.seismic) != 1 else ''}")
    top.legend(loc="upper left", fontsize=8)
    top.xaxis.set_major_formatter(mdates.ConciseDateFormatter(top.xaxis.get_major_locator()))
    if zoom:
        lo, hi = zoom
        mid = axes[1]
        _heights(mid, series, lo, hi, averages=True)
        _marks(mid, series, lo, hi)
        mid.set_xlim(_times([lo])[0], _times([hi])[0])
        mid.set_title("around the event", fontsize=10)
        mid.legend(loc="upper left", fontsize=8)
        bottom = axes[2]
        res = _within(series.residuals, lo, hi)
        if res:
            bottom.plot(_times([r[0] for r in res]), [r[1] * 1000 for r in res], color="tab:purple", lw=0.8,
                        label="observed - predicted")
        for sign in (1, -1):
            bottom.axhline(sign * threshold_m * 1000, color="tab:red", ls=":", lw=1,
                           label=f"threshold ±{threshold_m * 1000:g} mm" if sign == 1 else None)
        _marks(bottom, series, lo, hi, label=False)
        bottom.set_xlim(_times([lo])[0], _times([hi])[0])
        bottom.set_ylabel("residual (mm)")
        bottom.grid(alpha=0.3)
        bottom.legend(loc="upper left", fontsize=8)
        for ax in (mid, bottom):
            ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(ax.xaxis.get_major_locator()))
    axes[-1].set_xlabel("time (UTC)")
    fig.tight_layout()
    return fig
