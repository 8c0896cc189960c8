"""The seed's synthetic data set (section 5): USERS users whose follower
counts change at a rate of their own (stable over time: a Poisson process
per user, or a periodic one), and a stream of mentions of them (users
drawn with a skewed popularity); seeded. The seed gives no distribution of
the rates: this one (a share STATIC of users that do not change during a
run, the others at rates spread evenly on a log scale between SLOWEST and
FASTEST) and the bench's window and mention rate were chosen so that, with
periodic changes, the bench reproduces the figures the seed does give: a
mean candidate set of 33 and an accuracy of 0.23 without refreshes
(bench/service.py prints how near it comes). And the loop that replays
it: the endpoint's counts changed by SPARQL 1.1 Update requests as the
stream's time passes, the mentions pushed minute by minute, each window
evaluated in turn."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

E = "http://example.org/"
MIN = 60_000
USERS = 400
STATIC = 0.2  # the share of users whose count does not change during a run
SLOWEST, FASTEST = 1 / 30, 1 / 2  # the others' changes per minute
PROCESSES = ("poisson", "periodic", "aligned")
# the data set's settings, those bench/service.py is calibrated with (see
# above) and the app replays: the one place they are set
PER_MINUTE = 14  # mentions per minute
PROCESS = "periodic"  # how a user's count changes at its rate
SKEW = 0.8  # the Zipf exponent of the users' popularity
NEVER = 2**62  # the change interval (ms) of a user that does not change


@dataclass
class Scenario:
    counts: dict  # user -> follower count at the start
    changes: dict  # user -> [(epoch ms, new count)], in time order
    mentions: dict  # minute -> [user], the users mentioned in it
    rates: dict  # user -> changes per minute (the process's, stable; 0: none)
    settings: str = ""  # what generate() was given, in words (the bench and the app print it)

    def change_times(self, key: tuple) -> list:
        """The true change times of a view entry (its key: the user's
        IRI): what BST and WBM* read, and no real run knows."""
        return self.times.get(key, [])

    def change_interval(self, key: tuple) -> int:
        """The mean time between changes of a view entry in ms, as a source
        that publishes its change rates would say it (WBM's I)."""
        rate = self.rates[int(key[0][len(E) + 2:-1])]
        return int(MIN / rate) if rate else NEVER

    def __post_init__(self):
        self.times = {(user(u),): [t for t, _ in cs] for u, cs in self.changes.items()}


def user(u: int) -> str:
    return f"<{E}u{u}>"


def generate(seed: int, minutes: int = 180, per_minute: int = PER_MINUTE, users: int = USERS,
             process: str = PROCESS, skew: float = SKEW) -> Scenario:
    """`process`: how each user's changes come, at its rate: "poisson"
    (at random, memoryless), "periodic" (every 1/rate minutes, from a
    random phase: the seed's "fixed change rate", read literally) or
    "aligned" (periodic from time 0, the first evaluation's: where WBM's
    best-before times, tau0 + k * I, fall on the true changes). `skew`:
    the Zipf exponent of the users' popularity (the i-th most mentioned
    user drawn with weight 1 / i^skew): how often the same users come
    back to the window (0: every user alike)."""
    if process not in PROCESSES:
        raise ValueError(f"unknown change process {process!r}: one of {', '.join(PROCESSES)}")
    rng = random.Random(seed)
    counts = {u: rng.randrange(1_000, 100_000) for u in range(users)}
    changes, rates = {}, {}
    for u in range(users):
        rate = 0.0 if rng.random() < STATIC else math.exp(rng.uniform(math.log(SLOWEST), math.log(FASTEST)))
        t, value, out = 0.0, counts[u], []
        rates[u] = rate
        if not rate:
            changes[u] = out
            continue
        if process == "periodic":
            t = rng.uniform(0, 1 / rate) - 1 / rate
        elif process == "aligned":
            t = 0.0
        while True:
            t += rng.expovariate(rate) if process == "poisson" else 1 / rate
            if t >= minutes:
                break
            value += rng.randrange(1, 500) if rng.random() < 0.7 else -rng.randrange(1, min(value, 500))
            out.append((int(t * MIN) + 1, value))
        changes[u] = out
    popularity = [1 / (i + 1) ** skew for i in range(users)]
    order = list(range(users))
    rng.shuffle(order)
    mentions = {m: [order[i] for i in rng.choices(range(users), popularity, k=per_minute)]
                for m in range(1, minutes + 1)}
    settings = f"{users} users ({process} changes), {per_minute} mentions a minute, popularity Zipf {skew:g}"
    return Scenario(counts, changes, mentions, rates, settings)


def load(server, counts: dict):
    """The endpoint's data made the counts (and nothing else)."""
    server.update("DELETE WHERE { ?s ?p ?o }")
    server.update("INSERT DATA { " + " . ".join(f"{user(u)} <{E}followers> {n}" for u, n in counts.items()) + " }")


def replay(server, queries, options, scenario: Scenario):
    """One run of `queries` over the scenario, the endpoint replayed from
    its start: (answers by evaluation minute, the QoS reports)."""
    from cep.engine import Engine
    from cep.events import Event

    load(server, scenario.counts)
    engine = Engine(queries, services=options)
    pending = sorted((t, u, v) for u, cs in scenario.changes.items() for t, v in cs)
    at, answers = 0, {}
    for minute, users in scenario.mentions.items():
        latest = {}
        while at < len(pending) and pending[at][0] <= minute * MIN:  # the endpoint as it is at this minute
            latest[pending[at][1]] = pending[at][2]
            at += 1
        if latest:
            rows = " ".join(f"({user(u)} {v})" for u, v in latest.items())
            server.update(f"DELETE {{ ?u <{E}followers> ?n }} INSERT {{ ?u <{E}followers> ?m }} "
                          f"WHERE {{ VALUES (?u ?m) {{ {rows} }} ?u <{E}followers> ?n }}")
        events = [Event(user(u), f"<{E}isMentionedIn>", f"<{E}post{minute}_{i}>", minute * MIN, minute * MIN)
                  for i, u in enumerate(users)]
        for a in engine.push(events) + engine.flush_table(final=False).to_list():
            answers.setdefault(a.end // MIN, set()).add(tuple(sorted(a.bindings)))
    return answers, engine.services.reports if engine.services else []


def accuracy(answers: dict, fresh: dict) -> list[float]:
    """Per evaluation (the minutes the fresh run evaluated), the share of
    the answer's rows that the answer over a fresh endpoint has too (seed,
    section 2); 1 for an evaluation that answered nothing."""
    out = []
    for minute in sorted(fresh):
        got = answers.get(minute, set())
        out.append(len(got & fresh[minute]) / len(got) if got else 1.0)
    return out
