"""The reference evaluator (cep.reference, the oracle) reads a SERVICE over
a snapshot of its endpoint's graph (its OPTIONAL groups, FILTER and blank
nodes, and SERVICE inside OPTIONAL, as SPARQL 1.1 defines them); on seeded random streams and
snapshots, the engine against a real endpoint holding the snapshot
(Oxigraph, tests/endpoint.py), with a budget that covers every candidate,
gives the reference's answers. CEP_SEED replays a run (its seed is
printed)."""

import os
import random
from collections import Counter

from cep import reference
from cep.engine import Engine
from cep.events import Event
from cep.rules import parse_rules
from cep.service.options import ServiceOptions
from tests.endpoint import oxigraph_server  # noqa: F401 (the fixture)

E = "http://e/"
MIN = 60_000
H = f"PREFIX : <{E}>\n"
INT = "<http://www.w3.org/2001/XMLSchema#integer>"

QUERIES = """REGISTER QUERY influential AS
SELECT ?u (COUNT(?p) AS ?mentions) ?n
FROM STREAM <http://e/s> [RANGE 6m STEP 2m]
WHERE {{ ?u :mentioned ?p . SERVICE <{url}> {{ ?u :followers ?n }} }}
GROUP BY ?u ?n HAVING (COUNT(?p) >= 2 && ?n > 100)

REGISTER QUERY seen AS
SELECT ?u ?p ?n ?c
FROM STREAM <http://e/s> [RANGE 4m STEP 3m]
WHERE {{ ?u :mentioned ?p . SERVICE <{url}> {{ ?u :followers ?n ; :city ?c }} FILTER(?n > 50) }}

REGISTER QUERY liked AS
SELECT ?u ?q ?n
WHERE {{ {{ ?u :mentioned ?p }} SEQ {{ ?u :liked ?q }} SERVICE SILENT <{url}> {{ ?u :followers ?n }} }}

REGISTER QUERY placed AS
SELECT ?u ?p ?n ?c
FROM STREAM <http://e/s> [RANGE 4m STEP 2m]
WHERE {{ ?u :mentioned ?p OPTIONAL {{ SERVICE <{url}> {{ ?u :followers ?n OPTIONAL {{ ?u :city ?c }} FILTER(?n > 80) }} }} }}

REGISTER QUERY known AS
SELECT ?u ?q ?c
WHERE {{ ?u :liked ?q . SERVICE <{url}> {{ ?u :city ?c ; :followers [] FILTER(?c != <http://e/c0>) }} }}

REGISTER QUERY deep AS
SELECT ?u ?n ?q
FROM STREAM <http://e/s> [RANGE 6m STEP 2m]
WHERE {{ {{ ?u :mentioned ?p . SERVICE <{url}> {{ ?u :followers ?n }} }} SEQ {{ ?u :liked ?q }} FILTER(?n > 50) }}

REGISTER QUERY followed AS
SELECT ?u ?p ?n
WHERE {{ ?u :mentioned ?p OPTIONAL {{ SERVICE <{url}> {{ ?u :followers ?n }} FILTER(?n > 150 && ?p != <http://e/x3>) }} }}
"""


def random_case(rng: random.Random):
    users = range(1, 9)
    graph = set()
    for u in users:
        if rng.random() < 0.8:  # some users are not at the endpoint: no partner
            graph.add((f"<{E}u{u}>", f"<{E}followers>", f'"{rng.randrange(0, 300)}"^^{INT}'))
            if rng.random() < 0.7:  # some have no city: OPTIONAL inside SERVICE leaves it unbound
                graph.add((f"<{E}u{u}>", f"<{E}city>", f"<{E}c{rng.randrange(3)}>"))
    events = []
    for i in range(rng.randrange(10, 40)):
        start = rng.randrange(0, 30)
        end = start + (rng.randrange(0, 3) if rng.random() < 0.3 else 0)
        p = "mentioned" if rng.random() < 0.7 else "liked"
        events.append(Event(f"<{E}u{rng.choice(users)}>", f"<{E}{p}>", f"<{E}x{i}>", start * MIN, end * MIN))
    return graph, events


def engine_as_reference(oxigraph_server, text: str, cases: int) -> None:
    """The engine's answers to the rules of `text` (its {url} the
    endpoint's) equal the reference's over `cases` random streams, the
    endpoint holding a random graph for each, which is its snapshot."""
    seed = int(os.environ.get("CEP_SEED", random.randrange(2 ** 32)))
    print(f"CEP_SEED={seed}")
    rng = random.Random(seed)
    url = oxigraph_server.query_url
    queries = parse_rules(H + text.format(url=url), "service.rq")
    answered = Counter()
    for case in range(cases):
        graph, events = random_case(rng)
        oxigraph_server.update("DELETE WHERE { ?s ?p ?o }")
        if graph:
            oxigraph_server.update("INSERT DATA { " + " . ".join(" ".join(t) for t in sorted(graph)) + " }")
        engine = Engine(queries, services=ServiceOptions(allow=[oxigraph_server.base], gamma=100))
        got = engine.push(sorted(events, key=lambda e: (e.end, e.start))) + engine.flush()
        expected = reference.evaluate(queries, events, services={url: graph})
        assert Counter(got) == Counter(expected), f"CEP_SEED={seed}, case {case}"
        answered.update(a.query for a in expected)
    print(dict(answered))
    assert answered, f"CEP_SEED={seed}: no case answered"


def test_the_engine_answers_as_the_reference_over_the_endpoint_snapshot(oxigraph_server):
    engine_as_reference(oxigraph_server, QUERIES, 4)


# SERVICE in queries whose groups have windows of their own (docs/
# language.md, "A window per pattern"): in the first group of a UNION, in
# its other operand's group (whose window slides otherwise), in the first
# group of a join with such a group, inside OPTIONAL there, and under
# aggregates; each joined with its group's solutions in its window at
# each of the query's evaluations
GROUP_QUERIES = """REGISTER QUERY first AS
SELECT ?u ?p ?n
FROM STREAM <http://e/s> WINDOW RANGE 2 MINUTE FIXED
WHERE {{ {{ ?u :mentioned ?p SERVICE <{url}> {{ ?u :followers ?n }} FILTER(?n > 50) }}
         UNION {{ ?u :liked ?p WINDOW RANGE 3 MINUTE FIXED }} }}

REGISTER QUERY other AS
SELECT ?u ?p ?n ?c
FROM STREAM <http://e/s> WINDOW RANGE 4 MINUTE SLIDE 2 MINUTE
WHERE {{ {{ ?u :mentioned ?p }}
         UNION {{ ?u :liked ?p SERVICE <{url}> {{ ?u :followers ?n OPTIONAL {{ ?u :city ?c }} }}
                  WINDOW RANGE 3 MINUTE SLIDE 1 MINUTE }} }}

REGISTER QUERY joined AS
SELECT ?u ?q ?n
FROM STREAM <http://e/s> WINDOW RANGE 3 MINUTE SLIDE 1 MINUTE
WHERE {{ ?u :mentioned ?p SERVICE <{url}> {{ ?u :followers ?n }} {{ ?u :liked ?q WINDOW RANGE 5 MINUTE FIXED }} }}

REGISTER QUERY optional AS
SELECT ?u ?p ?c
FROM STREAM <http://e/s> WINDOW RANGE 2 MINUTE FIXED
WHERE {{ {{ ?u :mentioned ?p OPTIONAL {{ SERVICE <{url}> {{ ?u :city ?c }} }} }}
         UNION {{ ?u :liked ?p WINDOW RANGE 3 MINUTE FIXED }} }}

REGISTER QUERY counted AS
SELECT ?n (COUNT(*) AS ?k)
FROM STREAM <http://e/s> WINDOW RANGE 4 MINUTE SLIDE 2 MINUTE
WHERE {{ {{ ?u :liked ?q }} UNION {{ ?u :mentioned ?p SERVICE <{url}> {{ ?u :followers ?n }}
                                   WINDOW RANGE 5 MINUTE SLIDE 3 MINUTE }} }}
GROUP BY ?n
"""


def test_service_in_groups_with_windows_of_their_own_answers_as_the_reference(oxigraph_server):
    engine_as_reference(oxigraph_server, GROUP_QUERIES, 3)


# SERVICE joined above groups with windows of their own: with a UNION of
# groups whose windows slide otherwise (and a FILTER above reading the
# view), with a join of two such groups, with the group after the first
# (the only one that binds its join key), and under aggregates; each
# evaluation joins the groups' combined solutions with the view
# maintained for it (docs/language.md, "SERVICE")
ABOVE_QUERIES = """REGISTER QUERY union AS
SELECT ?u ?p ?n ?c
FROM STREAM <http://e/s> WINDOW RANGE 2 MINUTE FIXED
WHERE {{ {{ {{ ?u :mentioned ?p }} UNION {{ ?u :liked ?p WINDOW RANGE 3 MINUTE SLIDE 1 MINUTE }} }}
         SERVICE <{url}> {{ ?u :followers ?n OPTIONAL {{ ?u :city ?c }} }} FILTER(?n > 50) }}

REGISTER QUERY joined AS
SELECT ?u ?p ?q ?n
FROM STREAM <http://e/s> WINDOW RANGE 3 MINUTE SLIDE 1 MINUTE
WHERE {{ {{ ?u :mentioned ?p WINDOW RANGE 4 MINUTE SLIDE 2 MINUTE }} {{ ?u :liked ?q WINDOW RANGE 5 MINUTE FIXED }}
         SERVICE <{url}> {{ ?u :followers ?n }} }}

REGISTER QUERY second AS
SELECT ?u ?p ?v ?q ?n
FROM STREAM <http://e/s> WINDOW RANGE 2 MINUTE SLIDE 1 MINUTE
WHERE {{ {{ ?u :mentioned ?p }} {{ ?v :liked ?q WINDOW RANGE 3 MINUTE FIXED }}
         SERVICE <{url}> {{ ?v :followers ?n }} FILTER(?u != ?v) }}

REGISTER QUERY counted AS
SELECT ?c (COUNT(*) AS ?k)
FROM STREAM <http://e/s> WINDOW RANGE 4 MINUTE SLIDE 2 MINUTE
WHERE {{ {{ {{ ?u :liked ?q }} UNION {{ ?u :mentioned ?p WINDOW RANGE 5 MINUTE SLIDE 3 MINUTE }} }}
         SERVICE <{url}> {{ ?u :city ?c }} }}
GROUP BY ?c
"""


def test_service_joined_above_groups_with_windows_of_their_own_answers_as_the_reference(oxigraph_server):
    engine_as_reference(oxigraph_server, ABOVE_QUERIES, 4)


# SERVICE in a query whose first group counts events (evaluated at every
# instant, its views maintained before each call of the rules, as a
# query's over a count window): in that group, in a later group with a
# time-based window, and joined above the groups
COUNTED_QUERIES = """REGISTER QUERY inside AS
SELECT ?u ?p ?q ?n
FROM STREAM <http://e/s> WINDOW RANGE 2 MINUTE FIXED
WHERE {{ {{ ?u :mentioned ?p SERVICE <{url}> {{ ?u :followers ?n }} WINDOW ELEMS 3 }}
         {{ ?u :liked ?q WINDOW RANGE 3 MINUTE FIXED }} }}

REGISTER QUERY later AS
SELECT ?u ?p ?q ?n ?c
FROM STREAM <http://e/s> WINDOW RANGE 2 MINUTE FIXED
WHERE {{ {{ ?u :mentioned ?p WINDOW ELEMS 4 }}
         OPTIONAL {{ ?u :liked ?q SERVICE <{url}> {{ ?u :followers ?n OPTIONAL {{ ?u :city ?c }} }}
                     WINDOW RANGE 3 MINUTE SLIDE 1 MINUTE }} }}

REGISTER QUERY above AS
SELECT ?u ?p ?q ?n
FROM STREAM <http://e/s> WINDOW RANGE 2 MINUTE FIXED
WHERE {{ {{ ?u :mentioned ?p WINDOW ELEMS 3 }} {{ ?u :liked ?q WINDOW RANGE 3 MINUTE SLIDE 1 MINUTE }}
         SERVICE <{url}> {{ ?u :followers ?n }} FILTER(?n > 50) }}
"""


def test_service_in_a_query_whose_first_group_counts_events_answers_as_the_reference(oxigraph_server):
    engine_as_reference(oxigraph_server, COUNTED_QUERIES, 4)


# SERVICE in a UNION of the first group where count windows lead (evaluated
# at every instant a count window counts and on the time grid of the
# others): in the counting first group, in a counting later operand, and
# joined above the UNION
COUNT_LED_QUERIES = """REGISTER QUERY first AS
SELECT ?u ?p ?n
FROM STREAM <http://e/s> WINDOW RANGE 2 MINUTE FIXED
WHERE {{ {{ ?u :mentioned ?p SERVICE <{url}> {{ ?u :followers ?n }} WINDOW ELEMS 3 }}
         UNION {{ ?u :liked ?p WINDOW RANGE 3 MINUTE FIXED }} }}

REGISTER QUERY other AS
SELECT ?u ?p ?n
FROM STREAM <http://e/s> WINDOW RANGE 2 MINUTE FIXED
WHERE {{ {{ ?u :mentioned ?p }} UNION {{ ?u :liked ?p SERVICE <{url}> {{ ?u :followers ?n }} WINDOW ELEMS 2 }} }}

REGISTER QUERY above AS
SELECT ?u ?p ?n
FROM STREAM <http://e/s> WINDOW RANGE 2 MINUTE FIXED
WHERE {{ {{ {{ ?u :mentioned ?p WINDOW ELEMS 2 }} UNION {{ ?u :liked ?p WINDOW RANGE 3 MINUTE FIXED }} }}
         SERVICE <{url}> {{ ?u :followers ?n }} }}
"""


def test_service_where_count_windows_lead_a_union_answers_as_the_reference(oxigraph_server):
    engine_as_reference(oxigraph_server, COUNT_LED_QUERIES, 4)
