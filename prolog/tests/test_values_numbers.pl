/*  plunit tests of prolog/cep_values_numbers.pl: numeric lexical forms, doubles and floats, through
    str() and the casts (cep_fn/3).

    Run from the repository root:
        swipl -q -g "consult('prolog/tests/test_values_numbers.pl'), run_tests" -t halt
*/

:- module(test_values_numbers, []).

:- use_module('../cep_values').
:- use_module('../cep_values_numbers').
:- use_module(values_support).
:- use_module(library(plunit)).
:- use_module(library(lists)).
:- use_module(library(random)).

:- begin_tests(cep_number_round_trips).

test(doubles) :-
    set_random(seed(44)),
    forall(between(1, 3000, _),
           ( random_between(0, 0x7fefffffffffffff, Bits),
             bits_double(Bits, X),
             random_member(Sg, [1.0, -1.0]),
             Y is Sg * X,
             round_trip(double, Y) )).
test(decimals) :-
    set_random(seed(45)),
    forall(between(1, 2000, _),
           ( random_between(-1000000000000, 1000000000000, N),
             random_between(0, 30, P),
             R is N rdiv 10^P,
             round_trip(decimal, dec(R)) )).
test(floats) :-
    set_random(seed(46)),
    forall(between(1, 2000, _),
           ( random_between(0, 0x7fefffffffffffff, Bits),
             bits_double(Bits, X),
             cast(float, X, F),
             round_trip(float, F) )).

:- end_tests(cep_number_round_trips).

:- begin_tests(cep_numbers).

test(double_lexical) :-
    double_lexical(1.0e20, A), assertion(A == "1.0E20"),
    double_lexical(0.1, B), assertion(B == "1.0E-1"),
    double_lexical(-0.0, C), assertion(C == "-0.0E0"),
    inf(I), double_lexical(I, D), assertion(D == "INF"),
    nan(N), double_lexical(N, E), assertion(E == "NaN").
test(decimal_lexical) :-
    decimal_lexical(5r2, A), assertion(A == "2.5"),
    decimal_lexical(-1r8, B), assertion(B == "-0.125"),
    decimal_lexical(3, C), assertion(C == "3.0").
test(decimal_lexical_not_decimal, error(cep_error(not_a_value(dec(1r3))))) :-
    decimal_lexical(1r3, _).
test(parse_integer) :-
    parse_integer(" +007 ", I), assertion(I == 7),
    \+ parse_integer("1.5", _),
    \+ parse_integer("", _).
test(parse_decimal) :-
    parse_decimal("-.5", R), assertion(R == -1r2),
    \+ parse_decimal("1e5", _).
test(parse_double) :-
    parse_double("1e400", A), assertion(A =:= inf),
    parse_double("-INF", B), assertion(B =:= -inf),
    parse_double("1e-400", C), assertion(C == 0.0),
    parse_double("2.2250738585072014e-308", D), assertion(D =:= 2.2250738585072014e-308),
    \+ parse_double("1.5.5", _).
test(float32) :-
    parse_float32("0.1", F), assertion(F == 0.10000000149011612),
    float32_lexical(F, L), assertion(L == "1.0E-1"),
    parse_float32("3.4028236e38", G), assertion(G =:= inf).

:- end_tests(cep_numbers).

