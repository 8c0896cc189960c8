/*  plunit tests of prolog/cep_window.pl, on small windowed rule sets
    written by hand the way cep/compile writes them (cep_contract.pl lists
    what the runtime needs of them). Solutions are stored as the rules'
    '$wstore' stores them.

    Run from the repository root:
        swipl -q -g "consult('prolog/tests/test_window.pl'), run_tests" -t halt
*/

:- module(test_window, []).

:- use_module('../cep_runtime').
:- use_module('../cep_window').
:- use_module('../cep_contract').
:- use_module(rule_sets).
:- use_module(library(plunit)).
:- use_module(library(lists)).

%   A rule set with one windowed query 0 of window Spec, kind Kind,
%   report Report; Extra: its clauses of the kind.
window_rules(M, Spec, Kind, Report, Extra) :-
    format(string(Clauses),
":- dynamic(['$wsol'/7, '$wpart'/6, '$wgone'/2, '$wnext'/2, '$wdone'/2, '$wlast'/2, '$wcount'/2, '$wcut'/2, '$wset'/1]).
cep_event(_, _, _, _, _, _) :- fail.
'$clock'(-4611686018427387904, 1000).
'$instant_ends'(false).
'$project'(0, v(X), _, _, [X]).
'$window'(0, ~q).
'$wkind'(0, ~q).
'$wreport'(0, ~q).
~s
", [Spec, Kind, Report, Extra]),
    load_rule_set(M, Clauses).

plain(M, Spec, Report) :-
    window_rules(M, Spec, plain, Report, "").

x(Local, IRI) :-
    atom_concat('http://e/', Local, IRI).

%   A solution v(X) over [Ts, Te], stored as '$wstore' stores it.
%   A solution of one triple of a [TRIPLES n] window, the Place-th of its
%   instant T (cep_window_span/5 reads it from the event being processed).
store_placed(M, Local, T, Place) :-
    x(Local, X),
    term_hash(v(X), H),
    assertz(M:'$wsol'(H, 0, Place, Place, v(X), T, T)).

store(M, Local, Ts, Te) :-
    x(Local, X),
    M:'$window'(0, Spec),
    (   cep_window_span(Spec, Ts, Te, F, L)
    ->  term_hash(v(X), H),
        assertz(M:'$wsol'(H, 0, L, F, v(X), Ts, Te))
    ;   true
    ).

%   The answer lines of Text as Ts-Te-Locals.
answers(Text, Answers) :-
    split_string(Text, "\n", "", Lines0),
    exclude(==(""), Lines0, Lines),
    maplist(answer, Lines, Answers).

answer(Line, Ts-Te-Fields) :-
    split_string(Line, "\t", "", ["0", TsS, TeS|Nts]),
    number_string(Ts, TsS),
    number_string(Te, TeS),
    maplist(local, Nts, Fields).

local(Nt, Local) :-
    (   sub_string(Nt, 0, 10, _, "<http://e/")
    ->  sub_string(Nt, 10, _, 1, S), atom_string(Local, S)
    ;   Local = Nt
    ).

close(M, Args, Answers) :-
    cep_close(M, Args, Text),
    answers(Text, Answers).

:- begin_tests(cep_window_span).

test(tumbling) :-
    cep_window_span(time(10, 10, 10, none), 3, 7, F, L),
    assertion(F-L == 1-1).
test(sliding) :-
    cep_window_span(time(10, 5, 5, none), 3, 7, F, L),     % windows (0,10] only: (-5,5] ends before 7
    assertion(F-L == 2-2),
    cep_window_span(time(10, 5, 5, none), 6, 6, F2, L2),   % (0,10] and (5,15]
    assertion(F2-L2 == 2-3).
test(longer_than_the_range, [fail]) :-
    cep_window_span(time(10, 10, 10, none), 0, 15, _, _).
test(in_the_gap_of_a_hopping_window, [fail]) :-
    cep_window_span(time(5, 10, 10, none), 2, 3, _, _).  % windows (5,10], (15,20]...
test(t0) :-                                            % RSP-QL's t0 3: windows (3,13], (13,23]...
    cep_window_span(time(10, 10, 10, 3), 5, 7, F, L),
    assertion(F-L == 1-1),
    cep_window_span(time(20, 10, 10, 3), 14, 14, F2, L2),   % (3,23] and (13,33]; (-7,13] is no window
    assertion(F2-L2 == 2-3).
test(before_t0, [fail]) :-
    cep_window_span(time(10, 10, 10, 3), 2, 2, _, _).
test(count) :-
    cep_window_span(count(3, events), 5, 9, F, L),
    assertion(F-L == 0-0).

:- end_tests(cep_window_span).

:- begin_tests(cep_close).

test(tumbling) :-
    plain(w_tumbling, time(10, 10, 10, none), rstream),
    store(w_tumbling, a, 3, 3), store(w_tumbling, b, 12, 12),
    close(w_tumbling, "now 15", A1),
    assertion(A1 == [0-10-[a]]),
    close(w_tumbling, "now 15", A2),                 % evaluated once
    assertion(A2 == []),
    close(w_tumbling, "final 15", A3),               % the end of the stream closes the last window
    assertion(A3 == [10-20-[b]]),
    cep_window_status(w_tumbling, Status),
    assertion(Status == "none false").
test(sliding) :-
    plain(w_sliding, time(10, 5, 5, none), rstream),
    store(w_sliding, a, 3, 3), store(w_sliding, b, 8, 8),
    close(w_sliding, "final 8", A),
    assertion(A == [-5-5-[a], 0-10-[a], 0-10-[b], 5-15-[b]]).
test(istream_and_dstream) :-
    plain(w_istream, time(10, 5, 5, none), istream),
    plain(w_dstream, time(10, 5, 5, none), dstream),
    forall(member(M, [w_istream, w_dstream]), ( store(M, a, 3, 3), store(M, b, 8, 8) )),
    close(w_istream, "final 8", I),
    assertion(I == [-5-5-[a], 0-10-[b]]),
    close(w_dstream, "final 8", D),
    assertion(D == [5-15-[a], 10-20-[b]]).
test(status) :-
    plain(w_status, time(10, 5, 5, none), rstream),
    cep_window_status(w_status, S0),
    assertion(S0 == "none false"),
    store(w_status, a, 7, 7),
    cep_window_status(w_status, S1),
    assertion(S1 == "10 true").
test(count_window) :-
    plain(w_count, count(2, events), rstream),
    store(w_count, a, 1, 1), store(w_count, b, 2, 2), store(w_count, c, 3, 3),
    close(w_count, "now 4 1 1 1 1 2 1 1 1 3 1 1 1", A),
    assertion(A == [1-1-[a], 1-2-[a], 1-2-[b], 2-3-[b], 2-3-[c]]).
%   Two events of two triples at 1 and 2, one of one triple at 3: the last
%   two events at 3 reach back to 2, the last two triples do not.
test(count_window_of_events) :-
    plain(w_events, count(2, events), rstream),
    store(w_events, a, 1, 1), store(w_events, b, 2, 2), store(w_events, c, 3, 3),
    close(w_events, "now 4 1 2 1 1 2 2 1 1 3 1 1 1", A),
    assertion(A == [1-1-[a], 1-2-[a], 1-2-[b], 2-3-[b], 2-3-[c]]).
%   The last two triples at 3 are c and the one of the two at 2 that came
%   last: b when it came second, not when it came first.
test(count_window_of_triples) :-
    forall(member(M-Place-Expected, [w_triples_last-2-[1-1-[a], 2-2-[b], 2-3-[b], 2-3-[c]],
                                     w_triples_first-1-[1-1-[a], 2-2-[b], 2-3-[c]]]),
           ( plain(M, count(2, triples), rstream),
             store_placed(M, a, 1, 1), store_placed(M, b, 2, Place), store_placed(M, c, 3, 1),
             close(M, "now 4 1 2 1 1 2 2 1 1 3 1 1 1", A),
             assertion(A == Expected) )).
test(contract) :-
    plain(w_contract, time(10, 10, 10, none), rstream),
    assertion(cep_contract_missing(w_contract, [])),
    assertion(cep_contract_applies(w_contract, windows)),
    assertion(\+ cep_contract_applies(w_contract, group)).

:- end_tests(cep_close).

:- begin_tests(cep_aggregates).

%   SELECT ?k (COUNT(?n) AS ?c) (SUM(?n) AS ?s) (AVG(?n) AS ?a) (MIN(?n) AS ?lo)
%   (MAX(?n) AS ?hi) GROUP BY ?k, over [RANGE 10 STEP 10].
group_rules(M) :-
    window_rules(M, time(10, 10, 10, none),
                 group([f(count, false), f(sum, false), f(avg, false), f(min, false), f(max, false)]),
                 rstream,
"'$wkey'(0, v(K, _), [K]).
'$wargs'(0, v(_, N), _, _, [A, A, A, A, A]) :- ( var(N) -> A = err ; A = val(N) ).
'$wrow'(0, [K], Values, _, _, [K|Fields]) :- maplist(field, Values, Fields).
field(V, F) :- ( V == '$error' -> true ; F = V ).").

%   A solution of group K with value N, stored and added to its pane.
store_group(M, Local, N, T) :-
    x(Local, K),
    cep_window_span(time(10, 10, 10, none), T, T, F, L),
    term_hash(s(K, N, T), H),
    assertz(M:'$wsol'(H, 0, L, F, '-', T, T)),
    M:'$wargs'(0, v(K, N), T, T, Args),
    cep_accumulate(M, 0, L, F, [K], Args).

test(group) :-
    group_rules(w_group),
    store_group(w_group, k, 1, 2), store_group(w_group, k, 4, 5), store_group(w_group, k, dec(1r2), 6),
    store_group(w_group, j, 7, 3), store_group(w_group, j, _, 4),
    close(w_group, "now 11", Answers),
    msort(Answers, Sorted),
    % SUM and AVG of j meet an unbound value: an error, the field unbound
    assertion(Sorted == [ 0-10-[j, "\"1\"^^<http://www.w3.org/2001/XMLSchema#integer>", "", "",
                                "\"7\"^^<http://www.w3.org/2001/XMLSchema#integer>",
                                "\"7\"^^<http://www.w3.org/2001/XMLSchema#integer>"],
                          0-10-[k, "\"3\"^^<http://www.w3.org/2001/XMLSchema#integer>",
                                "\"5.5\"^^<http://www.w3.org/2001/XMLSchema#decimal>",
                                "\"1.83333333333333333333\"^^<http://www.w3.org/2001/XMLSchema#decimal>",
                                "\"0.5\"^^<http://www.w3.org/2001/XMLSchema#decimal>",
                                "\"4\"^^<http://www.w3.org/2001/XMLSchema#integer>"] ]),
    assertion(cep_contract_applies(w_group, group)).

:- end_tests(cep_aggregates).

:- begin_tests(cep_part_join).

%   The solutions s(v(C, X), S, E) of a part, one leaving its key C
%   unbound (a UNION inside the part).
part_sols([ s(v(a, 1), 1, 1), s(v(b, 2), 2, 2), s(v(a, 3), 3, 3), s(v(_, 4), 4, 4) ]).

%   The partners of key C through the index: those of that key, and the
%   one with its key unbound, as a scan unifying them would give.
test(lookup, Found == [1-a, 3-a, 4-a]) :-
    part_sols(Sols),
    cep_part_index(Sols, s(v(K, _), _, _), k(K), Index),
    findall(X-C, ( C = a, cep_part_member(Index, k(C), s(v(C, X), _, _)) ), Found).

test(no_partner_but_the_unbound_key, Found == [4-z]) :-
    part_sols(Sols),
    cep_part_index(Sols, s(v(K, _), _, _), k(K), Index),
    findall(X-C, ( C = z, cep_part_member(Index, k(C), s(v(C, X), _, _)) ), Found).

%   A key unbound at the lookup (an OPTIONAL part before this one that
%   was not there) joins every solution, as a scan does.
test(unbound_key_scans_all, Found == [1, 2, 3, 4]) :-
    part_sols(Sols),
    cep_part_index(Sols, s(v(K, _), _, _), k(K), Index),
    findall(X, cep_part_member(Index, k(_), s(v(_, X), _, _)), Found).

test(empty_part, [fail]) :-
    cep_part_index([], s(v(K, _), _, _), k(K), Index),
    cep_part_member(Index, k(a), _).

%   The span of a joined solution: the parts it holds (an optional one
%   not there is unbound); one that holds none (join's identity under a
%   UNION) is timeless.
test(span, S-E == 2-9) :-
    cep_span([i(3, 9), _, i(2, 5)], S, E).

test(span_of_no_part, S-E == timeless-timeless) :-
    cep_span([_, _], S, E).

:- end_tests(cep_part_join).
