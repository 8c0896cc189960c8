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
    assert app.main(["--minutes", "30", "--out", str(tmp_path)]) == 0
    err = capsys.readouterr().err
    accuracy = {name.strip(): float(value) for name, value in re.findall(r"^\s*(.+?): accuracy ([\d.]+)", err, re.M)}
    assert set(accuracy) == set(app.POLICIES)
    assert accuracy["fresh (no view)"] == 1.0
    assert accuracy["WST (never refreshed)"] < 1.0
    assert (tmp_path / "accuracy.png").stat().st_size > 0
