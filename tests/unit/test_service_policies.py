"""The proposers and rankers of SERVICE views (cep.service.proposers,
cep.service.rankers) on the seed's running example (Dehghanzadeh et al.,
ICWE 2015, Figure 2 and section 4.2): at time 8, a window of width 5 and
slide 1 holds the stream solutions compatible with the view entries a, b,
c and d; e and f are not needed. Best-before times: a 7, b 9, c 6, d 5;
a entered the window at 4, c and d at 6; the change intervals of a, c
and d are 5, 5 and 4 (given, as a source that says its change rates
gives them: ServiceOptions.intervals), so their renewed best-before
times are 12, 11 and 9."""

import math
import random
from types import SimpleNamespace

import pytest

from cep.service import proposers, rankers
from cep.service.maintenance import Evaluation
from cep.service.view import Entry

NOW, OMEGA, BETA = 8, 5, 1
INTERVALS = {"a": 5, "b": 3, "c": 5, "d": 4, "e": 2, "f": 2}


def example():
    """The view of Figure 2 (refresh times for LRU)."""
    spec = {  # name: (best-before, entered the window, first, refreshed, changes)
        "a": (7, 4, 0, 5, 1),
        "b": (9, 7, 0, 6, 2),
        "c": (6, 6, 0, 5, 1),
        "d": (5, 6, 0, 4, 1),
        "e": (3, None, 0, 3, 1),
        "f": (2, None, 0, 2, 1),
    }
    entries = {}
    for i, (name, (tau, needed, first, refreshed, changes)) in enumerate(spec.items()):
        entries[(name,)] = Entry(i, (name,), (), best_before=tau, refreshed=refreshed, first=first,
                                 changes=changes, needed=needed)
    return SimpleNamespace(entries=entries)


def names(entries):
    return sorted(e.key[0] for e in entries)


def evaluation(gamma=1, seed=0, oracle=None):
    return Evaluation(NOW, OMEGA, BETA, gamma, random.Random(seed), oracle, lambda key: INTERVALS[key[0]])


def test_wsj_proposes_the_entries_the_window_needs():
    assert names(proposers.wsj(example(), evaluation())) == ["a", "b", "c", "d"]


def test_gnr_proposes_the_whole_view_and_wst_nothing():
    assert names(proposers.gnr(example(), evaluation())) == ["a", "b", "c", "d", "e", "f"]
    assert proposers.wst(example(), evaluation()) == []


def test_the_seed_quantities_at_time_8():
    view = example()
    e = view.entries
    assert [rankers.remaining_life(e[(n,)].needed, OMEGA, BETA, NOW) for n in "acd"] == [1, 3, 3]
    ev = evaluation()
    assert [rankers.change_interval(e[(n,)], ev) for n in "acd"] == [5, 5, 4]
    renewed = [rankers.renewed_best_before(e[(n,)].best_before, rankers.change_interval(e[(n,)], ev), NOW)
               for n in "acd"]
    assert renewed == [12, 11, 9]
    assert [rankers.fresh_evaluations(t, NOW, BETA) for t in renewed] == [4, 3, 1]


def test_wbm_scores_the_possibly_stale_candidates_1_3_1():
    view = example()
    candidates = proposers.wsj(view, evaluation())
    scores = rankers.WBM().scores(candidates, evaluation())
    assert {view_name: scores[view.entries[(view_name,)].id] for view_name in "acd"} == {"a": 1, "c": 3, "d": 1}
    assert view.entries[("b",)].id not in scores  # best before 9: not possibly stale at 8


@pytest.mark.parametrize("seed", range(5))
def test_wbm_elects_c_with_gamma_1_and_renews_its_best_before_to_11(seed):
    view = example()
    ev = evaluation(gamma=1, seed=seed)
    ranker = rankers.WBM()
    (elected,) = ranker.elect(proposers.wsj(view, ev), ev)
    assert elected.key == ("c",)
    assert ranker.renew(elected, ev) == 11


def test_wbm_breaks_ties_at_random():
    """With gamma 2, c (score 3) and one of a and d (score 1), each for some seed."""
    seconds = set()
    for seed in range(40):
        view = example()
        ev = evaluation(gamma=2, seed=seed)
        first, second = rankers.WBM().elect(proposers.wsj(view, ev), ev)
        assert first.key == ("c",)
        seconds.add(second.key[0])
    assert seconds == {"a", "d"}


def test_rnd_takes_gamma_candidates_at_random_repeatably():
    view = example()
    candidates = proposers.wsj(view, evaluation())
    picks = [names(rankers.RND().elect(candidates, evaluation(gamma=2, seed=s))) for s in range(40)]
    assert all(len(p) == 2 and set(p) <= {"a", "b", "c", "d"} for p in picks)
    assert picks == [names(rankers.RND().elect(candidates, evaluation(gamma=2, seed=s))) for s in range(40)]
    assert {n for p in picks for n in p} == {"a", "b", "c", "d"}


def test_lru_takes_the_least_recently_refreshed():
    view = example()
    candidates = proposers.wsj(view, evaluation())
    assert names(rankers.LRU().elect(candidates, evaluation(gamma=1))) == ["d"]  # refreshed at 4
    assert names(rankers.LRU().elect(candidates, evaluation(gamma=3))) == ["a", "c", "d"]  # a, c at 5; b at 6


def oracle(changes):
    return lambda key: changes.get(key[0], [])


def test_bst_proposes_gamma_certainly_stale_entries_of_the_window():
    truth = oracle({"a": [6], "b": [7], "c": [3, 12], "d": [8], "e": [4]})  # c last changed before its refresh
    # a, b and d are stale; d (refreshed at 4) and a (at 5) were refreshed before b (at 6)
    assert names(proposers.bst(example(), evaluation(gamma=2, oracle=truth))) == ["a", "d"]
    assert names(proposers.bst(example(), evaluation(gamma=5, oracle=truth))) == ["a", "b", "d"]


def test_wbm_star_reads_the_true_change_times():
    truth = oracle({"a": [6, 20], "c": [7, 9], "d": [8, 30]})
    view = example()
    ev = evaluation(gamma=1, oracle=truth)
    ranker = rankers.WBMStar()
    candidates = proposers.wsj(view, ev)
    # truly stale: a, c, d; V from the next true change: a 12, c 1, d 22; L: 1, 3, 3
    assert {e.key[0]: s for e in candidates for i, s in ranker.scores(candidates, ev).items() if i == e.id} == \
        {"a": 1, "c": 1, "d": 3}
    (elected,) = ranker.elect(candidates, ev)
    assert elected.key == ("d",) and ranker.renew(elected, ev) == 30


def test_the_renewed_best_before_is_the_first_predicted_change_after_now():
    """tau + I when that is after now (the seed's example); an entry last
    predicted to change several intervals ago gets the next predicted
    change after now, not a time already past."""
    assert rankers.renewed_best_before(6, 5, 8) == 11
    assert rankers.renewed_best_before(6, 5, 11) == 16
    assert rankers.renewed_best_before(0, 4, 30) == 32


def test_the_change_interval_estimated_from_refreshes():
    """A Poisson process seen through refreshes: n refreshes a mean gap d
    apart, c of which saw a change, give d / -ln(1 - c / (n + 1))."""
    seen = Entry(0, ("x",), (), first=0, refreshed=100, refreshes=10, changes=5)  # gap 10, p = 5/11
    assert rankers.estimated_interval(seen, BETA) == int(10 / -math.log(1 - 5 / 11))
    often = Entry(1, ("y",), (), first=0, refreshed=100, refreshes=10, changes=10)  # changed at every refresh
    assert rankers.estimated_interval(often, BETA) < rankers.estimated_interval(seen, BETA)
    never = Entry(2, ("z",), (), first=0, refreshed=100, refreshes=10, changes=0)
    assert rankers.estimated_interval(never, BETA) == 200
    assert rankers.estimated_interval(Entry(3, ("w",), (), first=0, refreshed=0), BETA) == BETA


def test_over_an_unbounded_window_wbm_scores_by_v_alone_and_elects_a():
    """RANGE UNBOUNDED (omega infinite): every later window holds each
    solution, so L is infinite and the score is V (4, 3 and 1 for a, c,
    d): a, whose solution leaves a window of width 5 after one more
    evaluation, now stays fresh the longest and is elected."""
    view = example()
    ev = Evaluation(NOW, math.inf, BETA, 1, random.Random(0), None, lambda key: INTERVALS[key[0]])
    assert rankers.remaining_life(view.entries[("a",)].needed, math.inf, BETA, NOW) == math.inf
    ranker = rankers.WBM()
    scores = ranker.scores(proposers.wsj(view, ev), ev)
    assert {n: scores[view.entries[(n,)].id] for n in "acd"} == {"a": 4, "c": 3, "d": 1}
    (elected,) = ranker.elect(proposers.wsj(view, ev), ev)
    assert elected.key == ("a",) and ranker.renew(elected, ev) == 12
