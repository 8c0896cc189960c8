/*  plunit tests of prolog/cep_service.pl: the local views of SERVICE
    patterns, looked up by their join key.

    Run from the repository root:
        swipl -q -g "consult('prolog/tests/test_service.pl'), run_tests" -t halt
*/

:- module(test_service, []).

:- use_module('../cep_service').
:- use_module(library(plunit)).
:- use_module(library(lists)).

%   view 7 of rules module r: rows v(N, U), keyed by U (argument 2)
setup :-
    cep_service_define(r, "7", "2"),
    cep_service_set(r, "7", "[e(0, u1, [v(5, u1)]), e(1, u2, [v(9, u2), v(10, u2)]), e(2, u3, [])]").

rows(U, Ns) :-
    findall(N, cep_service_row(r, 7, timeless, v(N, U), _), Ns0),
    msort(Ns0, Ns).

:- begin_tests(cep_service, [setup(setup)]).

test(lookup_by_key) :-
    rows(u1, Ns), assertion(Ns == [5]).
test(several_rows_of_a_key) :-
    rows(u2, Ns), assertion(Ns == [9, 10]).
test(a_key_with_no_row_and_an_unknown_key_join_nothing) :-
    rows(u3, Ns), assertion(Ns == []),
    rows(u9, Ms), assertion(Ms == []).
test(a_set_replaces_the_rows_of_its_keys_only) :-
    cep_service_set(r, "7", "[e(0, u1, [v(6, u1)])]"),
    rows(u1, Ns), assertion(Ns == [6]),
    rows(u2, Ms), assertion(Ms == [9, 10]).
test(needed_entries_keep_their_latest_end) :-
    forall(member(T, [3, 8, 5]), once(cep_service_row(r, 7, T, v(_, u1), _))),
    cep_service_touch(r, 7, 4, v(_, u2)),
    cep_service_touch(r, 7, 4, v(_, u9)),   % not in the view: nothing to mark
    cep_service_touched(r, "7", "0", Text),
    split_string(Text, "\n", "", Lines0), exclude(==(""), Lines0, Lines1), msort(Lines1, Lines),
    assertion(Lines == ["0 8", "1 4"]),
    cep_service_touched(r, "7", "5", After),
    assertion(After == "0 8\n").
test(silent_gives_the_one_empty_solution) :-
    cep_service_silent(r, "7", "true"),
    findall(N-U-E, cep_service_row(r, 7, timeless, v(N, U), E), Sols),
    cep_service_silent(r, "7", "false"),
    assertion(Sols = [N0-U0-true]), assertion(var(N0)), assertion(var(U0)).
test(needed_entries_restored_from_lines) :-
    cep_service_define(restored, "7", "2"),
    cep_service_needed(restored, "7", "0 12\n1 15\n"),
    cep_service_touched(restored, "7", "12", Text),
    assertion(Text == "1 15\n").
test(views_of_two_rules_modules_are_apart) :-
    cep_service_define(other, "7", "2"),
    findall(N, cep_service_row(other, 7, timeless, v(N, u1), _), Ns),
    assertion(Ns == []).

:- end_tests(cep_service).
