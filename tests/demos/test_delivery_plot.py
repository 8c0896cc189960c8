"""What the delivery map names (examples/delivery/plot.py), read from the
figure's texts: the places the README and the records talk about."""

from __future__ import annotations

from examples.delivery import app
from examples.delivery.city import city, node
from examples.delivery.network import Network, read_network
from examples.delivery.plot import draw_agent
from examples.delivery.scenario import generate


def texts(fig, gid) -> list[str]:
    return sorted(t.get_text() for t in fig.axes[0].texts if t.get_gid() == gid)


def leg_records(route, reroutes):
    """One agent's leg along `route`, rerouted at each (at, usual, via)."""
    records = [{"event": "reroute", "agent": "agent1", "time": f"2026-03-02T08:0{i}:15Z", "at": node(at),
                "to": node(route[-1]), "usual": node(usual), "via": node(via), "blocked": [node(usual)]}
               for i, (at, usual, via) in enumerate(reroutes)]
    records.append({"event": "leg", "agent": "agent1", "leg": 1, "from": node(route[0]), "to": node(route[-1]),
                    "start": "2026-03-02T08:00:00Z", "end": "2026-03-02T08:09:00Z", "status": "arrived",
                    "hops": len(route) - 1, "reroutes": len(reroutes), "waits": 0,
                    "route": [node(n) for n in route]})
    return records


def test_the_city_map_names_every_corner_and_the_legs_places_in_bold():
    net = city()
    records = leg_records(["b3", "b2", "c2", "d2", "d1", "e1", "f1", "g1", "g2"], [("d2", "e2", "d1")])
    fig, what = draw_agent(net, generate(net, agents=1, locations=2), records)
    assert what == "agent1, delivery 1, 1 reroute(s)"
    bold = texts(fig, "leg-place")
    assert bold == ["b3", "d2", "e2", "g2"]  # start, destination, where it was rerouted and the usual hop
    corners = texts(fig, "place")
    assert len(corners) == len(net.nodes) - len(bold) and set(corners).isdisjoint(bold)
    assert {"a1", "h6", "c4"} <= set(corners)


def test_the_default_map_is_named_as_the_readme_names_it():
    net = read_network(app.DEFAULT_MAP)
    fig, _ = draw_agent(net, generate(net, agents=1, locations=2), [])
    assert len(texts(fig, "place")) == len(net.nodes) == 48
    assert {"a1", "d2", "e2", "g2", "h6"} <= set(texts(fig, "place"))
    # what the README tells of the city
    assert texts(fig, "landmark") == ["avenue", "bridge (2)", "bridge (5)", "one-way", "park", "river"]


def test_a_large_map_names_the_legs_places_by_their_labels():
    net = Network()
    for i in range(100):  # a town: a row of junctions with street names
        net.nodes[node(f"j{i}")] = (i * 50, 0)
        net.labels[node(f"j{i}")] = f"Via {i}"
        if i:
            net.add_link(node(f"j{i - 1}"), node(f"j{i}"))
    records = leg_records(["j3", "j4", "j5"], [])
    fig, _ = draw_agent(net, generate(net, agents=1, locations=2), records)
    assert texts(fig, "place") == []  # too many to name them all
    assert texts(fig, "landmark") == []  # not the city
    assert texts(fig, "leg-place") == ["Via 3", "Via 5"]
