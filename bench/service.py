"""The seed's experiments (Dehghanzadeh et al., "Approximate Continuous Query
Answering Over Streams and Dynamic Linked Data Sets", ICWE 2015, section 5)
on its synthetic data set, built here as the seed describes it: 400 users
whose follower counts (the background, at a real SPARQL endpoint: Oxigraph,
on the loopback interface) change at a rate of their own, stable over time
(periodic: the seed's "fixed change rate"), and a stream of mentions of
them (3 hours); a query that joins the window's mentions with the follower
counts (SERVICE), evaluated every minute. What the seed leaves open (the
distribution of the rates, the window's width, the mentions per minute)
is set so that the figures it does give come out: a mean candidate set of
33 (budgets 3, 5, 10) and 0.23 without refreshes (NOTES). How often the
same users come back to the window, which the seed's real stream decides
and does not publish, has two knobs: --range (the evaluations a mention
keeps its user a candidate; --per-minute keeps the candidate set at 33)
and --skew (the users' popularity). The defaults (3 minutes, 14 mentions
a minute) are the setting that brings every figure within 0.05 of the
seed's synthetic columns with its orderings kept (NOTES: the sweep).

    python bench/service.py                 # seeded; figures and plots in out/bench_service
    python bench/service.py --seed 7 --minutes 120
    python bench/service.py --changes aligned   # or poisson: other change processes (NOTES)
    python bench/service.py --range 5 --per-minute 8   # users stay 5 evaluations (NOTES: the sweep)

Accuracy (seed, section 2): at each evaluation, the share of the answer's
rows (user, follower count) that the answer over a fresh endpoint has too
(the same query with view=off, which reads the endpoint at every
evaluation), averaged over the evaluations. Table 1: the proposers (WST,
GNR and WSJ with RND and LRU, BST); Table 2: the rankers with WSJ (RND,
LRU, WBM, WBM*); at budgets of 8%, 15% and 30% of the mean candidate set
(the WSJ candidates: the users in the window), printed beside the seed's
synthetic column. WBM's change interval I is each user's rate, as the seed
estimates it on its synthetic data ("using the change rate value of the
element"); WBM with I estimated from its own refreshes (no rates given, as
a run over an endpoint that publishes none) is printed beside. Also the
cumulative error per policy (Figures 3 and 4), the latency of an
evaluation against its refreshes (printed and plotted), and the
throughput of the query with its view against the same query with its
background given locally.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from examples.influencers.scenario import PER_MINUTE, PROCESS, PROCESSES, SKEW  # noqa: E402 (after the path)

# the seed's Tables 1 and 2, synthetic columns, by budget
SEED_TABLE1 = {"8%": dict(WST=0.23, GNR_RND=0.26, GNR_LRU=0.27, WSJ_RND=0.40, WSJ_LRU=0.38, BST=0.49),
               "15%": dict(WST=0.23, GNR_RND=0.26, GNR_LRU=0.28, WSJ_RND=0.48, WSJ_LRU=0.51, BST=0.66),
               "30%": dict(WST=0.23, GNR_RND=0.32, GNR_LRU=0.33, WSJ_RND=0.64, WSJ_LRU=0.76, BST=0.94)}
SEED_TABLE2 = {"8%": dict(WST=0.23, WSJ_RND=0.39, WSJ_LRU=0.38, WSJ_WBM=0.46, WSJ_WBMstar=0.52),
               "15%": dict(WST=0.23, WSJ_RND=0.49, WSJ_LRU=0.50, WSJ_WBM=0.60, WSJ_WBMstar=0.71),
               "30%": dict(WST=0.23, WSJ_RND=0.64, WSJ_LRU=0.76, WSJ_WBM=0.81, WSJ_WBMstar=0.94)}
# why ours differ from the seed's, measured (printed after the tables)
NOTES = """\
notes (seed = the seed's synthetic column):
- The seed draws its mentions from 3 hours of real tweets about 400 users and
  gives no distribution of the change rates; it gives the mean candidate set
  (33) and WST (0.23). Ours: 14 mentions a minute (popularity Zipf 0.8), a
  window of 3 minutes (the seed's experiments give only the 60 s slide; its
  Listing 1.1's 200 minutes would hold the whole 3-hour run: nothing leaves
  the window, the candidate set only grows and every L is 20 or more), 20% of
  users unchanged, the others every 2 to 30 minutes (log-uniform), periodic.
  --changes poisson keeps the rates and draws the changes at random.
- How often the same users come back to the window (what the seed's real
  stream decides and does not publish) is what LRU and the oracles (BST,
  WBM*) gain from: a refreshed user stays fresh in each later evaluation it
  is a candidate in. Measured, seed 1, periodic (LRU / BST / WBM* at 8%, 15%,
  30%; seed 0.38 0.51 0.76 / 0.49 0.66 0.94 / 0.52 0.71 0.94):
  * by popularity (--skew, window 5 min, --per-minute set for 33 candidates):
    skew 0 (7/min): 0.46 0.62 0.79 / 0.53 0.73 0.99 / 0.65 0.82 0.99;
    skew 0.8 (8/min): 0.45 0.61 0.78 / 0.53 0.74 0.99 / 0.65 0.83 0.99;
    skew 1.2 (14/min): 0.46 0.61 0.78 / 0.55 0.76 0.99 / 0.68 0.85 0.99.
    Within 0.03 of each other: a user's return after it left the window
    rarely finds it fresh (it changes every 2 to 30 minutes).
  * by the evaluations a mention keeps its user a candidate (--range, with
    --per-minute for 33 candidates; skew 0.8): 5 min (8/min): as above;
    4 min (10/min): 0.43 0.58 0.80 / 0.50 0.69 0.98 / 0.61 0.79 0.98;
    3 min (14/min): 0.41 0.53 0.80 / 0.46 0.62 0.96 / 0.55 0.73 0.97.
    Fewer evaluations per stay mean more new, likely stale candidates per
    evaluation (about 11 against 7), fewer later evaluations for a refresh
    to pay off in: the figures fall toward the seed's. At 3 minutes every
    figure is within 0.05 of the seed's and its orderings hold (WSJ over GNR
    at every budget; WBM over RND and LRU at every budget), so it is the
    default; WST, GNR and WSJ+RND moved by 0.03 at most. With --seed 2 the
    orderings hold and three figures are 0.06 to 0.07 above the seed's (LRU
    0.83 at 30%, WBM* 0.59 and 0.77 at 8% and 15%): between seeds of this
    data set a figure moves by up to about 0.04.
- Accuracy as the seed's section 2 defines it: per evaluation, the share of
  the answer's rows (user, count) that the answer over the fresh endpoint
  has too, averaged over the evaluations. The budget: 8/15/30% of the mean
  WSJ candidate set, as the seed sets it.
- WBM refreshes only the possibly stale candidates (tau <= now): Algorithm 2
  takes the first gamma of PS and no more, so its budget goes unused where
  the rates say the candidates are fresh (refreshes per evaluation, above).
- WBM with I estimated from its own refreshes (the last line of Table 2)
  over-estimates I (a change seen in few refreshes, "no change seen" taken
  as twice the time watched): fewer candidates are possibly stale and the
  budget goes unused at 30%, where it trails LRU; at 8% and 15% it is level
  with LRU. The seed's WBM reads each user's change rate.
- WBM and WBM*: Algorithm 2 renews a best-before time as tau + I from the
  first evaluation on, so WBM knows when an entry goes stale only where the
  changes keep in step with that. --changes aligned (periodic from time 0)
  does: WBM comes within 0.05 of WBM* (seed 1: 0.57/0.61, 0.75/0.78,
  0.97/0.98). With random phases (the default) WBM trails WBM* by 0.09 to
  0.15; the seed's gap is 0.06, 0.11, 0.13.
"""
# the join the accuracy is measured on: each (user, follower count) of the window
QUERY = """PREFIX : <http://example.org/>
REGISTER QUERY mentioned AS
SELECT DISTINCT ?user ?followers
FROM STREAM <http://example.org/mentions> [RANGE {range}m STEP 1m]
WHERE {{ ?user :isMentionedIn ?post . {background} }}
"""


def arguments() -> argparse.ArgumentParser:
    """The bench's options; the data set's default to scenario.py's settings."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--minutes", type=int, default=180)
    parser.add_argument("--range", type=int, default=3, help="the window's width in minutes (slide: 1 minute): "
                        "the evaluations a mention keeps its user a candidate")
    parser.add_argument("--per-minute", type=int, default=PER_MINUTE, help="mentions per minute")
    parser.add_argument("--skew", type=float, default=SKEW,
                        help="Zipf exponent of the users' popularity: how often the same users come back")
    parser.add_argument("--changes", choices=PROCESSES, default=PROCESS,
                        help="how each user's follower count changes at its rate")
    parser.add_argument("--out", default="out/bench_service")
    return parser


def main(argv=None) -> int:
    args = arguments().parse_args(argv)

    from cep.rules import parse_rules
    from cep.service.options import ServiceOptions
    from cep.service.oxigraph import Oxigraph
    from examples.influencers.scenario import accuracy, generate, replay

    scenario = generate(args.seed, args.minutes, args.per_minute, process=args.changes, skew=args.skew)
    oracle = scenario.change_times
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with Oxigraph() as server:  # in memory
        queries = parse_rules(QUERY.format(range=args.range, background=f"SERVICE <{server.query_url}> "
                                                                        "{ ?user :followers ?followers }"), "bench.rq")
        allow = [server.base]
        fresh, _ = replay(server, queries, ServiceOptions(allow=allow, view=False), scenario)
        _, probe = replay(server, queries, ServiceOptions(allow=allow, proposer="WST"), scenario)
        mean_candidates = sum(r.candidates for r in probe) / len(probe)
        budgets = {name: max(1, round(share * mean_candidates)) for name, share in
                   (("8%", 0.08), ("15%", 0.15), ("30%", 0.30))}
        print(f"seed {args.seed}: {scenario.settings}; {args.minutes} evaluations, "
              f"window {args.range} min, slide 1 min; "
              f"mean candidate set {mean_candidates:.1f}; budgets {budgets}")
        policies = {"WST": dict(proposer="WST"), "GNR_RND": dict(proposer="GNR", ranker="RND"),
                    "GNR_LRU": dict(proposer="GNR", ranker="LRU"), "WSJ_RND": dict(ranker="RND"),
                    "WSJ_LRU": dict(ranker="LRU"), "BST": dict(proposer="BST", ranker="LRU", oracle=oracle),
                    # WBM's I: each user's change rate, as the seed's WBM reads it on synthetic data
                    "WSJ_WBM": dict(ranker="WBM", intervals=scenario.change_interval),
                    "WSJ_WBMstar": dict(ranker="WBM*", oracle=oracle),
                    # WBM with I estimated from its own refreshes: no rates given
                    "WSJ_WBM_estimated": dict(ranker="WBM")}
        results, used, curves, latencies = {}, {}, {}, {}
        for budget, gamma in budgets.items():
            for name, policy in policies.items():
                options = ServiceOptions(allow=allow, gamma=gamma, seed=args.seed, **policy)
                answers, reports = replay(server, queries, options, scenario)
                acc = accuracy(answers, fresh)
                results[(budget, name)] = sum(acc) / len(acc)
                used[(budget, name)] = sum(r.refreshes for r in reports) / max(1, len(reports))
                print(f"  gamma {budget} ({gamma}) {name}: {results[(budget, name)]:.2f}", file=sys.stderr)
                curves[(budget, name)] = acc
                for r in reports:
                    latencies.setdefault(r.refreshes, []).append(r.latency)
        _table("Table 1: proposers (accuracy)", SEED_TABLE1, results)
        _table("Table 2: rankers with WSJ (accuracy)", SEED_TABLE2, results)
        print("  WSJ + WBM, I estimated from its refreshes (no rates given; not in the seed): " +
              ", ".join(f"{b} {results[(b, 'WSJ_WBM_estimated')]:.2f}" for b in budgets))
        print("\nrefreshes per evaluation (mean; the budget in brackets):")
        for name in ("WSJ_LRU", "BST", "WSJ_WBM", "WSJ_WBMstar", "WSJ_WBM_estimated"):
            print(f"  {name:>18}: " + ", ".join(f"{b} {used[(b, name)]:.1f} ({g})" for b, g in budgets.items()))
        print("\nlatency of an evaluation (maintenance + the rules' evaluation) by refreshes made:")
        for n in sorted(latencies):
            xs = latencies[n]
            print(f"  {n:3d} refreshes: {1000 * sum(xs) / len(xs):7.2f} ms mean over {len(xs)} evaluations")
        _throughput(server, args, scenario)
        _plots(out, curves, budgets, latencies)
    print("\n" + NOTES, end="")
    return 0


def _table(title, seed_table, results):
    print(f"\n{title}: ours (seed's synthetic)")
    names = list(next(iter(seed_table.values())))
    print("  gamma  " + "".join(f"{n:>20}" for n in names))
    for budget, row in seed_table.items():
        cells = "".join(f"{results[(budget, n)]:>13.2f} ({row[n]:.2f})" for n in names)
        print(f"  {budget:>5}  {cells}")


def _throughput(server, args, scenario):
    """Events/s of the query with a view never refreshed (WST) against the
    same query with its background in a local file."""
    from cep.engine import Engine
    from cep.events import Event
    from cep.rules import parse_rules
    from cep.service.options import ServiceOptions
    from examples.influencers.scenario import E, USERS, load, user

    counts = scenario.counts
    load(server, counts)
    rng = random.Random(args.seed)
    events = [Event(user(rng.randrange(USERS)), f"<{E}isMentionedIn>", f"<{E}p{i}>", i * 100, i * 100)
              for i in range(50_000)]
    with tempfile.TemporaryDirectory() as folder:
        local = Path(folder) / "followers.ttl"
        local.write_text("".join(f"{user(u)} <{E}followers> {n} .\n" for u, n in counts.items()))
        texts = {"SERVICE view": QUERY.format(range=args.range, background=f"SERVICE <{server.query_url}> "
                                                                           "{ ?user :followers ?followers }"),
                 "local background": QUERY.format(range=args.range, background="?user :followers ?followers")
                 .replace("FROM STREAM", f"FROM <{local.as_uri()}>\nFROM STREAM")}
        print("\nthroughput, 50,000 mentions:")
        for name, text in texts.items():
            engine = Engine(parse_rules(text, str(Path(folder) / "q.rq")),
                            services=ServiceOptions(allow=[server.base], proposer="WST"))
            began = time.monotonic()
            for i in range(0, len(events), 5_000):
                engine.push(events[i:i + 5_000])
            engine.flush()
            print(f"  {name:>16}: {len(events) / (time.monotonic() - began):10,.0f} events/s")


def _plots(out: Path, curves, budgets, latencies):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    for figure, names in (("figure3_proposers", ["WST", "GNR_RND", "GNR_LRU", "WSJ_RND", "WSJ_LRU", "BST"]),
                          ("figure4_rankers", ["WST", "WSJ_RND", "WSJ_LRU", "WSJ_WBM", "WSJ_WBMstar"])):
        fig, axes = plt.subplots(1, len(budgets), figsize=(5 * len(budgets), 4), sharey=True)
        for ax, budget in zip(axes, budgets):
            for name in names:
                errors = [1 - a for a in curves[(budget, name)]]
                ax.plot([sum(errors[:i + 1]) for i in range(len(errors))], label=name)
            ax.set_title(f"gamma {budget} ({budgets[budget]})")
            ax.set_xlabel("evaluation")
        axes[0].set_ylabel("cumulative error")
        axes[-1].legend()
        fig.tight_layout()
        fig.savefig(out / f"{figure}.png", dpi=100)
        plt.close(fig)
        print(f"wrote {out / figure}.png")
    fig, ax = plt.subplots(figsize=(6, 4))  # latency per evaluation against its refreshes (seed, equation 2)
    for n, xs in sorted(latencies.items()):
        ax.scatter([n] * len(xs), [1000 * x for x in xs], s=4, alpha=0.2, color="tab:blue")
    means = sorted((n, 1000 * sum(xs) / len(xs)) for n, xs in latencies.items())
    ax.plot([n for n, _ in means], [m for _, m in means], color="tab:red", marker="o", label="mean")
    ax.set_xlabel("refreshes in the evaluation")
    ax.set_ylabel("latency of the evaluation (ms)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "latency_by_refreshes.png", dpi=100)
    plt.close(fig)
    print(f"wrote {out / 'latency_by_refreshes.png'}")


if __name__ == "__main__":
    raise SystemExit(main())
