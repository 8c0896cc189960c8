/*  SPARQL 1.1 property paths (section 9) over the background graph, the
    graph of one instant (its events), or their union
    (docs/language.md, "Property paths").

    A query's closures (p+, p*, p?, SPARQL's ArbitraryLengthPath and
    ZeroOrOnePath, section 18.5) are compiled into calls of cep_path/5 with
    the path as a term:

        iri(A)          one step along predicate A
        inv(P)          P backwards (^P)
        seq([P, ...])   P, then the next (P/Q)
        alt([P, ...])   any of them (P|Q)
        plus(P)         one or more steps of P (P+)
        star(P)         zero or more (P*)
        opt(P)          zero or one (P?)

    The path is data read by the interpreter below: nothing of it is ever
    called as a goal. Reachability is breadth-first over ordered sets, so
    cycles end and every pair is found once (set semantics, as SPARQL's
    closures have); within a call each closure is run once from a node,
    so nested closures cost a polynomial of the graph's size (and the
    compiler makes a closure of a closure one: cep/compile/leaves.py).
    The graph is read afresh on every call, so a changed background is
    seen at once.

    With background knowledge, an instant's events add pairs to the
    background's: cep_path_added/6 finds those (the pairs of the union
    graph that the background alone does not have) by walking from the
    nodes whose walks can use a triple of the instant, never through the
    whole background.
*/

:- module(cep_paths, [cep_path/5, cep_path_added/6]).

:- use_module(library(lists)).
:- use_module(library(apply)).
:- use_module(library(ordsets)).

%!  cep_path(+Graph, +Path, +Ends, ?S, ?O) is nondet.
%
%   S and O are connected by Path in Graph (the module holding the
%   background triples as t/3, or instant(Rules, Node), the graph of an
%   instant, or union(Module, instant(Rules, Node)), or triples(List), a
%   window's content: triple/4). A bound end is where the search starts:
%   from S forwards, else from O backwards, else from every node that can
%   start the path. Ends is `term` when the pattern names an end by a
%   constant, `vars` when both are variables: then, as in SPARQL's
%   evaluation of a zero-length path (18.5), the ends range over the
%   nodes of the graph only, even when the rest of the pattern has bound
%   them (a node outside the graph reaches only itself, by length zero).
cep_path(G, Path, Ends, S, O) :-
    path(G, Path, S, O),
    (   Ends == vars, S == O
    ->  once(node(G, S))
    ;   true
    ).

node(G, X) :- triple(G, X, _, _).
node(G, X) :- triple(G, _, _, X).

path(G, Path, S, O) :-
    normal(Path, P),
    setup_call_cleanup(true,
                       pairs(G, P, S, O, Pairs),
                       retractall(closure_ends(_, _, _, _, _))),
    member(S-O, Pairs).

%!  cep_path_added(+Background, +Instant, +Path, +Ends, ?S, ?O) is nondet.
%
%   S and O are connected by Path in the union of the Background graph
%   (a module, as for cep_path/5) and the graph of an Instant
%   (instant(Rules, Node)), and not in the Background alone: the pairs
%   the instant's triples add. Ends as for cep_path/5 (a zero-length
%   pair X-X between two variables is added when X is a node of the
%   instant only). From a bound end the walk starts there; with neither
%   bound, from the nodes whose walks can use a triple of the instant
%   (added_starts/5): the background is walked only where it leads to the
%   instant's triples, so an instant costs what its triples reach.
cep_path_added(B, I, Path, Ends, S, O) :-
    normal(Path, P),
    setup_call_cleanup(true,
                       added_pairs(B, I, P, Ends, S, O, Pairs),
                       retractall(closure_ends(_, _, _, _, _))),
    member(S-O, Pairs).

added_pairs(B, I, P, Ends, S, O, Pairs) :-
    U = union(B, I),
    (   nonvar(S)
    ->  findall(S-Y, added_end(B, U, P, Ends, S, Y), Pairs)
    ;   nonvar(O)
    ->  invert(P, Q),
        findall(X-O, added_end(B, U, Q, Ends, O, X), Pairs)
    ;   added_starts(B, I, P, Ends, Xs),
        findall(X-Y, ( member(X, Xs), added_end(B, U, P, Ends, X, Y) ), Pairs)
    ).

%   added_end(+B, +U, +P, +Ends, +X, -Y): X P Y in the union U, not in B.
added_end(B, U, P, Ends, X, Y) :-
    ends(U, P, X, InUnion),
    ends(B, P, X, InBackground),
    member(Y, InUnion),
    solution(U, Ends, X, Y),
    \+ ( ord_memberchk(Y, InBackground), solution(B, Ends, X, Y) ).

%   A pair of reached ends is a solution in G, where the ends of a
%   zero-length path between two variables must be nodes of G (cep_path/5).
solution(G, Ends, X, Y) :-
    (   Ends == vars, X == Y
    ->  once(node(G, X))
    ;   true
    ).

%   added_starts(+B, +I, +P, +Ends, -Xs): the nodes from which a walk of P
%   over the union can use a triple of the instant I, and, for a path
%   that can have length zero between two variables, the nodes of the
%   instant that the background lacks (each reaches itself).
added_starts(B, I, P, Ends, Xs) :-
    uses(union(B, I), I, P, Xs0),
    (   Ends == vars, nullable(P)
    ->  findall(X, ( node(I, X), \+ node(B, X) ), X1),
        sort(X1, New),
        ord_union(Xs0, New, Xs)
    ;   Xs = Xs0
    ).

%   uses(+U, +I, +P, -Xs): the nodes X from which some walk of P over U
%   takes a triple of I: a step along one of I's triples, or a walk to
%   where the rest of the path can take one (walked backwards over U).
uses(_, I, iri(A), Xs) :- !, findall(X, triple(I, X, A, _), X0), sort(X0, Xs).
uses(_, I, rev(A), Xs) :- !, findall(X, triple(I, _, A, X), X0), sort(X0, Xs).
uses(_, _, seq([]), []) :- !.
uses(U, I, seq([P|Ps]), Xs) :- !,
    uses(U, I, P, Here),
    uses(U, I, seq(Ps), Later),
    invert(P, Q),
    ends_of_set(U, Q, Later, Before),
    ord_union(Here, Before, Xs).
uses(U, I, alt(Ps), Xs) :- !,
    findall(X, (member(P, Ps), uses(U, I, P, X1), member(X, X1)), X0),
    sort(X0, Xs).
uses(U, I, plus(P), Xs) :- !,
    uses(U, I, P, Ys),
    invert(P, Q),
    ends_of_set(U, star(Q), Ys, Xs).
uses(U, I, star(P), Xs) :- !, uses(U, I, plus(P), Xs).
uses(U, I, opt(P), Xs) :- uses(U, I, P, Xs).

%   nullable(+P): P can have length zero.
nullable(seq(Ps)) :- forall(member(P, Ps), nullable(P)).
nullable(alt(Ps)) :- member(P, Ps), nullable(P), !.
nullable(plus(P)) :- nullable(P).
nullable(star(_)).
nullable(opt(_)).

%   pairs(+G, +P, ?S, ?O, -Pairs): the S-O pairs connected by P, found
%   from the bound end, or from every node that can start the path.
pairs(G, P, S, O, Pairs) :-
    (   nonvar(S)
    ->  ends(G, P, S, Os),
        findall(S-O1, member(O1, Os), Pairs)
    ;   nonvar(O)
    ->  invert(P, Q),
        ends(G, Q, O, Ss),
        findall(S1-O, member(S1, Ss), Pairs)
    ;   starts(G, P, Ss),
        findall(S1-O1, ( member(S1, Ss), ends(G, P, S1, Os), member(O1, Os) ), Pairs)
    ).

%   The graph of an instant (cep/compile/leaves.py, path_check/2):
%   instant(Rules, Node), the triples the rules module keeps for the
%   path's Node until the instant's end.
triple(instant(M, N), S, P, O) :-
    !,
    M:'$pathev'(N, S, P, O, _, _).
%   triples(List), the graph of a window's content (cep/compile/windows.py,
%   _path_clause/4): t(S, P, O, Start, End) terms.
triple(triples(L), S, P, O) :-
    !,
    member(t(S, P, O, _, _), L).
triple(union(B, I), S, P, O) :-
    !,
    (   triple(B, S, P, O)
    ;   triple(I, S, P, O)
    ).
triple(G, S, P, O) :-
    G:t(S, P, O).

%   normal(+Path, -Normal): inverses pushed down to the steps, where
%   rev(A) is a step backwards along A.
normal(iri(A), iri(A)).
normal(inv(P), Q) :- normal(P, P1), invert(P1, Q).
normal(seq(Ps), seq(Qs)) :- maplist(normal, Ps, Qs).
normal(alt(Ps), alt(Qs)) :- maplist(normal, Ps, Qs).
normal(plus(P), plus(Q)) :- normal(P, Q).
normal(star(P), star(Q)) :- normal(P, Q).
normal(opt(P), opt(Q)) :- normal(P, Q).

invert(iri(A), rev(A)).
invert(rev(A), iri(A)).
invert(seq(Ps), seq(Qs)) :- maplist(invert, Ps, Rs), reverse(Rs, Qs).
invert(alt(Ps), alt(Qs)) :- maplist(invert, Ps, Qs).
invert(plus(P), plus(Q)) :- invert(P, Q).
invert(star(P), star(Q)) :- invert(P, Q).
invert(opt(P), opt(Q)) :- invert(P, Q).

%   ends(+G, +P, +X, -Ys): the ordered set of the nodes Y with X P Y.
ends(G, iri(A), X, Ys) :- !, findall(Y, triple(G, X, A, Y), Y0), sort(Y0, Ys).
ends(G, rev(A), X, Ys) :- !, findall(Y, triple(G, Y, A, X), Y0), sort(Y0, Ys).
ends(G, seq(Ps), X, Ys) :- !, foldl(ends_of_set(G), Ps, [X], Ys).
ends(G, alt(Ps), X, Ys) :- !,
    findall(Y, (member(P, Ps), ends(G, P, X, Y1), member(Y, Y1)), Y0),
    sort(Y0, Ys).
ends(G, plus(P), X, Ys) :- !, closure(G, P, X, Ys).
ends(G, star(P), X, Ys) :- !, ends(G, plus(P), X, Ys0), ord_add_element(Ys0, X, Ys).
ends(G, opt(P), X, Ys) :- ends(G, P, X, Ys0), ord_add_element(Ys0, X, Ys).

ends_of_set(G, P, Xs, Ys) :-
    findall(Y, (member(X, Xs), ends(G, P, X, Y1), member(Y, Y1)), Y0),
    sort(Y0, Ys).

%   closure(+G, +P, +X, -Ys): the nodes one or more steps of P from X in
%   G, computed once per G, P and X within a call of cep_path/5 or
%   cep_path_added/6 (closure_ends/5 is emptied after it): a closure
%   inside another, as in (p+/q)+, is run from every node the outer one
%   reaches, which without this costs a factor of the graph's size per
%   level of nesting.
closure(G, P, X, Ys) :-
    (   closed(G, P, X, Ys0)
    ->  Ys = Ys0
    ;   ends(G, P, X, First),
        reach(G, P, First, First, Ys),
        term_hash(G-P-X, H),
        assertz(closure_ends(H, G, P, X, Ys))
    ).

:- dynamic closure_ends/5.

%   reach(+G, +P, +Frontier, +Seen, -All): breadth-first, each node once.
%   A node whose closure is known already (closure/4) is not expanded:
%   all it reaches is taken at once, and so are the nodes in it (all they
%   reach is in it too), so on a cycle the closures from its nodes after
%   the first cost about one step each.
reach(_, _, [], Seen, Seen) :- !.
reach(G, P, Frontier, Seen, All) :-
    partition(closed(G, P), Frontier, Closed, Open0),
    foldl(add_closure(G, P), Closed, [], Reached),
    ord_union(Seen, Reached, Seen0),
    ord_subtract(Open0, Reached, Open),
    ends_of_set(G, P, Open, Next),
    ord_subtract(Next, Seen0, New),
    ord_union(Seen0, New, Seen1),
    reach(G, P, New, Seen1, All).

closed(G, P, X) :-
    closed(G, P, X, _).

add_closure(G, P, X, Reached0, Reached) :-
    (   ord_memberchk(X, Reached0)          % all it reaches is in already
    ->  Reached = Reached0
    ;   closed(G, P, X, Ys),
        ord_union(Reached0, Ys, Reached)
    ).

closed(G, P, X, Ys) :-
    term_hash(G-P-X, H),
    closure_ends(H, G, P, X, Ys).

%   starts(+G, +P, -Xs): the nodes a path can start from when neither end
%   is given: those with a first step, or every node of the graph where
%   the path can have length zero (SPARQL's zero-length paths).
starts(G, iri(A), Xs) :- !, findall(X, triple(G, X, A, _), X0), sort(X0, Xs).
starts(G, rev(A), Xs) :- !, findall(X, triple(G, _, A, X), X0), sort(X0, Xs).
starts(G, seq([P|_]), Xs) :- !, starts(G, P, Xs).
starts(G, alt(Ps), Xs) :- !,
    findall(X, (member(P, Ps), starts(G, P, X1), member(X, X1)), X0),
    sort(X0, Xs).
starts(G, plus(P), Xs) :- !, starts(G, P, Xs).
starts(G, _, Xs) :-                     % star, opt: every node
    findall(X, (triple(G, X, _, _) ; triple(G, _, _, X)), X0),
    sort(X0, Xs).
