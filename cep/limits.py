"""The limits that keep one input from exhausting the machine: each has a
default that ordinary rule sets never reach, is documented (README,
"Limits"; docs/language.md) and can be changed per run:
Engine(limits=...), cep.spark.detect(limits=...), and `cep run`'s options.

Reaching one is an error of the run (cep.errors.EngineError, exit 2) that
names the rules involved, raised before memory runs out; a window that
would pass a limit is refused when its query is compiled (QueryError).
"""

from __future__ import annotations

from dataclasses import dataclass

from cep.terms import MAX_TERM_BYTES

DERIVED = 100_000
DERIVED_VALUE_CHARS = MAX_TERM_BYTES  # the bound of an input term, in characters as Prolog counts them
WINDOW_EVALUATIONS = 10_000
PARTIAL_MATCHES = 250_000
# A partial match counts once per this many variables (rounded up): in
# SWI-Prolog's clause store one takes ~250 bytes with 3 variables, ~600
# with 32, ~3 KB with 300, so the limit bounds the memory one event's
# partial matches take whatever their width (about 200 MB)
MATCH_VARIABLES = 32


@dataclass(frozen=True)
class Limits:
    # triples that CONSTRUCT rules derive (and feed back) at one instant,
    # counted as they are derived, so one round that explodes stops too
    derived: int = DERIVED
    # characters of the N-Triples text of a value in a derived triple (a
    # cycle that doubles a string each round)
    derived_value_chars: int = DERIVED_VALUE_CHARS
    # evaluations of a time-based window that hold one instant: RANGE /
    # STEP (RANGE / COMPUTED EVERY when given); checked when compiling
    window_evaluations: int = WINDOW_EVALUATIONS
    # partial matches (solutions of a query's parts, stored to be joined
    # with later ones, or kept for a window's evaluation) that one event
    # makes, or one instant's end for each of its events (optional parts,
    # deadlines, derived triples), counted by size (MATCH_VARIABLES): the
    # matches of patterns that multiply with each event (patterns that
    # share no variable, a pattern repeated) stop here. Final answers are
    # not counted: they are bounded by Prolog's stacks.
    partial_matches: int = PARTIAL_MATCHES

    def __post_init__(self):
        for name in ("derived", "derived_value_chars", "window_evaluations", "partial_matches"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"Limits.{name} must be a positive integer, not {value!r}")
