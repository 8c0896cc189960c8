"""Proposers (the seed's section 4.1 and 5.1): which entries of a view are
candidates for a refresh at an evaluation. Each takes the view and the
evaluation (cep.service.maintenance.Evaluation) and gives the candidates.

    WSJ  Window Service Join: the entries compatible with the current
         window's solutions (those a stream solution in the window needed)
    GNR  the whole view, whatever the query needs
    WST  none: the view is never refreshed (the lower bound)
    BST  gamma entries that are certainly stale among the window's, the
         least recently refreshed first (the upper bound; it reads the
         true change times: experiments only)
"""

from __future__ import annotations


def wsj(view, ev) -> list:
    return [e for e in view.entries.values() if e.needed is not None]


def gnr(view, ev) -> list:
    return list(view.entries.values())


def wst(view, ev) -> list:
    return []


def bst(view, ev) -> list:
    """The least recently refreshed first (choice: by any fixed order, the
    same entries would be refreshed again and again while others starve)."""
    stale = [e for e in wsj(view, ev) if ev.certainly_stale(e)]
    return sorted(stale, key=lambda e: (e.refreshed, e.id))[:ev.gamma]


PROPOSERS = {"WSJ": wsj, "GNR": gnr, "WST": wst, "BST": bst}
