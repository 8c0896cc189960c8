"""The influential-users app: a local endpoint (Oxigraph on port 7878)
holding the users' follower counts, which change while the stream runs;
the query of influential.rq evaluated every minute with its SERVICE view
kept by several policies, each run over the same replay; the influential
users of the last evaluation, each policy's accuracy, and a picture of
accuracy over time.

    python -m examples.influencers.app [--seed N] [--minutes M] [--gamma G] [--out DIR]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ENDPOINT_PORT = 7878  # the port influential.rq names
POLICIES = {  # name: ServiceOptions fields besides the allow-list and gamma
    "fresh (no view)": dict(view=False),
    "WST (never refreshed)": dict(proposer="WST"),
    "WSJ + LRU": dict(ranker="LRU"),
    "WSJ + WBM": dict(ranker="WBM"),
}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Influential users over a changing remote endpoint")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--minutes", type=int, default=120)
    parser.add_argument("--gamma", type=int, default=3, help="refreshes per evaluation")
    parser.add_argument("--out", default="out/influencers")
    args = parser.parse_args(argv)

    from cep.rules import load_rules
    from cep.service.options import ServiceOptions
    from cep.service.oxigraph import Oxigraph
    from examples.influencers.scenario import MIN, accuracy, generate, replay

    scenario = generate(args.seed, args.minutes)  # the data set of bench/service.py (scenario.py's settings)
    print(f"data set: {scenario.settings}, {args.minutes} minutes (seed {args.seed})", file=sys.stderr)
    queries = load_rules([str(HERE / "influential.rq")])
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    curves = {}
    with Oxigraph(port=ENDPOINT_PORT) as server:  # in memory
        runs = {}
        for name, policy in POLICIES.items():
            options = ServiceOptions(allow=[server.base], gamma=args.gamma, seed=args.seed, **policy)
            runs[name] = replay(server, queries, options, scenario)
        fresh = runs["fresh (no view)"][0]
        last = max(fresh, default=None)
        print(f"influential users at minute {last} (fresh endpoint):", file=sys.stderr)
        for row in sorted(fresh.get(last, ())):
            print("  " + ", ".join(f"{k}={v}" for k, v in row), file=sys.stderr)
        for name, (answers, reports) in runs.items():
            curves[name] = accuracy(answers, fresh)
            refreshes = sum(r.refreshes for r in reports)
            print(f"{name:>22}: accuracy {sum(curves[name]) / max(1, len(curves[name])):.2f}, "
                  f"{refreshes} requests", file=sys.stderr)
    _plot(out / "accuracy.png", curves, args.gamma)
    print(f"wrote {out / 'accuracy.png'}", file=sys.stderr)
    return 0


def _plot(path: Path, curves: dict, gamma: int):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4))
    for name, acc in curves.items():
        ax.plot(range(1, len(acc) + 1), acc, label=name)
    ax.set_xlabel("evaluation (minute)")
    ax.set_ylabel("accuracy")
    ax.set_title(f"influential users: accuracy per evaluation, gamma {gamma}")
    ax.set_ylim(-0.02, 1.02)
    ax.legend(loc="lower left")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


if __name__ == "__main__":
    raise SystemExit(main())
