"""How a run treats its SERVICE patterns (docs/language.md, "SERVICE"):
one setting for every SERVICE of the run, given as Engine(...,
services=ServiceOptions(...)) or by `cep run --service-allow ...
--service-policy ...`.

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
"""

from __future__ import annotations

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
    ranker: str = "WBM"
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
        `key=value,...` with keys view (on/off), proposer, ranker, gamma,
        rho, timeout, seed, alpha."""
        fields = {}
        for item in filter(None, (x.strip() for x in policy.split(","))):
            key, sep, value = item.partition("=")
            key, value = key.strip(), value.strip()
            if not sep or key not in ("view", "proposer", "ranker", "gamma", "rho", "timeout", "seed", "alpha"):
                raise ValueError(f"--service-policy {item!r}: expected key=value with key view, proposer, "
                                 f"ranker, gamma, rho, timeout, seed or alpha")
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
                raise ValueError(f"--service-policy {item!r}: not a value {key} takes") from None
        return cls(allow=tuple(allow), **fields)


def _origin(iri: str) -> str:
    m = re.match(r"(https?://[^/?#]+)", iri)
    return m.group(1) if m else iri
