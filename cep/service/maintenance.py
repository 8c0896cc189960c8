"""The maintenance process of the SERVICE views of one engine (the seed's
Figure 1: proposer, ranker, maintainer), run at each evaluation before the
rules join stream solutions with the views.

An evaluation of a SERVICE of a windowed query is at each of the window's
evaluation times (phase + k beta, its slide beta; in a query whose groups
have windows of their own, those of each leading group's window, the
query's evaluation times): the engine calls
before_windows() before it evaluates windows, so the view is maintained
for tau before the window at tau joins with it (cep/compile/services.py),
from the entries the window's solutions need. A SERVICE of a query
without a window is evaluated at each call of the rules (each push in
process: before_push()).

Faults (an endpoint down, slow past the timeout, an HTTP error, malformed
results): the evaluation answers from the view as it is and its report
says so (stale); the endpoint is tried again after 1, 2, 4, ... (at most
MAX_BACKOFF) evaluations; no evaluation waits longer than the timeout.
"""

from __future__ import annotations

import dataclasses
import json
import math
import random
import time
from dataclasses import dataclass
from typing import Optional

from cep.errors import EngineError, QueryError
from cep.service.endpoint import EndpointError
from cep.service.options import ALLOW_OPTION, ServiceOptions
from cep.service.proposers import PROPOSERS
from cep.service.rankers import RANKERS
from cep.service.view import View, service_specs

MAX_BACKOFF = 32  # evaluations


@dataclass
class Evaluation:
    """What a proposer and a ranker read at one evaluation of a view."""

    now: int
    omega: Optional[float]  # the window's width in ms, math.inf for an unbounded one; None: no window
    beta: int
    gamma: int
    rng: random.Random
    oracle: Optional[object] = None
    intervals: Optional[object] = None  # ServiceOptions.intervals

    def certainly_stale(self, entry) -> bool:
        """Whether the remote entry changed since it was last read (oracle)."""
        return any(entry.refreshed < t <= self.now for t in self.oracle(entry.key))

    def next_change(self, entry) -> int:
        later = [t for t in self.oracle(entry.key) if t > self.now]
        return later[0] if later else self.now + 1000 * self.beta * (1 << 20)


@dataclass
class Report:
    """The QoS of one evaluation of a SERVICE (docs/language.md, "SERVICE")."""

    time: int  # the evaluation time (event time, epoch ms)
    query: str
    endpoint: str
    candidates: int  # the entries the window's solutions need
    budget: int  # gamma at this evaluation
    refreshes: int  # requests that refreshed an entry (or pulled the whole view)
    latency: float  # seconds: the maintenance, then the rules' evaluation it preceded (seed, equation 2)
    freshness: float  # the share of the candidates not possibly stale after it
    stale: bool  # the endpoint failed (or is being backed off): answered from the view as it was
    error: Optional[str] = None
    keys: tuple = ()  # the join keys of the entries refreshed
    alert: bool = False  # the freshness fell below the run's alpha (seed, R4)


@dataclass
class _State:
    view: View
    options: ServiceOptions  # the run's, with its query's @service settings
    ranker: object
    propose: object
    rng: random.Random  # the engine's, or its own when its query's @service gives a seed
    last: Optional[int] = None  # the last evaluation time
    failures: int = 0
    skip: int = 0  # evaluations still backed off
    empty: bool = False  # the initial pull failed (SILENT): nothing in the view


def check_allowed(specs, options: Optional[ServiceOptions]):
    """A QueryError at the first SERVICE whose endpoint the run does not allow."""
    for spec in specs:
        if options is None or not options.allows(spec.endpoint):
            raise QueryError(f"SERVICE <{spec.endpoint}> is not in the run's allowed endpoints: allow it "
                             f"with {ALLOW_OPTION}", spec.op.pos)


class Services:
    """The views of an engine's SERVICE patterns and their maintenance."""

    def __init__(self, specs, module: str, options: ServiceOptions):
        self.options = options
        self.rng = random.Random(options.seed)
        self.reports: list[Report] = []
        self.refresh_s = None  # the mean seconds of one refresh request (rho -> gamma)
        self.query_s = 0.0  # the seconds of the last call of the rules (r^q)
        self._pending = []  # the reports of the evaluations the rules are about to make
        self.alerts: list[str] = []  # R4's alerts, said as they come (the engine's warnings)
        check_allowed(specs, options)
        self.states = [self._state(spec, module) for spec in specs]
        for state in self.states:
            self._initial_pull(state)

    def _state(self, spec, module: str) -> _State:
        """A view and the policy it is kept under: the run's, with the
        settings its query's @service gives."""
        try:
            options = self.options.for_query(spec.policy)
        except ValueError as e:
            raise QueryError(f"@service of {spec.query}: {e}", spec.op.pos) from None
        rng = random.Random(options.seed) if "seed" in spec.policy else self.rng
        keep = options.part(spec) if options.part is not None else None
        return _State(View(spec, module, keep=keep), options, RANKERS[options.ranker](), PROPOSERS[options.proposer],
                      rng)

    @classmethod
    def of(cls, plan, module: str, options: Optional[ServiceOptions]) -> Optional["Services"]:
        specs = service_specs(plan)
        if not specs:
            return None
        return cls(specs, module, options or ServiceOptions())

    @property
    def period(self) -> Optional[int]:
        """A period whose multiples are all the evaluation times of the
        windowed queries' SERVICEs, or None."""
        grids = [math.gcd(beta, phase) for s in self.states for beta, phase in s.view.spec.grids]
        return math.gcd(*grids) if grids else None

    def _initial_pull(self, state: _State):
        began = time.monotonic()
        try:
            self._note_refresh(state.view.pull(state.options.timeout, state.options.snapshot))
        except EndpointError as e:
            if not state.view.spec.op.silent:
                raise EngineError(f"{e} (the initial pull of its view; SERVICE SILENT would go on with "
                                  f"its empty solution until the endpoint answers)") from None
            state.empty, state.failures, state.skip = True, 1, 1
            state.view.silent_empty(True)
            self.reports.append(Report(0, state.view.spec.query, state.view.spec.endpoint, 0, 0, 0,
                                       time.monotonic() - began, 0.0, True, str(e)))

    def _note_refresh(self, seconds: Optional[float]):
        if seconds is None:  # no request made (a pull this process had made)
            return
        self.refresh_s = seconds if self.refresh_s is None else 0.8 * self.refresh_s + 0.2 * seconds

    def budget(self, o: ServiceOptions) -> int:
        """gamma, given or derived from rho: r^q + gamma * r <= rho (equation 2)."""
        if o.rho is None:
            return o.gamma if o.gamma is not None else 10
        if not self.refresh_s:
            return 0
        return max(0, int((o.rho - self.query_s) / self.refresh_s))

    def before_windows(self, until: int):
        """Before the windows evaluated at times before `until` report: the
        views of windowed queries maintained at the latest of their
        query's evaluation times before it (phase + k * slide of each
        window the query is evaluated by), once each."""
        for state in self.states:
            spec = state.view.spec
            if spec.window is not None:
                now = max(phase + (-(-(until - phase) // beta) - 1) * beta for beta, phase in spec.grids)
                if state.last is None or now > state.last:
                    self._evaluate(state, now)

    def before_push(self, end: int):
        """Before a call of the rules with events from `end` on: the views
        of queries without a window maintained, at `end`."""
        for state in self.states:
            if state.view.spec.window is None and (state.last is None or end > state.last):
                self._evaluate(state, end)

    def _evaluate(self, state: _State, now: int):
        view, spec, o = state.view, state.view.spec, state.options
        began = time.monotonic()
        for entry in view.entries.values():  # the first evaluation: the seed's initial best-before
            if entry.best_before is None:
                entry.best_before = entry.refreshed = entry.first = now
        omega, beta = spec.window if spec.window else (None, 1)
        # the entries needed by the solutions in the window (an unbounded one: every solution so far;
        # without a window: those found since the last evaluation)
        if omega is None:
            view.read_needed(state.last - 1 if state.last is not None else now - 1)
        else:  # (its window closed last at `now`: a group's may close at other times than its query's evaluations)
            close = spec.phase + (now - spec.phase) // beta * beta
            view.read_needed(None if omega == math.inf else close - omega)
        gamma = self.budget(o)
        ev = Evaluation(now, omega, beta, gamma, state.rng, o.oracle, o.intervals)
        refreshes, error, keys = 0, None, ()
        if state.skip:
            state.skip -= 1
            error = "backed off after a failure"
        elif state.empty or not o.view:
            refreshes, error = self._pull(state, now, began)
        else:
            refreshes, error, keys = self._refresh(state, ev, began)
        if error is not None and not error.startswith("backed off"):
            state.failures += 1
            state.skip = min(MAX_BACKOFF, 1 << (state.failures - 1))
        elif error is None:
            state.failures = 0
        needed = [e for e in view.entries.values() if e.needed is not None]
        fresh = sum(1 for e in needed if e.refreshed == now or e.best_before > now)
        report = Report(now, spec.query, spec.endpoint, len(needed), gamma, refreshes, time.monotonic() - began,
                        fresh / len(needed) if needed else 1.0, error is not None, error, keys)
        if o.alpha is not None and report.freshness < o.alpha:
            report.alert = True
            self.alerts.append(f"query {spec.query}, SERVICE <{spec.endpoint}> at {now} ms: estimated freshness "
                               f"{report.freshness:.2f} is below alpha {o.alpha:g} ({refreshes} refreshes of "
                               f"{len(needed)} candidates, budget {gamma}" + (f"; {error})" if error else ")"))
        self.reports.append(report)
        self._pending.append(report)
        state.last = now

    def _pull(self, state: _State, now: int, began: float):
        remaining = state.options.timeout - (time.monotonic() - began)
        try:
            self._note_refresh(state.view.pull(remaining))
        except EndpointError as e:
            return 0, self._said(e, state.options)
        for entry in state.view.entries.values():
            entry.refreshed = now
            if entry.best_before is None or entry.best_before <= now:
                entry.best_before = now + 1
            if entry.first is None:
                entry.first = now
        if state.empty:
            state.empty = False
            state.view.silent_empty(False)
        return 1, None

    def _refresh(self, state: _State, ev: Evaluation, began: float):
        """Proposer, ranker, maintainer (Algorithm 2, lines 9-13); stops at
        the first failure or when the timeout is spent."""
        view, timeout = state.view, state.options.timeout
        elected = state.ranker.elect(state.propose(view, ev), ev) if ev.gamma else []
        done, error = [], None
        for entry in elected[:ev.gamma]:
            remaining = timeout - (time.monotonic() - began)
            if remaining <= 0:
                error = f"SERVICE <{view.spec.endpoint}>: the timeout of {timeout:g} s was spent"
                break
            t0 = time.monotonic()
            try:
                rows = view.fetch(entry, remaining)
            except EndpointError as e:
                error = self._said(e, state.options)
                break
            self._note_refresh(time.monotonic() - t0)
            done.append((entry, rows))
        view.replace(done, ev.now)
        for entry, _ in done:
            entry.best_before = state.ranker.renew(entry, ev)
        return len(done), error, tuple(entry.key for entry, _ in done)

    def state(self) -> dict:
        """What maintenance knows, as JSON values: per view, the entries its
        stream solutions needed (View.state) and its evaluation state; the
        random generators' states (RND, WBM's ties)."""
        return {"rng": _rng_state(self.rng), "refresh_s": self.refresh_s, "query_s": self.query_s,
                "views": [{"last": s.last, "failures": s.failures, "skip": s.skip, "empty": s.empty,
                           "entries": s.view.state(), **({} if s.rng is self.rng else {"rng": _rng_state(s.rng)})}
                          for s in self.states]}

    def restore(self, saved: dict):
        """Continue from a state() of the views of the same rules."""
        _set_rng(self.rng, saved["rng"])
        self.refresh_s, self.query_s, self._pending = saved["refresh_s"], saved["query_s"], []
        for state, view in zip(self.states, saved["views"]):
            state.last, state.failures, state.skip = view["last"], view["failures"], view["skip"]
            if "rng" in view:
                _set_rng(state.rng, view["rng"])
            state.view.restore(view["entries"])
            state.empty = view["empty"] and not state.view.entries
            state.view.silent_empty(state.empty)

    @staticmethod
    def _said(e: EndpointError, options: ServiceOptions) -> str:
        """What went wrong; a timeout is the evaluation's (its requests share it)."""
        if e.kind == "timeout":
            return f"SERVICE <{e.endpoint}>: no answer within the timeout of {options.timeout:g} s"
        return str(e)

    def evaluated(self, seconds: float):
        """The rules' call after the maintenance took `seconds` (r^q): the
        latency of the evaluations just maintained, and rho's estimate."""
        self.query_s = seconds
        for report in self._pending:
            report.latency += seconds
        self._pending = []


def report_json(report: Report, **extra) -> str:
    """A Report as the JSON line `cep run --service-report` writes: its
    fields, as named above, and `extra` ones (on Spark: group, bucket)."""
    return json.dumps({**dataclasses.asdict(report), **extra})


class ReportLog:
    """`cep run --service-report FILE`: each evaluation's Report as a JSON
    object on a line of its own (report_json), written as the evaluations
    are made."""

    def __init__(self, path: str, services: Optional[Services]):
        self.file = open(path, "w", encoding="utf-8")
        self.services = services
        self.written = 0

    def write(self):
        """The reports of the evaluations made since the last call."""
        if self.services is None:  # the rules have no SERVICE: an empty log
            return
        reports = self.services.reports
        for report in reports[self.written:]:
            self.file.write(report_json(report) + "\n")
        self.written = len(reports)
        self.file.flush()

    def close(self):
        self.file.close()


def _rng_state(rng: random.Random) -> list:
    version, internal, gauss = rng.getstate()
    return [version, list(internal), gauss]


def _set_rng(rng: random.Random, saved: list):
    version, internal, gauss = saved
    rng.setstate((version, tuple(internal), gauss))
