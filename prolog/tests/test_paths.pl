/*  plunit tests of prolog/cep_paths.pl: SPARQL 1.1 property paths over a
    small background graph (the module p_graph, its triples t/3).

    Run from the repository root:
        swipl -q -g "consult('prolog/tests/test_paths.pl'), run_tests" -t halt
*/

:- module(test_paths, []).

:- use_module('../cep_paths').
:- use_module(library(plunit)).
:- use_module(library(lists)).

%   a -road-> b -road-> c -road-> a (a cycle), c -ferry-> d, e -road-> e
:- dynamic p_graph:t/3.
p_graph:t(a, road, b).
p_graph:t(b, road, c).
p_graph:t(c, road, a).
p_graph:t(c, ferry, d).
p_graph:t(e, road, e).

from(S, Path, Os) :-
    findall(O, cep_path(p_graph, Path, term, S, O), Os0),
    msort(Os0, Os).

to(O, Path, Ss) :-
    findall(S, cep_path(p_graph, Path, term, S, O), Ss0),
    msort(Ss0, Ss).

pairs(Path, Pairs) :-
    findall(S-O, cep_path(p_graph, Path, vars, S, O), Pairs0),
    msort(Pairs0, Pairs).

:- begin_tests(cep_path).

test(step) :-
    from(a, iri(road), Os), assertion(Os == [b]).
test(inverse) :-
    from(a, inv(iri(road)), Os), assertion(Os == [c]).
test(sequence) :-
    from(a, seq([iri(road), iri(road), iri(ferry)]), Os), assertion(Os == [d]).
test(alternative) :-
    from(c, alt([iri(road), iri(ferry)]), Os), assertion(Os == [a, d]).
test(plus_on_a_cycle_ends_once_per_node) :-
    from(a, plus(iri(road)), Os), assertion(Os == [a, b, c]).
test(star_has_length_zero) :-
    from(d, star(iri(road)), Os), assertion(Os == [d]),
    from(c, star(alt([iri(road), iri(ferry)])), Os2), assertion(Os2 == [a, b, c, d]).
test(opt) :-
    from(a, opt(iri(road)), Os), assertion(Os == [a, b]).
test(backwards_from_a_bound_object) :-
    to(d, seq([plus(iri(road)), iri(ferry)]), Ss), assertion(Ss == [a, b, c]).
test(both_ends_bound) :-
    once(cep_path(p_graph, plus(iri(road)), term, b, a)),
    \+ cep_path(p_graph, plus(iri(road)), term, a, d).
test(nested_closures) :-
    from(a, plus(seq([plus(iri(road)), iri(ferry)])), Os), assertion(Os == [d]).
test(no_end_bound) :-
    pairs(plus(iri(road)), Pairs),
    assertion(Pairs == [a-a, a-b, a-c, b-a, b-b, b-c, c-a, c-b, c-c, e-e]).
test(zero_length_with_both_ends_variables_stays_in_the_graph) :-
    % SPARQL 18.5: the ends of a zero-length path range over the graph's nodes
    pairs(opt(iri(ferry)), Pairs),
    assertion(Pairs == [a-a, b-b, c-c, c-d, d-d, e-e]),
    \+ cep_path(p_graph, star(iri(road)), vars, z, z),
    once(cep_path(p_graph, star(iri(road)), term, z, z)).
test(the_graph_is_read_on_every_call) :-
    from(d, plus(iri(road)), []),
    setup_call_cleanup(assertz(p_graph:t(d, road, e)),
                       from(d, plus(iri(road)), Os),
                       retract(p_graph:t(d, road, e))),
    assertion(Os == [e]).

:- end_tests(cep_path).

%   The graph of an instant (as the compiled rules keep it, node 7):
%   d -road-> e, e -road-> f, and a node x of the instant only, x -ferry-> x
:- dynamic p_rules:'$pathev'/6.
p_rules:'$pathev'(7, d, road, e, 1, 2).
p_rules:'$pathev'(7, e, road, f, 2, 2).
p_rules:'$pathev'(7, x, ferry, x, 2, 2).

added(Path, Ends, Pairs) :-
    findall(S-O, cep_path_added(p_graph, instant(p_rules, 7), Path, Ends, S, O), Pairs0),
    msort(Pairs0, Pairs).

:- begin_tests(cep_path_added).

test(the_pairs_the_instant_adds_to_the_background) :-
    % c -ferry-> d (background) then d -road-> e -road-> f (the instant);
    % e -road-> e was there already: e-e is the background's
    added(plus(alt([iri(road), iri(ferry)])), vars, Pairs),
    assertion(Pairs == [a-e, a-f, b-e, b-f, c-e, c-f, d-e, d-f, e-f, x-x]).
test(from_a_bound_end_only_what_it_reaches) :-
    findall(O, cep_path_added(p_graph, instant(p_rules, 7), plus(alt([iri(road), iri(ferry)])), term, a, O), Os),
    assertion(Os == [e, f]),
    findall(S, cep_path_added(p_graph, instant(p_rules, 7), seq([iri(ferry), plus(iri(road))]), term, S, f), Ss),
    assertion(Ss == [c]),
    \+ cep_path_added(p_graph, instant(p_rules, 7), plus(iri(road)), term, a, b).
test(a_node_of_the_instant_only_reaches_itself_by_length_zero) :-
    % x is no node of the background; a, a node of it, reaches itself there
    added(star(iri(road)), vars, Pairs),
    assertion(Pairs == [d-e, d-f, e-f, f-f, x-x]),
    added(opt(iri(ferry)), vars, Pairs2),
    assertion(Pairs2 == [f-f, x-x]).
test(a_constant_end_reaches_itself_in_the_background_already) :-
    \+ cep_path_added(p_graph, instant(p_rules, 7), star(iri(road)), term, z, z).
test(backwards_through_the_background) :-
    % ^road+ from f: e, d (the instant), none further (no road into d)
    added(plus(inv(iri(road))), vars, Pairs),
    assertion(Pairs == [e-d, f-d, f-e]).

:- end_tests(cep_path_added).
