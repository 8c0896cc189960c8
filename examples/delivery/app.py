"""The goods delivery system of the EP-SPARQL paper (section 6, "Test 3"):
delivery agents drive their rounds through a road network whose roads
close and reopen, and ask the dispatch rules (delivery.rq) the way at
every junction.

    cep demo delivery [--map FILE] [--agents N] [--locations 20] [--out DIR] [--engine local|spark]

Takes a road network (a Turtle file of network.py's vocabulary, or an
OpenStreetMap .osm file, or Milan's stop-list CSVs, converted on the fly)
and a scenario (scenario.py: generated from a seed, or read from a file);
writes to DIR:

    routes.jsonl    what a dispatcher follows, one JSON object per line:
                    "reroute", "no_route", "leg" (a delivery made, with its
                    route) and "done" (an agent's round is over)
    events.jsonl    the events the engine was given (requests and traffic),
                    in `cep run`'s input format: a replay log
    answers.jsonl   the engine's answers (hop, blocked, no_route)
    route.png       the network with one agent's rerouted leg (plot.py)
    map.ttl         the network, when it was converted from OSM or CSV

How an agent moves (a closed loop, so it runs on the in-process Engine):
at each node it sends a request (three triples: agent, here, destination)
at a whole second; the engine, whose background network already lost the
roads closed before that instant (update rules), answers with the `hop`
candidates (open roads from here whose end still reaches the destination),
the `blocked` ones (those the map has but the closures took away) or
`no_route`. The agent takes the candidate it has visited least on this leg,
then the one nearest the destination in a straight line; its *usual* hop is
chosen the same way from hop and blocked together (the choice it would
make on the map as built). When they differ, the agent is rerouted. After a
no_route it waits WAIT_S and asks again, and gives the delivery up after
MAX_WAITS tries. Driving a link takes its length at SPEED_M_S, in whole
seconds.

With --engine spark, the run's events.jsonl is then replayed through
cep.spark.detect on a batch DataFrame and its answers compared with the
in-process engine's: the same rules give the same answers on Spark.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from cep import terms
from cep.errors import CepError, UsageError
from examples.delivery.network import NS, Network, read_network
from examples.delivery.scenario import Scenario, Traffic, generate, read_scenario, write_scenario

HERE = Path(__file__).resolve().parent
RULES = HERE / "delivery.rq"
DEFAULT_MAP = HERE.parents[1] / "ontologies" / "city.ttl"
START_MS = terms.parse_datetime_ms("2026-03-02T08:00:00Z")  # a Monday morning
SPEED_M_S = 8.0  # about 30 km/h in town
WAIT_S = 60
MAX_WAITS = 30
QUERIES = ("hop", "blocked", "no_route")

AGENT, AT, TO, CLOSED, OPENED = (terms.iri(NS + p) for p in ("agent", "at", "to", "closed", "opened"))


@dataclass
class Agent:
    name: str
    depot: str
    stops: list[str]
    here: str = ""
    leg: int = 0  # index in stops of the current destination
    leg_start: int = 0  # ms from the start of the run
    route: list[str] = field(default_factory=list)
    visits: Counter = field(default_factory=Counter)
    reroutes: int = 0
    waits: int = 0
    requests: int = 0
    delivered: int = 0
    skipped: int = 0
    done: bool = False

    @property
    def dest(self) -> str:
        return self.stops[self.leg]


@dataclass
class Reply:
    """The engine's answers to one request."""

    hops: list[tuple[int, str]] = field(default_factory=list)  # (squared distance left, next node)
    blocked: list[tuple[int, str]] = field(default_factory=list)
    no_route: bool = False


@dataclass
class Result:
    records: list[dict]
    log: list[dict]  # the engine's input events, {"s", "p", "o", "t"}
    answers: set  # (query, start, end, ((var, term), ...))
    events: int = 0  # triples pushed to the engine
    requests: int = 0
    engine_s: float = 0.0  # time spent in the engine
    wall_s: float = 0.0
    state_bytes: int = 0


def answer_key(query, start, end, bindings) -> tuple:
    return (query, int(start), int(end), tuple(sorted(bindings)))


class Dispatcher:
    """The rules of delivery.rq in an in-process Engine, fed per instant."""

    def __init__(self, map_path):
        from cep.background.knowledge import load_background
        from cep.engine import Engine
        from cep.rules import parse_rules

        queries = parse_rules(RULES.read_text(encoding="utf-8"), str(RULES))
        self.engine = Engine(queries, background=load_background([Path(map_path)]))
        self.log: list[dict] = []
        self.answers: set = set()
        self.seconds = 0.0
        self.events = 0

    def ask(self, traffic: list[Traffic], requests: list[tuple[str, str, str, str]], t: int) -> dict:
        """Push the traffic events (each at its time, all before t) and the
        requests (request IRI, agent, here, destination) at t (ms from the
        start); returns {request IRI: Reply}."""
        from cep.events import Event

        events = [Event(terms.iri(ev.a), CLOSED if ev.kind == "closed" else OPENED, terms.iri(ev.b),
                        START_MS + ev.t, START_MS + ev.t) for ev in traffic]
        for req, agent, here, dest in requests:
            s = terms.iri(req)
            events += [Event(s, p, terms.iri(o), START_MS + t, START_MS + t)
                       for p, o in ((AGENT, NS + "agent/" + agent), (AT, here), (TO, dest))]
        self.log += [{"s": e.s, "p": e.p, "o": e.o, "t": e.start} for e in events]
        t0 = time.perf_counter()
        answers = self.engine.push(events) + self.engine.flush_table(final=False).to_list()
        self.seconds += time.perf_counter() - t0
        self.events += len(events)
        replies: dict[str, Reply] = defaultdict(Reply)
        for a in answers:
            self.answers.add(answer_key(a.query, a.start, a.end, a.bindings))
            b = dict(a.bindings)
            reply = replies[terms.split(b["request"])[1]]
            if a.query == "no_route":
                reply.no_route = True
            else:
                hop = (int(terms.split(b["left"])[1]), terms.split(b["next"])[1])
                (reply.hops if a.query == "hop" else reply.blocked).append(hop)
        return replies

    def state_bytes(self) -> int:
        return len(self.engine.state())


def choose(candidates, visits: Counter) -> str | None:
    """The node an agent takes: least visited on this leg (it does not go
    round in circles, and backs out of a dead end it has seen), then
    nearest the destination, then by name (a fixed order)."""
    if not candidates:
        return None
    return min(candidates, key=lambda c: (visits[c[1]], c[0], c[1]))[1]


def simulate(net: Network, map_path, scenario: Scenario) -> Result:
    """Run every agent's round to its end; returns what happened."""
    clock = time.perf_counter()
    dispatcher = Dispatcher(map_path)
    agents = []
    for name, (depot, stops) in scenario.rounds.items():
        agent = Agent(name, depot, list(stops), here=depot, route=[depot])
        agent.visits[depot] = 1
        agents.append(agent)
    due = {a.name: 0 for a in agents}  # the second of each agent's next request
    traffic, ti = scenario.traffic, 0
    records: list[dict] = []
    max_hops = 4 * max(len(net.nodes), 1)
    while any(not a.done for a in agents):
        now = min(due[a.name] for a in agents if not a.done)
        t = now * 1000
        start = ti
        while ti < len(traffic) and traffic[ti].t < t:
            ti += 1
        asking = [a for a in agents if not a.done and due[a.name] == now]
        requests = []
        for a in asking:
            a.requests += 1
            requests.append((f"{NS}request/{a.name}/{a.requests}", a.name, a.here, a.dest))
        replies = dispatcher.ask(traffic[start:ti], requests, t)
        for a, (req, *_) in zip(asking, requests):
            due[a.name] = now + _step(a, replies.get(req, Reply()), net, t, records, max_hops)
    result = Result(records, dispatcher.log, dispatcher.answers, dispatcher.events,
                    sum(a.requests for a in agents), dispatcher.seconds)
    result.state_bytes = dispatcher.state_bytes()
    result.wall_s = time.perf_counter() - clock
    return result


def _when(t: int) -> str:
    return terms.format_datetime_ms(START_MS + t)


def _step(a: Agent, reply: Reply, net: Network, t: int, records: list, max_hops: int) -> int:
    """The agent acts on its reply; returns the seconds until it asks again."""
    if reply.no_route or not reply.hops:
        if not reply.no_route:  # the rules answer every request one way or the other
            raise CepError(f"{a.name} at {a.here}: the engine gave neither a hop nor no_route")
        a.waits += 1
        records.append({"event": "no_route", "agent": a.name, "time": _when(t), "at": a.here,
                        "to": a.dest, "tries": a.waits})
        if a.waits < MAX_WAITS:
            return WAIT_S
        return _end_leg(a, t, records, "gave_up")
    via = choose(reply.hops, a.visits)
    usual = choose(reply.hops + reply.blocked, a.visits)
    if usual != via:
        a.reroutes += 1
        records.append({"event": "reroute", "agent": a.name, "time": _when(t), "at": a.here,
                        "to": a.dest, "usual": usual, "via": via,
                        "blocked": sorted(n for _, n in reply.blocked)})
    (x1, y1), (x2, y2) = net.nodes[a.here], net.nodes[via]
    drive = max(1, math.ceil(math.hypot(x2 - x1, y2 - y1) / SPEED_M_S))
    a.here = via
    a.route.append(via)
    a.visits[via] += 1
    if via == a.dest:
        return drive + _end_leg(a, t + drive * 1000, records, "arrived")
    if len(a.route) > max_hops:
        return drive + _end_leg(a, t + drive * 1000, records, "gave_up")
    return drive


def _end_leg(a: Agent, t: int, records: list, status: str) -> int:
    records.append({"event": "leg", "agent": a.name, "leg": a.leg + 1, "from": a.route[0], "to": a.dest,
                    "start": _when(a.leg_start), "end": _when(t), "status": status,
                    "hops": len(a.route) - 1, "reroutes": a.reroutes, "waits": a.waits, "route": a.route})
    if status == "arrived":
        a.delivered += 1
    else:
        a.skipped += 1
    a.leg += 1
    a.route, a.visits, a.reroutes, a.waits, a.leg_start = [a.here], Counter({a.here: 1}), 0, 0, t
    if a.leg == len(a.stops):
        a.done = True
        records.append({"event": "done", "agent": a.name, "delivered": a.delivered,
                        "skipped": a.skipped, "end": _when(t)})
    return 0  # a new leg asks at once (time spent at a location is not part of the test)


# ------------------------------------------------------------------ replay


def replay_spark(log: list[dict], map_path, spark=None) -> set:
    """The answers of delivery.rq over the logged events, computed by the
    Spark engine (cep.spark.detect on a batch DataFrame), as answer keys."""
    from pyspark.sql import functions as F

    from cep.spark import detect, spark_session

    spark = spark or spark_session()
    df = spark.createDataFrame([(e["s"], e["p"], e["o"], e["t"]) for e in log],
                               "s string, p string, o string, t long")
    out = detect(df, str(RULES), ontology=[str(map_path)])
    rows = (out.where("kind = 'answer'")
            .select("query", "bindings", F.unix_millis("start").alias("start"),
                    F.unix_millis("end").alias("end")).collect())
    bad = out.where("kind != 'answer'").count()
    if bad:
        raise CepError(f"the Spark replay set {bad} event(s) aside as late or rejected")
    return {answer_key(r.query, r.start, r.end, r.bindings.items()) for r in rows}


# -------------------------------------------------------------------- files


def load_map(path, out: Path) -> tuple[Network, Path]:
    """A network and the Turtle file the engine reads: a .ttl/.nt as is, an
    .osm (.bz2, .gz) or Milan stop-list CSVs (a .csv, or a folder of them)
    converted into out/map.ttl."""
    from examples.delivery import milan, osm

    path = Path(path)
    name = path.name.lower()
    if not path.exists():
        raise UsageError(f"{path}: no such map file")
    if path.is_dir() or name.endswith(".csv"):
        files = sorted(path.glob("*.csv")) if path.is_dir() else [path]
        if not files:
            raise UsageError(f"{path}: no stop-list .csv file in the folder")
        net = milan.read_milan(files)
        title = "Milan network converted from " + ", ".join(f.name for f in files)
    elif ".osm" in name:
        net = osm.read_osm(path)
        title = f"Road network converted from {path.name}. (c) OpenStreetMap contributors, ODbL 1.0."
    else:
        return read_network(path), path
    out.mkdir(parents=True, exist_ok=True)
    target = out / "map.ttl"
    target.write_text(net.to_turtle(title), encoding="utf-8")
    return net, target


def write_outputs(result: Result, out: Path):
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "routes.jsonl", "w", encoding="utf-8") as f:
        for rec in result.records:
            f.write(json.dumps(rec) + "\n")
    with open(out / "events.jsonl", "w", encoding="utf-8") as f:
        for ev in result.log:
            f.write(json.dumps(ev) + "\n")
    with open(out / "answers.jsonl", "w", encoding="utf-8") as f:
        for query, start, end, bindings in sorted(result.answers):
            f.write(json.dumps({"query": query, "bindings": {k: terms.to_json(v) for k, v in bindings},
                                "start": terms.format_datetime_ms(start),
                                "end": terms.format_datetime_ms(end)}) + "\n")


def peak_rss_mb() -> float | None:
    """The peak resident memory of this process (VmHWM), in MB; None where
    there is no /proc. Not getrusage's ru_maxrss: a process started by
    exec keeps its parent's when that is higher."""
    try:
        with open("/proc/self/status") as f:
            return round(int(next(line.split()[1] for line in f if line.startswith("VmHWM:"))) / 1024, 1)
    except (OSError, StopIteration):
        return None


def summary(result: Result) -> dict:
    legs = [r for r in result.records if r["event"] == "leg"]
    return {
        "agents": len({r["agent"] for r in legs}) or None,
        "legs": len(legs),
        "delivered": sum(r["status"] == "arrived" for r in legs),
        "gave_up": sum(r["status"] == "gave_up" for r in legs),
        "reroutes": sum(r["event"] == "reroute" for r in result.records),
        "no_route": sum(r["event"] == "no_route" for r in result.records),
        "requests": result.requests,
        "events": result.events,
        "answers": len(result.answers),
        "events_per_s": round(result.events / result.engine_s) if result.engine_s else None,
        "peak_rss_mb": peak_rss_mb(),
        "state_bytes": result.state_bytes,
    }


def add_arguments(ap: argparse.ArgumentParser):
    ap.add_argument("--map", default=str(DEFAULT_MAP), metavar="FILE",
                    help="road network: Turtle (default: the project's city, ontologies/city.ttl), "
                         "an OpenStreetMap .osm[.bz2|.gz] file, or Milan stop-list CSVs (a .csv or a folder)")
    ap.add_argument("--agents", type=int, default=3, metavar="N", help="delivery agents (default 3)")
    ap.add_argument("--locations", type=int, default=20, metavar="N",
                    help="locations each agent visits (default 20, as in the paper)")
    ap.add_argument("--seed", type=int, default=1, help="seed of the generated scenario (default 1)")
    ap.add_argument("--scenario", metavar="FILE",
                    help="read the scenario from FILE (scenario.py's JSON Lines) instead of generating it")
    ap.add_argument("--out", default="out/delivery", metavar="DIR",
                    help="where the outputs go (default out/delivery)")
    ap.add_argument("--engine", choices=("local", "spark"), default="local",
                    help="local: the in-process engine (default); spark: also replay the events on the "
                         "Spark engine and check that its answers are the same")
    ap.add_argument("--plot-agent", metavar="NAME", help="the agent drawn in route.png (default: the first "
                                                          "one rerouted)")


def run(args) -> int:
    """Run the demo for parsed arguments (add_arguments); returns the exit status."""
    out = Path(args.out)
    if args.agents < 1 or args.locations < 1:
        raise UsageError("--agents and --locations must be at least 1")
    net, map_ttl = load_map(args.map, out)
    if args.scenario:
        scenario = read_scenario(args.scenario, net)
    else:
        scenario = generate(net, agents=args.agents, locations=args.locations, seed=args.seed)
    out.mkdir(parents=True, exist_ok=True)
    write_scenario(scenario, out / "scenario.jsonl")
    say = lambda m: print(m, file=sys.stderr)  # noqa: E731
    say(f"map {map_ttl}: {len(net.nodes)} places, {len(net.segments())} road segments; "
        f"{len(scenario.rounds)} agent(s); up to {scenario.closed_share(len(net.segments())):.0%} "
        "of the segments closed at once")
    result = simulate(net, map_ttl, scenario)
    write_outputs(result, out)
    from examples.delivery.plot import plot_agent

    drawn = plot_agent(net, scenario, result.records, out / "route.png", agent=args.plot_agent)
    say(json.dumps(summary(result)))
    say(f"wrote {out}/routes.jsonl, events.jsonl, answers.jsonl, scenario.jsonl and route.png ({drawn})")
    if args.engine == "spark":
        say("replaying events.jsonl on the Spark engine ...")
        spark_answers = replay_spark(result.log, map_ttl)
        with open(out / "answers-spark.jsonl", "w", encoding="utf-8") as f:
            for query, start, end, bindings in sorted(spark_answers):
                f.write(json.dumps({"query": query, "bindings": dict(bindings), "start": start,
                                    "end": end}) + "\n")
        if spark_answers != result.answers:
            say(f"Spark's answers differ: {len(spark_answers - result.answers)} only on Spark, "
                f"{len(result.answers - spark_answers)} only in process")
            return 1
        say(f"Spark gave the same {len(spark_answers)} answers as the in-process engine")
    return 0


def main(argv) -> int:
    """`cep demo delivery ARGS`: parse the arguments and run the demo."""
    parser = argparse.ArgumentParser(prog="cep demo delivery", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(parser)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help (0) or a wrong option (2, message printed)
        return exc.code if isinstance(exc.code, int) else 2
    return run(args)


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except CepError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
