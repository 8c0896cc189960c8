"""A picture of the network with one agent's route and its rerouting (PNG).

Takes the Network, the Scenario and the app's records (app.py); writes a
PNG of the roads (grey; one-way links with an arrow head), the roads
closed when the agent was first rerouted on the drawn leg (red), the
agent's route on that leg (blue, numbered from its start), the usual hops
that were blocked at its reroutes (orange, dashed), and the leg's start and
destination, framed around the leg. Places are named as the README names
them: on a small map (the project's city) every corner by its name (d2),
on the city its river, bridges, park, avenue and one-way street, and on
any map the leg's start, destination and the places of its reroutes, in
bold (by their rdfs:label on a real town's map). The leg drawn is the agent's shortest
leg with a reroute (the first one on a tie); the agent is the one named,
or the first with a reroute. Returns a one-line description of what it drew.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only, no display

import matplotlib.pyplot as plt  # noqa: E402

from cep import terms  # noqa: E402
from examples.delivery.network import Network  # noqa: E402


def _pick(records: list[dict], agent: str | None):
    legs = [r for r in records if r["event"] == "leg" and (agent is None or r["agent"] == agent)]
    if not legs:
        return None
    if agent is None:
        rerouted = [r for r in legs if r["reroutes"]]
        if rerouted:
            agent = rerouted[0]["agent"]
        else:
            agent = legs[0]["agent"]
        legs = [r for r in legs if r["agent"] == agent]
    # the shortest rerouted leg: its detour is what the picture should show
    return min(legs, key=lambda r: (r["reroutes"] == 0, r["hops"], r["leg"]))


WHOLE_MAP_NODES = 200
NAMED_MAP_NODES = 60  # a map this small has every place named


def _short(iri: str) -> str:
    return iri.rstrip("/").rsplit("/", 1)[-1]


def _name(net: Network, iri: str) -> str:
    """A place as the README and the records name it: the city's corners by
    their IRI's last part (d2), a real town's junctions by their label."""
    if len(net.nodes) <= NAMED_MAP_NODES:
        return _short(iri)
    return net.labels.get(iri) or _short(iri)


def _frame(points, net: Network):
    """The whole map when it is small enough to read (the project's city),
    else the leg's box with a margin (a real town's hundreds of junctions)."""
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    allx, ally = [p[0] for p in net.nodes.values()], [p[1] for p in net.nodes.values()]
    if len(net.nodes) <= WHOLE_MAP_NODES:
        return (min(allx) - 50, min(ally) - 50), (max(allx) + 50, max(ally) + 50)
    margin = max(max(xs) - min(xs), max(ys) - min(ys), 1) * 0.25 + 50
    box = ((min(xs) - margin, min(ys) - margin), (max(xs) + margin, max(ys) + margin))
    whole = ((min(allx) - 50, min(ally) - 50), (max(allx) + 50, max(ally) + 50))
    return (tuple(max(a, b) for a, b in zip(box[0], whole[0])),
            tuple(min(a, b) for a, b in zip(box[1], whole[1])))


def plot_agent(net: Network, scenario, records: list[dict], path, agent: str | None = None) -> str:
    fig, what = draw_agent(net, scenario, records, agent)
    fig.savefig(Path(path), format="png", bbox_inches="tight")
    plt.close(fig)
    return what


def draw_agent(net: Network, scenario, records: list[dict], agent: str | None = None):
    """The figure plot_agent saves, and its one-line description. Place
    names are texts with the gid "place" (every corner of a small map) or
    "leg-place" (the leg's start, destination and reroutes)."""
    leg = _pick(records, agent)
    fig, ax = plt.subplots(figsize=(9, 7), dpi=100)
    ax.set_aspect("equal")
    ax.set_xlabel("metres east")
    ax.set_ylabel("metres north")
    links = set(net.links)
    for a, b in links:
        (x1, y1), (x2, y2) = net.nodes[a], net.nodes[b]
        if (b, a) in links:
            if a < b:
                ax.plot([x1, x2], [y1, y2], color="0.75", lw=1.2, zorder=1)
        else:
            ax.annotate("", (x2, y2), (x1, y1), zorder=1,
                        arrowprops={"arrowstyle": "-|>", "color": "0.6", "lw": 1.2})
    if len(net.nodes) <= NAMED_MAP_NODES:
        for iri, (x, y) in net.nodes.items():
            ax.annotate(_name(net, iri), (x, y), textcoords="offset points", xytext=(-4, -10), fontsize=7,
                        color="0.45", ha="right", zorder=5).set_gid("place")
    from examples.delivery.city import city, landmarks

    if net.nodes == city().nodes:  # the project's city: what its README tells of it
        for text, (x, y) in landmarks():
            ax.annotate(text, (x, y), textcoords="offset points", xytext=(0, 5), ha="center", fontsize=8,
                        style="italic", color="tab:cyan" if text == "river" else "tab:green",
                        rotation=90 if text == "river" else 0, zorder=5).set_gid("landmark")
    if leg is None:
        what = "the network (no leg to draw)"
        ax.set_title("Road network")
    else:
        start_ms = terms.parse_datetime_ms(leg["start"])
        end_ms = terms.parse_datetime_ms(leg["end"])
        reroutes = [r for r in records if r["event"] == "reroute" and r["agent"] == leg["agent"]
                    and start_ms <= terms.parse_datetime_ms(r["time"]) <= end_ms]
        from examples.delivery.app import START_MS

        at = terms.parse_datetime_ms(reroutes[0]["time"]) if reroutes else start_ms
        for a, b in sorted(scenario.closed_at(at - START_MS)):
            (x1, y1), (x2, y2) = net.nodes[a], net.nodes[b]
            ax.plot([x1, x2], [y1, y2], color="tab:red", lw=2.0, alpha=0.55, zorder=2)
        for r in reroutes:
            (x1, y1), (x2, y2) = net.nodes[r["at"]], net.nodes[r["usual"]]
            ax.plot([x1, x2], [y1, y2], color="tab:orange", lw=3, ls="--", zorder=4)
        xs = [net.nodes[n][0] for n in leg["route"]]
        ys = [net.nodes[n][1] for n in leg["route"]]
        ax.plot(xs, ys, color="tab:blue", lw=3, zorder=3, marker="o", ms=4)
        for i, (x, y) in enumerate(zip(xs, ys)):
            if len(xs) <= 40 or i % 5 == 0:
                ax.annotate(str(i), (x, y), textcoords="offset points", xytext=(4, 4), fontsize=7,
                            color="tab:blue", zorder=5)
        named = dict.fromkeys([leg["from"], leg["to"], *(r["at"] for r in reroutes), *(r["usual"] for r in reroutes)])
        for iri in named:
            ax.annotate(_name(net, iri), net.nodes[iri], textcoords="offset points", xytext=(6, -12), fontsize=9,
                        fontweight="bold", zorder=7,
                        bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.8}
                        ).set_gid("leg-place")
        shown = {_name(net, iri) for iri in named}
        for text in [t for t in ax.texts if t.get_gid() == "place" and t.get_text() in shown]:
            text.remove()  # named in bold instead
        ax.plot(*net.nodes[leg["from"]], marker="s", color="black", ms=9, zorder=6)
        ax.plot(*net.nodes[leg["to"]], marker="*", color="gold", mec="black", ms=16, zorder=6)
        ax.plot([], [], color="tab:blue", lw=3, label=f"route taken ({leg['hops']} hops)")
        ax.plot([], [], color="tab:orange", lw=3, ls="--", label=f"usual hop, blocked ({len(reroutes)} reroutes)")
        ax.plot([], [], color="tab:red", lw=2, alpha=0.55, label="closed at the first reroute")
        ax.plot([], [], marker="s", color="black", ls="", label="leg start")
        ax.plot([], [], marker="*", color="gold", mec="black", ls="", ms=12, label="destination")
        (x0, y0), (x1, y1) = _frame([net.nodes[n] for n in leg["route"] + [leg["to"]]], net)
        ax.set_xlim(x0, x1)
        ax.set_ylim(y0, y1)
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
        ax.set_title(f"{leg['agent']}, delivery {leg['leg']}: {leg['start']} to {leg['end']} ({leg['status']})",
                     fontsize=10)
        what = f"{leg['agent']}, delivery {leg['leg']}, {leg['reroutes']} reroute(s)"
    return fig, what
