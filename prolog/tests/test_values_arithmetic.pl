/*  plunit tests of prolog/cep_values_arithmetic.pl.

    Run from the repository root:
        swipl -q -g "consult('prolog/tests/test_values_arithmetic.pl'), run_tests" -t halt
*/

:- module(test_values_arithmetic, []).

:- use_module('../cep_values').
:- use_module(values_support).
:- use_module(library(plunit)).
:- use_module(library(lists)).
:- use_module(library(random)).

:- begin_tests(cep_arithmetic).

test(int_add, X == 5) :- cep_add(2, 3, X).
test(int_sub, X == -1) :- cep_sub(2, 3, X).
test(int_mul, X == 6) :- cep_mul(2, 3, X).
test(int_big, X == 1000000000000000000000000000000) :- cep_mul(1000000000000000, 1000000000000000, X).
test(int_div_is_decimal, X == dec(7r2)) :- cep_div(7, 2, X).
test(int_div_exact, X == dec(2)) :- cep_div(6, 3, X).
test(int_div_rounded, X == dec(R)) :-
    cep_div(2, 3, X),
    R is 66666666666666666667 rdiv 10^20.
test(int_div_rounded_down, X == dec(R)) :-
    cep_div(1, 3, X),
    R is 33333333333333333333 rdiv 10^20.
test(int_div_half_away_from_zero, X == dec(R)) :-
    cep_div(-2, 3, X),
    R is -66666666666666666667 rdiv 10^20.
test(decimal_div_tie, X == dec(R)) :-
    % 1/(2*10^20) is exactly half a unit of the 20th place: away from zero
    D is 2 * 10^20,
    cep_div(1, D, X),
    R is 1 rdiv 10^20.
test(decimal_div_tie_negative, X == dec(R)) :-
    D is -2 * 10^20,
    cep_div(1, D, X),
    R is -1 rdiv 10^20.
test(int_div_zero, fail) :- cep_div(1, 0, _).
test(decimal_div_zero, fail) :- cep_div(dec(1r2), dec(0), _).
test(decimal_add, X == dec(3r2)) :- cep_add(dec(1r2), 1, X).
test(decimal_add_integral, X == dec(1)) :- cep_add(dec(1r2), dec(1r2), X).
test(decimal_mul, X == dec(1r4)) :- cep_mul(dec(1r2), dec(1r2), X).
test(decimal_sub, X == dec(-1r2)) :- cep_sub(1, dec(3r2), X).
test(decimal_div, X == dec(5)) :- cep_div(dec(5r2), dec(1r2), X).
test(int_double, X == 1.5) :- cep_add(1, 0.5, X).
test(decimal_double, X == 1.0) :- cep_mul(dec(1r2), 2.0, X).
test(double_div_zero, X == Inf) :- inf(Inf), cep_div(1.0, 0, X).
test(double_div_neg_zero, X == NInf) :- ninf(NInf), cep_div(1, -0.0, X).
test(double_neg_div_zero, X == NInf) :- ninf(NInf), cep_div(-1.0, 0.0, X).
test(double_zero_div_zero, true(is_nan(X))) :- cep_div(0.0, 0, X).
test(double_overflow, X == Inf) :- inf(Inf), cep_mul(1.0e308, 10, X).
test(double_overflow_negative, X == NInf) :- ninf(NInf), cep_add(-1.0e308, -1.0e308, X).
test(double_inf_minus_inf, true(is_nan(X))) :- inf(I), cep_sub(I, I, X).
test(double_inf_plus_one, X == I) :- inf(I), cep_add(I, 1, X).
test(double_inf_times_zero, true(is_nan(X))) :- inf(I), cep_mul(I, 0, X).
test(double_inf_times_negative, X == NI) :- inf(I), ninf(NI), cep_mul(I, -2, X).
test(double_div_inf, X == 0.0) :- inf(I), cep_div(1.0, I, X).
test(double_neg_div_inf, true(is_neg_zero(X))) :- inf(I), cep_div(-1.0, I, X).
test(double_inf_div_inf, true(is_nan(X))) :- inf(I), cep_div(I, I, X).
test(double_inf_div_neg, X == NI) :- inf(I), ninf(NI), cep_div(I, -3, X).
test(double_nan, true(is_nan(X))) :- nan(N), cep_add(N, 1, X).
test(double_neg_zero_product, true(is_neg_zero(X))) :- cep_mul(-0.0, 5, X).
test(double_huge_integer, X == Inf) :- inf(Inf), B is 10^400, cep_add(1.0, B, X).
%   SPARQL's numeric type promotion: float with float, integer or decimal
%   is a float, rounded to single precision
test(float_add_integer_is_float, X == Y) :- ty("1.5", float, A), cep_add(A, 1, X), ty("2.5E0", float, Y).
test(float_sum_is_single, X == Y) :-
    ty("0.1", float, A), ty("0.2", float, B),
    cep_add(A, B, X),
    ty("3.0E-1", float, Y).             % the single nearest 0.1f + 0.2f; as a double 3.0000000447E-1
test(float_division_by_zero, X == Y) :- ty("1", float, A), cep_div(A, 0, X), ty("INF", float, Y).
test(float_and_double, X == 2.5) :- ty("1.5", float, A), cep_add(A, 1.0, X).
test(float_and_decimal, X == Y) :- ty("1.5", float, A), cep_mul(A, dec(2), X), ty("3.0E0", float, Y).
test(float_rounds_to_single, X == Y) :- ty("16777216", float, A), cep_add(A, 1, X), ty("1.6777216E7", float, Y).
test(derived_integer, X == 6) :- ty("5", int, A), cep_add(A, 1, X).
test(derived_integer_div, X == dec(5r2)) :- ty("5", short, A), cep_div(A, 2, X).
test(string_operand, fail) :- cep_add(1, "1", _).
test(iri_operand, fail) :- cep_add('http://a', 1, _).
test(bool_operand, fail) :- cep_add(bool(true), 1, _).
test(invalid_numeric_operand, fail) :- ty("x", integer, A), cep_add(A, 1, _).
test(unbound_operand, fail) :- cep_add(_, 1, _).

test(datetime_minus_datetime, X == dur(0, 5000)) :- cep_sub(dt(6000), dt(1000), X).
test(datetime_minus_later, X == dur(0, -5000)) :- cep_sub(dt(1000), dt(6000), X).
test(datetime_plus_duration, X == dt(T1)) :- t0(T), cep_add(dt(T), dur(0, 1500), X), T1 is T + 1500.
test(duration_plus_datetime, X == dt(T1)) :- t0(T), cep_add(dur(0, 1500), dt(T), X), T1 is T + 1500.
test(datetime_minus_duration, X == dt(T1)) :- t0(T), cep_sub(dt(T), dur(0, 1500), X), T1 is T - 1500.
test(datetime_plus_months, fail) :- cep_add(dt(0), dur(1, 0), _).
test(months_plus_datetime, fail) :- cep_add(dur(1, 5), dt(0), _).
test(datetime_minus_months, fail) :- cep_sub(dt(0), dur(-1, 0), _).
test(datetime_plus_day_time_literal, X == dt(T1)) :-
    t0(T), ty("P1D", dayTimeDuration, V), cep_add(dt(T), V, X), T1 is T + 86400000.
test(duration_plus_duration, X == dur(3, 3000)) :- cep_add(dur(1, 1000), dur(2, 2000), X).
test(duration_minus_duration, X == dur(-1, -1000)) :- cep_sub(dur(1, 1000), dur(2, 2000), X).
test(duration_mixed_signs, X == dur(1, -1000)) :- cep_sub(dur(1, 0), dur(0, 1000), X).
test(datetime_plus_datetime, fail) :- cep_add(dt(1), dt(2), _).
test(datetime_times_two, fail) :- cep_mul(dt(1), 2, _).
test(duration_times_two, fail) :- cep_mul(dur(0, 1), 2, _).
test(datetime_plus_integer, fail) :- cep_add(dt(1), 1, _).
test(duration_minus_datetime, fail) :- cep_sub(dur(0, 1), dt(1), _).

test(neg_integer, X == -5) :- cep_neg(5, X).
test(neg_decimal, X == dec(-1r2)) :- cep_neg(dec(1r2), X).
test(neg_double, X == -1.5) :- cep_neg(1.5, X).
test(neg_zero, true(is_neg_zero(X))) :- cep_neg(0.0, X).
test(neg_inf, X == NI) :- inf(I), ninf(NI), cep_neg(I, X).
test(neg_float, X == Y) :- ty("1.5", float, A), cep_neg(A, X), ty("-1.5E0", float, Y).
test(neg_derived, X == -5) :- ty("5", byte, A), cep_neg(A, X).
test(neg_string, fail) :- cep_neg("a", _).
test(neg_duration, fail) :- cep_neg(dur(0, 1), _).
test(neg_unbound, fail) :- cep_neg(_, _).
test(pos_derived, X == 5) :- ty("05", int, A), cep_pos(A, X).
test(pos_double, X == 1.5) :- cep_pos(1.5, X).
test(pos_float, X == Y) :- ty("1.50", float, A), cep_pos(A, X), ty("1.5E0", float, Y).
test(pos_string, fail) :- cep_pos("1", _).

:- end_tests(cep_arithmetic).
