"""An event's time in the RDF formats: which triples give it, and the rules.

TriG, N-Quads and N-Triples (cep.io.trig, cep.io.nquads) time an event (a
named graph, or an N-Triples subject) by triples about it, RSP-QL's
timestamped graph `(n, p, t)`: an instant,

    G prov:generatedAtTime T .                       start = end = T

or an interval (RSP-QL, "Beyond time instants: intervals"),

    G prov:startedAtTime T1 . G prov:endedAtTime T2 .   start = T1, end = T2

with xsd:dateTime literals. The three predicates are a TimePredicates:
PROV's by default, others by name (`cep run --time-predicate IRI
--start-predicate IRI --end-predicate IRI`, the seed's own `:startsAt` and
`:endsAt` for instance). The rules, the same for every format:

- a value repeated is one value (RDF graphs are sets of triples); two
  different values of one predicate refuse the event;
- an instant and an interval together, one end of an interval alone, an
  interval that ends before it starts, a value that is not an xsd:dateTime
  literal, and no time at all refuse the event.

`interval` applies them to the values found for one event; `Timing`, the
timing stage every RDF reader feeds, says where in the input an event's
time may come (its part of the input or the next one) and gives the
events of what has one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from cep import terms
from cep.events import Reject
from cep.io import check
from cep.io.check import Invalid

PROV = "http://www.w3.org/ns/prov#"
XSD_DATETIMESTAMP = terms.XSD + "dateTimeStamp"


@dataclass(frozen=True)
class TimePredicates:
    """The predicates (N-Triples text, <iri>) that give an event's time: an
    instant's, and an interval's start and end."""

    instant: str = terms.iri(PROV + "generatedAtTime")
    start: str = terms.iri(PROV + "startedAtTime")
    end: str = terms.iri(PROV + "endedAtTime")

    def __post_init__(self):
        if len({self.instant, self.start, self.end}) < 3:
            raise ValueError("the time predicates (instant, start, end) must be three different IRIs")

    @property
    def all(self) -> tuple[str, str, str]:
        return self.instant, self.start, self.end

    def label(self, predicate: str) -> str:
        """How messages name a time predicate: prov:x for PROV's, else <iri>."""
        return "prov:" + predicate[len(PROV) + 1:-1] if predicate.startswith("<" + PROV) else predicate


PROV_TIMES = TimePredicates()


def time_predicates(instant=None, start=None, end=None) -> TimePredicates:
    """The TimePredicates named by the user (each an IRI, <iri> or bare;
    None keeps PROV's); ValueError with a message for a bad one."""
    named = {}
    for field, value, option in (("instant", instant, "--time-predicate"), ("start", start, "--start-predicate"),
                                 ("end", end, "--end-predicate")):
        if value is None:
            continue
        try:
            named[field] = check.stream_iri(value) or None
        except Invalid:
            named[field] = None
        if named[field] is None:
            raise ValueError(f"{option} {value!r}: not an absolute IRI")
    try:
        return TimePredicates(**named)
    except ValueError as exc:
        raise ValueError(f"{exc} (given: {', '.join(f'{k} {v}' for k, v in named.items())})") from None


def interval(event: str, values: dict, times: TimePredicates = PROV_TIMES, what: str = "graph") -> tuple[int, int]:
    """(start, end) in ms of an event from the values of its time predicates
    (predicate -> list of N-Triples terms, repeats allowed); Invalid says
    why the event has no time. `what`: how messages name the event."""
    label = times.label
    found = {p: list(dict.fromkeys(values.get(p, ()))) for p in times.all}  # a repeated value is one
    for p, given in found.items():
        if len(given) > 1:
            raise Invalid(f"{what} {event} has {len(given)} different {label(p)} values; give exactly one")
    instant, started, ended = (found[p] for p in times.all)
    if instant and (started or ended):
        raise Invalid(f"{what} {event} has both {label(times.instant)} and {label(times.start)}/"
                      f"{label(times.end)}; give an instant or an interval, not both")
    if instant:
        t = time_value(event, instant[0], label(times.instant), what)
        return t, t
    if started and ended:
        start = time_value(event, started[0], label(times.start), what)
        end = time_value(event, ended[0], label(times.end), what)
        if end < start:
            raise Invalid(f"{what} {event} ends ({label(times.end)} {terms.format_datetime_ms(end)}) before it "
                          f"starts ({label(times.start)} {terms.format_datetime_ms(start)})")
        return start, end
    if started or ended:
        have, lack = (times.start, times.end) if started else (times.end, times.start)
        raise Invalid(f"{what} {event} has {label(have)} but no {label(lack)}; an interval needs both")
    raise Invalid(f"{what} {event} has no timestamp: add `{event} {label(times.instant)} "
                  f'"2026-01-01T00:00:00Z"^^xsd:dateTime .` (or {label(times.start)} and {label(times.end)}) '
                  "to the default graph")


def complete(values: dict, times: TimePredicates = PROV_TIMES) -> bool:
    """Whether the values found so far for an event decide its time (a
    reader that goes line by line waits until they do)."""
    return bool(values.get(times.instant)) or bool(values.get(times.start)) and bool(values.get(times.end))


def time_value(event: str, term: str, label: str, what: str = "graph") -> int:
    """The ms of a time predicate's value, an xsd:dateTime literal."""
    try:
        parts = terms.split(term)
    except terms.TermError as exc:
        raise Invalid(f"{label} of {what} {event}: {exc}") from None
    if parts[0] != "literal" or parts[2] not in (terms.XSD_DATETIME, XSD_DATETIMESTAMP):
        raise Invalid(f"{label} of {what} {event} is {term[:200]}, not an xsd:dateTime literal")
    try:
        ms = terms.parse_datetime_ms(parts[1])
    except terms.TermError as exc:
        raise Invalid(f"{label} of {what} {event}: {exc}") from None
    return check.in_range(ms, f"{label} of {what} {event}", parts[1].strip())


class Timing:
    """The timing stage of the RDF readers: the times of one input's events,
    as a reader finds them unit by unit (TriG: a window of statements; N-Quads
    and N-Triples: a chunk of lines), and the events of what has one.

    The rule: an event's time (its triples about it, keyed by the event: a
    graph's name, an N-Triples subject) may come in the unit of the event's
    content or the next one. What a unit says about an event's time is read
    whole, by `interval`'s rules; once the time is decided, a later time
    triple with another value is a Reject of its own (one that repeats a value
    is nothing). Content whose time has not come by the end of the next unit
    (or of the input) is refused with the reason `interval` gives (and FAR,
    where its time was looked for, when the input goes on). A time
    stays known while its event is in the unit before; one no unit has
    touched since is forgotten: memory holds two units, not the input.

    A reader feeds each unit's time triples to `take`, then its content to
    `settle` with its own `make(content, outcome)`, which makes the events
    of the content whose key has a Time (start, end, and the place of the
    time triple that decided it: the event's one record), refuses the
    content whose key has a reason, and gives back the content that waits
    (outcome None)."""

    def __init__(self, rejects: list, times: TimePredicates = PROV_TIMES, what: str = "graph"):
        self.rejects, self.times, self.what = rejects, times, what
        self.now: dict = {}  # key -> _Time, of the keys this unit touched
        self.before: dict = {}  # ... and of those the unit before touched
        self.waiting = None  # the content of the unit before whose time had not come

    def take(self, triples) -> None:
        """This unit's time triples: (key, predicate, value, where) each,
        `where` the place a Reject of the triple names, and the source of
        the events whose time it decides (Time.source)."""
        touched = {}  # key -> (its _Time, the place of its last time triple in this unit)
        for key, predicate, value, where in triples:
            known = self._touch(key)
            if known is None:
                known = self.now[key] = _Time()
            elif known.outcome is not None:
                if value not in known.values.get(predicate, ()):
                    self.rejects.append(Reject(where, f"{self.what} {key[:200]} has its time already; this "
                                                      f"{self.times.label(predicate)} is skipped",
                                               f"{key} {predicate} {value} ."))
                continue
            known.values.setdefault(predicate, []).append(value)
            touched[key] = known, where
        for key, (known, where) in touched.items():
            if complete(known.values, self.times):  # half an interval: its other half may come
                known.outcome = self._interval(key, known.values)
                if isinstance(known.outcome, tuple):
                    known.outcome = Time(*known.outcome, where)

    def settle(self, content, make, last: bool) -> list:
        """The events of this unit's content and of the content waiting from
        the unit before (the reader's make gives them, a table each), then
        the next unit begins. `last`: the end of the input."""
        made = []
        if self.waiting is not None:  # its time had its unit and the next
            made.append(make(self.waiting, lambda key: self.outcome(key, final=True, far=not last))[0])
        events, self.waiting = make(content, lambda key: self.outcome(key, final=last))
        made.append(events)
        self.before, self.now = self.now, {}
        return made

    def timed(self) -> set:
        """The keys given a time triple in this unit or the one before."""
        return self.now.keys() | self.before.keys()

    def outcome(self, key: str, final: bool, far: bool = False):
        """The Time of the key's events, the reason they are
        refused, or None while its time may still come (never when `final`;
        `far`: the input goes on, but beyond the units the time may come in)."""
        known = self._touch(key)
        if known is not None and known.outcome is not None:
            return known.outcome
        if not final:
            return None
        reason = self._interval(key, known.values if known is not None else {})
        return reason + FAR if far else reason

    def _touch(self, key: str):
        known = self.now.get(key)
        if known is None:
            known = self.before.pop(key, None)
            if known is not None:
                self.now[key] = known
        return known

    def _interval(self, key: str, values: dict):
        try:
            return interval(key, values, self.times, self.what)
        except Invalid as bad:
            return str(bad)


# why a time later in the input does not count (a reader holds two units)
FAR = ("; its time is looked for only in the part of the input that holds its triples and the next one "
       "(--batch-size statements or lines)")


class Time(NamedTuple):
    """A decided event time: start and end in ms, and the place of the time
    triple that decided it (the `where` given to Timing.take; of a unit's
    time triples about the event, the last). An event is one record, as a
    graph is a set of triples: the line-based readers give this place as
    the source of each of its rows (cep.engine._records), so a line given
    twice in one event is one triple of it; a reject keeps its own place."""

    start: int
    end: int
    source: str


class _Time:
    """What the units read so far say of one event's time."""

    __slots__ = ("values", "outcome")

    def __init__(self):
        self.values: dict = {}  # predicate -> [values], as given
        self.outcome = None  # a Time, or the reason its events are refused, once decided
