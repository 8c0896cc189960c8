/*  plunit tests of prolog/cep_user.pl.

    Run from the repository root:
        swipl -q -g "consult('prolog/tests/test_user.pl'), run_tests" -t halt
*/

:- module(test_user, []).

:- use_module('../cep_user').
:- use_module(library(plunit)).

xsd(Local, IRI) :-
    atom_concat('http://www.w3.org/2001/XMLSchema#', Local, IRI).

load(M, Id, Text, Report) :-
    cep_user_load_file(M, Id, Text, Report),
    cep_user_done(M).

:- begin_tests(cep_user_values).

test(iri) :-
    cep_user_arg('http://example.org/a', 'http://example.org/a').
test(string) :-
    cep_user_arg("abc", "abc").
test(numbers) :-
    cep_user_arg(12, 12),
    cep_user_arg(1.5, 1.5),
    cep_user_arg(dec(5r2), 2.5).
test(derived_integer) :-
    xsd(byte, T),
    cep_user_arg(l("100", T), 100).
test(out_of_range_derived_integer) :-
    xsd(byte, T),
    cep_user_arg(l("300", T), lit("300", T)).
test(xsd_float) :-
    xsd(float, T),
    cep_user_arg(l("0.5", T), 0.5).
test(boolean) :-
    cep_user_arg(bool(true), true),
    cep_user_arg(bool(false), false).
test(lang) :-
    cep_user_arg(lang("chat", fr), lang("chat", fr)).
test(blank_node) :-
    cep_user_arg(bn(b1), bnode(b1)).
test(datetime) :-
    xsd(dateTime, T),
    cep_user_arg(dt(0), lit("1970-01-01T00:00:00Z", T)).
test(duration) :-
    xsd(duration, T),
    cep_user_arg(dur(0, 3600000), lit("PT1H", T)).
test(unbound, [fail]) :-
    cep_user_arg(_, _).
test(args) :-
    cep_user_args([a, "b", 1], [a, "b", 1]).
test(args_unbound, [fail]) :-
    cep_user_args([a, _], _).

test(results) :-
    cep_user_result(3, 3),
    cep_user_result(2.5, 2.5),
    cep_user_result("s", "s"),
    cep_user_result(true, bool(true)),
    cep_user_result(false, bool(false)),
    cep_user_result('http://example.org/a', 'http://example.org/a').
test(result_unbound, [fail]) :-
    cep_user_result(_, _).
test(result_compound, [fail]) :-
    cep_user_result(f(x), _).
test(result_rational, [fail]) :-
    cep_user_result(1r3, _).

:- end_tests(cep_user_values).

:- begin_tests(cep_user_loading).

test(load_and_list, [Text == "2\tnear\n"]) :-
    load(test_user_m1, '/nowhere/geo.pl', "near(a, b).\n", Report),
    assertion(Report == ""),
    cep_user_is_loaded(test_user_m1, "true"),
    cep_user_predicates(test_user_m1, Text).
test(syntax_error) :-
    cep_user_load_file(test_user_m2, '/nowhere/bad.pl', "ok(1).\nok(X) :- X = 1\nfoo.\n", Report),
    sub_string(Report, 0, _, _, "error\t/nowhere/bad.pl:2:"),
    cep_user_is_loaded(test_user_m2, "false").
test(only_the_files_predicates, [Text == "1\tuses\n"]) :-
    load(test_user_m3, '/nowhere/uses.pl', "uses(X) :- format(\"~w\", [X]), atom_length(X, _).\n", _),
    cep_user_predicates(test_user_m3, Text).
test(ready) :-
    cep_user_ready(test_user_m1, near, 2).
test(not_ready_builtin, [throws(error(cep_error(user_predicate_gone(test_user_m1:shell/1)), _))]) :-
    cep_user_ready(test_user_m1, shell, 1).
test(not_ready_undefined, [throws(error(cep_error(user_predicate_gone(test_user_m1:far/2)), _))]) :-
    cep_user_ready(test_user_m1, far, 2).
test(caught_fails_and_warns_once, [N == 1]) :-
    E = error(type_error(integer, a), _),
    setup_call_cleanup(
        asserta((user:message_hook(cep_user_raised(_, _), warning, _) :- assertz(warned)), Ref),
        ( \+ cep_user_caught(E, test_user_m1:near/2),
          \+ cep_user_caught(E, test_user_m1:near/2) ),
        erase(Ref)),
    aggregate_all(count, retract(warned), N).
test(caught_time_limit, [throws(time_limit_exceeded)]) :-
    cep_user_caught(time_limit_exceeded, test_user_m1:near/2).

:- dynamic warned/0.

:- end_tests(cep_user_loading).
