"""How a run treats its SERVICE patterns (docs/language.md, "SERVICE"):
the run's settings, given as Engine(..., services=ServiceOptions(...)) or
by `cep run --service-allow ... --service-policy ...`; a query's
`@service key=value,...` annotation replaces the policy's keys it names
for that query's SERVICE patterns (ServiceOptions.for_query), never the
allow-list.

- allow: the endpoints the queries may call. An entry is an endpoint IRI
  (that endpoint) or an origin, `http://host:port` (every endpoint there).
  Default none: a query that names another endpoint is refused before
  anything is sent, with an error that names the option.
- view: keep a local view of each SERVICE pattern (pulled at the start,
  refreshed under the budget; default), or not (each evaluation sends the
  pattern to the endpoint and reads its whole answer).
- proposer, ranker: the seed's names (cep.service.proposers, rankers).
- gamma: refreshes per evaluation, or rho: a latency bound per evaluation
  in seconds, from which gamma is derived (seed, equation 2).
- timeout: seconds an evaluation may wait for its endpoints, all its
  requests together (the initial pull has its own, the same).
- seed: of the random choices (RND, WBM's ties).
- alpha: the least estimated freshness the user accepts (the seed's alpha,
  requirement R4): an evaluation whose estimate falls below it is flagged
  in its report (alert) and said as a warning of the engine.
- intervals: the mean time between changes of each entry, where the
  source publishes it (WBM's I); default: estimated from the refreshes.
- oracle: for experiments only, the true change times of the remote data
  (BST and WBM* read them).
- snapshot: a name for the run's initial pull, set by the Spark driver
  (cep.spark.plan): the engines of one worker process with the same
  snapshot share one download of each SERVICE pattern (cep.service.view,
  View.pull), so a worker serving many groups pulls once. None (in
  process): each engine pulls its own.
- part: which entries of each view an engine holds: part(view spec) gives
  keep(key) -> bool, or None for all; set by the Spark worker for its
  group (cep.spark.worker.view_part: the keys of its bucket). The initial
  pull stores those alone, so a group loads the part of the view its keys
  need and no more. None (in process): every entry.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Callable, Optional

PROPOSERS = ("WSJ", "GNR", "WST", "BST")
RANKERS = ("RND", "LRU", "WBM", "WBM*")
DEFAULT_GAMMA = 10
DEFAULT_TIMEOUT_S = 5.0
ALLOW_OPTION = "--service-allow (Engine(services=ServiceOptions(allow=[...])))"


@dataclass(frozen=True)
class ServiceOptions:
    allow: tuple = ()
    view: bool = True
    proposer: str = "WSJ"
    # LRU: without the entries' change rates (intervals), WBM's estimates
    # of them make it no better than LRU in bench/service.py's experiments
    # (level at low budgets, behind at 30%)
    ranker: str = "LRU"
    gamma: Optional[int] = None
    rho: Optional[float] = None
    timeout: float = DEFAULT_TIMEOUT_S
    seed: int = 0
    alpha: Optional[float] = None
    # key (tuple of N-Triples terms) -> sorted epoch ms at which the remote
    # entry changes: what BST and WBM* know and no real run does
    oracle: Optional[Callable] = field(default=None, compare=False)
    # key -> the mean time between changes of the remote entry in ms (or
    # None), where the source says it: WBM's change interval I; default:
    # estimated from what the refreshes saw
    intervals: Optional[Callable] = field(default=None, compare=False)
    snapshot: Optional[str] = None
    part: Optional[Callable] = field(default=None, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "allow", tuple(self.allow))
        if self.proposer not in PROPOSERS:
            raise ValueError(f"unknown SERVICE proposer {self.proposer!r}: one of {', '.join(PROPOSERS)}")
        if self.ranker not in RANKERS:
            raise ValueError(f"unknown SERVICE ranker {self.ranker!r}: one of {', '.join(RANKERS)}")
        if self.gamma is not None and self.rho is not None:
            raise ValueError("give the refresh budget gamma or the latency bound rho, not both")
        if self.gamma is not None and self.gamma < 0 or self.rho is not None and self.rho <= 0:
            raise ValueError("gamma is a number of refreshes (0 or more), rho a positive number of seconds")
        if self.alpha is not None and not 0 <= self.alpha <= 1:
            raise ValueError("alpha is the least estimated freshness accepted, a number from 0 to 1")
        if not self.timeout > 0:
            raise ValueError("the SERVICE timeout is a positive number of seconds")
        if (self.proposer == "BST" or self.ranker == "WBM*") and self.oracle is None:
            raise ValueError("BST and WBM* read the true change times of the remote data (oracle=...): "
                             "they are bounds for experiments, not policies a run can use")
        for entry in self.allow:
            if not re.match(r"https?://[^/?#\s]+", entry):
                raise ValueError(f"--service-allow {entry!r}: an endpoint IRI or an origin, http://host:port")

    def allows(self, endpoint: str) -> bool:
        for entry in self.allow:
            if endpoint == entry or _origin(endpoint) == entry.rstrip("/"):
                return True
        return False

    @classmethod
    def parse(cls, allow=(), policy: str = "") -> "ServiceOptions":
        """The options of `cep run`: the allow-list, and a policy text
        `key=value,...` (policy_fields)."""
        return cls(allow=tuple(allow), **policy_fields(policy, "--service-policy"))

    def for_query(self, fields: dict) -> "ServiceOptions":
        """These options with a query's own settings (its `@service`
        annotation, policy_fields) in place of the run's: a query's gamma
        replaces the run's rho and the other way round. The allow-list
        stays the run's: a query cannot widen it."""
        if "gamma" in fields:
            fields = {"rho": None, **fields}
        if "rho" in fields:
            fields = {"gamma": None, **fields}
        return dataclasses.replace(self, **fields)


POLICY_KEYS = ("view", "proposer", "ranker", "gamma", "rho", "timeout", "seed", "alpha")


def policy_fields(policy: str, where: str) -> dict:
    """A policy text `key=value,...` (keys view on/off, proposer, ranker,
    gamma, rho, timeout, seed, alpha) as ServiceOptions fields; ValueError, naming
    `where` (the option or annotation that gave it), for what is not one."""
    fields = {}
    for item in filter(None, (x.strip() for x in policy.split(","))):
        key, sep, value = item.partition("=")
        key, value = key.strip(), value.strip()
        if not sep or key not in POLICY_KEYS:
            raise ValueError(f"{where} {item!r}: expected key=value with key view, proposer, "
                             f"ranker, gamma, rho, timeout, seed or alpha")
        if key in fields:
            raise ValueError(f"{where} {item!r}: {key} is given twice")
        try:
            if key == "view":
                if value not in ("on", "off"):
                    raise ValueError
                fields[key] = value == "on"
            elif key in ("proposer", "ranker"):
                fields[key] = value.upper()
            elif key in ("gamma", "seed"):
                fields[key] = int(value)
            else:
                fields[key] = float(value)
        except ValueError:
            raise ValueError(f"{where} {item!r}: not a value {key} takes") from None
    if fields.get("proposer", PROPOSERS[0]) not in PROPOSERS:
        raise ValueError(f"{where}: unknown SERVICE proposer {fields['proposer']!r}: one of {', '.join(PROPOSERS)}")
    if fields.get("ranker", RANKERS[0]) not in RANKERS:
        raise ValueError(f"{where}: unknown SERVICE ranker {fields['ranker']!r}: one of {', '.join(RANKERS)}")
    if "gamma" in fields and "rho" in fields:
        raise ValueError(f"{where}: give the refresh budget gamma or the latency bound rho, not both")
    if fields.get("gamma", 0) < 0 or fields.get("rho", 1) <= 0 or fields.get("timeout", 1) <= 0:
        raise ValueError(f"{where}: gamma is a number of refreshes (0 or more), rho and timeout positive "
                         f"numbers of seconds")
    return fields


def _origin(iri: str) -> str:
    m = re.match(r"(https?://[^/?#]+)", iri)
    return m.group(1) if m else iri
