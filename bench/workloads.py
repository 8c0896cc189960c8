"""Benchmark workloads, deterministic from a seed, written once as Parquet
tables with columns s, p, o (N-Triples text) and t (epoch milliseconds).

W1 pairs:  event i has s = <http://example.org/k{i mod 1000}>, p = :a if
           (i div 1000) is even else :b, o = i, t = 2026-01-01T00:00:00Z + i ms.
           Query: ?k :a ?x SEQ ?k :b ?y within 1.5 s. Exactly N/2 answers.
W2 stock:  1,000 companies, one tick per company per minute, prices on seeded
           random walks with occasional crash-and-recovery episodes; the
           paper's query (1) with getDURATION() < PT1H.
W3 window: W2's ticks; a sliding-window aggregation, each company's average
           price over the last hour, every 5 minutes (C-SPARQL's RANGE 1h
           STEP 5m with GROUP BY).
W3 two windows (w3_two): W2's ticks; two named windows of different sizes
           over the ticker (RSP-QL's FROM NAMED WINDOW): each company's hour
           of prices, every 5 minutes, joined with its prices under 30 in
           the last 10 minutes (a group with a window of its own).
WCOUNT     multi-triple events: 1,000 turbines, each event a record of three
           triples (speed, direction, status; a `source` column names the
           record), 100 events a second; the average speed over a count
           window of the last 1,000 events (WINDOW ELEMS 1000: events, not
           triples), evaluated at every instant.
"""

from __future__ import annotations

import argparse
import os
import random
import secrets
import shutil
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

EX = "http://example.org/"
XSD = "http://www.w3.org/2001/XMLSchema#"
T0 = 1_767_225_600_000  # 2026-01-01T00:00:00Z in epoch ms

W1_QUERY = f"""PREFIX : <{EX}>
PREFIX xsd: <{XSD}>
REGISTER QUERY w1 AS
SELECT ?k ?x ?y WHERE {{ ?k :a ?x }} SEQ {{ ?k :b ?y }} FILTER (getDURATION() < "PT1.5S"^^xsd:duration)
"""

W2_QUERY = f"""PREFIX : <{EX}>
PREFIX xsd: <{XSD}>
REGISTER QUERY w2 AS
SELECT ?company ?price1 ?price2 ?price3
WHERE {{ ?company :hasStockPrice ?price1 }} SEQ {{ ?company :hasStockPrice ?price2 }} SEQ {{ ?company :hasStockPrice ?price3 }}
FILTER (?price2 < ?price1 * 0.7 && ?price3 > ?price1 * 1.05 && getDURATION() < "PT1H"^^xsd:duration)
"""


W3_QUERY = f"""PREFIX : <{EX}>
REGISTER QUERY w3 AS
SELECT ?company (AVG(?price) AS ?average) (COUNT(*) AS ?ticks)
FROM STREAM <{EX}ticker> [RANGE 1h STEP 5m]
WHERE {{ ?company :hasStockPrice ?price }}
GROUP BY ?company
"""


W3_TWO_QUERY = f"""PREFIX : <{EX}>
REGISTER QUERY w3_two AS
SELECT ?company (AVG(?price) AS ?average) (MIN(?low) AS ?lowest) (COUNT(*) AS ?pairs)
FROM NAMED WINDOW :hour ON STREAM <{EX}ticker> [RANGE 1h STEP 5m]
FROM NAMED WINDOW :recent ON STREAM <{EX}ticker> [RANGE 10m STEP 5m]
WHERE {{ WINDOW :hour {{ ?company :hasStockPrice ?price }}
        WINDOW :recent {{ ?company :hasStockPrice ?low FILTER (?low < 30) }} }}
GROUP BY ?company
"""


WCOUNT_QUERY = f"""PREFIX : <{EX}>
REGISTER QUERY wcount AS
SELECT (AVG(?speed) AS ?average) (COUNT(*) AS ?readings)
FROM STREAM <{EX}turbines> WINDOW ELEMS 1000
WHERE {{ ?turbine :speed ?speed }}
"""


def w1(n: int) -> pa.Table:
    keys = [f"<{EX}k{k}>" for k in range(1000)]
    a, b = f"<{EX}a>", f"<{EX}b>"
    s = [keys[i % 1000] for i in range(n)]
    p = [a if (i // 1000) % 2 == 0 else b for i in range(n)]
    o = [f'"{i}"^^<{XSD}integer>' for i in range(n)]
    t = [T0 + i for i in range(n)]
    return pa.table({"s": s, "p": p, "o": o, "t": pa.array(t, pa.int64())})


def w2(n: int, seed: int = 7) -> pa.Table:
    """Ticks of 1,000 companies, one per company per minute: a random walk
    in cents; now and then a company crashes by 35-50% and recovers."""
    rng = random.Random(seed)
    companies = 1000
    price = [rng.randint(2_000, 20_000) for _ in range(companies)]
    episode = [0] * companies  # minutes left in a crash-and-recovery episode
    s, o, t = [], [], []
    names = [f"<{EX}company{c}>" for c in range(companies)]
    minute = 0
    while len(s) < n:
        for c in range(companies):
            if len(s) == n:
                break
            if episode[c] == 0 and rng.random() < 0.0005:
                episode[c] = 30
                price[c] = max(100, int(price[c] * rng.uniform(0.5, 0.65)))
            elif episode[c] > 0:
                episode[c] -= 1
                price[c] = int(price[c] * rng.uniform(1.0, 1.08))
            else:
                price[c] = max(100, int(price[c] * rng.uniform(0.99, 1.01)))
            s.append(names[c])
            o.append(f'"{price[c] // 100}.{price[c] % 100:02d}"^^<{XSD}decimal>')
            t.append(T0 + minute * 60_000 + c)  # companies tick a millisecond apart
        minute += 1
    p = [f"<{EX}hasStockPrice>"] * len(s)
    return pa.table({"s": s, "p": p, "o": o, "t": pa.array(t, pa.int64())})


def wcount(n: int) -> pa.Table:
    """n triples in events of three (the last one cut short), 100 events a
    second, turbines in turn; each event's triples share its source."""
    names = [f"<{EX}turbine{k}>" for k in range(1000)]
    speed, direction, status = (f"<{EX}{p}>" for p in ("speed", "direction", "status"))
    s, p, o, t, source = [], [], [], [], []
    for i in range(n):
        e, j = divmod(i, 3)
        s.append(names[e % 1000])
        p.append((speed, direction, status)[j])
        o.append((f'"{e % 37}"^^<{XSD}integer>', f"<{EX}north>", '"ok"')[j])
        t.append(T0 + (e // 100) * 1000)
        source.append(f"r{e}")
    return pa.table({"s": s, "p": p, "o": o, "t": pa.array(t, pa.int64()), "source": source})


WORKLOADS = {"w1": (w1, W1_QUERY), "w2": (w2, W2_QUERY), "w3": (w2, W3_QUERY), "w3_two": (w2, W3_TWO_QUERY),
             "wcount": (wcount, WCOUNT_QUERY)}

# Events in one window of each workload's query (1.5 s of W1 at an event a
# millisecond; an hour of W2 at 1,000 ticks a minute): after them, partial
# matches and answers per event have reached their steady state.
WINDOW_EVENTS = {"w1": 1_500, "w2": 60_000, "w3": 60_000, "w3_two": 60_000, "wcount": 3_000}


def expected_answers(name: str, table: pa.Table) -> int | None:
    """The number of answers of the workload's query over the events of
    `table` (its first rows; W2's ticks in whole minutes), worked out from
    the data alone, not by the engine, where the events stop at the end of
    a batch (Engine.flush_table(final=False)): W3 and W3 two windows are
    evaluated every 5 minutes from the first tick, each evaluation once an
    event after it has come; W3 reports every company but at the first
    instant (company 0's tick alone); W3 two windows the companies with a
    price under 30 in the last 10 minutes; WCOUNT one row at each second;
    W2 one answer per company, first and last tick and middle price (two
    middle ticks of one price make one answer). None: not known."""
    n = table.num_rows
    if name == "w1":
        return n // 2
    if name == "wcount":
        return (-(-n // 3) - 1) // 100 + 1
    if n % 1000:
        return None
    prices = pc.list_element(pc.split_pattern(table["o"], '"'), 1)
    cents = pc.cast(pc.replace_substring(prices, ".", ""), pa.int64()).to_numpy().reshape(-1, 1000)
    minutes = len(cents)
    last = (minutes - 1) // 5  # evaluations at 0, 5, ... minutes: each once an event after it came
    if name == "w3":
        return 1 + 1000 * last
    if name == "w3_two":
        # (t - 10 min, t] at t = 5k minutes: company 0's ticks of minutes 5k-9 .. 5k,
        # the others' (a company ticks c ms after the minute) of 5k-10 .. 5k-1
        low = cents < 3000
        total = int(low[0, 0])  # at the first instant: company0's first tick alone
        for k in range(1, last + 1):
            total += int(low[max(0, 5 * k - 9):5 * k + 1, 0].any())
            total += int(low[max(0, 5 * k - 10):5 * k, 1:].any(axis=0).sum())
        return total
    # W2: tick m, then m + d1 under 70% of its price, then m + d2 over 105%
    # (in cents: exact), d2 < 60 minutes (getDURATION() < 1 hour)
    padded = np.vstack([cents, np.zeros((60, 1000), cents.dtype)])  # no tick there: no recovery
    keys = []
    for d1 in range(1, 59):
        m, c = np.nonzero(10 * cents[d1:] < 7 * cents[:-d1])
        d2 = np.arange(d1 + 1, 60)
        hit = 100 * padded[m[:, None] + d2, c[:, None]] > 105 * cents[m, c][:, None]
        i, j = np.nonzero(hit)
        keys.append((((c[i] * minutes + m[i]) * 60 + d2[j]) << 32) | cents[m[i] + d1, c[i]])
    return len(np.unique(np.concatenate(keys)))


def path_for(out: Path, name: str, n: int) -> Path:
    return out / f"{name}_{n}.parquet"


def ensure(out: Path, name: str, n: int, files: int = 1) -> Path:
    """Write the workload once (as `files` Parquet files in a directory when
    files > 1) and return its path. Two runs may share `out` and write the
    same missing workload at once: each writes under a temporary name and
    renames it into place, so neither reads (nor Spark's file source
    lists) a workload still being written by the other."""
    out.mkdir(parents=True, exist_ok=True)
    make, _ = WORKLOADS[name]
    name = make.__name__  # workloads over the same events share their files
    if files == 1:
        path = path_for(out, name, n)
        if not path.exists():
            tmp = _private(path)
            try:
                pq.write_table(make(n), tmp)
                os.replace(tmp, path)  # the same table either way: the later one wins
            finally:
                tmp.unlink(missing_ok=True)
        return path
    folder = out / f"{name}_{n}_x{files}"
    if not folder.exists():
        table = make(n)
        tmp = _private(folder)
        tmp.mkdir()
        try:
            step = -(-n // files)
            for i in range(files):
                pq.write_table(table.slice(i * step, step), tmp / f"part-{i:03d}.parquet")
            try:
                tmp.rename(folder)
            except OSError:
                if not folder.is_dir():  # else the other run's, the same, came first
                    raise
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return folder


def _private(path: Path) -> Path:
    """A hidden name beside `path` that only this process writes."""
    return path.with_name(f".{path.name}.{os.getpid()}-{secrets.token_hex(4)}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("workload", choices=sorted(WORKLOADS))
    ap.add_argument("n", type=int)
    ap.add_argument("--out", type=Path, default=Path("bench/out"))
    ap.add_argument("--files", type=int, default=1)
    args = ap.parse_args()
    print(ensure(args.out, args.workload, args.n, args.files))


if __name__ == "__main__":
    main()
