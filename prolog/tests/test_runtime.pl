/*  plunit tests of prolog/cep_runtime.pl, on small rule sets written by
    hand the way cep/compile writes them (cep_contract.pl lists what the
    runtime needs of them), so the runtime is tested apart from the
    compiler.

    Run from the repository root:
        swipl -q -g "consult('prolog/tests/test_runtime.pl'), run_tests" -t halt
*/

:- module(test_runtime, []).

:- use_module('../cep_runtime').
:- use_module('../cep_fast').
:- use_module('../cep_contract').
:- use_module(rule_sets).
:- use_module(band_stores).
:- use_module(library(plunit)).
:- use_module(library(lists)).
:- use_module(library(prolog_wrap)).

%   SELECT ?x ?y WHERE { { ?k :a ?x } SEQ { ?k :b ?y } }, DISTINCT when
%   Distinct is true, its goal store g2_l/5 windowed (WITHIN Window ms,
%   in generations of 5 ms pruned by the sweep) when Window is a number.
seq_clauses(Window, Distinct, Clauses) :-
    (   integer(Window)
    ->  format(string(Sweep), "'$sweep'(M, Now) :- cep_runtime:cep_expire(M, g2_l, ~w, 5, Now).", [Window]),
        Expired = ":- dynamic('$expired'/2).",
        format(string(Check), "Te2 - Ts1 =< ~w", [Window]),
        Generation = "G is Te div 5"
    ;   Sweep = "'$sweep'(_, _).",
        Expired = "",
        Check = "true",
        Generation = "G = 0"
    ),
    (   Distinct == true -> Dist = "'$distinct'(0)." ; Dist = ":- dynamic('$distinct'/1)." ),
    format(string(Clauses),
":- dynamic(g2_l/5).
~s
cep_event(S, P, O, Ts, Te, A) :- leaf(P, S, O, Ts, Te, A).
leaf('http://e/a', K, X, Ts, Te, _) :- ~s, assertz(g2_l(K, G, v(K, X), Ts, Te)), fail.
leaf('http://e/b', K, Y, Ts2, Te2, ans(0, v(K, X, Y), Ts1, Te2)) :-
    g2_l(K, _, v(K, X), Ts1, Te1), Te1 < Ts2, ~s.
~s
'$clock'(-4611686018427387904, 5).
'$instant_ends'(false).
'$project'(0, v(_, X, Y), _, _, [X, Y]).
~s
", [Expired, Generation, Check, Sweep, Dist]).

seq_rules(M, Window, Distinct, Text) :-
    seq_clauses(Window, Distinct, Clauses),
    rule_set_text(M, Clauses, Text).

load_seq(M) :- load_seq(M, none, false).
load_seq(M, Window, Distinct) :-
    seq_clauses(Window, Distinct, Clauses),
    load_rule_set(M, Clauses).

%   An event line of a batch (prolog/cep_fast.c): S P O Start End.
event(S, P, O, T, Line) :-
    format(string(Line), "Ihttp://e/~w\tIhttp://e/~w\tIhttp://e/~w\t~w\t~w", [S, P, O, T, T]).

batch(Events, Text) :-
    maplist([e(S, P, O, T), L]>>event(S, P, O, T, L), Events, Lines),
    atomic_list_concat(Lines, '\n', Atom),
    atom_string(Atom, Text).

push(M, Events, Answers) :-
    batch(Events, Text),
    cep_push(M, Text, Answers).

x(Local, Nt) :-
    format(string(Nt), "<http://e/~w>", [Local]).

line(Q, Ts, Te, Locals, Line) :-
    maplist(x, Locals, Fields),
    atomic_list_concat([Q, Ts, Te|Fields], '\t', A),
    format(string(Line), "~w~n", [A]).

:- begin_tests(cep_push).

test(seq_answers) :-
    load_seq(r_seq),
    push(r_seq, [e(k, a, x, 1), e(k, a, x2, 2), e(j, a, z, 2)], A1),
    push(r_seq, [e(k, b, y, 3), e(j, b, w, 4)], A2),
    assertion(A1 == ""),
    line(0, 1, 3, [x, y], L1), line(0, 2, 3, [x2, y], L2), line(0, 2, 4, [z, w], L3),
    string_concat(L1, L2, L12), string_concat(L12, L3, Expected),
    assertion(A2 == Expected).
test(a_rule_set_without_limits_is_an_error_not_a_failure,
     error(existence_error(cep_limits, r_unlimited))) :-
    seq_rules(r_unlimited, none, false, Text),
    cep_load(r_unlimited, Text),
    push(r_unlimited, [e(k, a, x, 1)], _).
test(simultaneous_events_do_not_follow_each_other) :-
    load_seq(r_simultaneous),
    push(r_simultaneous, [e(k, a, x, 5), e(k, b, y, 5)], A),
    assertion(A == "").
test(two_derivations_are_one_answer) :-
    % the same goal stored twice: two derivations of one solution
    load_seq(r_twice),
    push(r_twice, [e(k, a, x, 1), e(k, a, x, 1)], _),
    push(r_twice, [e(k, b, y, 2)], A),
    line(0, 1, 2, [x, y], Expected),
    assertion(A == Expected).
test(distinct_rows) :-
    % two solutions (keys k and j) with one interval and one row once
    % projected: DISTINCT answers it once
    Events1 = [e(k, a, x, 1), e(j, a, x, 1)],
    Events2 = [e(k, b, y, 2), e(j, b, y, 2)],
    line(0, 1, 2, [x, y], Line),
    load_seq(r_distinct, none, true),
    push(r_distinct, Events1, _),
    push(r_distinct, Events2, A),
    assertion(A == Line),
    load_seq(r_not_distinct),
    push(r_not_distinct, Events1, _),
    push(r_not_distinct, Events2, B),
    string_concat(Line, Line, Twice),
    assertion(B == Twice).
test(loading_twice_adds_nothing) :-
    load_seq(r_again),
    load_seq(r_again),
    push(r_again, [e(k, a, x, 1)], _),
    push(r_again, [e(k, b, y, 2)], A),
    line(0, 1, 2, [x, y], Expected),
    assertion(A == Expected).
test(bad_batch, [throws(cep_message(Text))]) :-
    load_seq(r_bad),
    cep_push(r_bad, "Ia\tIp\tIb\t5\t5\nIa\tIp\tIc\t4\t4", _),
    assertion(sub_string(Text, _, _, _, "malformed event batch")).

:- end_tests(cep_push).

:- begin_tests(answers_text).

%   Query 0 picks values of v/4 (one field unbound), query 1's Values is
%   an atom and it has no field, query 2's field is its Start: the C
%   library writes the lines of queries 0 and 1 (cep_answers_text/4),
%   those of query 2 are made in Prolog.
load_answers(M) :-
    load_rule_set(M, "cep_event(_, _, _, _, _, _) :- fail.
'$project'(0, v(A, B, _, D), _, _, [B, D, A, _]).
'$project'(1, w, _, _, []).
'$project'(2, v(X, _), Ts, _, [X, Ts]).").

%   The lines as cep_runtime makes them in Prolog: rows, then their text
rows_text(M, Answers, Text) :-
    cep_runtime:answer_rows(Answers, M, Rows, []),
    cep_answer_text(Rows, Text).

%   Each answer once in its instant (unbound values as numbervars/3 makes
%   them: equal where they stand alike), in the standard order of terms
%   (numbers, then atoms, then compound terms; an unbound value as
%   '$VAR'(N)), projected by its query
test(distinct_in_standard_order) :-
    load_answers(r_answers_order),
    Answers = [ ans(0, v(b, 2, x, 1), 1, 5), ans(0, v(a, dec(1r2), y, 2), 1, 5),
                ans(0, v(b, 2, x, 1), 1, 5), ans(0, v(a, _, y, _), 0, 5),
                ans(1, w, 0, 5), ans(0, v(a, _, z, _), 0, 5), ans(0, v(a, 1, y, 2), 1, 5),
                ans(0, v(c, X, y, X), 2, 6) ],
    cep_runtime:answers_text(Answers, r_answers_order, Text),
    I = "\"^^<http://www.w3.org/2001/XMLSchema#integer>",
    D = "\"^^<http://www.w3.org/2001/XMLSchema#decimal>",
    atomics_to_string([ "0\t1\t5\t\"1", I, "\t\"2", I, "\t<a>\t\n",
                        "0\t0\t5\t\t\t<a>\t\n",         % v(a, _, y, _)
                        "0\t0\t5\t\t\t<a>\t\n",         % v(a, _, z, _)
                        "0\t1\t5\t\"0.5", D, "\t\"2", I, "\t<a>\t\n",
                        "0\t1\t5\t\"2", I, "\t\"1", I, "\t<b>\t\n",
                        "1\t0\t5\n",
                        "0\t2\t6\t\t\t<c>\t\n" ], Expected),
    assertion(Text == Expected),
    rows_text(r_answers_order, Answers, Rows),
    assertion(Text == Rows).

%   Random instants of answers whose values are of every kind, some
%   answers twice (two decimals with the same nearest double, an integer beyond 64
%   bits, IRIs that differ, unbound values, one unbound value twice):
%   the lines of the C library are those made in Prolog
test(as_rows_in_prolog) :-
    load_answers(r_answers_random),
    set_random(seed(5)),
    R1 is 100000000000000001r100000000000000000,
    R2 is 100000000000000003r100000000000000000,
    Big is 2**70,
    Pool = [ 'http://e/a', 'http://e/b', 'http://e/caf\u00e9', 3, -2, Big, 1.5, "s", lang("s", en),
             dec(1), dec(R1), dec(R2), dec(1r2), dec(-7r4), dec(Big),
             lv("1.50", 'http://www.w3.org/2001/XMLSchema#decimal', dec(3r2)), free ],
    length(Pool, N),
    forall(between(1, 30, _),
           ( findall(A, ( between(1, 12, Te), random_between(0, 6, K), between(1, K, _),
                          random_answer(Pool, N, Te, A0),
                          ( maybe(0.3) -> member(A, [A0, A0]) ; A = A0 ) ), Answers),
             cep_runtime:answers_text(Answers, r_answers_random, Text),
             rows_text(r_answers_random, Answers, Expected),
             assertion(Text == Expected),
             (   cep_fast:foreign_loaded
             ->  cep_runtime:answer_columns(r_answers_random, Columns),
                 assertion(cep_answers_text(Answers, Columns, no_rows, Text))
             ;   true
             ) )).

%   The rows of an instant the C library does not take: none (a test
%   that the library took every instant)
no_rows(_, _) :-
    fail.

random_answer(Pool, N, Te, A) :-
    random_between(0, 1, Q),
    (   Q == 1
    ->  A = ans(1, w, 0, Te)
    ;   length(Vs, 4),
        maplist(random_value(Pool, N), Vs),
        (   maybe(0.1) -> Vs = [_, X, _, X] ; true ),
        random_between(0, 2, Ts),
        V =.. [v|Vs],
        A = ans(0, V, Ts, Te)
    ).

random_value(Pool, N, V) :-
    random_between(1, N, I),
    nth1(I, Pool, V0),
    (   V0 == free -> true ; V = V0 ).

%   An answer of a query whose fields are not values picked (query 2):
%   the lines of its instant are made in Prolog. The C library makes none
%   either where a value is a term with a variable inside (no RDF term is).
test(other_answers_made_in_prolog) :-
    load_answers(r_answers_other),
    cep_runtime:answer_columns(r_answers_other, Columns),
    assertion(Columns == [0-(v/4-[2, 4, 1, 0]), 1-(w/0-[])]),
    Answers = [ans(0, v(a, 1, 2, 3), 1, 1), ans(2, v(b, c), 1, 1)],
    assertion(\+ cep_answers_text(Answers, Columns, no_rows, _)),
    cep_runtime:answers_text(Answers, r_answers_other, Text),
    rows_text(r_answers_other, Answers, Expected),
    assertion(Text == Expected),
    assertion(\+ cep_answers_text([ans(0, v(a, f(_), 2, 3), 1, 1), ans(0, v(a, 1, 2, 3), 1, 1)], Columns, no_rows, _)).

%   A batch that mixes instants of queries whose fields are values picked
%   (0) with an instant of one whose are not (2): only that instant is
%   made in Prolog, its query's alone projected there ('$project'/5
%   called), and the lines are those made in Prolog. (The whole batch was
%   made again in Prolog, every answer projected, once the C library met
%   query 2.)
:- dynamic test_runtime:projected/1.

test(mixed_instants_made_once, [cleanup(unwrap_predicate(r_answers_mixed:'$project'(_, _, _, _, _), count))]) :-
    load_answers(r_answers_mixed),
    Answers = [ ans(0, v(a, 1, 2, 3), 1, 1), ans(0, v(b, 1, 2, 3), 1, 1),
                ans(2, v(b, c), 2, 2), ans(0, v(a, 1, 2, 3), 2, 2),
                ans(0, v(c, 4, 5, 6), 3, 3) ],
    rows_text(r_answers_mixed, Answers, Expected),
    retractall(test_runtime:projected(_)),
    wrap_predicate(r_answers_mixed:'$project'(Q, _, _, _, _), count, Wrapped,
                   ( assertz(test_runtime:projected(Q)), Wrapped )),
    cep_runtime:answers_text(Answers, r_answers_mixed, Text),
    assertion(Text == Expected),
    findall(Q1, test_runtime:projected(Q1), Projected),
    (   cep_fast:foreign_loaded
    ->  assertion(Projected == [0, 2])             % the instant of query 2, in standard order
    ;   assertion(Projected == [0, 0, 0, 2, 0])    % without the library: every answer, in Prolog
    ).

%   A rule set unloaded and loaded again into the same module with other
%   projections: its answers are projected by the new ones (the columns
%   once cached by the runtime outlived the module's clauses and picked
%   the old fields).
test(columns_go_with_the_rule_set) :-
    load_rule_set(r_answers_again, "cep_event(_, _, _, _, _, _) :- fail.\n'$project'(0, v(A, _), _, _, [A])."),
    cep_runtime:answers_text([ans(0, v(a, b), 1, 1)], r_answers_again, Text1),
    assertion(Text1 == "0\t1\t1\t<a>\n"),
    unload_file(r_answers_again),
    load_rule_set(r_answers_again, "cep_event(_, _, _, _, _, _) :- fail.\n'$project'(0, v(_, B), _, _, [B])."),
    cep_runtime:answers_text([ans(0, v(a, b), 1, 1)], r_answers_again, Text2),
    assertion(Text2 == "0\t1\t1\t<b>\n").

%   A query of many fields (far more than the C library's first
%   allocation for the columns of a call, which they once overran): each
%   field in its place
test(many_fields) :-
    numlist(1, 20000, Is),
    length(Args, 20000),
    V =.. [v|Args],
    format(string(Clauses), "cep_event(_, _, _, _, _, _) :- fail.~n'$project'(0, ~q, _, _, ~q).", [V, Args]),
    load_rule_set(r_answers_wide, Clauses),
    findall(ans(0, W, 1, 1), ( member(X, [b, a, b]), length(Vs, 20000), maplist(=(X), Vs), W =.. [v|Vs] ),
            Answers),
    cep_runtime:answers_text(Answers, r_answers_wide, Text),
    rows_text(r_answers_wide, Answers, Expected),
    assertion(Text == Expected),
    cep_runtime:answer_columns(r_answers_wide, Columns),
    assertion(Columns == [0-(v/20000-Is)]),
    (   cep_fast:foreign_loaded
    ->  assertion(cep_answers_text(Answers, Columns, no_rows, Text))
    ;   true
    ).

:- end_tests(answers_text).

:- begin_tests(cep_load).

test(incomplete_rule_set, [error(cep_error(incomplete_rule_set(r_incomplete, ['$check'/3])))]) :-
    seq_rules(r_incomplete, none, false, Text0),
    re_replace("'\\$check'\\(_, _, _\\) :- fail\\."/g, "", Text0, Text),
    cep_load(r_incomplete, Text).
test(not_a_rule_set, [error(cep_error(not_a_rule_set(r_none)))]) :-
    cep_load(r_none, ":- module(r_none, []).\nfoo.\n").
test(does_not_load, [error(cep_error(rules_do_not_load(r_broken, _)))]) :-
    setup_call_cleanup(asserta((user:message_hook(_, error, _) :- true), Ref),  % not on the test's output
                       cep_load(r_broken, ":- module(r_broken, []).\nfoo(.\n"),
                       erase(Ref)).
test(contract_met) :-
    load_seq(r_met, 10, true),
    cep_contract_missing(r_met, Missing),
    assertion(Missing == []),
    assertion(cep_contract_applies(r_met, pruning)),
    assertion(\+ cep_contract_applies(r_met, chaining)).
test(exports) :-
    % Python calls these (cep/runtime/session.py): they must be exported
    module_property(cep_runtime, exports(Exports)),
    forall(member(PI, [cep_load/2, cep_load_background/2, cep_load_instances/2, cep_push/3,
                       cep_advance/3, cep_set_limits/2, cep_dump/2, cep_restore/2]),
           assertion(memberchk(PI, Exports))).

:- end_tests(cep_load).

:- begin_tests(cep_state).

test(dump_and_restore) :-
    load_seq(r_dump_a),
    push(r_dump_a, [e(k, a, x, 1)], _),
    cep_dump(r_dump_a, State),
    assertion(string(State)),
    load_seq(r_dump_b),
    cep_restore(r_dump_b, State),
    push(r_dump_b, [e(k, b, y, 2)], A),
    line(0, 1, 2, [x, y], Expected),
    assertion(A == Expected).
test(restore_replaces) :-
    load_seq(r_replace),
    cep_dump(r_replace, Empty),
    push(r_replace, [e(k, a, x, 1)], _),
    cep_restore(r_replace, Empty),
    push(r_replace, [e(k, b, y, 2)], A),
    assertion(A == "").
test(advance_prunes_a_window) :-
    load_seq(r_advance, 10, false),
    push(r_advance, [e(k, a, x, 1)], _),
    cep_advance(r_advance, "3", P1),
    assertion(P1 == "true"),
    cep_advance(r_advance, "40", P2),      % generation 0 started before 5 =< 40 - 10
    assertion(P2 == "false"),
    push(r_advance, [e(k, b, y, 41)], A),
    assertion(A == "").
test(window_keeps_what_can_still_join) :-
    load_seq(r_within, 10, false),
    push(r_within, [e(k, a, x, 1), e(k, a, x2, 12)], _),
    push(r_within, [e(k, b, y, 14)], A),   % x at 1 is past the window, x2 is not
    line(0, 12, 14, [x2, y], Expected),
    assertion(A == Expected).

:- end_tests(cep_state).

:- begin_tests(cep_expire).

expire_module(M) :-
    dynamic(M:g/5),
    forall(between(0, 9, G), assertz(M:g(k, G, v, 0, 0))).
generations(M, Gs) :-
    findall(G, M:g(_, G, _, _, _), Gs).

test(whole_generations) :-
    expire_module(r_exp),
    dynamic(r_exp:'$expired'/2),
    % generations of 10 ms, window 30: at 80 those with (G+1)*10 =< 50 go
    cep_expire(r_exp, g, 30, 10, 80),
    generations(r_exp, Gs),
    assertion(Gs == [5, 6, 7, 8, 9]),
    assertion(r_exp:'$expired'(g, 4)),
    cep_expire(r_exp, g, 30, 10, 85),      % nothing more is due
    generations(r_exp, Gs),
    cep_expire(r_exp, g, 30, 10, 100),
    generations(r_exp, Gs2),
    assertion(Gs2 == [7, 8, 9]).

%   A plain SEQ store (cep_fast.pl, cep_seq_add/7): in C, or facts of
%   the module without the library (this suite runs both).
test(a_plain_store_drops_whole_generations) :-
    seq_module(M),
    % window 30 ms in generations of 10 ms: at 80 the generations =< 4 go
    forall(member(K-T, [k-5, j-25, k-35, k-45, j-55]),
           ( G is T // 10, cep_seq_add(M, g, K, G, v(T), T, T) )),
    cep_seq_expire(M, g, 30, 10, 80),
    seq_goals(M, _, Left),
    assertion(Left == [v(55)-55]),
    cep_seq_add(M, g, k, 9, v(95), 95, 95),                 % key k emptied, used again
    seq_goals(M, k, Again),
    assertion(Again == [v(95)-95]),
    cep_seq_expire(M, g, 30, 10, 200),
    seq_goals(M, _, Gone),
    assertion(Gone == []).

%   A band store (cep_fast.pl): in C, or facts of the module without the
%   library (this suite runs both).
test(expiry_drops_whole_generations_and_empty_bands) :-
    band_module(M),
    % window 30 ms in generations of 10 ms: at 80 the generations =< 4 go
    forall(member(T, [5, 25, 35, 45, 55]),
           ( G is T // 10, cep_band_add(M, g, g_bands, k, G, v(T), T, T) )),
    cep_band_expire(M, g, g_bands, 30, 10, 80),
    band_goals(M, k, <, 0, Left),
    assertion(Left == [v(55)-55]),
    cep_band_add(M, g, g_bands, k, 9, v(5), 95, 95),        % the band of 5 emptied, used again: it comes last
    band_goals(M, k, <, 0, Again),
    assertion(Again == [v(55)-55, v(5)-95]),
    cep_band_expire(M, g, g_bands, 30, 10, 200),
    band_goals(M, k, <, 0, Gone),
    assertion(Gone == []),
    assertion(\+ M:g_bands(_, _)).

:- end_tests(cep_expire).


:- begin_tests(cep_background).

triples(Text) :-
    batch([e(a, p, b, 0), e(b, p, c, 0)], Text).

test(facts) :-
    triples(Text),
    cep_load_background(r_bg, Text),
    findall(S-O, r_bg:t(S, 'http://e/p', O), Pairs),
    assertion(Pairs == ['http://e/a'-'http://e/b', 'http://e/b'-'http://e/c']),
    cep_load_background(r_bg, Text),       % once
    aggregate_all(count, r_bg:t(_, _, _), N),
    assertion(N == 2).
test(instances) :-
    triples(Text),
    cep_load_instances(r_bgi, Text),
    aggregate_all(count, r_bgi:i(_, _, _), N),
    assertion(N == 2),
    assertion(\+ predicate_property(r_bgi:i(_, _, _), dynamic)).
test(empty_graph) :-
    cep_load_background(r_bg_empty, ""),
    assertion(\+ r_bg_empty:t(_, _, _)).

:- end_tests(cep_background).

:- begin_tests(cep_queue).

chain_module(M) :-
    dynamic([M:'$derived'/6, M:'$queued'/5]),
    assertz(M:'$rule'(0, "doubling")),
    cep_set_limits(M, "2 100 250000").

test(queued_once) :-
    chain_module(r_q1),
    cep_queue(r_q1, 0, a, p, 1, 5, 5),
    cep_queue(r_q1, 0, a, p, 1, 5, 5),
    findall(O, r_q1:'$queued'(a, p, O, 5, 5), Os),
    assertion(Os == [1]).
test(too_many_triples, [throws(cep_message(Text))]) :-
    chain_module(r_q2),
    cep_reporting(forall(between(1, 3, O), cep_queue(r_q2, 0, a, p, O, 7, 7))),
    assertion(sub_string(Text, _, _, _, "doubling (3 new triples)")).
test(too_long_value, [throws(cep_message(Text))]) :-
    chain_module(r_q3),
    length(L, 120), maplist(=(0'a), L), string_codes(Long, L),
    cep_reporting(cep_queue(r_q3, 0, a, p, Long, 7, 7)),
    assertion(sub_string(Text, _, _, _, "longer than 100 characters")).
test(no_limits, [error(existence_error(cep_limits, r_q4))]) :-
    dynamic([r_q4:'$derived'/6, r_q4:'$queued'/5]),
    cep_queue(r_q4, 0, a, p, o, 1, 1).

:- end_tests(cep_queue).

:- begin_tests(cep_small).

test(not) :-
    cep_not(true, F), F == false,
    cep_not(false, T), T == true.
test(not_error, [fail]) :-
    cep_not(error, _).
test(in) :-
    cep_in([false, error, true], R1), R1 == true,
    cep_in([false, false], R2), R2 == false,
    \+ cep_in([false, error], _),
    cep_notin([false, false], R3), R3 == true,
    cep_notin([true, error], R4), R4 == false.
test(skolem) :-
    cep_skolem(k(0, b, [x], 1, 2), B1),
    cep_skolem(k(0, b, [x], 1, 2), B2),
    cep_skolem(k(0, b, [y], 1, 2), B3),
    assertion(B1 == B2),
    assertion(B1 \== B3),
    assertion(B1 = bn(_)).
test(bands) :-
    cep_band_admits(above, 5, 6),
    \+ cep_band_admits(above, 4, 6),
    cep_band_admits(below, 7, 6),
    \+ cep_band_admits(below, 8, 6),
    cep_band_admits(below, other, 100),
    cep_band_key(k, 3, H1), cep_band_key(k, 3, H2), cep_band_key(k, 4, H3),
    assertion(H1 == H2), assertion(H1 \== H3).

:- end_tests(cep_small).

:- begin_tests(cep_instants).

test(deferred_check_at_the_end_of_an_instant) :-
    % "an :a with no :b of its key at the same instant": a deferred check
    load_rule_set(r_deferred, "
:- dynamic([pend/3, seen/1]).
cep_event(K, 'http://e/a', X, _, Te, _) :- assertz(pend(K, X, Te)), fail.
cep_event(K, 'http://e/b', _, _, _, _) :- assertz(seen(K)), fail.
'$deferred'([[1]]).
'$check'(1, _, ans(0, v(X), T, T)) :- pend(K, X, T), \\+ seen(K).
'$end_group' :- retractall(seen(_)), retractall(pend(_, _, _)).
'$project'(0, v(X), _, _, [X]).
"),
    push(r_deferred, [e(k, a, x, 1), e(k, b, y, 1), e(j, a, z, 1), e(m, a, w, 2)], A),
    line(0, 1, 1, [z], L1), line(0, 2, 2, [w], L2),
    string_concat(L1, L2, Expected),
    assertion(A == Expected),
    assertion(\+ r_deferred:pend(_, _, _)).
test(notseq_deadlines) :-
    % "an :a with no :b of its key within 10 ms": each deadline an instant
    % of its own, fired when event time passes it
    load_rule_set(r_absence, "
:- dynamic(due/3).
cep_event(K, 'http://e/a', X, _, Te, _) :- D is Te + 10, assertz(due(K, X, D)), fail.
cep_event(K, 'http://e/b', _, _, _, _) :- retractall(due(K, _, _)), fail.
'$absence_nodes'([3]).
'$absence_next'(3, D) :- aggregate_all(min(D0), due(_, _, D0), D).
'$absence_fire'(3, D, ans(0, v(X), D, D)) :- retract(due(_, X, D)).
'$deferred'([[fire(3)]]).
'$project'(0, v(X), _, _, [X]).
"),
    push(r_absence, [e(k, a, x, 1), e(j, a, z, 3), e(j, b, y, 5)], A1),
    assertion(A1 == ""),
    push(r_absence, [e(m, a, w, 20)], A2),              % passes k's deadline 11
    line(0, 11, 11, [x], L),
    assertion(A2 == L),
    cep_absence(r_absence, 100, Rows),                  % a watermark at 100: m's at 30
    assertion(Rows == [r(0, 30, 30, ['http://e/w'])]).
test(rule_chaining) :-
    % a CONSTRUCT rule derives :c from :a; a query reads :c at the same instant
    load_rule_set(r_chain, "
:- dynamic(['$derived'/6, '$queued'/5]).
cep_event(K, 'http://e/a', X, Ts, Te, _) :- cep_runtime:cep_queue(r_chain, 0, K, 'http://e/c', X, Ts, Te), fail.
cep_event(_, 'http://e/c', X, Ts, Te, ans(1, v(X), Ts, Te)).
'$chaining'(true).
'$waiting'(_) :- fail.
'$rule'(0, \"derive\").
'$end_group' :- retractall('$derived'(_, _, _, _, _, _)).
'$project'(1, v(X), _, _, [X]).
"),
    cep_set_limits(r_chain, "100 1000 250000"),
    push(r_chain, [e(k, a, x, 1), e(k, a, x, 1), e(j, a, z, 2)], A),
    line(1, 1, 1, [x], L1), line(1, 2, 2, [z], L2),
    string_concat(L1, L2, Expected),
    assertion(A == Expected),
    assertion(\+ r_chain:'$derived'(_, _, _, _, _, _)),
    assertion(cep_contract_applies(r_chain, chaining)).

:- end_tests(cep_instants).
