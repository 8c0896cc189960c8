"""Delivery scenarios: agents with their rounds, and the traffic.

    scenario = generate(network, agents=10, locations=20, seed=1)
    write_scenario(scenario, "scenario.jsonl");  read_scenario("scenario.jsonl", network)

Takes a Network (network.py); returns a Scenario: per agent a depot and
the list of locations to visit (drawn from the network's largest strongly
connected component, so that each leg has a route on the map as built),
and traffic events, each closing or reopening a road segment at a time
(milliseconds from the start of the run).

Traffic comes in phases, as the paper's test does ("more than 50% of the
connections ... were inaccessible, so that the system needed to
recalculate the transitive closure frequently"): a normal phase closes
NORMAL_SHARE of the segments, a rush phase RUSH_SHARE (more than half);
each phase closes its own random choice over its first ten seconds, and
reopens it all over its last ten. Traffic events fall on half seconds and agents ask on whole
seconds, so no request shares an instant with a closure (a request sees
the closures made before it).

The file form is JSON Lines: a header {"scenario": 1, "seed": ...}, then
{"agent": NAME, "depot": IRI, "locations": [IRI, ...]} lines, then
{"t": MS, "closed": [A, B]} or {"t": MS, "opened": [A, B]} lines. Reading it
against a network reports an unknown node, or a segment the map does not
have, with the file and line.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path

from cep.errors import CepError
from examples.delivery.network import Network

NORMAL_SHARE = 0.15
RUSH_SHARE = 0.55
NORMAL_S = 600  # a normal phase lasts 10 minutes
RUSH_S = 240  # a rush phase 4 minutes
SPREAD_MS = 10_000  # a phase's closures come over its first 10 s, its reopenings over its last
HORIZON_S = 12 * 3600  # traffic is generated for 12 hours of simulated time


class ScenarioError(CepError):
    """A scenario file that cannot be used; the message starts with file:line."""


@dataclass(frozen=True)
class Traffic:
    t: int  # ms from the start of the run
    kind: str  # "closed" or "opened"
    a: str
    b: str


@dataclass
class Scenario:
    rounds: dict[str, tuple[str, list[str]]]  # agent -> (depot, locations)
    traffic: list[Traffic] = field(default_factory=list)
    seed: int | None = None

    def closed_share(self, segments: int) -> float:
        """The largest share of the network's segments closed at once."""
        closed, peak = set(), 0
        for ev in self.traffic:
            key = tuple(sorted((ev.a, ev.b)))
            (closed.add if ev.kind == "closed" else closed.discard)(key)
            peak = max(peak, len(closed))
        return peak / segments if segments else 0.0

    def closed_at(self, t: int) -> set[tuple[str, str]]:
        """The segments (a, b) closed just after time t (ms)."""
        closed = set()
        for ev in self.traffic:
            if ev.t > t:
                break
            key = tuple(sorted((ev.a, ev.b)))
            (closed.add if ev.kind == "closed" else closed.discard)(key)
        return closed


def generate(net: Network, agents: int = 1, locations: int = 20, seed: int = 1,
             horizon_s: int = HORIZON_S, rush_share: float = RUSH_SHARE,
             normal_share: float = NORMAL_SHARE) -> Scenario:
    rng = random.Random(seed)
    places = net.largest_component()
    if len(places) < 2:
        raise ScenarioError("the map has no two places that reach each other: no deliveries to plan")
    rounds = {}
    for k in range(1, agents + 1):
        depot = rng.choice(places)
        stops, here = [], depot
        for _ in range(locations):
            nxt = rng.choice([p for p in places if p != here])  # a delivery is elsewhere
            stops.append(nxt)
            here = nxt
        rounds[f"agent{k}"] = (depot, stops)
    segments = net.segments()
    traffic, t, rush = [], 0, False
    while t < horizon_s:
        length = RUSH_S if rush else NORMAL_S
        share = rush_share if rush else normal_share
        chosen = rng.sample(segments, round(share * len(segments)))
        for a, b in chosen:  # closing at the phase's start, on half seconds
            traffic.append(Traffic(t * 1000 + rng.randrange(0, SPREAD_MS, 1000) + 500, "closed", a, b))
        end = (t + length) * 1000 - SPREAD_MS  # all reopened before the next phase closes any
        for a, b in chosen:
            traffic.append(Traffic(end + rng.randrange(0, SPREAD_MS, 1000) + 500, "opened", a, b))
        t += length
        rush = not rush
    return Scenario(rounds, sorted(traffic, key=lambda e: (e.t, e.kind, e.a, e.b)), seed)


def write_scenario(scenario: Scenario, path):
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps({"scenario": 1, "seed": scenario.seed}) + "\n")
        for agent, (depot, stops) in scenario.rounds.items():
            f.write(json.dumps({"agent": agent, "depot": depot, "locations": stops}) + "\n")
        for ev in scenario.traffic:
            f.write(json.dumps({"t": ev.t, ev.kind: [ev.a, ev.b]}) + "\n")


def read_scenario(path, net: Network) -> Scenario:
    rounds, traffic, seed = {}, [], None
    segments = {tuple(sorted(link)) for link in net.links}
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ScenarioError(f"{path}: cannot read the scenario: {exc.strerror or exc}") from None
    for n, line in enumerate(text.splitlines(), 1):
        where = f"{path}:{n}"
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ScenarioError(f"{where}: not a JSON object: {exc.msg}") from None
        if not isinstance(rec, dict):
            raise ScenarioError(f"{where}: not a JSON object")
        if "scenario" in rec:
            seed = rec.get("seed")
        elif "agent" in rec:
            places = [rec.get("depot"), *rec.get("locations", [])]
            for place in places:
                if place not in net.nodes:
                    raise ScenarioError(f"{where}: unknown node {place!r}: the map has no such place")
            if len(places) < 2:
                raise ScenarioError(f"{where}: agent {rec['agent']!r} has no location to visit")
            rounds[str(rec["agent"])] = (places[0], places[1:])
        elif "t" in rec and ("closed" in rec or "opened" in rec):
            kind = "closed" if "closed" in rec else "opened"
            pair = rec[kind]
            if not (isinstance(pair, list) and len(pair) == 2):
                raise ScenarioError(f"{where}: {kind} needs a pair of nodes [A, B]")
            for place in pair:
                if place not in net.nodes:
                    raise ScenarioError(f"{where}: unknown node {place!r}: the map has no such place")
            if tuple(sorted(pair)) not in segments:
                raise ScenarioError(f"{where}: the map has no road between {pair[0]!r} and {pair[1]!r}")
            if not isinstance(rec["t"], int) or rec["t"] < 0:
                raise ScenarioError(f"{where}: t must be a whole number of milliseconds >= 0")
            traffic.append(Traffic(rec["t"], kind, pair[0], pair[1]))
        else:
            raise ScenarioError(f"{where}: expected a scenario header, an agent or a traffic event")
    if not rounds:
        raise ScenarioError(f"{path}: no agent in the scenario")
    return Scenario(rounds, sorted(traffic, key=lambda e: e.t), seed)
