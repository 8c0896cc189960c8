"""The goods delivery app (examples/delivery): its converters, the routes
its rules give on a hand-made map with known answers, the scenario
generator, its outputs, and the same answers on Spark."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cep.errors import OntologyError
from examples.delivery import app, milan, osm
from examples.delivery.network import NS, Network, read_network
from examples.delivery.scenario import Scenario, ScenarioError, Traffic, generate, read_scenario, write_scenario

ROOT = Path(__file__).resolve().parents[2]
ROADS = ROOT.parent / "shared" / "data" / "roads"


def _shared(name: str) -> Path:
    path = ROADS / name
    if not path.exists():
        pytest.skip(f"{path} is absent (the shared road data of ../shared/data/roads, see PROVENANCE.md there)")
    return path


# ------------------------------------------------------------ OSM converter

TINY_OSM = """<?xml version="1.0" encoding="UTF-8"?>
<osm version="0.6">
  <node id="1" lat="44.0000" lon="11.0000"/>
  <node id="2" lat="44.0000" lon="11.0010"/>
  <node id="3" lat="44.0000" lon="11.0020"/>
  <node id="4" lat="44.0010" lon="11.0020"/>
  <node id="5" lat="44.0010" lon="11.0030"/>
  <node id="6" lat="44.0020" lon="11.0030"/>
  <way id="10">
    <nd ref="1"/><nd ref="2"/><nd ref="3"/>
    <tag k="highway" v="residential"/><tag k="name" v="Via Roma"/>
  </way>
  <way id="11">
    <nd ref="3"/><nd ref="4"/>
    <tag k="highway" v="tertiary"/><tag k="oneway" v="yes"/>
  </way>
  <way id="12">
    <nd ref="4"/><nd ref="5"/>
    <tag k="highway" v="footway"/>
  </way>
  <way id="13">
    <nd ref="6"/><nd ref="4"/>
    <tag k="highway" v="service"/><tag k="oneway" v="-1"/>
  </way>
</osm>
"""


def _osm_id(n: int) -> str:
    return osm.NODE + str(n)


def test_osm_converter_on_a_hand_written_extract(tmp_path):
    path = tmp_path / "tiny.osm"
    path.write_text(TINY_OSM)
    net = osm.read_osm(path)
    # node 2 only shapes Via Roma: the link joins the junctions 1 and 3;
    # the footway is no road; way 11 is one-way 3 -> 4, way 13 one-way against 6 -> 4
    assert set(net.links) == {(_osm_id(1), _osm_id(3)), (_osm_id(3), _osm_id(1)),
                              (_osm_id(3), _osm_id(4)), (_osm_id(4), _osm_id(6))}
    assert set(net.nodes) == {_osm_id(n) for n in (1, 3, 4, 6)}
    assert net.nodes[_osm_id(1)] == (0, 0)
    x3, y3 = net.nodes[_osm_id(3)]
    assert 155 <= x3 <= 165 and y3 == 0  # 0.002 degrees of longitude at 44 N is about 160 m
    assert net.labels[_osm_id(1)] == "Via Roma"
    # the Turtle reads back as the same network
    ttl = tmp_path / "tiny.ttl"
    ttl.write_text(net.to_turtle("tiny"))
    back = read_network(ttl)
    assert set(back.links) == set(net.links) and back.nodes == net.nodes


def test_osm_converter_reports_malformed_xml_with_its_line(tmp_path):
    path = tmp_path / "bad.osm"
    path.write_text(TINY_OSM.replace('<nd ref="4"/><nd ref="5"/>', '<nd ref="4"><nd ref="5"/>'))
    with pytest.raises(OntologyError, match=r"bad\.osm:20:\d+: malformed XML: mismatched tag"):
        osm.read_osm(path)


def test_osm_converter_reports_a_way_with_an_unknown_node(tmp_path):
    path = tmp_path / "missing.osm"
    path.write_text(TINY_OSM.replace('<nd ref="6"/><nd ref="4"/>', '<nd ref="60"/><nd ref="4"/>'))
    with pytest.raises(OntologyError, match=r"missing\.osm:21: the way refers to node 60"):
        osm.read_osm(path)


def test_osm_converter_refuses_other_xml(tmp_path):
    path = tmp_path / "page.osm"
    path.write_text("<html><body/></html>")
    with pytest.raises(OntologyError, match=r"page\.osm:1: not an OpenStreetMap XML file"):
        osm.read_osm(path)


def test_osm_converter_on_west_oakland():
    net = osm.read_osm(_shared("West-Oakland.osm.bz2"))
    assert len(net.nodes) > 20 and len(net.links) > 40
    assert all(a in net.nodes and b in net.nodes for a, b in net.links)
    assert len(net.largest_component()) > len(net.nodes) // 2


def test_osm_converter_on_santagata_bolognese():
    net = osm.read_osm(_shared("santagata_bolognese_map.osm"))
    # the town's streets, by junction; named streets give the labels
    assert 200 < len(net.nodes) < 1025  # junctions only, of the 1,025 road nodes
    assert "Via 2 Agosto 1980" in set(net.labels.values())
    # the extract is one town: most junctions reach each other
    assert len(net.largest_component()) > 0.9 * len(net.nodes)
    xs = [x for x, _ in net.nodes.values()]
    # metres from the westmost junction: the bounds are 3.45 km wide (lon 11.1149-11.1585
    # at 44.66 N) and the ways that cross them run on a few km
    assert min(xs) == 0 and 3450 < max(xs) < 10_000


# ---------------------------------------------------------- Milan converter

TINY_METRO = """route_id,stop_name,stop_id,stop_sequence,stop_lat,stop_lon,shape_id
M1,CAIROLI,CAIROLI,1,45.4682,9.1817,x
M1,CORDUSIO,CORDUSIO,2,45.4654,9.1863,x
M1,DUOMO M1,DUOMO M1,3,45.4646,9.1896,x
M3,MISSORI,MISSORI,2,45.4597,9.1884,y
M3,DUOMO M3,DUOMO M3,3,45.4639,9.1886,y
M3,MONTENAPOLEONE,MONTENAPOLEONE,4,45.4687,9.1935,y
M3,CROCETTA,CROCETTA,1,45.4530,9.1950,y
"""
TINY_TRAM = """route_id,stop_name,stop_id,stop_sequence,stop_lat,stop_lon,shape_id
T2,via torino,1,1,45.4610,9.1850,z
T2,duomo m1 m3,2,2,45.4639,9.1880,z
T2,p.za cordusio,3,3,45.4656,9.1866,z
"""


def _stop(name: str) -> str:
    return milan.STOP + name


def test_milan_converter_joins_interchanges(tmp_path):
    (tmp_path / "metro.csv").write_text(TINY_METRO)
    (tmp_path / "tram.csv").write_text(TINY_TRAM)
    net = milan.read_milan([tmp_path / "metro.csv", tmp_path / "tram.csv"])
    duomo = _stop("duomo")
    # DUOMO M1, DUOMO M3 and the tram's "duomo m1 m3" are one stop
    assert not any("m1" in n or "m3" in n for n in net.nodes)
    assert {b for a, b in net.links if a == duomo} >= {_stop("cordusio"), _stop("missori"),
                                                        _stop("montenapoleone"), _stop("via_torino")}
    # the stop_sequence orders a line, whatever the row order: CROCETTA comes first on M3
    assert (_stop("crocetta"), _stop("missori")) in net.links
    # "p.za cordusio" (tram) is 25 m from CORDUSIO (metro): a walk joins them
    assert (_stop("cordusio"), _stop("p.za_cordusio")) in net.links
    assert net.labels[duomo] == "DUOMO"
    assert len(net.largest_component()) == len(net.nodes)


def test_milan_converter_reports_a_bad_row(tmp_path):
    path = tmp_path / "metro.csv"
    path.write_text(TINY_METRO.replace("45.4654", "north"))
    with pytest.raises(OntologyError, match=r"metro\.csv:3: stop_sequence must be an integer"):
        milan.read_milan([path])
    path.write_text("route_id,stop_name\nM1,X\n")
    with pytest.raises(OntologyError, match=r"metro\.csv:1: missing column\(s\) stop_sequence"):
        milan.read_milan([path])


def test_milan_converter_on_the_shared_stop_lists():
    folder = _shared("milan_gtfs_2019")
    metro = milan.read_milan([folder / "metro.csv"])
    # 88 stop names, of which DUOMO, LORETO and CADORNA FN carry line suffixes
    assert len(metro.nodes) == 85
    neighbours = {n: {b for a, b in metro.links if a == n} for n in metro.nodes}
    for stop, lines in (("centrale_fs", 2), ("garibaldi_fs", 2), ("zara", 2),
                        ("duomo", 2), ("loreto", 2), ("cadorna_fn", 2)):
        assert len(neighbours[_stop(stop)]) >= 2 * lines - 1, stop  # an interchange: two lines meet
    assert len(metro.largest_component()) == len(metro.nodes)  # the four lines form one network
    both = milan.read_milan([folder / "metro.csv", folder / "tram.csv"])
    assert len(both.nodes) > 300 and len(both.largest_component()) > 0.95 * len(both.nodes)


# ------------------------------------------------------- routes, by the rules
#
#   a ---- b ---- c        a (0, 0), b (100, 0), c (200, 0)
#   |             |        d (0, -100), e (200, -100)
#   d ----------- e        all two-way; a van goes from a to c


def _node(name: str) -> str:
    return NS + "test/" + name


@pytest.fixture
def square(tmp_path):
    net = Network()
    for name, xy in {"a": (0, 0), "b": (100, 0), "c": (200, 0), "d": (0, -100), "e": (200, -100)}.items():
        net.nodes[_node(name)] = xy
    for x, y in ("ab", "bc", "ad", "de", "ec"):
        net.add_link(_node(x), _node(y))
    path = tmp_path / "square.ttl"
    path.write_text(net.to_turtle("a hand-made square"))
    return net, path


def _run(square, traffic=(), stops=("c",)):
    net, path = square
    scenario = Scenario({"van": (_node("a"), [_node(s) for s in stops])},
                        [Traffic(t, kind, _node(x), _node(y)) for t, kind, x, y in traffic])
    return app.simulate(net, path, scenario)


def _legs(result):
    return [[n.rsplit("/", 1)[1] for n in r["route"]] for r in result.records if r["event"] == "leg"]


def _events(result, kind):
    return [r for r in result.records if r["event"] == kind]


def test_direct_route(square):
    result = _run(square)
    assert _legs(result) == [["a", "b", "c"]]
    assert not _events(result, "reroute") and not _events(result, "no_route")
    # the first request's answers: b and d lead to c (b is nearer), nothing is blocked
    first = sorted((q, dict(b)["next"]) for q, s, e, b in result.answers if dict(b)["here"].endswith("/a>"))
    assert first == [("hop", f"<{_node('b')}>"), ("hop", f"<{_node('d')}>")]


def test_reroute_after_a_closure(square):
    # a-b closes half a second before the van asks: the usual hop b is blocked
    result = _run(square, [(-500, "closed", "a", "b")])
    assert _legs(result) == [["a", "d", "e", "c"]]
    [reroute] = _events(result, "reroute")
    assert reroute["at"] == _node("a") and reroute["usual"] == _node("b") and reroute["via"] == _node("d")
    assert reroute["blocked"] == [_node("b")]


def test_closure_ahead_turns_the_van_back(square):
    # b-c closes: b still reaches c (back through a), so the van drives to b,
    # is rerouted there, and goes round by d and e
    result = _run(square, [(-500, "closed", "b", "c")])
    assert _legs(result) == [["a", "b", "a", "d", "e", "c"]]
    [reroute] = _events(result, "reroute")
    assert (reroute["at"], reroute["usual"], reroute["via"]) == (_node("b"), _node("c"), _node("a"))


def test_back_to_the_direct_route_after_reopening(square):
    # closed before the first delivery, reopened before the second (c -> a -> c)
    result = _run(square, [(-500, "closed", "a", "b"), (20_500, "opened", "a", "b")], stops=("c", "a", "c"))
    # the first leg (a, d, e, c: 400 m at 8 m/s) ends after the reopening at 20.5 s
    assert _legs(result) == [["a", "d", "e", "c"], ["c", "b", "a"], ["a", "b", "c"]]
    assert [r["time"] for r in _events(result, "reroute")] == ["2026-03-02T08:00:00Z"]


def test_no_route_when_the_graph_is_cut(square):
    # a is cut off from c until the cut heals 3 minutes later
    result = _run(square, [(-500, "closed", "a", "b"), (-500, "closed", "a", "d"),
                           (180_500, "opened", "a", "d")])
    waits = _events(result, "no_route")
    assert len(waits) == 4  # at 0, 60, 120 and 180 s; at 240 s the road through d is open again
    assert all(w["at"] == _node("a") and w["to"] == _node("c") for w in waits)
    assert _legs(result) == [["a", "d", "e", "c"]]
    assert {q for q, *_ in result.answers} == {"no_route", "hop", "blocked"}


def test_a_delivery_is_given_up_when_no_route_comes_back(square):
    result = _run(square, [(-500, "closed", "a", "b"), (-500, "closed", "a", "d")], stops=("c",))
    assert len(_events(result, "no_route")) == app.MAX_WAITS
    [leg] = [r for r in result.records if r["event"] == "leg"]
    assert leg["status"] == "gave_up" and leg["route"] == [_node("a")]


# ------------------------------------------------------------------ scenario


def test_scenario_generator_properties(tmp_path):
    net = read_network(app.DEFAULT_MAP)
    scenario = generate(net, agents=4, locations=20, seed=7)
    assert len(scenario.rounds) == 4
    places = set(net.largest_component())
    for depot, stops in scenario.rounds.values():
        assert len(stops) == 20 and set(stops) <= places
        assert all(a != b for a, b in zip([depot, *stops], stops))
    assert scenario.closed_share(len(net.segments())) > 0.5
    # every closure is reopened, and closures fall on half seconds (requests on whole ones)
    assert sum(e.kind == "closed" for e in scenario.traffic) == sum(e.kind == "opened" for e in scenario.traffic)
    assert all(e.t % 1000 == 500 for e in scenario.traffic)
    assert generate(net, agents=4, locations=20, seed=7) == scenario  # seeded
    path = tmp_path / "scenario.jsonl"
    write_scenario(scenario, path)
    assert read_scenario(path, net) == scenario


def test_scenario_file_with_an_unknown_node(tmp_path):
    net = read_network(app.DEFAULT_MAP)
    path = tmp_path / "scenario.jsonl"
    path.write_text('{"scenario": 1}\n'
                    f'{{"agent": "van", "depot": "{NS}city/a1", "locations": ["{NS}city/z9"]}}\n')
    with pytest.raises(ScenarioError, match=r"scenario\.jsonl:2: unknown node '.*city/z9'"):
        read_scenario(path, net)
    path.write_text('{"scenario": 1}\n'
                    f'{{"agent": "van", "depot": "{NS}city/a1", "locations": ["{NS}city/b1"]}}\n'
                    f'{{"t": 500, "closed": ["{NS}city/a1", "{NS}city/c1"]}}\n')
    with pytest.raises(ScenarioError, match=r"scenario\.jsonl:3: the map has no road between"):
        read_scenario(path, net)


# ------------------------------------------------------------------- outputs


def test_demo_writes_jsonl_and_png(tmp_path, capsys):
    from cep.cli import main

    out = tmp_path / "out"
    assert main(["demo", "delivery", "--agents", "2", "--locations", "3", "--out", str(out)]) == 0
    records = [json.loads(line) for line in (out / "routes.jsonl").read_text().splitlines()]
    kinds = {r["event"] for r in records}
    assert {"leg", "done"} <= kinds <= {"leg", "done", "reroute", "no_route"}
    legs = [r for r in records if r["event"] == "leg"]
    assert len(legs) == 6
    net = read_network(app.DEFAULT_MAP)
    for leg in legs:
        assert set(leg) == {"event", "agent", "leg", "from", "to", "start", "end", "status", "hops",
                            "reroutes", "waits", "route"}
        route = leg["route"]
        assert route[0] == leg["from"] and leg["hops"] == len(route) - 1
        assert all(link in net.links for link in zip(route, route[1:]))  # a real path on the map
        if leg["status"] == "arrived":
            assert route[-1] == leg["to"]
    for r in records:
        if r["event"] == "reroute":
            assert set(r) == {"event", "agent", "time", "at", "to", "usual", "via", "blocked"}
            assert r["usual"] in r["blocked"] and r["via"] not in r["blocked"]
    assert sorted(r["agent"] for r in records if r["event"] == "done") == ["agent1", "agent2"]
    # the replay log is cep run's input format
    from cep.io import read_events
    events, rejects = read_events([out / "events.jsonl"])
    assert events.num_rows and not rejects
    answers = [json.loads(line) for line in (out / "answers.jsonl").read_text().splitlines()]
    assert {a["query"] for a in answers} <= {"hop", "blocked", "no_route"}
    assert (out / "route.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# `cep demo delivery` run by a process that has touched 800 MB: its summary's
# last JSON line on standard error holds its peak memory.
DEMO_AFTER_800_MB = r"""
import subprocess, sys
held = bytearray(800 * 2**20)
for i in range(0, len(held), 4096):
    held[i] = 1
print(subprocess.run([sys.executable, "-m", "cep", *sys.argv[1:]], capture_output=True, text=True,
                     check=True).stderr)
"""


def test_the_demo_summary_gives_its_own_peak_memory(tmp_path):
    """The summary's peak_rss_mb was getrusage's ru_maxrss, which a process
    started by exec keeps from its parent when the parent's is higher: a
    demo of about 200 MB run by a parent of 800 MB said 800 MB."""
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-c", DEMO_AFTER_800_MB, "demo", "delivery", "--agents", "1",
                           "--locations", "2", "--out", str(tmp_path / "out")], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    said = json.loads(next(line for line in proc.stdout.splitlines() if line.startswith('{"agents"')))
    assert 0 < said["peak_rss_mb"] < 600, f"the demo's peak, {said['peak_rss_mb']} MB, is its parent's"


def test_demo_reports_an_unknown_map(tmp_path, capsys):
    from cep.cli import main

    assert main(["demo", "delivery", "--map", str(tmp_path / "nowhere.ttl"), "--out", str(tmp_path)]) == 2
    assert "nowhere.ttl: no such map file" in capsys.readouterr().err


def test_replay_log_runs_with_cep_run(tmp_path, square, capsys):
    """The log of a run, given to `cep run --engine local`, gives the run's answers."""
    from cep.cli import main

    result = _run(square, [(-500, "closed", "a", "b")])
    log = tmp_path / "events.jsonl"
    log.write_text("".join(json.dumps(e) + "\n" for e in result.log))
    out = tmp_path / "answers.jsonl"
    assert main(["run", str(app.RULES), "--ontology", str(square[1]), "--events", str(log),
                 "--engine", "local", "--out", str(out), "-q"]) == 0
    from cep import terms
    got = set()
    for line in out.read_text().splitlines():
        a = json.loads(line)
        got.add(app.answer_key(a["query"], terms.parse_datetime_ms(a["start"]), terms.parse_datetime_ms(a["end"]),
                               ((k, terms.from_json(v)) for k, v in a["bindings"].items())))
    assert got == result.answers


# --------------------------------------------------------------------- Spark


@pytest.fixture(scope="module")
def spark():
    from cep.spark import spark_session
    from tests.spark.support import TEST_CONF

    return spark_session("local[2]", conf=TEST_CONF)


@pytest.mark.spark
def test_spark_replay_gives_the_same_answers(spark, square):
    result = _run(square, [(-500, "closed", "a", "b"), (20_500, "opened", "a", "b"),
                           (40_500, "closed", "a", "d"), (40_500, "closed", "b", "c")],
                  stops=("c", "a", "c", "a"))
    assert {q for q, *_ in result.answers} == {"hop", "blocked", "no_route"}
    assert app.replay_spark(result.log, square[1], spark) == result.answers


@pytest.mark.spark
def test_spark_replay_of_a_generated_city_run(spark, tmp_path):
    net = read_network(app.DEFAULT_MAP)
    result = app.simulate(net, app.DEFAULT_MAP, generate(net, agents=2, locations=4, seed=3))
    assert len(result.answers) > 50
    assert app.replay_spark(result.log, app.DEFAULT_MAP, spark) == result.answers
