/*  plunit tests of prolog/cep_values_terms.pl.

    Run from the repository root:
        swipl -q -g "consult('prolog/tests/test_values_terms.pl'), run_tests" -t halt
*/

:- module(test_values_terms, []).

:- use_module('../cep_values').
:- use_module(values_support).
:- use_module(library(plunit)).
:- use_module(library(lists)).
:- use_module(library(random)).

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
