"""Rankers (the seed's section 4.2 and 5): which candidates are refreshed
(at most gamma of them), and each refreshed entry's new best-before time.

    RND   gamma candidates at random
    LRU   the gamma least recently refreshed (ties: the older entry)
    WBM   Window Based Maintenance (Algorithm 2): the possibly stale
          candidates (best-before tau <= now), scored min(L, V) and taken
          by decreasing score, ties at random:
            L = ceil((t_i + omega - now) / beta)   remaining life time (3),
                                                   infinite for RANGE UNBOUNDED
            tau_next = tau + k * I                 renewed best-before (4)
            V = ceil((tau_next - now) / beta)      evaluations it stays fresh
          I, the change interval, is the source's where it says it
          (ServiceOptions.intervals), else estimated from what the
          refreshes saw of the entry as a Poisson process's
          (estimated_interval), one slide before any refresh. tau is when the
          entry was last predicted to change, so the next change is
          tau + I (the seed's equation 4) unless that is past too: k is the
          least whole number of intervals that reaches past now (1 in the
          seed's example, where every tau is within an interval of now;
          without it an entry left stale for several intervals would get
          V <= 0 and never be chosen). A refreshed entry's tau becomes
          tau_next.
    WBM*  WBM with the true change times (experiments only): the truly
          stale candidates, tau_next the next true change.

Every ranker renews tau as WBM does (WBM* from the truth), so the
freshness a report estimates means the same whatever the ranker.
"""

from __future__ import annotations

import math


def remaining_life(needed: int, omega: float, beta: int, now: int) -> float:
    """L_i(t) (equation 3): the evaluations still to come that hold the
    stream solution that entered the window at `needed`; math.inf in a
    window of infinite width (RANGE UNBOUNDED: every later window holds
    it), where the score is then V alone."""
    if omega == math.inf:
        return math.inf
    return math.ceil((needed + omega - now) / beta)


def renewed_best_before(tau: int, interval: int, now: int) -> int:
    """tau_next (equation 4): the first predicted change after now."""
    return tau + interval * max(1, (now - tau) // interval + 1)


def fresh_evaluations(tau_next: int, now: int, beta: int) -> int:
    """V_i(t): the evaluations the entry stays (possibly) fresh if refreshed now."""
    return math.ceil((tau_next - now) / beta)


def change_interval(entry, ev) -> int:
    """I_i(t): as the source says it (ServiceOptions.intervals), or
    estimated from the entry's refreshes (see above)."""
    given = ev.intervals(entry.key) if ev.intervals is not None else None
    if given is not None:
        return max(1, int(given))
    return estimated_interval(entry, ev.beta)


def estimated_interval(entry, beta: int) -> int:
    """The mean time between changes of a Poisson process seen through n
    refreshes a mean gap d apart, c of which found a change:
    d / -ln(1 - p), p = c / (n + 1) (one more refresh assumed unchanged,
    so that p < 1). One slide before the first refresh."""
    if not entry.refreshes or entry.refreshed is None or entry.first is None or entry.refreshed <= entry.first:
        return beta
    gap = (entry.refreshed - entry.first) / entry.refreshes
    share = entry.changes / (entry.refreshes + 1)
    if share == 0:
        return max(1, int(entry.refreshed - entry.first) * 2)  # no change seen: at least twice what was watched
    return max(1, int(gap / -math.log(1 - share)))


def wbm_score(entry, ev, tau_next: int) -> int:
    """min(L, V) (equation 5); a candidate of a query without a window
    lives for this evaluation only (L = 1)."""
    life = remaining_life(entry.needed, ev.omega, ev.beta, ev.now) if ev.omega and entry.needed is not None else 1
    return min(life, fresh_evaluations(tau_next, ev.now, ev.beta))


class Ranker:
    def elect(self, candidates: list, ev) -> list:
        raise NotImplementedError

    def renew(self, entry, ev) -> int:
        """The best-before time of `entry` once refreshed at ev.now."""
        return renewed_best_before(entry.best_before, change_interval(entry, ev), ev.now)


class RND(Ranker):
    def elect(self, candidates, ev):
        ordered = sorted(candidates, key=lambda e: e.id)
        return ev.rng.sample(ordered, min(ev.gamma, len(ordered)))


class LRU(Ranker):
    def elect(self, candidates, ev):
        return sorted(candidates, key=lambda e: (e.refreshed, e.id))[:ev.gamma]


class WBM(Ranker):
    def possibly_stale(self, entry, ev) -> bool:
        return entry.best_before <= ev.now

    def next_best_before(self, entry, ev) -> int:
        return self.renew(entry, ev)

    def scores(self, candidates, ev) -> dict:
        """score_i(t) of each possibly stale candidate, by entry id."""
        return {e.id: wbm_score(e, ev, self.next_best_before(e, ev))
                for e in candidates if self.possibly_stale(e, ev)}

    def elect(self, candidates, ev):
        scores = self.scores(candidates, ev)
        stale = sorted((e for e in candidates if e.id in scores), key=lambda e: e.id)
        ev.rng.shuffle(stale)  # ties at random: the sort below is stable
        stale.sort(key=lambda e: -scores[e.id])
        return stale[:ev.gamma]


class WBMStar(WBM):
    def possibly_stale(self, entry, ev) -> bool:
        return ev.certainly_stale(entry)

    def next_best_before(self, entry, ev) -> int:
        return ev.next_change(entry)

    def renew(self, entry, ev) -> int:
        return ev.next_change(entry)


RANKERS = {"RND": RND, "LRU": LRU, "WBM": WBM, "WBM*": WBMStar}
