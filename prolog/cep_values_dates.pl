/*  xsd:dateTime, xsd:date and xsd:duration: their canonical lexical forms and
    parsers, the proleptic Gregorian calendar they rest on, and
    EP-SPARQL's and C-SPARQL's time functions (getDURATION, getSTARTTIME,
    getENDTIME, timestamp).

    Every predicate follows the rules of cep_values.pl: encoded terms in
    and out, deterministic, SPARQL evaluation errors as failure.
*/

:- module(cep_values_dates,
          [ cep_time_duration/3,
            cep_time_point/2,
            cep_timestamp/2,
            cep_stream_end/4,
            % for the other value modules
            datetime_lexical/2,
            datetime_fields/7,
            datetime_zone/2,
            duration_lexical/3,
            parse_date/3,
            parse_datetime/2,
            parse_duration/3
          ]).

:- use_module(library(lists)).
:- use_module(library(apply)).
:- use_module(library(error)).
:- use_module(cep_values_numbers, [digit/3, digits1/3, lexical_codes/2, strip_trailing_zeros/2]).

:- include(cep_values_iris).

%!  datetime_lexical(+EpochMs, -Lexical:string) is det.
%
%   terms.format_datetime_ms: YYYY-MM-DDThh:mm:ss[.fff]Z, the fraction
%   without trailing zeros. Years before 1000 are padded to four digits
%   as XSD requires (see the note on strftime in the tests); years before
%   1 follow XSD 1.1 (0000 is 1 BCE).

datetime_lexical(Ms, S) :-
    Days is Ms div 86400000,
    Rest is Ms mod 86400000,
    civil_from_days(Days, Y, Mo, D),
    H is Rest // 3600000,
    Mi is Rest // 60000 mod 60,
    Sec is Rest // 1000 mod 60,
    Milli is Rest mod 1000,
    year_string(Y, YS),
    two_digits(Mo, MoS),
    two_digits(D, DS),
    two_digits(H, HS),
    two_digits(Mi, MiS),
    two_digits(Sec, SecS),
    (   Milli =:= 0
    ->  atomics_to_string([YS, -, MoS, -, DS, 'T', HS, :, MiS, :, SecS, 'Z'], S)
    ;   millis_fraction(Milli, F),
        atomics_to_string([YS, -, MoS, -, DS, 'T', HS, :, MiS, :, SecS, '.', F, 'Z'], S)
    ).

two_digits(N, T) :-
    (   N < 10
    ->  atom_concat('0', N, T)
    ;   T = N
    ).

year_string(Y, S) :-
    (   Y >= 1000
    ->  S = Y
    ;   Y < 0
    ->  A is -Y,
        format(string(S), "-~|~`0t~d~4+", [A])
    ;   format(string(S), "~|~`0t~d~4+", [Y])
    ).

%   Milliseconds 1..999 as fraction digits without trailing zeros.
millis_fraction(Milli, F) :-
    format(codes(Cs), "~|~`0t~d~3+", [Milli]),
    strip_trailing_zeros(Cs, Ds),
    string_codes(F, Ds).

%!  duration_lexical(+Months, +Ms, -Lexical:string) is det.
%
%   terms.format_duration, including its treatment of mixed signs (the
%   sign is "-" if either part is negative, the parts are written as
%   absolute values). Arithmetic here never produces mixed signs.

duration_lexical(0, 0, S) :- !, S = "PT0S".
duration_lexical(Months0, Ms0, S) :-
    (   ( Months0 < 0 ; Ms0 < 0 )
    ->  Sign = "-"
    ;   Sign = ""
    ),
    Months is abs(Months0),
    Ms is abs(Ms0),
    Years is Months // 12,
    Mo is Months mod 12,
    Days is Ms // 86400000,
    Rest is Ms mod 86400000,
    with_output_to(string(S),
                   ( write(Sign), write('P'),
                     part(Years, 'Y'),
                     part(Mo, 'M'),
                     part(Days, 'D'),
                     time_parts(Rest)
                   )).

part(0, _) :- !.
part(N, Unit) :- write(N), write(Unit).

time_parts(0) :- !.
time_parts(Rest) :-
    write('T'),
    H is Rest // 3600000,
    Mi is Rest // 60000 mod 60,
    Ms is Rest mod 60000,
    part(H, 'H'),
    part(Mi, 'M'),
    (   Ms =:= 0
    ->  true
    ;   Sec is Ms // 1000,
        Milli is Ms mod 1000,
        (   Milli =:= 0
        ->  format("~dS", [Sec])
        ;   millis_fraction(Milli, F),
            format("~d.~wS", [Sec, F])
        )
    ).

%!  datetime_fields(+EpochMs, -Year, -Month, -Day, -Hours, -Minutes, -SecondsMs) is det.
%
%   The calendar fields of an instant in UTC (the engine keeps dateTimes
%   in UTC), the seconds as milliseconds (YEAR ... SECONDS, 17.4.5).

datetime_fields(Ms, Y, Mo, D, H, Mi, SecMs) :-
    Days is Ms div 86400000,
    InDay is Ms mod 86400000,
    civil_from_days(Days, Y, Mo, D),
    H is InDay // 3600000,
    Mi is InDay // 60000 mod 60,
    SecMs is InDay mod 60000.

                 /*******************************
                 *         CALENDAR             *
                 *******************************/

%   Proleptic Gregorian calendar, days since 1970-01-01, after H. Hinnant's
%   "chrono-compatible low-level date algorithms". Integer arithmetic
%   only, valid for every year.

civil_from_days(Z0, Y, M, D) :-
    Z is Z0 + 719468,
    Era is Z div 146097,
    Doe is Z - Era * 146097,
    Yoe is (Doe - Doe // 1460 + Doe // 36524 - Doe // 146096) // 365,
    Y0 is Yoe + Era * 400,
    Doy is Doe - (365 * Yoe + Yoe // 4 - Yoe // 100),
    Mp is (5 * Doy + 2) // 153,
    D is Doy - (153 * Mp + 2) // 5 + 1,
    (   Mp < 10
    ->  M is Mp + 3
    ;   M is Mp - 9
    ),
    (   M =< 2
    ->  Y is Y0 + 1
    ;   Y = Y0
    ).

days_from_civil(Y0, M, D, Days) :-
    (   M =< 2
    ->  Y is Y0 - 1
    ;   Y = Y0
    ),
    Era is Y div 400,
    Yoe is Y - Era * 400,
    (   M > 2
    ->  Mp is M - 3
    ;   Mp is M + 9
    ),
    Doy is (153 * Mp + 2) // 5 + D - 1,
    Doe is Yoe * 365 + Yoe // 4 - Yoe // 100 + Doy,
    Days is Era * 146097 + Doe - 719468.

days_in_month(Y, 2, D) :- !, ( leap_year(Y) -> D = 29 ; D = 28 ).
days_in_month(_, M, D) :- memberchk(M, [4, 6, 9, 11]), !, D = 30.
days_in_month(_, _, 31).

leap_year(Y) :-
    Y mod 4 =:= 0,
    (   Y mod 100 =\= 0
    ->  true
    ;   Y mod 400 =:= 0
    ).

%!  parse_datetime(+String, -EpochMs) is semidet.
%
%   terms.parse_datetime_ms: [-]YYYY-MM-DDThh:mm:ss[.f+][Z|(+|-)hh:mm],
%   no zone read as UTC, fraction truncated to milliseconds, 24:00:00 as
%   the next midnight. Choice: years outside 1..9999 are accepted (XSD
%   1.1), where Python's datetime rejects them.

parse_datetime(S, Ms) :-
    lexical_codes(S, Cs),
    once(phrase(datetime_lex(Ms), Cs)).

datetime_lex(Ms) -->
    year_lex(Y), "-", d2(Mo), "-", d2(D), "T",
    d2(H), ":", d2(Mi), ":", d2(Sec),
    fraction_ms(F),
    zone_offset_min(Z),
    {   between(1, 12, Mo),
        days_in_month(Y, Mo, Max),
        between(1, Max, D),
        (   H =:= 24
        ->  Mi =:= 0, Sec =:= 0, F =:= 0
        ;   H < 24
        ),
        Mi < 60,
        Sec < 60,
        days_from_civil(Y, Mo, D, Days),
        Ms is Days * 86400000 + ((H * 60 + Mi) * 60 + Sec) * 1000 + F - Z * 60000
    }.

year_lex(Y) -->
    (   "-"
    ->  { Sg = -1 }
    ;   { Sg = 1 }
    ),
    digits1(Ds),
    {   length(Ds, L),
        L >= 4,
        (   L > 4
        ->  Ds \= [0'0|_]
        ;   true
        ),
        number_codes(N, Ds),
        Y is Sg * N
    }.

d2(N) --> digit(A), digit(B), { N is (A - 0'0) * 10 + B - 0'0 }.

fraction_ms(F) -->
    ".",
    !,
    digits1(Ds),
    { append(Ds, `000`, Padded), Padded = [A, B, C|_], number_codes(F, [A, B, C]) }.
fraction_ms(0) --> [].

zone_offset_min(Z) --> zone_lex(_, Z).

%   zone_lex(-Zoned, -OffsetMin): Zoned is zoned or unzoned (offset 0).
zone_lex(zoned, 0) --> "Z", !.
zone_lex(zoned, Z) -->
    sign_char(Sg),
    !,
    d2(H), ":", d2(M),
    { ( H < 14, M < 60 ; H =:= 14, M =:= 0 ), Z is Sg * (H * 60 + M) }.
zone_lex(unzoned, 0) --> [].

sign_char(1) --> "+".
sign_char(-1) --> "-".

%!  parse_date(+String, -EpochMs, -Zoned) is semidet.
%
%   xsd:date: [-]YYYY-MM-DD[Z|(+|-)hh:mm] as the instant its day starts
%   (XPath 10.4.9: a date compares as the dateTime at 00:00:00 with its
%   zone), no zone read as UTC; Zoned is zoned or unzoned, for the partial
%   order of dates with and without a zone (cep_values_compare.pl).

parse_date(S, Ms, Zoned) :-
    lexical_codes(S, Cs),
    once(phrase(date_lex(Ms, Zoned), Cs)).

date_lex(Ms, Zoned) -->
    year_lex(Y), "-", d2(Mo), "-", d2(D),
    zone_lex(Zoned, Z),
    {   between(1, 12, Mo),
        days_in_month(Y, Mo, Max),
        between(1, Max, D),
        days_from_civil(Y, Mo, D, Days),
        Ms is Days * 86400000 - Z * 60000
    }.

%!  datetime_zone(+String, -Zone) is det.
%
%   The time zone of a valid xsd:dateTime lexical form as written: none,
%   or z(Text, OffsetMinutes) with Text "Z" or "+hh:mm"/"-hh:mm"
%   (terms.datetime_zone).

datetime_zone(S, Zone) :-
    lexical_codes(S, Cs),
    (   append(_, [0'Z], Cs)
    ->  Zone = z("Z", 0)
    ;   append(_, [Sg, H1, H2, 0':, M1, M2], Cs),
        memberchk(Sg, `+-`)
    ->  string_codes(Text, [Sg, H1, H2, 0':, M1, M2]),
        number_codes(H, [H1, H2]),
        number_codes(M, [M1, M2]),
        Min is (H * 60 + M) * (44 - Sg),        % 0'+ is 43, 0'- is 45
        Zone = z(Text, Min)
    ;   Zone = none
    ).

%!  parse_duration(+String, -Months, -Ms) is semidet.
%
%   terms.parse_duration: -?PnYnMnDTnHnMn(.n)S, at least one part, no
%   dangling T, seconds truncated to milliseconds.

parse_duration(S, Months, Ms) :-
    lexical_codes(S, Cs),
    once(phrase(duration_lex(Months, Ms), Cs)).

duration_lex(Months, Ms) -->
    (   "-"
    ->  { Sg = -1 }
    ;   { Sg = 1 }
    ),
    "P",
    dur_part(0'Y, Y, P1),
    dur_part(0'M, Mo, P2),
    dur_part(0'D, D, P3),
    (   "T"
    ->  dur_part(0'H, H, P4),
        dur_part(0'M, Mi, P5),
        dur_seconds(SMs, P6),
        { P4 + P5 + P6 > 0 }
    ;   { H = 0, Mi = 0, SMs = 0, P4 = 0, P5 = 0, P6 = 0 }
    ),
    { P1 + P2 + P3 + P4 + P5 + P6 > 0,
      Months is Sg * (Y * 12 + Mo),
      Ms is Sg * (((D * 24 + H) * 60 + Mi) * 60000 + SMs)
    }.

dur_part(Unit, N, 1) -->
    digits1(Ds),
    [Unit],
    !,
    { number_codes(N, Ds) }.
dur_part(_, 0, 0) --> [].

dur_seconds(Ms, 1) -->
    digits1(Ds),
    (   "."
    ->  digits1(Fs)
    ;   { Fs = [] }
    ),
    "S",
    !,
    {   number_codes(Sec, Ds),
        append(Fs, `000`, Padded), Padded = [A, B, C|_],
        number_codes(Milli, [A, B, C]),
        Ms is Sec * 1000 + Milli
    }.
dur_seconds(0, 0) --> [].

                 /*******************************
                 *        TIME FUNCTIONS        *
                 *******************************/

%!  cep_time_duration(+StartMs, +EndMs, -Duration) is det.
%
%   getDURATION() of an interval (EP-SPARQL's time functions): the
%   duration End-Start. A solution of background triples alone has no
%   interval (the atom timeless): its time functions are errors (fail).
%
%   @error instantiation_error or type_error(integer, _) on a
%          non-integer timestamp

cep_time_duration(Start, End, dur(0, D)) :-
    Start \== timeless,
    End \== timeless,
    must_be(integer, Start),
    must_be(integer, End),
    D is End - Start.

%!  cep_time_point(+Ms, -DateTime) is det.
%
%   getSTARTTIME() / getENDTIME() of an interval: the instant as a
%   dateTime.

cep_time_point(Ms, dt(Ms)) :-
    Ms \== timeless,
    must_be(integer, Ms).

%!  cep_timestamp(+Ends, -DateTime) is semidet.
%
%   C-SPARQL's timestamp(?v): the latest of Ends, the ends of the events
%   that matched a triple pattern with ?v (unbound where a pattern matched
%   the background, or did not match), as a dateTime. Fails (an error)
%   when none is bound: no stream triple bound ?v.

cep_timestamp(Ends, dt(Max)) :-
    include(integer, Ends, Bound),
    max_list(Bound, Max).

%!  cep_stream_end(?Stream, +Of, +End, -Bound) is det.
%
%   For C-SPARQL's timestamp(?v, <Of>): Bound is End, the end of the event
%   a triple pattern matched, when the event is of stream Of; an event of
%   no stream (Stream unbound) is of every stream. Otherwise Bound stays
%   unbound. The streams are atoms compared, never called.

cep_stream_end(Stream, Of, End, Bound) :-
    (   var(Stream)
    ->  Bound = End
    ;   Stream == Of
    ->  Bound = End
    ;   true
    ).
