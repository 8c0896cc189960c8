"""The paper's Test 3: the goods delivery app (examples/delivery) for 1 and
10 agents, each visiting 20 locations, with more than half of the road
segments closed at times (the rush phases of scenario.py).

    python bench/delivery.py                            # the project's city, 1 and 10 agents
    python bench/delivery.py --agents 1,5,10 --map ../shared/data/roads/santagata_bolognese_map.osm

Each run is a fresh process that generates the scenario (seeded), runs the
dispatch loop on the in-process engine and prints one line: requests and
events (triples) given to the engine, answers, events/s and requests/s over
the time spent in the engine, the wall-clock seconds of the whole loop, the
peak resident memory of the process, its growth during the run (peak less
the memory once the rules and map were loaded), and the engine's state
(Engine.state(), bytes) at the end. No figure is fixed here: they are
measured on each run.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from memory import status_mb  # noqa: E402


def measure(map_path: str, agents: int, locations: int, seed: int, out: Path) -> dict:
    from examples.delivery import app
    from examples.delivery.scenario import generate

    net, ttl = app.load_map(map_path, out)
    scenario = generate(net, agents=agents, locations=locations, seed=seed)
    app.Dispatcher(ttl)  # load the rules and the map once, so the growth below is the run's
    base = status_mb("VmRSS")
    result = app.simulate(net, ttl, scenario)
    peak = status_mb("VmHWM")  # not ru_maxrss: see memory.status_mb
    legs = [r for r in result.records if r["event"] == "leg"]
    return {
        "agents": agents, "locations": locations,
        "closed_peak": round(scenario.closed_share(len(net.segments())), 3),
        "requests": result.requests, "events": result.events, "answers": len(result.answers),
        "reroutes": sum(r["event"] == "reroute" for r in result.records),
        "no_route": sum(r["event"] == "no_route" for r in result.records),
        "delivered": sum(r["status"] == "arrived" for r in legs),
        "events_per_s": round(result.events / result.engine_s),
        "requests_per_s": round(result.requests / result.engine_s),
        "wall_s": round(result.wall_s, 2),
        "peak_rss_mb": round(peak, 1), "rss_growth_mb": round(peak - base, 1),
        "state_bytes": result.state_bytes,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--agents", default="1,10", help="agent counts, one run each (default 1,10)")
    ap.add_argument("--locations", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--map", default=str(HERE.parent / "ontologies" / "city.ttl"))
    ap.add_argument("--out", type=Path, default=HERE / "out" / "delivery")
    ap.add_argument("--one", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(measure(args.map, args.one, args.locations, args.seed, args.out)))
        return
    print(f"map {args.map}")
    print(f"{'agents':>6} {'closed':>6} {'requests':>8} {'events':>8} {'answers':>8} {'reroutes':>8} "
          f"{'no route':>8} {'events/s':>9} {'req/s':>6} {'wall s':>7} {'peak MB':>8} {'growth MB':>9} "
          f"{'state B':>8}")
    for n in (int(x) for x in args.agents.split(",")):
        done = subprocess.run([sys.executable, __file__, "--one", str(n), "--locations", str(args.locations),
                               "--seed", str(args.seed), "--map", args.map, "--out", str(args.out)],
                              check=True, capture_output=True, text=True)
        r = json.loads(done.stdout.strip().splitlines()[-1])
        print(f"{r['agents']:>6} {r['closed_peak']:>6.0%} {r['requests']:>8,} {r['events']:>8,} "
              f"{r['answers']:>8,} {r['reroutes']:>8,} {r['no_route']:>8,} {r['events_per_s']:>9,} "
              f"{r['requests_per_s']:>6,} {r['wall_s']:>7} {r['peak_rss_mb']:>8} {r['rss_growth_mb']:>9} "
              f"{r['state_bytes']:>8,}", flush=True)


if __name__ == "__main__":
    main()
