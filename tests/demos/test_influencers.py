"""The influential-users app (examples/influencers): its synthetic data
set is seeded, and the app runs end to end against the endpoint it starts
(Oxigraph on port 7878), with the fresh run exact, the view never
refreshed less so, and a picture of accuracy over time."""

import re

from examples.influencers import app
from examples.influencers.scenario import generate


def test_the_scenario_is_seeded():
    a, b, c = generate(3, minutes=30), generate(3, minutes=30), generate(4, minutes=30)
    assert (a.counts, a.changes, a.mentions) == (b.counts, b.changes, b.mentions)
    assert a.mentions != c.mentions
    assert all(t1 < t2 for cs in a.changes.values() for (t1, _), (t2, _) in zip(cs, cs[1:]))
    assert a.change_times(("<http://example.org/u0>",)) == [t for t, _ in a.changes[0]]


def test_the_app_runs_and_draws_accuracy_over_time(tmp_path, capsys):
    """... over the data set of bench/service.py: the generator settings
    the bench defaults to (scenario.py's)."""
    from bench.service import arguments
    from examples.influencers.scenario import PER_MINUTE, PROCESS, SKEW

    assert app.main(["--minutes", "30", "--out", str(tmp_path)]) == 0
    err = capsys.readouterr().err
    settings = generate(1, minutes=30).settings
    assert f"data set: {settings}, 30 minutes (seed 1)" in err
    assert settings == f"400 users ({PROCESS} changes), {PER_MINUTE} mentions a minute, popularity Zipf {SKEW:g}"
    bench = arguments().parse_args([])
    assert (bench.per_minute, bench.changes, bench.skew) == (PER_MINUTE, PROCESS, SKEW)
    accuracy = {name.strip(): float(value) for name, value in re.findall(r"^\s*(.+?): accuracy ([\d.]+)", err, re.M)}
    assert set(accuracy) == set(app.POLICIES)
    assert accuracy["fresh (no view)"] == 1.0
    assert accuracy["WST (never refreshed)"] < 1.0
    assert (tmp_path / "accuracy.png").stat().st_size > 0


def test_the_rates_some_users_unchanged_the_others_between_the_bounds():
    """The distribution bench/service.py is calibrated on (a mean candidate
    set of 33 and WST 0.23, as the seed's): a share STATIC of users never
    change (their change interval is NEVER, which WBM reads as fresh for
    good), the others periodically, every 1/rate minutes."""
    from examples.influencers.scenario import FASTEST, MIN, NEVER, SLOWEST, STATIC, user

    s = generate(5, minutes=180, per_minute=8, process="periodic")
    unchanged = [u for u, r in s.rates.items() if r == 0]
    assert abs(len(unchanged) / len(s.rates) - STATIC) < 0.05
    assert all(s.changes[u] == [] and s.change_interval((user(u),)) == NEVER for u in unchanged)
    changing = [u for u, r in s.rates.items() if r]
    assert all(SLOWEST <= s.rates[u] <= FASTEST for u in changing)
    for u in changing:
        times = [t for t, _ in s.changes[u]]
        assert all(abs((b - a) - MIN / s.rates[u]) <= 1 for a, b in zip(times, times[1:]))


def test_aligned_changes_fall_on_the_best_before_times_wbm_predicts():
    """"aligned": every 1/rate minutes from time 0 (the first evaluation's,
    where WBM's best-before times start), so the k-th change is at k
    intervals (to the millisecond the interval is rounded to)."""
    from examples.influencers.scenario import user

    s = generate(5, minutes=60, per_minute=8, process="aligned")
    for u, cs in s.changes.items():
        interval = s.change_interval((user(u),))
        assert all(abs(t - k * interval) <= k + 1 for k, (t, _) in enumerate(cs, 1))


def test_skew_sets_how_often_the_same_users_come_back():
    """generate(skew=...): the Zipf exponent of the users' popularity. At
    0 every user is drawn alike; the higher, the more of the mentions go
    to the same few users."""
    from collections import Counter

    def top_share(skew):
        mentioned = Counter(u for users in generate(2, 180, 8, skew=skew).mentions.values() for u in users)
        return sum(n for _, n in mentioned.most_common(20)) / sum(mentioned.values())

    assert top_share(0.0) < 0.2 < top_share(0.8) < top_share(1.2)
