/*  plunit tests of prolog/cep_values.pl.

    Run from the repository root:
        swipl -q -g "consult('prolog/tests/test_values.pl'), run_tests" -t halt

    SPARQL evaluation errors are failures of the predicate under test, so
    most error cases are `fail` tests; programming errors are exceptions.
*/

:- module(test_values, []).

:- use_module('../cep_values').
:- use_module(library(plunit)).
:- use_module(library(lists)).
:- use_module(library(random)).

xsd(Local, IRI) :-
    atom_concat('http://www.w3.org/2001/XMLSchema#', Local, IRI).

ty(Lex, Local, l(Lex, IRI)) :-
    xsd(Local, IRI).

nt(V, S) :-
    cep_nt(V, S).

inf(X) :- X is inf.
ninf(X) :- X is -inf.
nan(X) :- X is nan.

is_nan(X) :- float(X), float_class(X, nan).
is_neg_zero(X) :- X == -0.0.

%   2026-01-01T00:00:05Z
t0(1767225605000).


                 /*******************************
                 *            cep_nt            *
                 *******************************/

:- begin_tests(cep_nt).

test(iri, S == "<http://example.org/a>") :- nt('http://example.org/a', S).
test(iri_unicode, S == "<http://ex/caf\u00e9>") :- nt('http://ex/caf\u00e9', S).
test(iri_escaped, S == "<http://ex/\\u0022q\\u005C\\u0020>") :-
    % mirrors terms.iri: characters IRIREF does not allow become \uXXXX
    nt('http://ex/"q\\ ', S).
test(bnode, S == "_:b1") :- nt(bn(b1), S).
test(string, S == "\"abc\"") :- nt("abc", S).
test(empty_string, S == "\"\"") :- nt("", S).
test(string_escapes, S == "\"a\\\"b\\\\c\\nd\\re\\tf\"") :-
    nt("a\"b\\c\nd\re\tf", S).
test(string_controls, S == "\"\\u0000\\u0001\\u001F\\u007F\\u0008\\u000C\"") :-
    nt("\x00\\x01\\x1f\\x7f\\b\f", S).
test(string_nul_alone, S == "\"a\\u0000b\"") :-
    nt("a\x00\b", S).
test(string_unicode_as_is, S == "\"\u00e9\U0001F600\u2028\x85\\"") :-
    nt("\u00e9\U0001F600\u2028\x85\", S).
test(lang, S == "\"hi\"@en") :- nt(lang("hi", en), S).
test(lang_lower_case, S == "\"hi\"@en-gb") :- nt(lang("hi", 'en-GB'), S).
test(lang_escaped, S == "\"a\\nb\"@fr") :- nt(lang("a\nb", fr), S).
test(integer, S == "\"5\"^^<http://www.w3.org/2001/XMLSchema#integer>") :- nt(5, S).
test(integer_negative, S == "\"-12\"^^<http://www.w3.org/2001/XMLSchema#integer>") :- nt(-12, S).
test(integer_huge) :-
    X is 10^40 + 1,
    nt(X, S),
    S == "\"10000000000000000000000000000000000000001\"^^<http://www.w3.org/2001/XMLSchema#integer>".
test(decimal, S == "\"1.5\"^^<http://www.w3.org/2001/XMLSchema#decimal>") :- nt(dec(3r2), S).
test(decimal_integral, S == "\"2.0\"^^<http://www.w3.org/2001/XMLSchema#decimal>") :- nt(dec(2), S).
test(decimal_zero, S == "\"0.0\"^^<http://www.w3.org/2001/XMLSchema#decimal>") :- nt(dec(0), S).
test(decimal_negative_fraction, S == "\"-0.125\"^^<http://www.w3.org/2001/XMLSchema#decimal>") :-
    nt(dec(-1r8), S).
test(decimal_many_places) :-
    R is 1 rdiv 10^25,
    nt(dec(R), S),
    S == "\"0.0000000000000000000000001\"^^<http://www.w3.org/2001/XMLSchema#decimal>".
test(decimal_five_denominator, S == "\"-12.04\"^^<http://www.w3.org/2001/XMLSchema#decimal>") :-
    nt(dec(-301r25), S).
test(decimal_twenty_places) :-
    % a quotient rounded to 20 places: all 20 digits after the point
    cep_div(1, 3, X), nt(X, S),
    S == "\"0.33333333333333333333\"^^<http://www.w3.org/2001/XMLSchema#decimal>".
test(decimal_twenty_places_negative) :-
    cep_div(-2, 3000, X), nt(X, S),
    S == "\"-0.00066666666666666667\"^^<http://www.w3.org/2001/XMLSchema#decimal>".
test(decimal_not_terminating, error(cep_error(not_a_value(dec(1r3))))) :-
    nt(dec(1r3), _).

double_nt(X, Lex) :-
    nt(X, S),
    string_concat(Q, "^^<http://www.w3.org/2001/XMLSchema#double>", S),
    sub_string(Q, 1, _, 1, Lex).

test(double, L == "1.5E0") :- double_nt(1.5, L).
test(double_big, L == "1.0E20") :- double_nt(1.0e20, L).
test(double_small, L == "1.5E-7") :- double_nt(1.5e-7, L).
test(double_tenth, L == "1.0E-1") :- double_nt(0.1, L).
test(double_integral, L == "1.23E2") :- double_nt(123.0, L).
test(double_shortest, L == "1.2345678901234568E17") :- double_nt(1.2345678901234568e17, L).
test(double_zero, L == "0.0E0") :- double_nt(0.0, L).
test(double_negative_zero, L == "-0.0E0") :- double_nt(-0.0, L).
test(double_negative, L == "-2.5E-3") :- double_nt(-0.0025, L).
test(double_subnormal, L == "5.0E-324") :- X is 2.0 ** -1074, double_nt(X, L).
test(double_max, L == "1.7976931348623157E308") :- double_nt(1.7976931348623157e308, L).
test(double_inf, L == "INF") :- inf(X), double_nt(X, L).
test(double_ninf, L == "-INF") :- ninf(X), double_nt(X, L).
test(double_nan, L == "NaN") :- nan(X), double_nt(X, L).
test(boolean, S == "\"true\"^^<http://www.w3.org/2001/XMLSchema#boolean>") :- nt(bool(true), S).
test(boolean_false, S == "\"false\"^^<http://www.w3.org/2001/XMLSchema#boolean>") :- nt(bool(false), S).

dt_nt(Ms, Lex) :-
    nt(dt(Ms), S),
    string_concat(Q, "^^<http://www.w3.org/2001/XMLSchema#dateTime>", S),
    sub_string(Q, 1, _, 1, Lex).

test(datetime, L == "2026-01-01T00:00:05Z") :- t0(T), dt_nt(T, L).
test(datetime_ms, L == "2026-01-01T00:00:05.25Z") :- t0(T), T1 is T + 250, dt_nt(T1, L).
test(datetime_ms_leading_zero, L == "2026-01-01T00:00:05.005Z") :- t0(T), T1 is T + 5, dt_nt(T1, L).
test(datetime_epoch, L == "1970-01-01T00:00:00Z") :- dt_nt(0, L).
test(datetime_before_epoch, L == "1969-12-31T23:59:59.999Z") :- dt_nt(-1, L).
test(datetime_leap_day, L == "2000-02-29T12:00:00Z") :- dt_nt(951825600000, L).
test(datetime_year_padded, L == "0999-01-01T00:00:00Z") :- dt_nt(-30641760000000, L).
test(datetime_year_10000, L == "10000-01-01T00:00:00Z") :- dt_nt(253402300800000, L).
test(datetime_year_negative, L == "-0001-01-01T00:00:00Z") :- dt_nt(-62198755200000, L).

dur_nt(M, Ms, Lex) :-
    nt(dur(M, Ms), S),
    string_concat(Q, "^^<http://www.w3.org/2001/XMLSchema#duration>", S),
    sub_string(Q, 1, _, 1, Lex).

test(duration, L == "P1Y2M3DT4H5M6.5S") :-
    Ms is ((3 * 24 + 4) * 60 + 5) * 60000 + 6500,
    dur_nt(14, Ms, L).
test(duration_zero, L == "PT0S") :- dur_nt(0, 0, L).
test(duration_negative_day, L == "-P1D") :- dur_nt(0, -86400000, L).
test(duration_months_only, L == "P1M") :- dur_nt(1, 0, L).
test(duration_years_only, L == "P2Y") :- dur_nt(24, 0, L).
test(duration_ms, L == "PT0.001S") :- dur_nt(0, 1, L).
test(duration_fraction_trailing_zeros, L == "PT1.1S") :- dur_nt(0, 1100, L).
test(duration_hours_over_a_day, L == "P1DT12H") :- dur_nt(0, 129600000, L).
test(duration_mixed_signs_as_python, L == "-P1MT1S") :-
    % terms.format_duration: "-" if either part is negative
    dur_nt(1, -1000, L).
test(other_datatype, S == "\"x\"^^<http://example.org/t>") :- nt(l("x", 'http://example.org/t'), S).
test(other_datatype_escaped, S == "\"a\\\"b\"^^<http://example.org/t>") :-
    nt(l("a\"b", 'http://example.org/t'), S).
test(xsd_string_is_plain, S == "\"x\"") :- xsd(string, T), nt(l("x", T), S).
test(unbound, error(instantiation_error)) :- nt(_, _).
test(not_a_value, error(cep_error(not_a_value(foo(1))))) :- nt(foo(1), _).
test(not_a_value_bool, error(cep_error(not_a_value(bool(maybe))))) :- nt(bool(maybe), _).

:- end_tests(cep_nt).


                 /*******************************
                 *            cep_ebv           *
                 *******************************/

:- begin_tests(cep_ebv).

test(bool_true, B == true) :- cep_ebv(bool(true), B).
test(bool_false, B == false) :- cep_ebv(bool(false), B).
test(string_empty, B == false) :- cep_ebv("", B).
test(string, B == true) :- cep_ebv("a", B).
test(xsd_string_empty, B == false) :- ty("", string, V), cep_ebv(V, B).
test(lang_empty, B == false) :- cep_ebv(lang("", en), B).
test(lang, B == true) :- cep_ebv(lang("x", en), B).
test(zero, B == false) :- cep_ebv(0, B).
test(integer, B == true) :- cep_ebv(-3, B).
test(decimal_zero, B == false) :- cep_ebv(dec(0), B).
test(decimal, B == true) :- cep_ebv(dec(1r2), B).
test(double_zero, B == false) :- cep_ebv(0.0, B).
test(double_negative_zero, B == false) :- cep_ebv(-0.0, B).
test(double_nan, B == false) :- nan(X), cep_ebv(X, B).
test(double_inf, B == true) :- inf(X), cep_ebv(X, B).
test(double, B == true) :- cep_ebv(0.5, B).
test(derived_integer_zero, B == false) :- ty("0", int, V), cep_ebv(V, B).
test(derived_integer, B == true) :- ty("7", unsignedByte, V), cep_ebv(V, B).
test(float_literal, B == true) :- ty("1.5", float, V), cep_ebv(V, B).
test(float_literal_nan, B == false) :- ty("NaN", float, V), cep_ebv(V, B).
test(invalid_numeric_is_false, B == false) :- ty("abc", integer, V), cep_ebv(V, B).
test(out_of_range_numeric_is_false, B == false) :- ty("300", byte, V), cep_ebv(V, B).
test(invalid_boolean_is_false, B == false) :- ty("yes", boolean, V), cep_ebv(V, B).
test(check_mode, fail) :- cep_ebv(bool(false), true).
test(iri, fail) :- cep_ebv('http://example.org/a', _).
test(bnode, fail) :- cep_ebv(bn(x), _).
test(datetime, fail) :- cep_ebv(dt(0), _).
test(duration, fail) :- cep_ebv(dur(0, 1), _).
test(other_datatype, fail) :- cep_ebv(l("x", 'http://example.org/t'), _).
test(unbound, fail) :- cep_ebv(_, _).

:- end_tests(cep_ebv).


                 /*******************************
                 *         cep_compare          *
                 *******************************/

:- begin_tests(cep_compare).

cmp(Op, A, B, R) :- cep_compare(Op, A, B, R).

%   Every operator on the three orderings of two integers; the rows list
%   the results of =, !=, <, >, <=, >= in that order.
test(integer_equal_row, Row == [true, false, false, false, true, true]) :-
    findall(R, ( member(Op, [=, '!=', <, >, <=, >=]), cmp(Op, 7, 7, R) ), Row).
test(integer_less_row, Row == [false, true, true, false, true, false]) :-
    findall(R, ( member(Op, [=, '!=', <, >, <=, >=]), cmp(Op, 1, 2, R) ), Row).
test(integer_greater_row, Row == [false, true, false, true, false, true]) :-
    findall(R, ( member(Op, [=, '!=', <, >, <=, >=]), cmp(Op, 3, 2, R) ), Row).
test(bool_bound_true) :- cmp(=, 1, 1, true).
test(bool_bound_mismatch, fail) :- cmp(=, 1, 2, true).

test(integer_double, R == true) :- cmp(=, 1, 1.0, R).
test(integer_decimal, R == true) :- cmp(=, 2, dec(2), R).
test(decimal_double, R == true) :- cmp(<, dec(1r2), 0.75, R).
test(integer_decimal_less, R == true) :- cmp(<, 1, dec(3r2), R).
test(decimal_decimal, R == true) :- cmp(>, dec(2r3), dec(1r2), R).
test(derived_integer, R == true) :- ty("01", int, V), cmp(=, V, 1, R).
test(derived_out_of_range, fail) :- ty("300", byte, V), cmp(=, V, 300, _).
test(invalid_integer_literal, fail) :- ty("abc", integer, V), cmp(=, V, 1, _).
test(float_literal_exact, R == true) :- ty("0.5", float, V), cmp(=, V, 0.5, R).
test(float_literal_single_precision, R == false) :-
    % 1.1 as an IEEE single is not the double 1.1
    ty("1.1", float, V), cmp(=, V, 1.1, R).
test(float_literal_vs_integer, R == true) :- ty("1.5", float, V), cmp(<, 1, V, R).
test(nan_equal, R == false) :- nan(X), cmp(=, X, X, R).
test(nan_not_equal, R == true) :- nan(X), cmp('!=', X, 1, R).
test(nan_less, R == false) :- nan(X), cmp(<, X, 1.0, R).
test(nan_greater_equal, R == false) :- nan(X), cmp(>=, 1, X, R).
test(negative_zero, R == true) :- cmp(=, -0.0, 0.0, R).
test(inf, R == true) :- inf(X), cmp(>, X, 1.0e308, R).
test(huge_integer_vs_double, R == true) :- X is 10^400, cmp(>, X, 1.0e308, R).
test(huge_integers_exact, R == true) :-
    A is 10^30, B is 10^30 + 1, cmp(<, A, B, R).
test(decimal_exact, R == false) :-
    % exact rationals: 0.1 + 0.2 = 0.3 as decimals
    cep_add(dec(1r10), dec(1r5), S), cmp('!=', S, dec(3r10), R).

test(string_equal, R == true) :- cmp(=, "abc", "abc", R).
test(string_less, R == true) :- cmp(<, "abc", "abd", R).
test(string_prefix, R == true) :- cmp(<, "ab", "abc", R).
test(string_empty, R == true) :- cmp(<, "", "a", R).
test(string_code_points, R == true) :- cmp(>, "\u00e9", "z", R).
test(string_astral, R == true) :- cmp(>, "\U0001F600", "\uFFFD", R).
test(xsd_string_literal, R == true) :- ty("a", string, V), cmp(=, V, "a", R).
test(lang_equal, R == true) :- cmp(=, lang("a", en), lang("a", en), R).
test(lang_other_text, R == false) :- cmp(=, lang("a", en), lang("b", en), R).
test(lang_other_tag, R == true) :- cmp('!=', lang("a", en), lang("a", fr), R).
test(lang_order, fail) :- cmp(<, lang("a", en), lang("b", en), _).
test(lang_vs_string, fail) :- cmp(=, lang("a", en), "a", _).

test(bool_order, R == true) :- cmp(<, bool(false), bool(true), R).
test(bool_equal, R == true) :- cmp(=, bool(true), bool(true), R).
test(bool_literal, R == true) :- ty("1", boolean, V), cmp(=, V, bool(true), R).
test(datetime_less, R == true) :- cmp(<, dt(1), dt(2), R).
test(datetime_equal, R == true) :- cmp(>=, dt(5), dt(5), R).
test(duration_less, R == true) :- cmp(<, dur(0, 1000), dur(1, 0), R).
test(duration_equal_by_average_month, R == true) :- cmp(=, dur(1, 0), dur(0, 2629746000), R).
test(day_time_duration_literal, R == true) :-
    ty("PT1S", dayTimeDuration, V), cmp(=, V, dur(0, 1000), R).

test(integer_vs_string, fail) :- cmp(=, 1, "1", _).
test(integer_vs_string_ne, fail) :- cmp('!=', 1, "1", _).
test(integer_vs_string_less, fail) :- cmp(<, 1, "1", _).
test(datetime_vs_integer, fail) :- cmp(<, dt(1), 1, _).
test(bool_vs_integer, fail) :- cmp(=, bool(true), 1, _).
test(iri_equal, R == true) :- cmp(=, 'http://a', 'http://a', R).
test(iri_different, R == false) :- cmp(=, 'http://a', 'http://b', R).
test(iri_not_equal, R == true) :- cmp('!=', 'http://a', 'http://b', R).
test(iri_order, fail) :- cmp(<, 'http://a', 'http://b', _).
test(bnode_equal, R == true) :- cmp(=, bn(x), bn(x), R).
test(bnode_iri, R == false) :- cmp(=, bn(x), 'http://a', R).
test(iri_literal, R == false) :- cmp(=, 'http://a', "http://a", R).
test(iri_literal_not_equal, R == true) :- cmp('!=', 1, 'http://a', R).
test(unknown_identical, R == true) :- cmp(=, l("x", 'http://t'), l("x", 'http://t'), R).
test(unknown_identical_ne, R == false) :- cmp('!=', l("x", 'http://t'), l("x", 'http://t'), R).
test(unknown_different, fail) :- cmp(=, l("x", 'http://t'), l("y", 'http://t'), _).
test(unknown_different_ne, fail) :- cmp('!=', l("x", 'http://t'), l("y", 'http://t'), _).
test(unknown_vs_integer, fail) :- cmp(=, l("1", 'http://t'), 1, _).
test(unbound_left, fail) :- cmp(=, _, 1, _).
test(unbound_right, fail) :- cmp(=, 1, _, _).
test(unknown_operator, error(cep_error(unknown_operator(<>)))) :- cmp(<>, 1, 1, _).
test(unbound_operator, error(instantiation_error)) :- cmp(_, 1, 1, _).

:- end_tests(cep_compare).


                 /*******************************
                 *          ARITHMETIC          *
                 *******************************/

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
test(float_add_is_double, X == 2.5) :- ty("1.5", float, A), cep_add(A, 1, X).
test(float_keeps_single_value, X == Y) :-
    % the operands are singles, widened exactly; the sum is a double
    ty("0.1", float, A), ty("0.2", float, B),
    cep_add(A, B, X),
    Y is 0.10000000149011612 + 0.20000000298023224.
test(float_division_by_zero, X == I) :- inf(I), ty("1", float, A), cep_div(A, 0, X).
test(float_and_double, X == 2.5) :- ty("1.5", float, A), cep_add(A, 1.0, X).
test(float_and_decimal, X == 3.0) :- ty("1.5", float, A), cep_mul(A, dec(2), X).
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
test(neg_float, X == -1.5) :- ty("1.5", float, A), cep_neg(A, X).
test(neg_derived, X == -5) :- ty("5", byte, A), cep_neg(A, X).
test(neg_string, fail) :- cep_neg("a", _).
test(neg_duration, fail) :- cep_neg(dur(0, 1), _).
test(neg_unbound, fail) :- cep_neg(_, _).
test(pos_derived, X == 5) :- ty("05", int, A), cep_pos(A, X).
test(pos_double, X == 1.5) :- cep_pos(1.5, X).
test(pos_float, X == 1.5) :- ty("1.50", float, A), cep_pos(A, X).
test(pos_string, fail) :- cep_pos("1", _).

:- end_tests(cep_arithmetic).


                 /*******************************
                 *           FUNCTIONS          *
                 *******************************/

:- begin_tests(cep_fn_terms).

test(str_iri, S == "http://a") :- cep_fn(str, ['http://a'], S).
test(str_string, S == "x") :- cep_fn(str, ["x"], S).
test(str_lang, S == "x") :- cep_fn(str, [lang("x", en)], S).
test(str_integer, S == "5") :- cep_fn(str, [5], S).
test(str_decimal, S == "1.5") :- cep_fn(str, [dec(3r2)], S).
test(str_double, S == "1.5E0") :- cep_fn(str, [1.5], S).
test(str_bool, S == "true") :- cep_fn(str, [bool(true)], S).
test(str_datetime, S == "2026-01-01T00:00:05Z") :- t0(T), cep_fn(str, [dt(T)], S).
test(str_duration, S == "P1M") :- cep_fn(str, [dur(1, 0)], S).
test(str_other, S == "x") :- cep_fn(str, [l("x", 'http://t')], S).
test(str_bnode, fail) :- cep_fn(str, [bn(b)], _).
test(str_unbound, fail) :- cep_fn(str, [_], _).
test(lang, S == "en") :- cep_fn(lang, [lang("x", en)], S).
test(lang_plain, S == "") :- cep_fn(lang, ["x"], S).
test(lang_integer, S == "") :- cep_fn(lang, [1], S).
test(lang_iri, fail) :- cep_fn(lang, ['http://a'], _).
test(lang_bnode, fail) :- cep_fn(lang, [bn(b)], _).
test(datatype_all, Ts == [integer, decimal, double, boolean, dateTime, duration, string, string]) :-
    findall(L,
            ( member(V, [1, dec(1r2), 1.0, bool(true), dt(0), dur(0, 1), "s", l("s", 'http://www.w3.org/2001/XMLSchema#string')]),
              cep_fn(datatype, [V], T),
              atom_concat('http://www.w3.org/2001/XMLSchema#', L, T)
            ),
            Ts).
test(datatype_lang, T == 'http://www.w3.org/1999/02/22-rdf-syntax-ns#langString') :-
    cep_fn(datatype, [lang("x", en)], T).
test(datatype_other, T == 'http://t') :- cep_fn(datatype, [l("x", 'http://t')], T).
test(datatype_iri, fail) :- cep_fn(datatype, ['http://a'], _).
test(is_iri, [B1, B2, B3] == [bool(true), bool(false), bool(false)]) :-
    cep_fn(isIRI, ['http://a'], B1), cep_fn(isIRI, [bn(b)], B2), cep_fn(isIRI, ["a"], B3).
test(is_blank, [B1, B2] == [bool(true), bool(false)]) :-
    cep_fn(isBlank, [bn(b)], B1), cep_fn(isBlank, ['http://a'], B2).
test(is_literal, Bs == [bool(true), bool(true), bool(true), bool(false), bool(false)]) :-
    maplist([V, B]>>cep_fn(isLiteral, [V], B), ["a", 1, dt(0), 'http://a', bn(b)], Bs).
test(is_numeric, Bs == [bool(true), bool(true), bool(true), bool(true), bool(false), bool(false), bool(true)]) :-
    ty("1200", byte, Bad), ty("12", byte, Good),
    maplist([V, B]>>cep_fn(isNumeric, [V], B), [1, dec(1r2), 1.5, Good, Bad, "1", 1], Bs).
test(is_iri_unbound, fail) :- cep_fn(isIRI, [_], _).
test(same_term, B == bool(true)) :- cep_fn(sameTerm, [1, 1], B).
test(same_term_types, B == bool(false)) :- cep_fn(sameTerm, [1, 1.0], B).
test(same_term_decimal, B == bool(false)) :- cep_fn(sameTerm, [dec(1), 1], B).
test(same_term_zeros, B == bool(false)) :- cep_fn(sameTerm, [-0.0, 0.0], B).
test(same_term_nan, B == bool(true)) :- nan(X), cep_fn(sameTerm, [X, X], B).
test(same_term_iri, B == bool(false)) :- cep_fn(sameTerm, ['http://a', 'http://b'], B).
test(lang_matches, B == bool(true)) :- cep_fn(langMatches, ["en-GB", "en"], B).
test(lang_matches_case, B == bool(true)) :- cep_fn(langMatches, ["en", "EN"], B).
test(lang_matches_not_prefix_of_subtag, B == bool(false)) :- cep_fn(langMatches, ["english", "en"], B).
test(lang_matches_longer_range, B == bool(false)) :- cep_fn(langMatches, ["en", "en-GB"], B).
test(lang_matches_star, B == bool(true)) :- cep_fn(langMatches, ["fr", "*"], B).
test(lang_matches_star_empty, B == bool(false)) :- cep_fn(langMatches, ["", "*"], B).
test(lang_matches_empty_range, B == bool(false)) :- cep_fn(langMatches, ["en", ""], B).
test(lang_matches_both_empty, B == bool(true)) :- cep_fn(langMatches, ["", ""], B).
test(lang_matches_lang_argument, fail) :- cep_fn(langMatches, [lang("en", en), "en"], _).
test(lang_matches_number, fail) :- cep_fn(langMatches, [1, "en"], _).

:- end_tests(cep_fn_terms).

:- begin_tests(cep_fn_strings).

test(strlen, N == 3) :- cep_fn(strlen, ["abc"], N).
test(strlen_astral, N == 2) :- cep_fn(strlen, ["\U0001F600x"], N).
test(strlen_lang, N == 2) :- cep_fn(strlen, [lang("ab", en)], N).
test(strlen_number, fail) :- cep_fn(strlen, [5], _).
test(ucase, S == "A\u00c9") :- cep_fn(ucase, ["a\u00e9"], S).
test(ucase_lang, S == lang("AB", en)) :- cep_fn(ucase, [lang("ab", en)], S).
test(lcase, S == "ab") :- cep_fn(lcase, ["AB"], S).
test(lcase_xsd_string, S == "ab") :- ty("AB", string, V), cep_fn(lcase, [V], S).
test(lcase_iri, fail) :- cep_fn(lcase, ['http://A'], _).
test(contains, B == bool(true)) :- cep_fn(contains, ["abc", "b"], B).
test(contains_not, B == bool(false)) :- cep_fn(contains, ["abc", "d"], B).
test(contains_empty, B == bool(true)) :- cep_fn(contains, ["abc", ""], B).
test(contains_lang_simple, B == bool(true)) :- cep_fn(contains, [lang("abc", en), "b"], B).
test(contains_same_tags, B == bool(true)) :- cep_fn(contains, [lang("abc", en), lang("b", en)], B).
test(contains_other_tags, fail) :- cep_fn(contains, [lang("abc", en), lang("b", fr)], _).
test(contains_simple_lang, fail) :- cep_fn(contains, ["abc", lang("b", en)], _).
test(contains_number, fail) :- cep_fn(contains, ["abc", 1], _).
test(strstarts, B == bool(true)) :- cep_fn(strstarts, ["abc", "ab"], B).
test(strstarts_not, B == bool(false)) :- cep_fn(strstarts, ["abc", "bc"], B).
test(strends, B == bool(true)) :- cep_fn(strends, ["abc", "bc"], B).
test(strends_not, B == bool(false)) :- cep_fn(strends, ["abc", "ab"], B).
test(strends_lang, B == bool(true)) :- cep_fn(strends, [lang("abc", en), lang("c", en)], B).
test(concat_none, S == "") :- cep_fn(concat, [], S).
test(concat, S == "abc") :- cep_fn(concat, ["a", "b", "c"], S).
test(concat_same_tag, S == lang("ab", en)) :- cep_fn(concat, [lang("a", en), lang("b", en)], S).
test(concat_other_tags, S == "ab") :- cep_fn(concat, [lang("a", en), lang("b", fr)], S).
test(concat_tag_and_simple, S == "ab") :- cep_fn(concat, [lang("a", en), "b"], S).
test(concat_xsd_string, S == "ab") :- ty("b", string, V), cep_fn(concat, ["a", V], S).
test(concat_number, fail) :- cep_fn(concat, ["a", 1], _).
test(concat_unbound, fail) :- cep_fn(concat, ["a", _], _).

test(regex, B == bool(true)) :- cep_fn(regex, ["abc", "b"], B).
test(regex_no, B == bool(false)) :- cep_fn(regex, ["abc", "^b"], B).
test(regex_i, B == bool(true)) :- cep_fn(regex, ["ABC", "b", "i"], B).
test(regex_i_unicode, B == bool(true)) :- cep_fn(regex, ["\u00c9T\u00c9", "^\u00e9t\u00e9$", "i"], B).
test(regex_unicode_word, B == bool(true)) :- cep_fn(regex, ["\u00e9", "^\\w$"], B).
test(regex_dot_newline, B == bool(false)) :- cep_fn(regex, ["a\nb", "a.b"], B).
test(regex_dot_cr, B == bool(false)) :- cep_fn(regex, ["a\rb", "a.b"], B).
test(regex_s, B == bool(true)) :- cep_fn(regex, ["a\nb", "a.b", "s"], B).
test(regex_m, B == bool(true)) :- cep_fn(regex, ["a\nb", "^b$", "m"], B).
test(regex_dollar_end_only, B == bool(false)) :- cep_fn(regex, ["ab\n", "b$"], B).
test(regex_x, B == bool(true)) :- cep_fn(regex, ["abc", " a b\nc ", "x"], B).
test(regex_x_keeps_class_space, B == bool(true)) :- cep_fn(regex, ["a c", "a[ ]c", "x"], B).
test(regex_x_hash_literal, B == bool(true)) :- cep_fn(regex, ["a#b", "a # b", "x"], B).
test(regex_x_escaped_space, B == bool(true)) :- cep_fn(regex, ["a b", "a\\ b", "x"], B).
test(regex_q, B == bool(false)) :- cep_fn(regex, ["abc", ".", "q"], B).
test(regex_q_match, B == bool(true)) :- cep_fn(regex, ["a.(c", ".(", "q"], B).
test(regex_q_i, B == bool(true)) :- cep_fn(regex, ["A.C", "a.c", "qi"], B).
test(regex_flags_combined, B == bool(true)) :- cep_fn(regex, ["X\nAB", "^a.$", "mi"], B).
test(regex_lang_text, B == bool(true)) :- cep_fn(regex, [lang("Abc", en), "^a", "i"], B).
test(regex_empty_pattern, B == bool(true)) :- cep_fn(regex, ["abc", ""], B).
test(regex_lang_pattern, fail) :- cep_fn(regex, ["abc", lang("b", en)], _).
test(regex_bad_flag, fail) :- cep_fn(regex, ["abc", "b", "z"], _).
test(regex_bad_pattern, fail) :- cep_fn(regex, ["abc", "a("], _).
test(regex_number_text, fail) :- cep_fn(regex, [1, "1"], _).
test(regex_iri_text, fail) :- cep_fn(regex, ['http://a', "a"], _).

:- end_tests(cep_fn_strings).

:- begin_tests(cep_fn_numbers).

test(abs_integer, X == 5) :- cep_fn(abs, [-5], X).
test(abs_decimal, X == dec(1r2)) :- cep_fn(abs, [dec(-1r2)], X).
test(abs_double, X == 1.5) :- cep_fn(abs, [-1.5], X).
test(abs_negative_zero, X == 0.0) :- cep_fn(abs, [-0.0], X).
test(abs_nan, true(is_nan(X))) :- nan(N), cep_fn(abs, [N], X).
test(abs_float, X == 1.5) :- ty("-1.5", float, A), cep_fn(abs, [A], X).
test(abs_derived, X == 3) :- ty("-3", int, A), cep_fn(abs, [A], X).
test(abs_string, fail) :- cep_fn(abs, ["1"], _).
test(ceil_integer, X == 3) :- cep_fn(ceil, [3], X).
test(ceil_decimal, X == dec(3)) :- cep_fn(ceil, [dec(5r2)], X).
test(ceil_decimal_negative, X == dec(-2)) :- cep_fn(ceil, [dec(-5r2)], X).
test(ceil_double, X == 3.0) :- cep_fn(ceil, [2.1], X).
test(ceil_double_negative_zero, true(is_neg_zero(X))) :- cep_fn(ceil, [-0.5], X).
test(floor_double, X == -3.0) :- cep_fn(floor, [-2.1], X).
test(floor_decimal, X == dec(-1)) :- cep_fn(floor, [dec(-1r2)], X).
test(round_half_up, X == 3.0) :- cep_fn(round, [2.5], X).
test(round_half_negative, X == -2.0) :- cep_fn(round, [-2.5], X).
test(round_negative_zero, true(is_neg_zero(X))) :- cep_fn(round, [-0.5], X).
test(round_below_half, X == 0.0) :- cep_fn(round, [0.49999999999999994], X).
test(round_decimal, X == dec(3)) :- cep_fn(round, [dec(5r2)], X).
test(round_decimal_negative, X == dec(-2)) :- cep_fn(round, [dec(-5r2)], X).
test(round_integer, X == -7) :- cep_fn(round, [-7], X).
test(round_big_double, X == 1.0e300) :- cep_fn(round, [1.0e300], X).
test(round_inf, X == I) :- inf(I), cep_fn(round, [I], X).
test(round_float, X == 3.0) :- ty("2.5", float, A), cep_fn(round, [A], X).
test(floor_string, fail) :- cep_fn(floor, ["1.5"], _).

:- end_tests(cep_fn_numbers).


                 /*******************************
                 *             CASTS            *
                 *******************************/

cast(Local, V, R) :-
    xsd(Local, T),
    cep_fn(cast(T), [V], R).

:- begin_tests(cep_casts).

test(integer_from_string, X == 42) :- cast(integer, "42", X).
test(integer_from_string_space, X == 42) :- cast(integer, " 42\n", X).
test(integer_from_string_signed, X == -7) :- cast(integer, "-007", X).
test(integer_from_decimal_string, fail) :- cast(integer, "4.2", _).
test(integer_from_bad_string, fail) :- cast(integer, "abc", _).
test(integer_from_double, X == 4) :- cast(integer, 4.7, X).
test(integer_from_double_negative, X == -4) :- cast(integer, -4.7, X).
test(integer_from_big_double, X == 1000000000000000000000) :- cast(integer, 1.0e21, X).
test(integer_from_nan, fail) :- nan(N), cast(integer, N, _).
test(integer_from_inf, fail) :- inf(I), cast(integer, I, _).
test(integer_from_decimal, X == -3) :- cast(integer, dec(-7r2), X).
test(integer_from_bool, X == 1) :- cast(integer, bool(true), X).
test(integer_from_derived, X == 5) :- ty("5", int, V), cast(integer, V, X).
test(integer_from_float, X == 1) :- ty("1.5", float, V), cast(integer, V, X).
test(integer_from_datetime, fail) :- cast(integer, dt(0), _).
test(integer_from_lang, fail) :- cast(integer, lang("1", en), _).
test(integer_from_iri, fail) :- cast(integer, 'http://a', _).

test(decimal_from_string, X == dec(3r2)) :- cast(decimal, "1.5", X).
test(decimal_from_integer_string, X == dec(1)) :- cast(decimal, "1", X).
test(decimal_from_point_string, X == dec(1r2)) :- cast(decimal, "+.5", X).
test(decimal_from_exponent_string, fail) :- cast(decimal, "1e5", _).
test(decimal_from_double, X == dec(1r10)) :- cast(decimal, 0.1, X).
test(decimal_from_big_double, X == dec(D)) :- cast(decimal, 1.0e20, X), D is 10^20.
test(decimal_from_integer, X == dec(1)) :- cast(decimal, 1, X).
test(decimal_from_bool, X == dec(0)) :- cast(decimal, bool(false), X).
test(decimal_from_nan, fail) :- nan(N), cast(decimal, N, _).
test(decimal_from_float, X == dec(1r10)) :- ty("0.1", float, V), cast(decimal, V, X).

test(double_from_string, X == 1.5) :- cast(double, "1.5", X).
test(double_from_exponent, X == 5.0) :- cast(double, ".5e1", X).
test(double_from_huge, X == I) :- inf(I), cast(double, "1e400", X).
test(double_from_tiny, X == 0.0) :- cast(double, "1e-400", X).
test(double_from_huge_negative_exponent, X == 0.0) :- cast(double, "1e-99999999999", X).
test(double_from_negative_zero, true(is_neg_zero(X))) :- cast(double, "-0", X).
test(double_from_inf, X == I) :- inf(I), cast(double, "INF", X).
test(double_from_ninf, X == I) :- ninf(I), cast(double, "-INF", X).
test(double_from_nan, true(is_nan(X))) :- cast(double, "NaN", X).
test(double_correctly_rounded, X == 9007199254740992.0) :- cast(double, "9007199254740993", X).
test(double_subnormal, X == Y) :- cast(double, "4.9e-324", X), Y is 2.0 ** -1074.
test(double_from_bad, fail) :- cast(double, "1.5.5", _).
test(double_from_inf_word, fail) :- cast(double, "Infinity", _).
test(double_from_integer, X == 3.0) :- cast(double, 3, X).
test(double_from_huge_integer, X == I) :- inf(I), B is 10^400, cast(double, B, X).
test(double_from_decimal, X == 0.3333333333333333) :- cast(double, dec(1r3), X).
test(double_from_bool, X == 1.0) :- cast(double, bool(true), X).
test(double_from_float, X == 0.10000000149011612) :- ty("0.1", float, V), cast(double, V, X).

test(float_from_string, X == V) :- cast(float, "0.1", X), ty("1.0E-1", float, V).
test(float_from_double, X == V) :- cast(float, 0.1, X), ty("1.0E-1", float, V).
test(float_rounds_to_single, X == V) :- cast(float, 16777217, X), ty("1.6777216E7", float, V).
test(float_max, X == V) :- cast(float, "3.4028235e38", X), ty("3.4028235E38", float, V).
test(float_overflow, X == V) :- cast(float, 1.0e39, X), ty("INF", float, V).
test(float_min_subnormal, X == V) :- cast(float, "1.4e-45", X), ty("1.0E-45", float, V).
test(float_underflow, X == V) :- cast(float, "1e-46", X), ty("0.0E0", float, V).
test(float_negative_zero, X == V) :- cast(float, -0.0, X), ty("-0.0E0", float, V).
test(float_nan, X == V) :- cast(float, "NaN", X), ty("NaN", float, V).
test(float_from_bad, fail) :- cast(float, "x", _).

test(string_from_integer, X == "5") :- cast(string, 5, X).
test(string_from_iri, X == "http://a") :- cast(string, 'http://a', X).
test(string_from_decimal, X == "1.5") :- cast(string, dec(3r2), X).
test(string_from_datetime, X == "1970-01-01T00:00:00Z") :- cast(string, dt(0), X).
test(string_from_other, X == "x") :- cast(string, l("x", 'http://t'), X).
test(string_from_lang, X == "x") :- cast(string, lang("x", en), X).
test(string_from_bnode, fail) :- cast(string, bn(b), _).

test(boolean_from_strings, Bs == [true, true, false, false]) :-
    maplist([S, B]>>cast(boolean, S, bool(B)), ["true", "1", "false", " 0 "], Bs).
test(boolean_from_bad_string, fail) :- cast(boolean, "yes", _).
test(boolean_from_numbers, Bs == [false, true, false, false, false, true]) :-
    nan(N),
    maplist([V, B]>>cast(boolean, V, bool(B)), [0, 2, dec(0), 0.0, N, -0.5], Bs).
test(boolean_from_bool, X == bool(true)) :- cast(boolean, bool(true), X).
test(boolean_from_datetime, fail) :- cast(boolean, dt(0), _).

test(datetime_from_string, X == dt(T)) :- t0(T), cast(dateTime, "2026-01-01T00:00:05Z", X).
test(datetime_no_zone_is_utc, X == dt(T)) :- t0(T), cast(dateTime, "2026-01-01T00:00:05", X).
test(datetime_offset, X == dt(T)) :- t0(T), cast(dateTime, "2026-01-01T02:00:05+02:00", X).
test(datetime_negative_offset, X == dt(T)) :- t0(T), cast(dateTime, "2025-12-31T22:30:05-01:30", X).
test(datetime_fraction_truncated, X == dt(T1)) :-
    t0(T), T1 is T + 250, cast(dateTime, "2026-01-01T00:00:05.2509Z", X).
test(datetime_midnight_24, X == dt(T)) :- cast(dateTime, "2025-12-31T24:00:00Z", X), t0(T0), T is T0 - 5000.
test(datetime_bad_24, fail) :- cast(dateTime, "2025-12-31T24:00:01Z", _).
test(datetime_leap_day, X == dt(951782400000)) :- cast(dateTime, "2000-02-29T00:00:00Z", X).
test(datetime_not_leap_day, fail) :- cast(dateTime, "1900-02-29T00:00:00Z", _).
test(datetime_bad_month, fail) :- cast(dateTime, "2026-13-01T00:00:00Z", _).
test(datetime_bad_second, fail) :- cast(dateTime, "2026-01-01T00:00:60Z", _).
test(datetime_bad_offset, fail) :- cast(dateTime, "2026-01-01T00:00:00+15:00", _).
test(datetime_date_only, fail) :- cast(dateTime, "2026-01-01", _).
test(datetime_short_year, fail) :- cast(dateTime, "226-01-01T00:00:00Z", _).
test(datetime_negative_year, X == dt(-62198755200000)) :- cast(dateTime, "-0001-01-01T00:00:00Z", X).
test(datetime_from_datetime, X == dt(5)) :- cast(dateTime, dt(5), X).
test(datetime_from_integer, fail) :- cast(dateTime, 5, _).

test(duration_from_string, X == dur(14, 0)) :- cast(duration, "P1Y2M", X).
test(duration_negative, X == dur(0, -1500)) :- cast(duration, "-PT1.5S", X).
test(duration_all_parts, X == dur(14, Ms)) :-
    cast(duration, "P1Y2M3DT4H5M6.5S", X),
    Ms is ((3 * 24 + 4) * 60 + 5) * 60000 + 6500.
test(duration_bare_p, fail) :- cast(duration, "P", _).
test(duration_bare_t, fail) :- cast(duration, "PT", _).
test(duration_dangling_t, fail) :- cast(duration, "P1DT", _).
test(duration_wrong_order, fail) :- cast(duration, "P1D2M", _).
test(duration_from_day_time, X == dur(0, 86400000)) :- ty("P1D", dayTimeDuration, V), cast(duration, V, X).
test(duration_from_bad_year_month, fail) :- ty("P1D", yearMonthDuration, V), cast(duration, V, _).
test(duration_from_duration, X == dur(1, 2)) :- cast(duration, dur(1, 2), X).

test(cast_iri_in_brackets, X == 5) :- cep_fn(cast('<http://www.w3.org/2001/XMLSchema#integer>'), ["5"], X).
test(derived_integer, X == V) :- cast(int, " 5", X), ty("5", int, V).
test(derived_integer_from_double, X == V) :- cast(unsignedByte, 255.9, X), ty("255", unsignedByte, V).
test(derived_integer_range, fail) :- cast(byte, "128", _).
test(derived_integer_negative, fail) :- cast(nonNegativeInteger, -1, _).
test(unsupported_cast, fail) :- cast(date, "2026-01-01", _).
test(unsupported_cast_other, fail) :- cep_fn(cast('http://example.org/f'), ["1"], _).
test(cast_not_an_atom, error(type_error(atom, 1))) :- cep_fn(cast(1), ["1"], _).
test(cast_unbound, fail) :- cast(integer, _, _).

:- end_tests(cep_casts).


                 /*******************************
                 *     ROUND TRIPS, ERRORS      *
                 *******************************/

:- begin_tests(cep_round_trips).

%   str() then the cast back gives the same term, for many values.
round_trip(Local, V) :-
    cep_fn(str, [V], S),
    cast(Local, S, V2),
    (   V2 == V
    ->  true
    ;   format(user_error, "~q -> ~q -> ~q~n", [V, S, V2]),
        fail
    ).

test(datetimes) :-
    set_random(seed(42)),
    forall(between(1, 2000, _),
           ( random_between(-62135596800000, 253402300799999, Ms),
             round_trip(dateTime, dt(Ms)) )).
test(durations) :-
    set_random(seed(43)),
    forall(between(1, 2000, _),
           ( random_between(0, 1000, M),
             random_between(0, 100000000000, Ms),
             random_member(Sg, [1, -1]),
             SM is Sg * M, SMs is Sg * Ms,
             round_trip(duration, dur(SM, SMs)) )).
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

%   The double with the given IEEE bits (positive, finite).
bits_double(Bits, X) :-
    E is Bits >> 52,
    M is Bits /\ (1 << 52 - 1),
    (   E =:= 0
    ->  X is M * 2.0 ** -1074
    ;   X is float((M + 1 << 52) * 2.0 ** (E - 1075))
    ).

:- end_tests(cep_round_trips).

:- begin_tests(cep_misc).

test(time_duration, D == dur(0, 3500)) :- cep_time_duration(1000, 4500, D).
test(time_duration_unbound, error(instantiation_error)) :- cep_time_duration(_, 1, _).
test(time_duration_type, error(type_error(integer, a))) :- cep_time_duration(a, 1, _).
test(time_point, D == dt(5)) :- cep_time_point(5, D).
test(time_point_type, error(type_error(integer, 1.5))) :- cep_time_point(1.5, _).
test(timestamp_latest_bound, D == dt(7)) :- cep_timestamp([5, _, 7, _], D).
test(timestamp_none_bound, fail) :- cep_timestamp([_, _], _).
test(timestamp_no_pattern, fail) :- cep_timestamp([], _).
test(unknown_function, error(cep_error(unknown_function(substr/2)))) :- cep_fn(substr, ["a", 1], _).
test(wrong_arity, error(cep_error(unknown_function(str/2)))) :- cep_fn(str, ["a", "b"], _).
test(cast_arity, error(cep_error(unknown_function(cast(x)/2)))) :- cep_fn(cast(x), ["a", "b"], _).
test(unbound_function, error(instantiation_error)) :- cep_fn(_, ["a"], _).
test(args_not_a_list, error(type_error(list, foo))) :- cep_fn(str, foo, _).
test(messages) :-
    forall(member(E, [ cep_error(unknown_function(f/1)),
                       cep_error(unknown_operator(<>)),
                       cep_error(not_a_value(foo)),
                       cep_error(regex_unavailable)
                     ]),
           ( phrase(prolog:message(error(E, _)), Lines),
             Lines \== [] )).
test(deterministic) :-
    forall(member(G, [ cep_nt(1.5, _), cep_nt("a\nb", _), cep_ebv(dec(1r2), _),
                       cep_compare(<, 1, dec(3r2), _), cep_compare(=, 'http://a', "a", _),
                       cep_add(1, 2.0, _), cep_div(1, 3, _), cep_sub(dt(1), dt(0), _),
                       cep_fn(regex, ["abc", "b", "i"], _), cep_fn(concat, ["a", "b"], _),
                       cep_fn(cast('http://www.w3.org/2001/XMLSchema#dateTime'), ["2026-01-01T00:00:00Z"], _),
                       cep_fn(cast('http://www.w3.org/2001/XMLSchema#duration'), ["P1Y2M3DT4H"], _)
                     ]),
           ( call_cleanup(G, Det = true), Det == true )).

:- end_tests(cep_misc).


                 /*******************************
                 *      BANDS, ANSWER TEXT      *
                 *******************************/

:- begin_tests(cep_band).

%   Numbers as integers, decimals and doubles (the doubles where they fit)
numbers(Vs) :-
    findall(V, ( member(E, [-10**400, -10**12, -5, -1r3, 0, 1r1000000, 1r2, 1, 3r2, 99, 100,
                            100000001r1000000, 10**12, 10**300, 10**400]),
                 N is E,
                 (   integer(N), V = N
                 ;   V = dec(N)
                 ;   catch(V is float(N), _, fail)
                 ) ),
            Vs0),
    inf(P), ninf(M),
    Vs = [P, M, -0.0|Vs0].

test(monotone) :-
    numbers(Vs),
    forall(( member(A, Vs), member(B, Vs), cep_compare(<, A, B, true) ),
           ( cep_band(A, BA), cep_band(B, BB), BA =< BB + 1 )).
test(not_numbers, Bs == [other, other, other, other]) :-
    nan(NaN),
    maplist(cep_band, [_, NaN, "5", 'http://a'], Bs).
test(infinities, [B1, B2] == [-16001, 16000]) :-
    ninf(M), inf(P),
    cep_band(M, B1), cep_band(P, B2).
test(width) :-                              % about 4.4% of a value a band
    cep_band(dec(100), B1), cep_band(dec(10445r100), B2), cep_band(dec(10460r100), B3),
    B2 - B1 =< 1, B3 - B1 >= 1.

:- end_tests(cep_band).

:- begin_tests(cep_answer_text).

%   The C writer's decimals against cep_nt/2 (the Prolog writer)
test(decimals_as_cep_nt) :-
    set_random(seed(11)),
    findall(dec(R), ( between(1, 3000, _),
                      Lo is -10**20, Hi is 10**20, random_between(Lo, Hi, N0), random_between(0, 25, A), random_between(0, 25, B),
                      random_between(0, 3, Shift), N is N0 // 10**(Shift*6),
                      R is N rdiv (2**A * 5**B) ), Random),
    Fixed = [dec(0), dec(-1), dec(1r2), dec(-1r2), dec(1r1000000000000000000), dec(123456789012345678),
             dec(-9223372036854775808), dec(9223372036854775807r1024), dec(1000000000000000000000000000000), dec(R70)],
    R70 is 1r2**70,
    append(Fixed, Random, Values),
    forall(member(V, Values),
           ( cep_fast:cep_answer_text([r(0, 1, 2, [V])], Text),
             cep_nt(V, Expected),
             format(string(Text), "0\t1\t2\t~w~n", [Expected]) )).

:- end_tests(cep_answer_text).
