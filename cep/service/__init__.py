"""SPARQL 1.1 federated query (SERVICE) over remote, changing endpoints,
with a maintained local view (Dehghanzadeh, Dell'Aglio, Gao, Della Valle,
Mileo, Bernstein, "Approximate Continuous Query Answering Over Streams and
Dynamic Linked Data Sets", ICWE 2015: "the seed" below).

One module per concern:

    endpoint   the HTTP client (SPARQL 1.1 protocol, JSON and XML results,
               a timeout, the run's allow-list)
    view       a SERVICE pattern's local view: one entry per join key, held
               as Prolog facts, pulled at start, refreshed under a budget
    proposers  WSJ, GNR, WST, BST: the candidate entries of an evaluation
    rankers    RND, LRU, WBM, WBM*: which candidates are refreshed
    options    the run's settings (allow-list, view, proposer, ranker,
               budget gamma or latency bound rho, timeout, alert threshold alpha)
    maintenance  the maintenance process of an engine's views at each
               evaluation (proposer, ranker, maintainer), faults, QoS
    oxigraph   a local Oxigraph server (tests, bench, examples/influencers)
"""
