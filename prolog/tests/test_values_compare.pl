/*  plunit tests of prolog/cep_values_compare.pl.

    Run from the repository root:
        swipl -q -g "consult('prolog/tests/test_values_compare.pl'), run_tests" -t halt
*/

:- module(test_values_compare, []).

:- use_module('../cep_values').
:- use_module(values_support).
:- use_module(library(plunit)).
:- use_module(library(lists)).
:- use_module(library(random)).

:- begin_tests(cep_ebv).

test(numeric_value, Vs == [1, dec(1r2), 0.2, bool(false), l("1.5E0", F), l("1.5E0", F), l("abc", I), "01",
                           lv("2026-01-01T00:00:00+00:00", D, dt(1767225600000))]) :-
    xsd(integer, I), xsd(decimal, Dec), xsd(double, Dbl), xsd(boolean, B), xsd(float, F), xsd(dateTime, D),
    Terms = [lv("01", I, 1), lv("0.50", Dec, dec(1r2)), lv("2E-1", Dbl, 0.2), lv("0", B, bool(false)),
             l("1.50", F), l("1.5E0", F), l("abc", I), "01", lv("2026-01-01T00:00:00+00:00", D, dt(1767225600000))],
    maplist(cep_numeric_value, Terms, Vs).
test(terms_kept_compare_by_value, R == true) :-
    xsd(integer, I), cep_compare(=, lv("01", I, 1), 1, R).
test(terms_kept_compute_by_value, R == dec(3r2)) :-
    xsd(decimal, D), cep_add(lv("1.00", D, dec(1)), dec(1r2), R).
test(ill_typed_is_an_error, fail) :-
    ty("abc", integer, A), cep_compare(<, A, 1, _).
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
test(lang_vs_string, R == false) :- cmp(=, lang("a", en), "a", R).
test(lang_vs_ill_typed, R == true) :- ty("a", integer, B), cmp('!=', lang("a", en), B, R).
test(lang_vs_unknown_datatype, R == false) :- cmp(=, l("a", 'http://t'), lang("a", en), R).
test(lang_vs_string_unordered, fail) :- cmp(<, lang("a", en), "a", _).

test(bool_order, R == true) :- cmp(<, bool(false), bool(true), R).
test(bool_equal, R == true) :- cmp(=, bool(true), bool(true), R).
test(bool_literal, R == true) :- ty("1", boolean, V), cmp(=, V, bool(true), R).
test(datetime_less, R == true) :- cmp(<, dt(1), dt(2), R).
test(datetime_equal, R == true) :- cmp(>=, dt(5), dt(5), R).
%   xsd:date (XPath op:date-less-than / op:date-equal, XML Schema's
%   partial order for dates with and without a zone).
test(date_equal, R == true) :- ty("2006-08-23", date, A), ty("2006-08-23", date, B), cmp(=, A, B, R).
test(date_less, R == true) :- ty("2006-08-22", date, A), ty("2006-08-23", date, B), cmp(<, A, B, R).
test(date_zones_same_instant, R == true) :-
    ty("2006-08-23Z", date, A), ty("2006-08-23+00:00", date, B), cmp(=, A, B, R).
test(date_zones_by_instant, R == true) :-
    % 2006-08-23T00:00+05:00 starts before 2006-08-23T00:00Z
    ty("2006-08-23+05:00", date, A), ty("2006-08-23Z", date, B), cmp(<, A, B, R).
test(date_zone_and_none_far_apart, Row == [false, true, false, true, false, true]) :-
    ty("2006-08-23Z", date, A), ty("2006-08-22", date, B),
    findall(R, ( member(Op, [=, '!=', <, >, <=, >=]), cmp(Op, A, B, R) ), Row).
test(date_zone_and_none_close_incomparable, Rs == []) :-
    ty("2006-08-23Z", date, A), ty("2006-08-23", date, B),
    findall(R, ( member(Op, [=, '!=', <, >, <=, >=]), cmp(Op, A, B, R) ), Rs).
test(date_zone_and_none_14_hours_incomparable, fail) :-
    % 2006-08-23-14:00 starts at 2006-08-23T14:00Z: within the 14 hours of
    % 2006-08-23 without a zone (its start somewhere in 2006-08-22T10:00Z ..
    % 2006-08-23T14:00Z, the end included)
    ty("2006-08-23-14:00", date, A), ty("2006-08-23", date, B), cmp(>, A, B, _).
test(date_vs_datetime_not_equal, Rs == [false, true]) :-
    ty("2006-08-23", date, A),
    findall(R, ( member(Op, [=, '!=']), cmp(Op, A, dt(1156291200000), R) ), Rs).
test(date_vs_datetime_unordered, fail) :-
    ty("2006-08-23", date, A), cmp(<, dt(0), A, _).
test(date_invalid_is_an_error, fail) :-
    ty("2006-02-30", date, A), ty("2006-08-23", date, B), cmp(<, A, B, _).
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
