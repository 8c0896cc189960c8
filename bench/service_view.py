"""What a Spark group's engine costs to build over a SERVICE view of N
entries when the query's class is split in B buckets (cep.spark.worker:
each group loads the entries of its bucket, ServiceOptions.part), against
a group that loads the whole view (one bucket: what every group paid
before a group loaded its part alone). No Spark: the worker's own
function (cep.spark.worker._engine) in this process, which plays one
Python worker serving every group; the endpoint is Oxigraph on the
loopback interface, its initial pull downloaded once (ServiceOptions.
snapshot) and not counted. CPU seconds of this process (Prolog included).

    python bench/service_view.py --entries 50000 --buckets 8
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

E = "http://e/"
QUERY = """PREFIX : <http://e/>
SELECT ?u (COUNT(?p) AS ?mentions) ?n
FROM STREAM <http://e/s> [RANGE 10m STEP 5m]
WHERE {{ ?u :mentioned ?p . SERVICE <{url}> {{ ?u :followers ?n }} }}
GROUP BY ?u ?n HAVING (COUNT(?p) >= 2 && ?n > 10000)
"""


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entries", type=int, default=50_000)
    parser.add_argument("--buckets", type=int, default=8)
    args = parser.parse_args(argv)

    from cep.rules import parse_rules
    from cep.service.options import ServiceOptions
    from cep.service.oxigraph import Oxigraph
    from cep.spark import plan, worker

    with Oxigraph() as server:  # in memory
        for lo in range(0, args.entries, 5000):
            server.update("INSERT DATA { " + " . ".join(
                f"<{E}u{u}> <{E}followers> {7 * u}" for u in range(lo, min(args.entries, lo + 5000))) + " }")
        queries = parse_rules(QUERY.format(url=server.query_url), "bench.rq")
        options = ServiceOptions(allow=[server.base], gamma=8, timeout=120)  # a large pull on a loaded machine
        for buckets in (1, args.buckets):
            spec = plan(queries, buckets, services=options)
            worker._engine(spec, 0, 0)  # the worker's download of the view, shared by its groups: not counted
            cpu, wall = time.process_time(), time.perf_counter()
            groups = range(1, buckets) if buckets > 1 else range(1)
            if buckets == 1:
                worker._ENGINES.clear()  # the one group built again, from the download
            for bucket in groups:
                worker._engine(spec, 0, bucket)
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
            held = sum(len(engine.services.states[0].view.entries) for engine, *_ in worker._ENGINES.values())
            print(f"{args.entries} entries, {buckets} bucket(s): {1000 * cpu / len(groups):.0f} ms CPU "
                  f"({1000 * wall / len(groups):.0f} ms wall) per group engine; "
                  f"entries held by the {buckets} group(s) together: {held}")
            worker._ENGINES.clear()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
