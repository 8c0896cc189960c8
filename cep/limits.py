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
# each ~250 bytes (3 variables) to ~3 KB (300 variables) in SWI-Prolog's clause
# store: the product of 100 triple patterns stops at about 1 GB
PARTIAL_MATCHES = 250_000


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
    # makes, or one instant's end (optional parts, deadlines, derived
    # triples): the matches of patterns that multiply with each event
    # (patterns that share no variable, a pattern repeated) stop here.
    # Final answers are not counted: they are bounded by Prolog's stacks.
    partial_matches: int = PARTIAL_MATCHES

    def __post_init__(self):
        for name in ("derived", "derived_value_chars", "window_evaluations", "partial_matches"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"Limits.{name} must be a positive integer, not {value!r}")
