"""An event's time in the RDF formats: which triples give it, and the rules.

TriG, N-Quads and N-Triples (cep.io.trig, cep.io.nquads) time an event (a
named graph, or an N-Triples subject) by triples about it, RSP-QL's
timestamped graph `(n, p, t)`: an instant,

    G prov:generatedAtTime T .                       start = end = T

or an interval (RSP-QL, "Beyond time instants: intervals"),

    G prov:startedAtTime T1 . G prov:endedAtTime T2 .   start = T1, end = T2

with xsd:dateTime literals, or an interval given by a blank node, when an
interval predicate is named (the seed's other example):

    G :validBetween [ :startsAt T1 ; :endsAt T2 ] .   start = T1, end = T2

The predicates are a TimePredicates: PROV's by default, and no interval
predicate; others by name (`cep run --time-predicate IRI --start-predicate
IRI --end-predicate IRI --interval-predicate IRI`, the seed's own
`:startsAt`, `:endsAt` and `:validBetween` for instance). The rules, the
same for every format:

- a value repeated is one value (RDF graphs are sets of triples); two
  different values of one predicate refuse the event (two interval nodes
  are two intervals);
- an instant and an interval together (directly or through a node), one
  end of an interval alone, an interval that ends before it starts, a value
  that is not an xsd:dateTime literal, and no time at all refuse the event;
- an interval node is a blank node that gives its start and end itself: a
  node with an instant or an interval node of its own (a chain, or a cycle)
  refuses the event, and so does a node that gives the interval of two
  events (Timing: both, or the second when the first's time was decided
  in an earlier part of the input).

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
    # an event's link to a blank node that gives its start and end (RSP-QL's
    # `:validBetween`); none by default: PROV has no such predicate
    interval: str | None = None

    def __post_init__(self):
        if len(set(self.all)) < len(self.all):
            raise ValueError("the time predicates (instant, start, end, interval) must be different IRIs")

    @property
    def all(self) -> tuple[str, ...]:
        """The predicates whose triples are times, not events or metadata."""
        return (self.instant, self.start, self.end) + ((self.interval,) if self.interval else ())

    def label(self, predicate: str) -> str:
        """How messages name a time predicate: prov:x for PROV's, else <iri>."""
        return "prov:" + predicate[len(PROV) + 1:-1] if predicate.startswith("<" + PROV) else predicate


PROV_TIMES = TimePredicates()


def time_predicates(instant=None, start=None, end=None, interval=None) -> TimePredicates:
    """The TimePredicates named by the user (each an IRI, <iri> or bare;
    None keeps the default); ValueError with a message for a bad one."""
    named = {}
    for field, value, option in (("instant", instant, "--time-predicate"), ("start", start, "--start-predicate"),
                                 ("end", end, "--end-predicate"), ("interval", interval, "--interval-predicate")):
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


def interval(event: str, values: dict, times: TimePredicates = PROV_TIMES, what: str = "graph",
             node=None) -> tuple[int, int]:
    """(start, end) in ms of an event from the values of its time predicates
    (predicate -> list of N-Triples terms, repeats allowed); Invalid says
    why the event has no time. `what`: how messages name the event; `node`:
    a blank node -> the values of its time predicates (for an interval
    given through a node, times.interval)."""
    label = times.label
    subject = f"{what} {event}"
    found = _distinct(subject, values, times)
    instant, started, ended = found[times.instant], found[times.start], found[times.end]
    linked = found.get(times.interval)
    if linked:
        direct = [label(p) for p in (times.instant, times.start, times.end) if found[p]]
        if direct:
            raise Invalid(f"{subject} has both {label(times.interval)} and {'/'.join(direct)}; give an instant "
                          "or one interval, not both")
        return _through(subject, linked[0], node(linked[0]) if node else {}, times)
    if instant and (started or ended):
        raise Invalid(f"{subject} has both {label(times.instant)} and {label(times.start)}/"
                      f"{label(times.end)}; give an instant or an interval, not both")
    if instant:
        t = time_value(instant[0], label(times.instant), subject)
        return t, t
    if started or ended:
        return _ends(subject, started, ended, times)
    also = f" (or {label(times.start)} and {label(times.end)}" + (
        f", or {label(times.interval)} [ {label(times.start)} ...; {label(times.end)} ... ])"
        if times.interval else ")")
    raise Invalid(f"{subject} has no timestamp: add `{event} {label(times.instant)} "
                  f'"2026-01-01T00:00:00Z"^^xsd:dateTime .`{also} to the default graph')


def _distinct(subject: str, values: dict, times: TimePredicates) -> dict:
    """The values of each time predicate, a repeated value once; Invalid
    for two different values of one."""
    found = {p: list(dict.fromkeys(values.get(p, ()))) for p in times.all}  # a repeated value is one
    for p, given in found.items():
        if len(given) > 1:
            two = f" ({len(given)} intervals)" if p == times.interval else ""
            raise Invalid(f"{subject} has {len(given)} different {times.label(p)} values{two}; give exactly one")
    return found


def _ends(subject: str, started: list, ended: list, times: TimePredicates) -> tuple[int, int]:
    """(start, end) of an interval from its start and end values (one at most each)."""
    label = times.label
    if not (started and ended):
        have, lack = (times.start, times.end) if started else (times.end, times.start)
        raise Invalid(f"{subject} has {label(have)} but no {label(lack)}; an interval needs both")
    start = time_value(started[0], label(times.start), subject)
    end = time_value(ended[0], label(times.end), subject)
    if end < start:
        raise Invalid(f"{subject} ends ({label(times.end)} {terms.format_datetime_ms(end)}) before it "
                      f"starts ({label(times.start)} {terms.format_datetime_ms(start)})")
    return start, end


def _through(subject: str, node: str, values: dict, times: TimePredicates) -> tuple[int, int]:
    """(start, end) of an interval given by a node: its own start and end,
    nothing more (a node's link to another node is not followed: a chain,
    or a cycle, is refused)."""
    label = times.label
    link = label(times.interval)
    if not node.startswith("_:"):
        raise Invalid(f"{link} of {subject} is {node[:200]}, not a blank node giving "
                      f"{label(times.start)} and {label(times.end)}")
    of = f"the {link} node of {subject}"
    found = _distinct(of, values, times)
    if found[times.interval]:
        raise Invalid(f"{of} has a {link} of its own (a chain or a cycle); an interval node gives its "
                      f"{label(times.start)} and {label(times.end)} itself")
    if found[times.instant]:
        raise Invalid(f"{of} has {label(times.instant)}; an interval node gives {label(times.start)} "
                      f"and {label(times.end)}")
    if not (found[times.start] or found[times.end]):
        raise Invalid(f"{of} has no {label(times.start)} and no {label(times.end)}")
    return _ends(of, found[times.start], found[times.end], times)


def complete(values: dict, times: TimePredicates = PROV_TIMES, node=None) -> bool:
    """Whether the values found so far for an event decide its time (a
    reader that goes line by line waits until they do); `node` as for
    `interval`."""
    if values.get(times.instant) or values.get(times.start) and values.get(times.end):
        return True
    linked = values.get(times.interval) if times.interval else None
    if not linked:
        return False
    if len(set(linked)) > 1 or values.get(times.start) or values.get(times.end) or not linked[0].startswith("_:"):
        return True  # refused, whatever comes
    given = node(linked[0]) if node else {}
    return any(given.get(p) for p in (times.instant, times.interval)) or complete(given, times)


def time_value(term: str, label: str, subject: str) -> int:
    """The ms of a time predicate's value, an xsd:dateTime literal
    (`subject`: what it is the time of, in words)."""
    try:
        parts = terms.split(term)
    except terms.TermError as exc:
        raise Invalid(f"{label} of {subject}: {exc}") from None
    if parts[0] != "literal" or parts[2] not in (terms.XSD_DATETIME, XSD_DATETIMESTAMP):
        raise Invalid(f"{label} of {subject} is {term[:200]}, not an xsd:dateTime literal")
    try:
        ms = terms.parse_datetime_ms(parts[1])
    except terms.TermError as exc:
        raise Invalid(f"{label} of {subject}: {exc}") from None
    return check.in_range(ms, f"{label} of {subject}", parts[1].strip())


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
    where its time was looked for, when the input goes on). An interval
    node's triples (keyed by the node) come by the same rule, and decide
    the events linked to it; a node linked by two events refuses those whose
    time is not decided yet. A time stays known while its event is in the
    unit before; one no unit has touched since is forgotten: memory holds
    two units, not the input.

    A reader feeds each unit's time triples to `take`, then its content to
    `settle` with its own `make(content, outcome)`, which makes the events
    of the content whose key has a Time (start, end, and the place of the
    event's last time triple: its one record), refuses the
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
        touched = {}  # key -> its _Time, of the keys given a time triple in this unit
        for key, predicate, value, where in triples:
            known = self._known(key)
            if known.outcome is not None:
                if value not in known.values.get(predicate, ()):
                    self.rejects.append(Reject(where, f"{self.what} {key[:200]} has its time already; this "
                                                      f"{self.times.label(predicate)} is skipped",
                                               f"{key} {predicate} {value} ."))
                continue
            known.values.setdefault(predicate, []).append(value)
            known.where = where
            touched[key] = known
            if predicate == self.times.interval and value.startswith("_:"):
                linked = self._known(value)
                linked.owners = linked.owners | {key}
        for node in list(touched) if self.times.interval else ():  # a node's triples decide the events linked to it
            for key in touched[node].owners:
                if key not in touched and (known := self._touch(key)) is not None:
                    touched[key] = known
        for key, known in touched.items():  # half an interval waits: its other half may come
            if known.outcome is None and complete(known.values, self.times, self._node):
                known.outcome = self._interval(key, known.values)
                if isinstance(known.outcome, tuple):
                    known.outcome = Time(*known.outcome, known.where)

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

    def _known(self, key: str) -> "_Time":
        known = self._touch(key)
        if known is None:
            known = self.now[key] = _Time()
        return known

    def _node(self, node: str) -> dict:
        known = self._touch(node)
        return known.values if known is not None else {}

    def _touch(self, key: str):
        known = self.now.get(key)
        if known is None:
            known = self.before.pop(key, None)
            if known is not None:
                self.now[key] = known
        return known

    def _interval(self, key: str, values: dict):
        try:
            when = interval(key, values, self.times, self.what, self._node)
            (node,) = set(values.get(self.times.interval) or (None,))  # one, or interval() said why not
            known = self._touch(node) if node else None
            others = sorted(known.owners - {key}) if known is not None else ()
            if others:  # (the first keeps a node whose interval was decided in a part before)
                raise Invalid(f"{self.what} {key[:200]} shares its {self.times.label(self.times.interval)} "
                              f"node {node[:200]} with {self.what} {others[0][:200]}; a node gives the "
                              f"interval of one {self.what}")
            return when
        except Invalid as bad:
            return str(bad)


# why a time later in the input does not count (a reader holds two units)
FAR = ("; its time is looked for only in the part of the input that holds its triples and the next one "
       "(--batch-size statements or lines)")


class Time(NamedTuple):
    """A decided event time: start and end in ms, and the place of the
    event's last time triple when it was decided (the `where` given to
    Timing.take; an interval node's own triples do not count). An event is one record, as a
    graph is a set of triples: the line-based readers give this place as
    the source of each of its rows (cep.engine._records), so a line given
    twice in one event is one triple of it; a reject keeps its own place."""

    start: int
    end: int
    source: str


class _Time:
    """What the units read so far say of one event's time."""

    __slots__ = ("values", "outcome", "where", "owners")

    def __init__(self):
        self.values: dict = {}  # predicate -> [values], as given
        self.outcome = None  # a Time, or the reason its events are refused, once decided
        self.where = None  # the place of its last time triple
        self.owners = frozenset()  # of an interval node: the events linked to it
