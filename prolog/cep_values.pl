/*  SPARQL 1.1 values, operators and functions over the Prolog encoding of
    RDF terms (SPARQL 1.1 sections 17.2-17.5).

    It takes encoded terms (see the docstring of cep/terms.py) and returns
    encoded terms:

        IRI                 atom                'http://...'
        blank node          bn(Label)
        simple/xsd:string   SWI string          "abc"
        language-tagged     lang(String, Tag)   (Tag lower case)
        xsd:integer         integer
        xsd:decimal         dec(R)              (R integer or rational)
        xsd:double          float
        xsd:boolean         bool(true|false)
        xsd:dateTime        dt(EpochMillis)     (UTC)
        xsd:duration        dur(Months, Millis)
        any other datatype  l(Lexical, DatatypeIRI)

    An unbound SPARQL variable is an unbound Prolog variable.

    Every predicate is deterministic. Where SPARQL raises an evaluation
    error (a type error, an invalid lexical form, division by zero, an
    unbound argument) the predicate *fails*: the compiled expressions
    (cep/compile/expr.py) turn that failure into SPARQL's error value. Only
    programming errors (an unknown function or operator, a term that is not
    an encoded value where one must be written) raise exceptions; they are
    rendered by the prolog:message//1 section at the end of this file.
    Nothing built from data is ever called as a goal.

    Where SPARQL 1.1 leaves room, or where this module does more than
    SPARQL 1.1 asks, the comment next to the code says "Choice:".
*/

:- module(cep_values,
          [ cep_nt/2,               % +Value, -Text
            cep_ebv/2,              % +Value, -Bool
            cep_compare/4,          % +Op, +A, +B, -Bool
            cep_band/2,             % +Value, -Band
            cep_add/3,              % +A, +B, -Sum
            cep_sub/3,              % +A, +B, -Difference
            cep_mul/3,              % +A, +B, -Product
            cep_div/3,              % +A, +B, -Quotient
            cep_neg/2,              % +A, -Negated
            cep_pos/2,              % +A, -Value
            cep_fn/3,               % +Name, +Args, -Value
            cep_regex/3,            % +Where, +Args, -Value
            cep_regex_gave_up/1,    % -Wheres
            cep_time_duration/3,    % +StartMs, +EndMs, -Duration
            cep_time_point/2,       % +Ms, -DateTime
            cep_timestamp/2,        % +Ends, -DateTime
            cep_regex_problem/3     % +Pattern, +Flags, -Problem
          ]).

:- use_module(library(lists)).
:- use_module(library(apply)).
:- use_module(library(error)).
:- use_module(cep_fast).

% REGEX uses PCRE2. The library is part of the standard SWI-Prolog
% distribution but is a separate package; without it REGEX raises
% cep_error(regex_unavailable) instead of silently answering wrongly.
:- if(exists_source(library(pcre))).
:- use_module(library(pcre)).
:- endif.

:- multifile prolog:message//1.

% Module-local macros: xsd(Local) and rdf(Local) anywhere in a clause of
% this file expand to the full datatype IRI atom when the file is loaded.

term_expansion_iri(xsd(L), IRI) :-
    atom(L),
    atom_concat('http://www.w3.org/2001/XMLSchema#', L, IRI).
term_expansion_iri(rdf(L), IRI) :-
    atom(L),
    atom_concat('http://www.w3.org/1999/02/22-rdf-syntax-ns#', L, IRI).

expand_iris(T, T) :-
    var(T),
    !.
expand_iris(T, E) :-
    term_expansion_iri(T, E),
    !.
expand_iris(T, E) :-
    compound(T),
    !,
    compound_name_arguments(T, N, As),
    maplist(expand_iris, As, Es),
    compound_name_arguments(E, N, Es).
expand_iris(T, T).

term_expansion((H :- B), (H1 :- B1)) :-
    prolog_load_context(module, cep_values),
    expand_iris(H, H1),
    expand_iris(B, B1),
    (H1 :- B1) \== (H :- B).
term_expansion(H, H1) :-
    prolog_load_context(module, cep_values),
    H \= (_ :- _),
    H \= (:- _),
    expand_iris(H, H1),
    H1 \== H.


                 /*******************************
                 *      N-TRIPLES TEXT          *
                 *******************************/

%!  cep_nt(+Value, -Text:string) is det.
%
%   The canonical N-Triples text of an encoded term, character for
%   character the text of Python's cep.terms.canonical/1 for the same
%   term. Runs for every field of every answer, so the common cases
%   (IRIs, integers, strings without characters to escape) take a single
%   concatenation.
%
%   @error instantiation_error if Value is unbound
%   @error cep_error(not_a_value(Value)) if Value is not an encoded term

cep_nt(V, _) :-
    var(V),
    !,
    instantiation_error(V).
cep_nt(V, S) :-
    atom(V),
    !,
    (   cep_iri_plain(V)
    ->  atomics_to_string(['<', V, '>'], S)
    ;   atom_codes(V, Codes),
        foldl(iri_code, Codes, Parts, []),
        atomics_to_string(['<'|Parts], S0),
        string_concat(S0, ">", S)
    ).
cep_nt(V, S) :-
    string(V),
    !,
    escape_literal(V, E),
    atomics_to_string(['"', E, '"'], S).
cep_nt(V, S) :-
    integer(V),
    !,
    atomics_to_string(['"', V, '"^^<http://www.w3.org/2001/XMLSchema#integer>'], S).
cep_nt(V, S) :-
    (   nt_compound(V, S0)
    ->  S = S0
    ;   throw(error(cep_error(not_a_value(V)), _))
    ).

%   An IRI holding a character that IRIREF does not allow is written with
%   \uXXXX escapes (as Python's cep.terms.iri does), so it reads back.
iri_code(C, [Text|Parts], Parts) :-
    (   cep_iri_forbidden(C)
    ->  format(string(Text), "\\u~|~`0t~16R~4+", [C])
    ;   char_code(Text, C)
    ).


nt_compound(V, S) :-
    float(V),
    !,
    double_lexical(V, L),
    atomics_to_string(['"', L, '"^^<http://www.w3.org/2001/XMLSchema#double>'], S).
nt_compound(lang(Text, Tag), S) :-
    string(Text),
    atom(Tag),
    escape_literal(Text, E),
    downcase_atom(Tag, LTag),
    atomics_to_string(['"', E, '"@', LTag], S).
nt_compound(bn(Label), S) :-
    atomic(Label),
    atomics_to_string(['_:', Label], S).
nt_compound(dec(R), S) :-
    decimal_lexical(R, L),
    atomics_to_string(['"', L, '"^^<http://www.w3.org/2001/XMLSchema#decimal>'], S).
nt_compound(bool(B), S) :-
    boolean(B),
    atomics_to_string(['"', B, '"^^<http://www.w3.org/2001/XMLSchema#boolean>'], S).
nt_compound(dt(Ms), S) :-
    integer(Ms),
    datetime_lexical(Ms, L),
    atomics_to_string(['"', L, '"^^<http://www.w3.org/2001/XMLSchema#dateTime>'], S).
nt_compound(dur(Months, Ms), S) :-
    integer(Months),
    integer(Ms),
    duration_lexical(Months, Ms, L),
    atomics_to_string(['"', L, '"^^<http://www.w3.org/2001/XMLSchema#duration>'], S).
nt_compound(l(Lex, T), S) :-
    string(Lex),
    atom(T),
    escape_literal(Lex, E),
    (   T == xsd(string)
    ->  atomics_to_string(['"', E, '"'], S)
    ;   atomics_to_string(['"', E, '"^^<', T, '>'], S)
    ).

boolean(true).
boolean(false).

%   N-Triples escaping as in terms.escape_literal: backslash, quote, LF, CR
%   and TAB by name, every other C0 control and DEL as \u00XX; anything
%   else as it is. The test for "nothing to escape" is two C scans: NUL is
%   tested apart because split_string/4 does not see separators that
%   follow a NUL in its separator string.

escape_literal(S, E) :-
    escaped_chars(Seps),
    (   split_string(S, Seps, "", [_]),
        \+ sub_string(S, _, _, _, "\x00\")
    ->  E = S
    ;   string_codes(S, Cs),
        escape_codes(Cs, Es),
        string_codes(E, Es)
    ).

escaped_chars("\\\"\n\r\t\x01\\x02\\x03\\x04\\x05\\x06\\x07\\x08\\x0b\\x0c\\x0e\\x0f\\x10\\x11\\x12\\x13\\x14\\x15\\x16\\x17\\x18\\x19\\x1a\\x1b\\x1c\\x1d\\x1e\\x1f\\x7f\").

escape_codes([], []).
escape_codes([C|Cs], Out) :-
    escape_code(C, Out, Rest),
    escape_codes(Cs, Rest).

escape_code(0'\\, [0'\\, 0'\\|T], T) :- !.
escape_code(0'", [0'\\, 0'"|T], T) :- !.
escape_code(0'\n, [0'\\, 0'n|T], T) :- !.
escape_code(0'\r, [0'\\, 0'r|T], T) :- !.
escape_code(0'\t, [0'\\, 0't|T], T) :- !.
escape_code(C, [0'\\, 0'u, 0'0, 0'0, H, L|T], T) :-
    ( C < 0x20 ; C =:= 0x7F ),
    !,
    Hi is C >> 4,
    Lo is C /\ 15,
    hex_digit(Hi, H),
    hex_digit(Lo, L).
escape_code(C, [C|T], T).

hex_digit(D, C) :- D < 10, !, C is 0'0 + D.
hex_digit(D, C) :- C is 0'A + D - 10.


                 /*******************************
                 *       CANONICAL LEXICALS     *
                 *******************************/

%   The canonical lexical form of a value: what STR() returns and what
%   cep_nt/2 writes between the quotes (before escaping).

lexical(V, S) :- string(V), !, S = V.
lexical(V, S) :- integer(V), !, number_string(V, S).
lexical(V, S) :- float(V), !, double_lexical(V, S).
lexical(dec(R), S) :- !, decimal_lexical(R, S).
lexical(bool(B), S) :- !, atom_string(B, S).
lexical(dt(Ms), S) :- !, datetime_lexical(Ms, S).
lexical(dur(M, Ms), S) :- !, duration_lexical(M, Ms, S).
lexical(lang(S0, _), S) :- !, S = S0.
lexical(l(S0, _), S) :- S = S0.

%!  double_lexical(+Float, -Lexical:string) is det.
%
%   terms.format_double: the shortest digits that read back as the same
%   double, as Mantissa E Exponent. SWI-Prolog writes floats with the
%   same shortest round-trip digits as Python's repr() (both use dtoa
%   mode 0); only the layout differs.

double_lexical(X, S) :-
    float_class(X, Class),
    double_lexical(Class, X, S).

double_lexical(nan, _, "NaN") :- !.
double_lexical(infinite, X, S) :- !, ( X > 0 -> S = "INF" ; S = "-INF" ).
double_lexical(zero, X, S) :-
    !,
    (   copysign(1.0, X) < 0
    ->  S = "-0.0E0"
    ;   S = "0.0E0"
    ).
double_lexical(_, X, S) :-
    format(codes(Cs), "~w", [X]),
    (   Cs = [0'-|Abs]
    ->  Sign = "-"
    ;   Abs = Cs,
        Sign = ""
    ),
    (   append(Mant, [0'e|ExpCs], Abs)
    ->  exponent_codes(ExpCs, E)
    ;   Mant = Abs,
        E = 0
    ),
    append(IntCs, [0'.|FracCs], Mant),
    !,
    length(IntCs, IntLen),
    append(IntCs, FracCs, All),
    strip_leading_zeros(All, Digits0, Zeros),
    strip_trailing_zeros(Digits0, Digits),
    Adjusted is IntLen - 1 + E - Zeros,
    mantissa_exponent_string(Sign, Digits, Adjusted, S).

exponent_codes([0'+|Ds], E) :- !, number_codes(E, Ds).
exponent_codes([0'-|Ds], E) :- !, number_codes(E0, Ds), E is -E0.
exponent_codes(Ds, E) :- number_codes(E, Ds).

strip_leading_zeros([0'0|T], Ds, N) :-
    T \== [],
    !,
    strip_leading_zeros(T, Ds, N0),
    N is N0 + 1.
strip_leading_zeros(Ds, Ds, 0).

strip_trailing_zeros(Ds0, Ds) :-
    reverse(Ds0, R0),
    strip_zeros_(R0, R),
    reverse(R, Ds).

strip_zeros_([0'0|T], R) :- T \== [], !, strip_zeros_(T, R).
strip_zeros_(R, R).

mantissa_exponent_string(Sign, [D|Ds], Adjusted, S) :-
    (   Ds == []
    ->  Frac = "0"
    ;   string_codes(Frac, Ds)
    ),
    format(string(S), "~w~c.~wE~d", [Sign, D, Frac, Adjusted]).

%!  decimal_lexical(+Rational, -Lexical:string) is det.
%
%   terms.format_decimal: all digits, at least one after the point. A
%   rational whose decimal expansion does not terminate is not an
%   xsd:decimal value: a programming error.

decimal_lexical(R, S) :-
    integer(R),
    !,
    format(string(S), "~d.0", [R]).
decimal_lexical(R, S) :-
    rational(R, N, D),
    decimal_places(D, P),
    !,
    Scaled is abs(N) * 10^P // D,
    point_digits(Scaled, P, Digits),
    (   N < 0
    ->  string_concat("-", Digits, S)
    ;   S = Digits
    ).
decimal_lexical(R, _) :-
    throw(error(cep_error(not_a_value(dec(R))), _)).

%   Scaled with a point P digits from the right, at least one digit before
%   it. format/2's ~Nd does that, but prints nothing for some big integers
%   in SWI 9.0: it is used on the small ones only (the common case).
point_digits(Scaled, P, S) :-
    Scaled < 0x1000000000000000,
    !,
    format(string(S), "~*d", [P, Scaled]).
point_digits(Scaled, P, S) :-
    number_codes(Scaled, Codes0),
    length(Codes0, L),
    Pad is max(0, P + 1 - L),
    length(Zeros, Pad),
    maplist(=(0'0), Zeros),
    append(Zeros, Codes0, Codes),
    length(Fraction, P),
    append(Whole, Fraction, Codes),
    !,
    format(string(S), "~s.~s", [Whole, Fraction]).

%   The fewest places P with D dividing 10^P: D must be 2^A*5^B, P =
%   max(A, B). Scaling by 10^P then leaves no trailing zero to strip.
decimal_places(D, P) :-
    D > 1,
    A is lsb(D),
    D1 is D >> A,
    fives(D1, 0, B),
    P is max(A, B).

fives(1, B, B) :- !.
fives(D, B0, B) :-
    D mod 5 =:= 0,
    D1 is D // 5,
    B1 is B0 + 1,
    fives(D1, B1, B).

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

                 /*******************************
                 *      LEXICAL PARSING         *
                 *******************************/

%   Parsers of the lexical forms a typed literal or a cast reads. They
%   take a string, drop the XML white space around it (the whiteSpace
%   facet "collapse" of these types), and fail on anything invalid.

lexical_codes(S, Cs) :-
    split_string(S, "", " \t\n\r", [T]),
    string_codes(T, Cs).

parse_integer(S, I) :-
    lexical_codes(S, Cs),
    once(phrase(integer_lex(I), Cs)).

parse_decimal(S, R) :-
    lexical_codes(S, Cs),
    once(phrase(decimal_lex(R), Cs)).

%   A double lexical form as n(Sign, AbsRational) or one of inf, ninf,
%   nan; the sign is kept apart so that "-0" stays negative zero.
parse_double_lex(S, V) :-
    lexical_codes(S, Cs),
    once(phrase(double_lex(V), Cs)).

parse_double(S, F) :-
    parse_double_lex(S, V),
    double_of_lex(V, F).

parse_float32(S, F) :-
    parse_double_lex(S, V),
    float32_of_lex(V, F).

parse_boolean(S, B) :-
    lexical_codes(S, Cs),
    atom_codes(A, Cs),
    boolean_lex(A, B).

boolean_lex(true, true).
boolean_lex('1', true).
boolean_lex(false, false).
boolean_lex('0', false).

integer_lex(I) -->
    sign(Sg),
    digits1(Ds),
    { number_codes(N, Ds), I is Sg * N }.

decimal_lex(R) -->
    sign(Sg),
    unsigned_decimal(R0),
    { R is Sg * R0 }.

unsigned_decimal(R) -->
    digits1(Is),
    (   "."
    ->  digits0(Fs)
    ;   { Fs = [] }
    ),
    { digits_rational(Is, Fs, R) }.
unsigned_decimal(R) -->
    ".",
    digits1(Fs),
    { digits_rational([0'0], Fs, R) }.

double_lex(nan) --> "NaN".
double_lex(V) -->
    sign(Sg),
    (   "INF"
    ->  { Sg > 0 -> V = inf ; V = ninf }
    ;   unsigned_decimal(M),
        (   ( "e" ; "E" )
        ->  sign(ESg),
            digits1(EDs),
            { number_codes(E0, EDs), E is ESg * E0 }
        ;   { E = 0 }
        ),
        { V = n(Sg, M, E) }
    ).

sign(-1) --> "-", !.
sign(1) --> "+", !.
sign(1) --> [].

digits1([D|Ds]) --> digit(D), digits0(Ds).
digits0([D|Ds]) --> digit(D), !, digits0(Ds).
digits0([]) --> [].
digit(D) --> [D], { between(0'0, 0'9, D) }.

digits_rational(Is, Fs, R) :-
    append(Is, Fs, Ds),
    number_codes(N, Ds),
    length(Fs, P),
    R is N rdiv 10^P.

%   The double nearest to Mantissa*10^Exp. Exponents far outside the
%   double range are cut short before building huge powers of ten.
double_of_lex(nan, F) :- F is nan.
double_of_lex(inf, F) :- F is inf.
double_of_lex(ninf, F) :- F is -inf.
double_of_lex(n(Sg, M, E), F) :-
    (   huge_or_tiny(M, E, A)
    ->  true
    ;   pow10(E, P),
        R is M * P,
        rat_double(R, A)
    ),
    F is copysign(A, Sg).

float32_of_lex(nan, F) :- F is nan.
float32_of_lex(inf, F) :- F is inf.
float32_of_lex(ninf, F) :- F is -inf.
float32_of_lex(n(Sg, M, E), F) :-
    (   huge_or_tiny(M, E, A)
    ->  true
    ;   pow10(E, P),
        R is M * P,
        rat_float32(R, A)
    ),
    F is copysign(A, Sg).

%   M*10^E is zero, or so far outside the range of doubles that its
%   rounding is known without computing 10^E (which could be huge).
%   log10(M) is estimated from bit lengths, within one bit.
huge_or_tiny(M, _, 0.0) :-
    M =:= 0,
    !.
huge_or_tiny(M, E, A) :-
    rational(M, N, D),
    Log10 is E + (msb(N) - msb(D)) * 0.30103,
    (   Log10 > 400
    ->  A is inf
    ;   Log10 < -400
    ->  A = 0.0
    ).

pow10(E, P) :-
    (   E >= 0
    ->  P is 10^E
    ;   P is 1 rdiv 10^(-E)
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

zone_offset_min(0) --> "Z", !.
zone_offset_min(Z) -->
    sign_char(Sg),
    !,
    d2(H), ":", d2(M),
    { ( H < 14, M < 60 ; H =:= 14, M =:= 0 ), Z is Sg * (H * 60 + M) }.
zone_offset_min(0) --> [].

sign_char(1) --> "+".
sign_char(-1) --> "-".

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
                 *     FLOATING POINT           *
                 *******************************/

%   SWI-Prolog raises evaluation errors where IEEE 754 returns an
%   infinity or NaN (the flags float_overflow, float_zero_div and
%   float_undefined default to error). Changing those flags would change
%   them for every module, so the IEEE results are computed here instead:
%   the ordinary `is` runs first and only an exception leads to the case
%   analysis.

rat_double(R, F) :-
    catch(F is float(R),
          error(evaluation_error(float_overflow), _),
          ( R > 0 -> F is inf ; F is -inf )).

%!  rat_float32(+Rational, -Float) is det.
%
%   The IEEE single nearest to a rational (ties to even), held as the
%   double with the same value; overflow gives an infinity.

rat_float32(R, F) :-
    (   R =:= 0
    ->  F = 0.0
    ;   A is abs(R),
        float32_round(A, M, Q),
        (   M > 0, msb(M) + Q >= 128            % 2^128 or more
        ->  F0 is inf
        ;   pow2(Q, P),                         % exact: M < 2^25
            F0 is float(M * P)
        ),
        (   R < 0
        ->  F is -F0
        ;   F = F0
        )
    ).

%   A = M*2^Q rounded: Q is the quantum exponent (24 significant bits,
%   subnormals below 2^-126), M the rounded multiple. M can reach 2^24
%   after rounding up, which is still exact.
float32_round(A, M, Q) :-
    rational(A, N, D),
    E0 is msb(N) - msb(D),
    pow2(E0, P0),
    (   P0 > A
    ->  E is E0 - 1
    ;   E = E0
    ),
    Q is max(E, -126) - 23,
    pow2(Q, PQ),
    S is A rdiv PQ,
    round_half_even(S, M).

pow2(E, P) :-
    (   E >= 0
    ->  P is 2^E
    ;   P is 1 rdiv 2^(-E)
    ).

round_half_even(S, M) :-
    Fl is floor(S),
    Fr is S - Fl,
    (   Fr > 1r2
    ->  M is Fl + 1
    ;   Fr < 1r2
    ->  M = Fl
    ;   Fl mod 2 =:= 0
    ->  M = Fl
    ;   M is Fl + 1
    ).

%!  float32(+Double, -Float) is det.
float32(X, F) :-
    float_class(X, C),
    (   memberchk(C, [nan, infinite, zero])
    ->  F = X
    ;   R is rational(X),
        rat_float32(R, F)
    ).

%!  float32_lexical(+Float, -Lexical:string) is det.
%
%   The canonical xsd:float lexical form: like double_lexical/2, with the
%   shortest digits that read back as the same *single*. Found exactly
%   with rationals: for each length P, the two P-digit decimals around
%   the value are tried, and the nearest one that rounds back wins.

float32_lexical(X, S) :-
    float_class(X, Class),
    (   memberchk(Class, [nan, infinite, zero])
    ->  double_lexical(X, S)
    ;   (   X < 0
        ->  Sign = "-"
        ;   Sign = ""
        ),
        V is abs(rational(X)),
        decimal_exponent(V, E10),
        shortest_float32(1, V, E10, Digits, Exp),
        number_codes(Digits, Ds0),
        length(Ds0, Len),
        strip_trailing_zeros(Ds0, Ds),
        Adjusted is Exp + Len - 1,
        mantissa_exponent_string(Sign, Ds, Adjusted, S)
    ).

%   E10 = floor(log10(V)), exactly.
decimal_exponent(V, E) :-
    E0 is floor(log10(float(V))),
    fix_exponent(V, E0, E).

fix_exponent(V, E0, E) :-
    pow10(E0, Lo),
    Hi is Lo * 10,
    (   Lo > V
    ->  E1 is E0 - 1,
        fix_exponent(V, E1, E)
    ;   Hi =< V
    ->  E1 is E0 + 1,
        fix_exponent(V, E1, E)
    ;   E = E0
    ).

shortest_float32(P, V, E10, Digits, Exp) :-
    Exp0 is E10 - (P - 1),
    pow10(Exp0, Unit),
    Lo is floor(V rdiv Unit),
    Hi is Lo + 1,
    findall(Dist-C,
            ( member(C, [Lo, Hi]),
              C > 0,
              W is C * Unit,
              rat_float32(W, F),
              F =:= float(V),
              Dist is abs(W - V)
            ),
            Found),
    (   Found == []
    ->  P1 is P + 1,
        shortest_float32(P1, V, E10, Digits, Exp)
    ;   msort(Found, [_-Digits|_]),
        Exp = Exp0
    ).

%   Float arithmetic with IEEE 754 results.
dbl_op(Op, X, Y, Z) :-
    (   catch(dbl_eval(Op, X, Y, Z0), error(evaluation_error(_), _), fail)
    ->  Z = Z0
    ;   ieee_op(Op, X, Y, Z)
    ).

dbl_eval(+, X, Y, Z) :- Z is X + Y.
dbl_eval(-, X, Y, Z) :- Z is X - Y.
dbl_eval(*, X, Y, Z) :- Z is X * Y.
dbl_eval(/, X, Y, Z) :- Z is X / Y.

ieee_op(Op, X, Y, Z) :-
    float_class(X, CX),
    float_class(Y, CY),
    (   ( CX == nan ; CY == nan )
    ->  Z is nan
    ;   ieee_op(Op, CX, CY, X, Y, Z)
    ).

ieee_op(-, CX, CY, X, Y, Z) :-
    NY is -Y,
    ieee_op(+, CX, CY, X, NY, Z).
ieee_op(+, CX, CY, X, Y, Z) :-
    (   CX == infinite, CY == infinite
    ->  (   sign(X) =:= sign(Y)
        ->  Z = X
        ;   Z is nan
        )
    ;   CX == infinite
    ->  Z = X
    ;   CY == infinite
    ->  Z = Y
    ;   R is rational(X) + rational(Y),         % finite: overflowed
        rat_double(R, Z)
    ).
ieee_op(*, CX, CY, X, Y, Z) :-
    (   ( CX == infinite ; CY == infinite )
    ->  (   ( CX == zero ; CY == zero )
        ->  Z is nan
        ;   signed_inf(X, Y, Z)
        )
    ;   R is rational(X) * rational(Y),
        rat_double(R, Z)
    ).
ieee_op(/, CX, CY, X, Y, Z) :-
    (   CX == infinite, CY == infinite
    ->  Z is nan
    ;   CX == infinite
    ->  signed_inf(X, Y, Z)
    ;   CY == infinite
    ->  (   copysign(1.0, X) * copysign(1.0, Y) > 0
        ->  Z = 0.0
        ;   Z = -0.0
        )
    ;   CY == zero
    ->  (   CX == zero
        ->  Z is nan
        ;   signed_inf(X, Y, Z)
        )
    ;   R is rational(X) / rational(Y),
        rat_double(R, Z)
    ).

signed_inf(X, Y, Z) :-
    (   copysign(1.0, X) * copysign(1.0, Y) > 0
    ->  Z is inf
    ;   Z is -inf
    ).

%   Double of a numeric (Kind, Value); an integer too large for a double
%   becomes an infinity, as IEEE conversion does.
to_double(3, X, X) :- !.
to_double(2, X, X) :- !.
to_double(_, R, F) :- rat_double(R, F).

to_float32(2, X, X) :- !.
to_float32(3, X, F) :- !, float32(X, F).
to_float32(_, R, F) :- rat_float32(R, F).


                 /*******************************
                 *        VALUE CLASSES         *
                 *******************************/

%!  cep_band(+Value, -Band) is det.
%
%   The band of a value for the range index of a goal store (see
%   cep/compile/program.py, Band): an integer for a number that is not NaN,
%   `other` for anything else (unbound included). Bands are monotone in the
%   value, up to the rounding of a double: if X < Y then band(X) =< band(Y)
%   + 1. A band spans about 4.4% of a value (16 a doubling), so a band join
%   such as `?price2 < ?price1 * 0.7` visits few goals that fail it.
cep_band(V, B) :-
    (   nonvar(V),
        numeric(V, K, N),
        to_double(K, N, F),
        F =:= F
    ->  double_band(F, B)
    ;   B = other
    ).

double_band(F, B) :-
    (   F > 1.0e300
    ->  B = 16000
    ;   F < -1.0e300
    ->  B = -16001
    ;   F >= 0
    ->  B is floor(log(1.0 + F) * 23.083120654223414)     % 16 / ln 2
    ;   B is -floor(log(1.0 - F) * 23.083120654223414) - 1
    ).

%!  numeric(+V, -Kind, -Num) is semidet.
%
%   V is a numeric value. Kind orders the numeric types for promotion:
%   0 xsd:integer (and the types derived from it), 1 xsd:decimal,
%   2 xsd:float, 3 xsd:double. Num is an integer, a rational or a float.
%   Typed literals of a numeric type count only with a valid lexical form
%   (SPARQL 17.4.2.4: isNumeric("1200"^^xsd:byte) is false).

numeric(V, K, N) :-
    (   integer(V)
    ->  K = 0, N = V
    ;   float(V)
    ->  K = 3, N = V
    ;   compound(V),
        numeric_(V, K, N)
    ).

numeric_(dec(R), 1, R) :-
    rational(R).
numeric_(l(Lex, T), K, N) :-
    numeric_datatype(T, K, Range),
    string(Lex),
    numeric_lexical(K, Lex, N),
    in_range(Range, N).

numeric_lexical(0, Lex, N) :- parse_integer(Lex, N).
numeric_lexical(1, Lex, N) :- parse_decimal(Lex, N).
numeric_lexical(2, Lex, N) :- parse_float32(Lex, N).
numeric_lexical(3, Lex, N) :- parse_double(Lex, N).

in_range(any, _).
in_range(Lo-Hi, N) :-
    (   Lo == inf
    ->  true
    ;   N >= Lo
    ),
    (   Hi == inf
    ->  true
    ;   N =< Hi
    ).

numeric_datatype(xsd(integer),            0, any).
numeric_datatype(xsd(decimal),            1, any).
numeric_datatype(xsd(float),              2, any).
numeric_datatype(xsd(double),             3, any).
numeric_datatype(xsd(long),               0, -9223372036854775808-9223372036854775807).
numeric_datatype(xsd(int),                0, -2147483648-2147483647).
numeric_datatype(xsd(short),              0, -32768-32767).
numeric_datatype(xsd(byte),               0, -128-127).
numeric_datatype(xsd(nonNegativeInteger), 0, 0-inf).
numeric_datatype(xsd(positiveInteger),    0, 1-inf).
numeric_datatype(xsd(nonPositiveInteger), 0, inf-0).
numeric_datatype(xsd(negativeInteger),    0, inf-(-1)).
numeric_datatype(xsd(unsignedLong),       0, 0-18446744073709551615).
numeric_datatype(xsd(unsignedInt),        0, 0-4294967295).
numeric_datatype(xsd(unsignedShort),      0, 0-65535).
numeric_datatype(xsd(unsignedByte),       0, 0-255).

%!  value_class(+V, -Class, -Key) is semidet.
%
%   The comparable value of a literal (SPARQL 17.3 operator mapping):
%   num(Kind) with the number, str with the string, lang with
%   Text-Tag, bool with 0/1, dt with the milliseconds, dur with
%   Months-Ms. Fails for IRIs, blank nodes and literals of other or
%   unknown datatypes, and for invalid lexical forms.

value_class(V, C, K) :-
    (   string(V)
    ->  C = str, K = V
    ;   integer(V)
    ->  C = num(0), K = V
    ;   float(V)
    ->  C = num(3), K = V
    ;   compound(V),
        value_class_(V, C, K)
    ).

value_class_(dec(R), num(1), R) :- rational(R).
value_class_(lang(S, T), lang, S-T).
value_class_(bool(B), bool, K) :- bool_key(B, K).
value_class_(dt(Ms), dt, Ms).
value_class_(dur(M, Ms), dur, M-Ms).
value_class_(l(Lex, T), C, K) :-
    string(Lex),
    literal_class(T, Lex, C, K).

literal_class(T, Lex, num(Kind), N) :-
    numeric_datatype(T, Kind, Range),
    !,
    numeric_lexical(Kind, Lex, N),
    in_range(Range, N).
literal_class(xsd(string), Lex, str, Lex) :- !.
literal_class(xsd(boolean), Lex, bool, K) :- !,
    parse_boolean(Lex, B),
    bool_key(B, K).
literal_class(xsd(dateTime), Lex, dt, Ms) :- !,
    parse_datetime(Lex, Ms).
literal_class(T, Lex, dur, M-Ms) :-
    duration_datatype(T),
    parse_duration(Lex, M, Ms),
    duration_subtype_ok(T, M, Ms).

duration_datatype(xsd(duration)).
duration_datatype(xsd(dayTimeDuration)).
duration_datatype(xsd(yearMonthDuration)).

duration_subtype_ok(xsd(duration), _, _).
duration_subtype_ok(xsd(dayTimeDuration), 0, _).
duration_subtype_ok(xsd(yearMonthDuration), _, 0).

bool_key(false, 0).
bool_key(true, 1).

%   The string arguments of the string functions (SPARQL 17.4.3): a simple
%   literal or xsd:string, or a language-tagged literal. Tag is the tag, or
%   [] for no tag: [] is not an atom in SWI-Prolog 7+, so it cannot clash
%   with a tag.
string_arg(V, S, Tag) :-
    (   string(V)
    ->  S = V, Tag = []
    ;   V = lang(S, Tag)
    ->  string(S)
    ;   V = l(S, T),
        T == xsd(string),
        Tag = []
    ).

%   SPARQL 17.4.3.1.1 argument compatibility: both simple, both with the
%   same tag, or a tagged first argument with a simple second.
compatible(_, []) :- !.
compatible(Tag, Tag).

with_tag(S, [], S) :- !.
with_tag(S, Tag, lang(S, Tag)).

is_literal(V) :-
    \+ atom(V),
    V \= bn(_).


                 /*******************************
                 *  EFFECTIVE BOOLEAN VALUE     *
                 *******************************/

%!  cep_ebv(+Value, -Bool) is semidet.
%
%   The effective boolean value (SPARQL 17.2.2): booleans are themselves,
%   strings (simple, xsd:string, language-tagged) are true unless empty,
%   numbers are true unless zero or NaN, and a boolean or numeric literal
%   with an invalid lexical form is false. Fails (type error) for IRIs,
%   blank nodes, unbound values and literals of other datatypes.

cep_ebv(V, B) :-
    nonvar(V),
    ebv(V, B0),
    B = B0.

ebv(bool(B), B) :- !.
ebv(V, B) :-
    string(V),
    !,
    non_empty(V, B).
ebv(V, B) :-
    integer(V),
    !,
    (   V =:= 0
    ->  B = false
    ;   B = true
    ).
ebv(V, B) :-
    float(V),
    !,
    float_ebv(V, B).
ebv(dec(R), B) :-
    !,
    (   R =:= 0
    ->  B = false
    ;   B = true
    ).
ebv(lang(S, _), B) :-
    !,
    non_empty(S, B).
ebv(l(Lex, T), B) :-
    (   numeric_datatype(T, _, _)
    ->  (   numeric(l(Lex, T), _, N)
        ->  (   float(N)
            ->  float_ebv(N, B)
            ;   N =:= 0
            ->  B = false
            ;   B = true
            )
        ;   B = false
        )
    ;   T == xsd(boolean)
    ->  (   parse_boolean(Lex, B0)
        ->  B = B0
        ;   B = false
        )
    ;   T == xsd(string)
    ->  non_empty(Lex, B)
    ).

non_empty("", false) :- !.
non_empty(_, true).

float_ebv(X, B) :-
    (   float_class(X, C),
        ( C == nan ; C == zero )
    ->  B = false
    ;   B = true
    ).


                 /*******************************
                 *         COMPARISON           *
                 *******************************/

%!  cep_compare(+Op, +A, +B, -Bool) is semidet.
%
%   SPARQL's =, !=, <, >, <=, >= (17.3, 17.4.1.7). Numbers compare by
%   value after promotion (integer < decimal < float < double); strings
%   by code point; booleans false < true; dateTimes by instant; durations
%   by Months*2629746000+Ms (Choice: one total order, also for = and !=,
%   so P1M = P30DT10H29M6S); language-tagged literals by = and != only
%   (same text and tag). For = and != on anything else: identical terms
%   are equal, two IRIs or blank nodes or an IRI/blank node and a literal
%   that differ are not; two differing literals that are not comparable
%   (different value spaces, unknown datatypes, invalid lexical forms)
%   are a type error, as RDFterm-equal says. Fails on errors and when A
%   or B is unbound.
%
%   @error cep_error(unknown_operator(Op)) if Op is not a comparison

cep_compare(Op, A, B, Bool) :-
    known_operator(Op),
    nonvar(A),
    nonvar(B),
    compare_values(Op, A, B, Bool0),
    Bool = Bool0.

known_operator(Op) :-
    atom(Op),
    op_holds(Op, =, _),
    !.
known_operator(Op) :-
    must_be(atom, Op),
    throw(error(cep_error(unknown_operator(Op)), _)).

%   The common cases first: integers, and decimals (prices, amounts), which
%   compare as numbers with no other check.
compare_values(Op, A, B, Bool) :-
    integer(A),
    integer(B),
    !,
    compare(Order, A, B),
    op_holds(Op, Order, Bool).
compare_values(Op, dec(X), dec(Y), Bool) :-
    !,
    arith_order(X, Y, Order),
    op_holds(Op, Order, Bool).
compare_values(Op, A, B, Bool) :-
    value_class(A, CA, KA),
    value_class(B, CB, KB),
    comparable(CA, CB, KA, KB, Order),
    !,
    op_holds(Op, Order, Bool).
compare_values(Op, A, B, Bool) :-
    equality_op(Op, Positive),
    term_equal(A, B, Equal),
    (   Positive == true
    ->  Bool = Equal
    ;   negate(Equal, Bool)
    ).

%   Order is <, =, > or unordered (a NaN, or = / != only for lang).
comparable(num(KA), num(KB), A, B, Order) :-
    !,
    (   ( KA >= 2 ; KB >= 2 )
    ->  to_double(KA, A, X),
        to_double(KB, B, Y),
        (   X < Y
        ->  Order = (<)
        ;   X > Y
        ->  Order = (>)
        ;   X =:= Y
        ->  Order = (=)
        ;   Order = unordered
        )
    ;   arith_order(A, B, Order)
    ).
comparable(str, str, A, B, Order) :- !, compare(Order, A, B).
comparable(bool, bool, A, B, Order) :- !, compare(Order, A, B).
comparable(dt, dt, A, B, Order) :- !, compare(Order, A, B).
comparable(dur, dur, MA-SA, MB-SB, Order) :-
    !,
    A is MA * 2629746000 + SA,
    B is MB * 2629746000 + SB,
    compare(Order, A, B).
comparable(lang, lang, SA-TA, SB-TB, Order) :-
    (   SA == SB, TA == TB
    ->  Order = same
    ;   Order = different
    ).

arith_order(A, B, Order) :-
    (   A < B
    ->  Order = (<)
    ;   A > B
    ->  Order = (>)
    ;   Order = (=)
    ).

%   op_holds(Op, Order, Bool): the truth table of the comparisons. `same`
%   and `different` come from values that have equality but no order.
op_holds(=,  =, true).
op_holds(=,  <, false).
op_holds(=,  >, false).
op_holds(=,  unordered, false).
op_holds(=,  same, true).
op_holds(=,  different, false).
op_holds('!=', =, false).
op_holds('!=', <, true).
op_holds('!=', >, true).
op_holds('!=', unordered, true).
op_holds('!=', same, false).
op_holds('!=', different, true).
op_holds(<,  =, false).
op_holds(<,  <, true).
op_holds(<,  >, false).
op_holds(<,  unordered, false).
op_holds(>,  =, false).
op_holds(>,  <, false).
op_holds(>,  >, true).
op_holds(>,  unordered, false).
op_holds(<=, =, true).
op_holds(<=, <, true).
op_holds(<=, >, false).
op_holds(<=, unordered, false).
op_holds(>=, =, true).
op_holds(>=, <, false).
op_holds(>=, >, true).
op_holds(>=, unordered, false).

equality_op(=, true).
equality_op('!=', false).

%   RDFterm-equal (17.4.1.7) on terms that have no comparable value.
%   Choice: strictly as 17.4.1.7 says, so 1 = "1" and "a"@en = "a" are
%   type errors, not false (some engines answer false).
term_equal(A, B, Equal) :-
    (   A == B
    ->  Equal = true
    ;   ( \+ is_literal(A) ; \+ is_literal(B) )
    ->  Equal = false
    ;   fail                                    % two different literals
    ).

negate(true, false).
negate(false, true).


                 /*******************************
                 *         ARITHMETIC           *
                 *******************************/

%!  cep_add(+A, +B, -Sum) is semidet.
%!  cep_sub(+A, +B, -Difference) is semidet.
%!  cep_mul(+A, +B, -Product) is semidet.
%!  cep_div(+A, +B, -Quotient) is semidet.
%
%   SPARQL arithmetic (17.3, XPath op:numeric-*). The result type is the
%   promoted type of the operands: integer, decimal (dec(R), exact),
%   double. integer / integer is a decimal. A decimal quotient is exact,
%   then rounded half away from zero to 20 fractional digits
%   (terms.DECIMAL_DIVISION_DIGITS). Integer or decimal division by zero
%   fails; double arithmetic follows IEEE 754 (infinities, NaN, signed
%   zeros). Choice: an xsd:float operand makes the result an xsd:double,
%   like a double operand (SPARQL's operator mapping would give
%   xsd:float when no double is involved); the xsd:float operand keeps
%   its single-precision value.
%
%   On dates and durations (Choice: SPARQL 1.1 defines none of these):
%   dateTime - dateTime is dur(0, Ms); dateTime +/- dur(0, Ms) is a
%   dateTime; duration +/- duration adds months and milliseconds
%   separately. Every other mix fails, also a dateTime plus a duration
%   with months.

cep_add(A, B, C) :- arith(+, A, B, C).
cep_sub(A, B, C) :- arith(-, A, B, C).
cep_mul(A, B, C) :- arith(*, A, B, C).
cep_div(A, B, C) :- arith(/, A, B, C).

arith(Op, A, B, C) :-
    nonvar(A),
    nonvar(B),
    (   integer(A), integer(B), Op \== (/)
    ->  int_op(Op, A, B, C)
    ;   A = dec(X), B = dec(Y), Op \== (/)            % decimals: exact, as is
    ->  int_op(Op, X, Y, R),
        C = dec(R)
    ;   numeric(A, KA, NA)
    ->  numeric(B, KB, NB),
        K is max(KA, KB),
        num_op(K, Op, KA, NA, KB, NB, C)
    ;   temporal_op(Op, A, B, C)
    ).

int_op(+, A, B, C) :- C is A + B.
int_op(-, A, B, C) :- C is A - B.
int_op(*, A, B, C) :- C is A * B.

num_op(0, /, _, A, _, B, C) :- !, decimal_div(A, B, C).
num_op(0, Op, _, A, _, B, C) :- !, int_op(Op, A, B, C).
num_op(1, /, _, A, _, B, C) :- !, decimal_div(A, B, C).
num_op(1, Op, _, A, _, B, dec(R)) :- !, int_op(Op, A, B, R).
num_op(_, Op, KA, A, KB, B, Z) :-              % float or double
    to_double(KA, A, X),
    to_double(KB, B, Y),
    dbl_op(Op, X, Y, Z).

decimal_div(A, B, dec(R)) :-
    B =\= 0,
    Q is A rdiv B,
    round_decimal(Q, R).

%   Round half away from zero to DECIMAL_DIVISION_DIGITS places.
round_decimal(Q, R) :-
    (   integer(Q)
    ->  R = Q
    ;   Scale is 10^20,
        rational(Q, N, D),
        Abs is (2 * abs(N) * Scale + D) // (2 * D),
        R is sign(N) * Abs rdiv Scale
    ).

temporal_op(Op, A, B, C) :-
    temporal(A, TA),
    temporal(B, TB),
    once(temporal_op_(Op, TA, TB, C)).

temporal(dt(Ms), dt(Ms)) :- !.
temporal(dur(M, Ms), dur(M, Ms)) :- !.
temporal(V, T) :-
    V = l(_, _),
    value_class(V, C, K),
    (   C == dt
    ->  T = dt(K)
    ;   C == dur,
        K = M-Ms,
        T = dur(M, Ms)
    ).

temporal_op_(-, dt(A), dt(B), dur(0, D)) :- D is A - B.
temporal_op_(+, dt(A), dur(0, Ms), dt(R)) :- R is A + Ms.
temporal_op_(+, dur(0, Ms), dt(A), dt(R)) :- R is A + Ms.
temporal_op_(-, dt(A), dur(0, Ms), dt(R)) :- R is A - Ms.
temporal_op_(+, dur(MA, SA), dur(MB, SB), dur(M, S)) :-
    M is MA + MB,
    S is SA + SB.
temporal_op_(-, dur(MA, SA), dur(MB, SB), dur(M, S)) :-
    M is MA - MB,
    S is SA - SB.

%!  cep_neg(+A, -Negated) is semidet.
%!  cep_pos(+A, -Value) is semidet.
%
%   Unary minus and plus on numbers (op:numeric-unary-minus/-plus); the
%   result has the promoted type, as for the binary operators: a derived
%   integer type becomes xsd:integer, xsd:float becomes xsd:double.
%   Fails on anything else.

cep_neg(A, C) :-
    nonvar(A),
    numeric(A, K, N),
    neg(K, N, C).

neg(0, N, C) :- C is -N.
neg(1, N, dec(R)) :- R is -N.
neg(2, N, C) :- C is -N.
neg(3, N, C) :- C is -N.

cep_pos(A, C) :-
    nonvar(A),
    numeric(A, K, N),
    number_value(K, N, C).

%   The encoded value of a numeric (Kind, Num) after promotion: xsd:float
%   results are doubles (see cep_add/3).
number_value(0, N, N).
number_value(1, N, dec(N)).
number_value(2, N, N).
number_value(3, N, N).


                 /*******************************
                 *      FUNCTIONS               *
                 *******************************/

%!  cep_fn(+Name, +Args:list, -Value) is semidet.
%
%   The SPARQL 1.1 functions of section 17.4 that the compiler emits,
%   and the XSD casts of 17.5 as cast(DatatypeIRI) (the IRI with or
%   without angle brackets). Name is one of a fixed set and Args holds
%   the argument values; any unbound argument is an error (the compiler
%   handles BOUND, IF and COALESCE itself). Fails on SPARQL evaluation
%   errors, among them a cast to a datatype without a cast here (any
%   but xsd:integer and its derived types, decimal, double, float,
%   string, boolean, dateTime, duration): SPARQL makes an unsupported
%   function an evaluation error.
%
%   @error cep_error(unknown_function(Name/Arity)) if there is no such
%          function, or not with that many arguments

cep_fn(Name, Args, V) :-
    must_be(callable, Name),
    must_be(list, Args),
    length(Args, N),
    (   fn_arity(Name, N)
    ->  true
    ;   throw(error(cep_error(unknown_function(Name/N)), _))
    ),
    ground(Args),
    once(fn(Name, Args, V0)),
    V = V0.

fn_arity(str, 1).
fn_arity(lang, 1).
fn_arity(datatype, 1).
fn_arity(isIRI, 1).
fn_arity(isBlank, 1).
fn_arity(isLiteral, 1).
fn_arity(isNumeric, 1).
fn_arity(sameTerm, 2).
fn_arity(langMatches, 2).
fn_arity(regex, 2).
fn_arity(regex, 3).
fn_arity(strlen, 1).
fn_arity(ucase, 1).
fn_arity(lcase, 1).
fn_arity(contains, 2).
fn_arity(strstarts, 2).
fn_arity(strends, 2).
fn_arity(concat, _).
fn_arity(abs, 1).
fn_arity(ceil, 1).
fn_arity(floor, 1).
fn_arity(round, 1).
fn_arity(cast(T), 1) :-
    must_be(atom, T).

fn(str, [V], S) :-
    (   atom(V)
    ->  atom_string(V, S)
    ;   V \= bn(_),
        lexical(V, S)
    ).
fn(lang, [V], S) :-
    is_literal(V),
    (   V = lang(_, Tag)
    ->  atom_string(Tag, S)
    ;   S = ""
    ).
fn(datatype, [V], T) :-
    datatype(V, T).
fn(isIRI, [V], bool(B)) :-
    truth(atom(V), B).
fn(isBlank, [V], bool(B)) :-
    truth(V = bn(_), B).
fn(isLiteral, [V], bool(B)) :-
    truth(is_literal(V), B).
fn(isNumeric, [V], bool(B)) :-
    truth(numeric(V, _, _), B).
fn(sameTerm, [A, B], bool(R)) :-
    truth(A == B, R).
fn(langMatches, [Tag, Range], bool(B)) :-
    string_arg(Tag, T, []),
    string_arg(Range, R, []),
    truth(lang_matches(T, R), B).
fn(regex, [Text, Pattern], V) :-
    fn(regex, [Text, Pattern, ""], V).
fn(regex, [Text, Pattern, Flags], bool(B)) :-
    string_arg(Text, S, _),
    string_arg(Pattern, P, []),
    string_arg(Flags, F, []),
    regex_match(S, P, F, B).
fn(strlen, [V], N) :-
    string_arg(V, S, _),
    string_length(S, N).
fn(ucase, [V], R) :-
    string_arg(V, S, Tag),
    string_upper(S, U),
    with_tag(U, Tag, R).
fn(lcase, [V], R) :-
    string_arg(V, S, Tag),
    string_lower(S, L),
    with_tag(L, Tag, R).
fn(contains, [A, B], bool(R)) :-
    string_args(A, B, SA, SB),
    truth(sub_string(SA, _, _, _, SB), R).
fn(strstarts, [A, B], bool(R)) :-
    string_args(A, B, SA, SB),
    truth(string_concat(SB, _, SA), R).
fn(strends, [A, B], bool(R)) :-
    string_args(A, B, SA, SB),
    truth(string_concat(_, SB, SA), R).
fn(concat, Args, R) :-
    concat_args(Args, Strings, Tags),
    atomics_to_string(Strings, S),
    (   Tags = [Tag|Rest],
        Tag \== [],
        maplist(==(Tag), Rest)
    ->  R = lang(S, Tag)
    ;   R = S
    ).
fn(abs, [V], R) :-
    numeric(V, K, N),
    num_abs(K, N, A),
    number_value(K, A, R).
fn(ceil, [V], R) :-
    numeric(V, K, N),
    num_round(ceil, K, N, A),
    number_value(K, A, R).
fn(floor, [V], R) :-
    numeric(V, K, N),
    num_round(floor, K, N, A),
    number_value(K, A, R).
fn(round, [V], R) :-
    numeric(V, K, N),
    num_round(round, K, N, A),
    number_value(K, A, R).
fn(cast(T0), [V], R) :-
    (   atom_concat('<', T1, T0),
        atom_concat(T, '>', T1)
    ->  true
    ;   T = T0
    ),
    cast(T, V, R).

truth(G, B) :-
    (   call(G)          % G is one of the fixed goals above, never data
    ->  B = true
    ;   B = false
    ).

datatype(V, T) :-
    (   string(V)
    ->  T = xsd(string)
    ;   integer(V)
    ->  T = xsd(integer)
    ;   float(V)
    ->  T = xsd(double)
    ;   compound(V),
        datatype_(V, T)
    ).

datatype_(dec(_), xsd(decimal)).
datatype_(bool(_), xsd(boolean)).
datatype_(dt(_), xsd(dateTime)).
datatype_(dur(_, _), xsd(duration)).
datatype_(lang(_, _), rdf(langString)).
datatype_(l(_, T), T).

string_args(A, B, SA, SB) :-
    string_arg(A, SA, TA),
    string_arg(B, SB, TB),
    compatible(TA, TB).

concat_args([], [], []).
concat_args([V|Vs], [S|Ss], [T|Ts]) :-
    string_arg(V, S, T),
    concat_args(Vs, Ss, Ts).

%   RFC 4647 basic filtering, case-insensitive; "*" matches any tag but
%   the empty one (no language).
lang_matches(Tag, Range) :-
    (   Range == "*"
    ->  Tag \== ""
    ;   string_lower(Tag, T),
        string_lower(Range, R),
        (   T == R
        ->  true
        ;   string_concat(R, "-", Prefix),
            string_concat(Prefix, _, T)
        )
    ).

num_abs(3, X, A) :-
    !,
    (   float_class(X, nan)
    ->  A = X
    ;   A is abs(X)
    ).
num_abs(_, X, A) :-
    A is abs(X).

%   CEIL, FLOOR, ROUND (fn:ceiling, fn:floor, fn:round): ROUND takes
%   halves towards positive infinity; a float result keeps the sign of
%   a negative argument when it rounds to zero (ceil(-0.5) = -0.0).
num_round(Mode, K, X, R) :-
    K >= 2,
    !,
    float_class(X, C),
    (   memberchk(C, [nan, infinite, zero])
    ->  R = X
    ;   abs(X) >= 4503599627370496.0         % 2^52: already integral
    ->  R = X
    ;   rat_round(Mode, X, I),
        (   I =:= 0, X < 0
        ->  R = -0.0
        ;   R is float(I)
        )
    ).
num_round(Mode, _, X, R) :-
    rat_round(Mode, X, R).

rat_round(ceil, X, R) :- R is ceiling(X).
rat_round(floor, X, R) :- R is floor(X).
rat_round(round, X, R) :-
    Fl is floor(X),
    (   X - Fl >= 1r2
    ->  R is Fl + 1
    ;   R = Fl
    ).


                 /*******************************
                 *            REGEX             *
                 *******************************/

%!  cep_regex(+Where, +Args:list, -Value) is semidet.
%
%   REGEX as cep_fn(regex, Args, Value), but where PCRE gives up on the
%   text (its match limit or its heap limit: a pattern such as
%   "^(a+)+$" backtracks catastrophically on "aaa...a!"), the call is an
%   evaluation error (it fails, SPARQL's error value) instead of an
%   exception that would stop the run, and Where (the indexes of the
%   queries whose expression it is, cep/compile/expr.py) is noted for
%   cep_regex_gave_up/1, so the run can warn.
cep_regex(Where, Args, V) :-
    catch(cep_fn(regex, Args, V),
          error(resource_error(_), context(pcre:_, _)),
          ( regex_note(Where), fail )).

:- dynamic regex_noted/1.

regex_note(Where) :-
    (   regex_noted(Where)
    ->  true
    ;   assertz(regex_noted(Where))
    ).

%!  cep_regex_gave_up(-Wheres:list) is det.
%
%   The Where of every cep_regex/3 call that gave up since the last call
%   of this predicate (each once), and forget them.
cep_regex_gave_up(Wheres) :-
    findall(W, retract(regex_noted(W)), Wheres).

%   REGEX (17.4.3.14) with XPath flags s, m, i, x and q (XPath 3.0), run
%   by PCRE2 with options that bring it close to XPath regular
%   expressions: `$` matches only at the very end unless m is given
%   (dollar_endonly), \w, \d and case folding are Unicode-aware (ucp),
%   CR, LF and CRLF end lines (newline(anycrlf)), so `.` matches neither
%   CR nor LF as in XPath. The x flag is done here, not by PCRE: XPath
%   removes white space outside character classes but, unlike PCRE, has
%   no # comments. q quotes the whole pattern. PCRE accepts a superset
%   of XPath's syntax (look-around, possessive quantifiers...); such
%   patterns are run rather than rejected. An invalid pattern or flag
%   fails (SPARQL error); the compiler reports those of constant patterns
%   and flags (cep_regex_problem/3).

:- if(current_predicate(re_match/3)).
regex_match(S, Pattern, Flags, B) :-
    regex_prepare(Pattern, Flags, P, PFlags),
    regex_options(Options),
    catch(truth(re_match(P/PFlags, S, Options), B),
          error(syntax_error(_), _),
          fail).
:- else.
regex_match(_, _, _, _) :-
    throw(error(cep_error(regex_unavailable), _)).
:- endif.

regex_options([dollar_endonly(true), ucp(true), newline(anycrlf)]).

%   regex_prepare(+Pattern, +Flags, -P, -PFlags) is semidet: the PCRE
%   pattern and flags of an XPath pattern and flags; fails on an unknown flag.
regex_prepare(Pattern, Flags, P, PFlags) :-
    string_codes(Flags, FCs),
    regex_flags(FCs, [], PCs, x(false), X, q(false), Q),
    atom_codes(PFlags, PCs),
    string_codes(Pattern, Ps),
    (   Q == q(true)
    ->  quote_pattern(Ps, Ps1)
    ;   X == x(true)
    ->  strip_x(Ps, Ps1)
    ;   Ps1 = Ps
    ),
    string_codes(P, Ps1).

%!  cep_regex_problem(+Pattern:string, +Flags:string, -Problem:string) is det.
%
%   Why REGEX(_, Pattern, Flags) is an error on every text ("" if it is
%   not): an unknown flag ("flags"), or what PCRE says of a pattern it
%   does not compile, tried as regex_match/4 runs it (on the empty text).
cep_regex_problem(Pattern, Flags, Problem) :-
    (   \+ regex_prepare(Pattern, Flags, _, _)
    ->  Problem = "flags"
    ;   current_predicate(re_match/3),
        regex_prepare(Pattern, Flags, P, PFlags),
        regex_options(Options),
        catch(( re_match(P/PFlags, "", Options), fail ), error(syntax_error(Why), _), true)
    ->  format(string(Problem), "~w", [Why])
    ;   Problem = ""
    ).

regex_flags([], Ps, Ps, X, X, Q, Q).
regex_flags([C|Cs], Ps0, Ps, X0, X, Q0, Q) :-
    (   memberchk(C, `ims`)
    ->  (   memberchk(C, Ps0)
        ->  Ps1 = Ps0
        ;   Ps1 = [C|Ps0]
        ),
        regex_flags(Cs, Ps1, Ps, X0, X, Q0, Q)
    ;   C == 0'x
    ->  regex_flags(Cs, Ps0, Ps, x(true), X, Q0, Q)
    ;   C == 0'q
    ->  regex_flags(Cs, Ps0, Ps, X0, X, q(true), Q)
    ).

%   x flag: drop #x9, #xA, #xD and #x20 outside character classes.
strip_x([], []).
strip_x([0'\\, C|T], [0'\\, C|R]) :- !, strip_x(T, R).
strip_x([0'[|T], [0'[|R]) :- !, strip_x_class(T, R).
strip_x([C|T], R) :-
    (   regex_space(C)
    ->  strip_x(T, R)
    ;   R = [C|R1],
        strip_x(T, R1)
    ).

strip_x_class([], []).
strip_x_class([0'\\, C|T], [0'\\, C|R]) :- !, strip_x_class(T, R).
strip_x_class([0']|T], [0']|R]) :- !, strip_x(T, R).
strip_x_class([C|T], [C|R]) :- strip_x_class(T, R).

regex_space(0'\s).
regex_space(0'\t).
regex_space(0'\n).
regex_space(0'\r).

%   q flag: every ASCII character that is not a letter or digit is
%   escaped; PCRE reads an escaped non-alphanumeric as itself.
quote_pattern([], []).
quote_pattern([C|T], R) :-
    (   C < 128,
        \+ code_type(C, alnum)
    ->  R = [0'\\, C|R1]
    ;   R = [C|R1]
    ),
    quote_pattern(T, R1).


                 /*******************************
                 *            CASTS             *
                 *******************************/

%   XSD casts, SPARQL 1.1 section 17.5 and its casting table. Sources:
%   IRIs (to xsd:string only), simple literals and xsd:string (parsed as
%   the target's lexical form), numbers, booleans, dateTimes, durations,
%   and typed literals of the derived numeric and duration types. Blank
%   nodes cannot be cast. Choice: a language-tagged literal casts to
%   xsd:string (its text), as STR does; the table has no row for it.
%   A cast to a derived integer type (xsd:int...) gives l(Lexical, Type)
%   and fails outside the type's range.

cast(xsd(string), V, S) :-
    (   atom(V)
    ->  atom_string(V, S)
    ;   is_literal(V),
        lexical(V, S)
    ).
cast(xsd(integer), V, I) :-
    (   string_arg(V, S, [])
    ->  parse_integer(S, I)
    ;   numeric(V, K, N)
    ->  num_to_integer(K, N, I)
    ;   value_class(V, bool, I)
    ).
cast(T, V, l(Lex, T)) :-
    numeric_datatype(T, 0, Range),
    Range \== any,
    cast(xsd(integer), V, I),
    in_range(Range, I),
    number_string(I, Lex).
cast(xsd(decimal), V, dec(R)) :-
    (   string_arg(V, S, [])
    ->  parse_decimal(S, R)
    ;   numeric(V, K, N)
    ->  num_to_decimal(K, N, R)
    ;   value_class(V, bool, R)
    ).
cast(xsd(double), V, F) :-
    (   string_arg(V, S, [])
    ->  parse_double(S, F)
    ;   numeric(V, K, N)
    ->  to_double(K, N, F)
    ;   value_class(V, bool, I)
    ->  F is float(I)
    ).
cast(xsd(float), V, l(Lex, xsd(float))) :-
    (   string_arg(V, S, [])
    ->  parse_float32(S, F)
    ;   numeric(V, K, N)
    ->  to_float32(K, N, F)
    ;   value_class(V, bool, I)
    ->  F is float(I)
    ),
    float32_lexical(F, Lex).
cast(xsd(boolean), V, bool(B)) :-
    (   string_arg(V, S, [])
    ->  parse_boolean(S, B)
    ;   numeric(V, K, N)
    ->  (   K >= 2
        ->  float_ebv(N, B)
        ;   N =:= 0
        ->  B = false
        ;   B = true
        )
    ;   value_class(V, bool, I)
    ->  bool_key(B, I)
    ).
cast(xsd(dateTime), V, dt(Ms)) :-
    (   string_arg(V, S, [])
    ->  parse_datetime(S, Ms)
    ;   value_class(V, dt, Ms)
    ).
cast(xsd(duration), V, dur(M, Ms)) :-
    (   string_arg(V, S, [])
    ->  parse_duration(S, M, Ms)
    ;   value_class(V, dur, M-Ms)
    ).

%   Towards zero; NaN and the infinities have no integer.
num_to_integer(K, N, I) :-
    (   K >= 2
    ->  float_class(N, C),
        C \== nan,
        C \== infinite,
        I is truncate(N)
    ;   I is truncate(N)
    ).

%   Choice: a float or double becomes the decimal of its shortest
%   round-trip digits (xsd:decimal(0.1) = 0.1, as Jena and Python's
%   Decimal(repr(x)) give), not its exact binary value.
num_to_decimal(K, N, R) :-
    (   K >= 2
    ->  float_class(N, C),
        C \== nan,
        C \== infinite,
        (   K =:= 2
        ->  float32_lexical(N, Lex)
        ;   double_lexical(N, Lex)
        ),
        parse_double_lex(Lex, n(Sg, M, E)),
        pow10(E, P),
        R is Sg * M * P
    ;   R = N
    ).


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


                 /*******************************
                 *           MESSAGES           *
                 *******************************/

prolog:message(error(cep_error(unknown_function(Name/Arity)), _)) -->
    [ 'cep_values: no function ~q with ~d argument(s)'-[Name, Arity] ].
prolog:message(error(cep_error(unknown_operator(Op)), _)) -->
    [ 'cep_values: ~q is not a comparison operator (=, !=, <, >, <=, >=)'-[Op] ].
prolog:message(error(cep_error(not_a_value(V)), _)) -->
    [ 'cep_values: ~q is not an encoded RDF term (see cep/terms.py)'-[V] ].
prolog:message(error(cep_error(regex_unavailable), _)) -->
    [ 'cep_values: REGEX needs library(pcre), which this SWI-Prolog lacks' ].
