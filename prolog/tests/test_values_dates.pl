/*  plunit tests of prolog/cep_values_dates.pl: dateTime and duration lexical forms through str()
    and the casts (cep_fn/3), and the time functions.

    Run from the repository root:
        swipl -q -g "consult('prolog/tests/test_values_dates.pl'), run_tests" -t halt
*/

:- module(test_values_dates, []).

:- use_module('../cep_values').
:- use_module('../cep_values_dates').
:- use_module(values_support).
:- use_module(library(plunit)).
:- use_module(library(lists)).
:- use_module(library(random)).

:- begin_tests(cep_date_round_trips).

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

:- end_tests(cep_date_round_trips).

:- begin_tests(cep_time_functions).

test(time_duration, D == dur(0, 3500)) :- cep_time_duration(1000, 4500, D).
test(time_duration_unbound, error(instantiation_error)) :- cep_time_duration(_, 1, _).
test(time_duration_type, error(type_error(integer, a))) :- cep_time_duration(a, 1, _).
test(time_point, D == dt(5)) :- cep_time_point(5, D).
test(time_point_type, error(type_error(integer, 1.5))) :- cep_time_point(1.5, _).
test(timestamp_latest_bound, D == dt(7)) :- cep_timestamp([5, _, 7, _], D).
test(timestamp_none_bound, fail) :- cep_timestamp([_, _], _).
test(timestamp_no_pattern, fail) :- cep_timestamp([], _).
test(stream_end_of_the_stream, B == 7) :- cep_stream_end(s, s, 7, B).
test(stream_end_of_no_stream, B == 7) :- cep_stream_end(_, s, 7, B).
test(stream_end_of_another_stream, true(var(B))) :- cep_stream_end(t, s, 7, B).

:- end_tests(cep_time_functions).

:- begin_tests(cep_dates).

test(parse_datetime) :-
    t0(T0),
    parse_datetime("2026-01-01T02:00:05+02:00", A), assertion(A == T0),
    parse_datetime("2026-01-01T00:00:05", B), assertion(B == T0),     % no zone: UTC
    parse_datetime("2026-01-01T24:00:00Z", C), assertion(C =:= T0 - 5000 + 86400000),
    parse_datetime("2026-01-01T00:00:05.2509Z", D), assertion(D =:= T0 + 250).
test(invalid_datetimes) :-
    forall(member(S, ["2001-02-29T00:00:00Z", "2026-13-01T00:00:00Z", "2026-01-01", "yesterday"]),
           assertion(\+ parse_datetime(S, _))).
test(parse_date) :-
    t0(T0),
    Day is T0 - 5000,                                   % 2026-01-01T00:00:00Z
    parse_date("2026-01-01", A, ZA), assertion(A-ZA == Day-unzoned),
    parse_date("2026-01-01Z", B, ZB), assertion(B-ZB == Day-zoned),
    parse_date("2026-01-01+02:00", C, ZC), assertion(C =:= Day - 7200000), assertion(ZC == zoned),
    forall(member(S, ["2001-02-29", "2026-01-01T00:00:00Z", "2026-1-01", "2026-01-01+15:00", "26-01-01"]),
           assertion(\+ parse_date(S, _, _))).
test(leap_days) :-
    parse_datetime("2000-02-29T00:00:00Z", _),
    \+ parse_datetime("1900-02-29T00:00:00Z", _).
test(datetime_lexical) :-
    t0(T0),
    T is T0 + 250,
    datetime_lexical(T, A), assertion(A == "2026-01-01T00:00:05.25Z"),
    datetime_lexical(-62135596800000, B), assertion(B == "0001-01-01T00:00:00Z").
test(parse_duration) :-
    parse_duration("-P1Y2M3DT4H5M6.5S", M, Ms), assertion(M-Ms == -14-(-273906500)),
    parse_duration("PT36H", M2, Ms2), assertion(M2-Ms2 == 0-129600000),
    \+ parse_duration("P1YT", _, _),
    \+ parse_duration("P", _, _).
test(duration_lexical) :-
    duration_lexical(14, 93906500, A), assertion(A == "P1Y2M1DT2H5M6.5S"),
    duration_lexical(-14, -93906500, B), assertion(B == "-P1Y2M1DT2H5M6.5S"),
    duration_lexical(0, 0, C), assertion(C == "PT0S").

:- end_tests(cep_dates).

