"""What flows into and out of the engine: timestamped triple occurrences and
answers. Terms are canonical N-Triples text (cep.terms); times are integer
epoch milliseconds (UTC)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import NamedTuple


@dataclass(frozen=True)
class Event:
    """A triple occurrence <<s, p, o>, start, end> of the paper (section 4.2)."""

    s: str
    p: str
    o: str
    start: int
    end: int
    source: str = field(default="", compare=False)  # "file:line", for reports
    # the IRI of the event's stream (N-Triples text, "<...>"); "": none, an
    # event of every stream. Two occurrences of one triple at one time in
    # two streams are two occurrences.
    stream: str = ""


class Answer(NamedTuple):
    """One answer of one query: a solution's projected binding (SELECT) or
    its instantiated template (CONSTRUCT), with the solution's interval.
    (A NamedTuple: runs make hundreds of thousands of these.)"""

    query: str
    start: int
    end: int
    bindings: tuple = ()  # SELECT: ((var name, N-Triples term), ...) sorted by name
    triples: tuple = ()  # CONSTRUCT: ((s, p, o), ...) in template order

    def binding(self, var: str):
        return dict(self.bindings).get(var)


@dataclass(frozen=True)
class Reject:
    """An input record that could not be read; the stream goes on without it."""

    source: str  # "file:line" (or "file:graph <iri>")
    reason: str
    text: str = ""

    def __post_init__(self):
        # a record that is not UTF-8 is shown with U+FFFD where its bytes
        # were, so that a reject can be written anywhere (a file, Arrow)
        for name in ("source", "reason", "text"):
            value = getattr(self, name)
            if isinstance(value, str) and _SURROGATE.search(value):
                object.__setattr__(self, name, _SURROGATE.sub("\ufffd", value))


_SURROGATE = re.compile("[\ud800-\udfff]")
