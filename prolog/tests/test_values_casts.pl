/*  plunit tests of prolog/cep_values_casts.pl.

    Run from the repository root:
        swipl -q -g "consult('prolog/tests/test_values_casts.pl'), run_tests" -t halt
*/

:- module(test_values_casts, []).

:- use_module('../cep_values').
:- use_module(values_support).
:- use_module(library(plunit)).
:- use_module(library(lists)).
:- use_module(library(random)).

:- begin_tests(cep_casts).

test(integer_from_string, X == 42) :- cast(integer, "42", X).
test(string_of_a_number_is_canonical, S == "2.5") :-
    xsd(decimal, T), cast(string, lv("2.50", T, dec(5r2)), S).
test(string_of_a_boolean_is_canonical, S == "false") :-
    xsd(boolean, T), cast(string, lv("0", T, bool(false)), S).
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
