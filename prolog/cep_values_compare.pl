/*  The classes of values SPARQL compares (SPARQL 17.3's operator mapping),
    the effective boolean value (17.2.2), the comparison operators, and the
    bands of the range index of SEQ goal stores (cep_band/2).

    Every predicate follows the rules of cep_values.pl: encoded terms in
    and out, deterministic, SPARQL evaluation errors as failure.
*/

:- module(cep_values_compare,
          [ cep_ebv/2,
            cep_compare/4,
            cep_band/2,
            cep_numeric_value/2,
            % for the other value modules
            bool_key/2,
            compatible/2,
            float_ebv/2,
            in_range/2,
            is_literal/1,
            numeric/3,
            numeric_datatype/3,
            number_value/3,
            string_arg/3,
            value_class/3,
            with_tag/3
          ]).

:- set_prolog_flag(optimise, true).   % arithmetic compiled inline (file-local flag): hot paths
:- use_module(library(lists)).
:- use_module(library(apply)).
:- use_module(library(error)).
:- use_module(cep_values_numbers, [float32_lexical/2, parse_decimal/2, parse_double/2, parse_float32/2,
                                   parse_integer/2, to_double/3]).
:- use_module(cep_values_dates, [parse_date/3, parse_datetime/2, parse_duration/3]).
:- use_module(cep_values_terms, [parse_boolean/2]).
:- use_module(cep_fast, [cep_fast_band/2]).

:- include(cep_values_iris).

:- multifile prolog:message//1.

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
    cep_fast_band(V, B0),                   % the C library: the common numbers
    !,
    B = B0.
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
numeric_(lv(_, _, V), K, N) :-
    numeric(V, K, N).
numeric_(l(Lex, T), K, N) :-
    numeric_datatype(T, K, Range),
    string(Lex),
    numeric_lexical(K, Lex, N),
    in_range(Range, N).

%!  cep_numeric_value(+V, -Value) is det.
%
%   A literal of xsd:integer, xsd:decimal, xsd:double or xsd:float as the
%   term of its value in canonical form ("01"^^xsd:integer as 1,
%   "2E-1"^^xsd:double as 0.2), and of xsd:boolean ("0" as false); any
%   other term as it is. For what is computed from values rather than
%   picked among terms: MIN and MAX (XPath's fn:min and fn:max return a
%   value), the cast of a number or boolean to xsd:string (its canonical
%   lexical form).
cep_numeric_value(V, Value) :-
    (   V = lv(_, T, Value0),
        T \== xsd(dateTime),
        T \== xsd(duration)
    ->  Value = Value0
    ;   V = l(Lex, T),                      % xsd:float has no value encoding
        T == xsd(float),
        string(Lex),
        numeric_lexical(2, Lex, N)
    ->  number_value(2, N, Value)
    ;   Value = V
    ).

%   number_value(+Kind, +Num, -Value): the encoded value of a number of a
%   kind: an xsd:float (Num a single-precision value) in canonical form.
number_value(0, N, N).
number_value(1, N, dec(N)).
number_value(2, N, l(Lex, xsd(float))) :- float32_lexical(N, Lex).
number_value(3, N, N).

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
%   Text-Tag, bool with 0/1, dt with the milliseconds, date with
%   Ms-Zoned (the start of the day, zoned or unzoned), dur with
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
value_class_(lv(_, _, V), C, K) :- value_class(V, C, K).
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
literal_class(xsd(date), Lex, date, Ms-Zoned) :- !,
    parse_date(Lex, Ms, Zoned).
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
ebv(lv(_, _, V), B) :-
    !,
    ebv(V, B).
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
%   by code point; booleans false < true; dateTimes by instant; dates
%   by the instant their day starts, in XML Schema's partial order (1.0
%   Part 2, 3.2.7.4): a date without a zone stands for any zone from
%   -14:00 to +14:00, so against a date with a zone it is ordered only
%   when the two are more than 14 hours apart, else they are incomparable
%   (a type error for every operator); a date and a dateTime are never
%   equal (Choice: both datatypes are known and their value spaces are
%   disjoint, as the W3C test open-world date-2 expects) and are not
%   ordered; durations
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
comparable(date, date, MA-ZA, MB-ZB, Order) :-
    !,
    (   ZA == ZB
    ->  true
    ;   abs(MA - MB) > 50400000                 % 14 hours
    ),
    compare(Order, MA, MB).
comparable(date, dt, _, _, different) :- !.
comparable(dt, date, _, _, different) :- !.
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
%   Choice: strictly as 17.4.1.7 says, so 1 = "1" is a type error, not
%   false (some engines answer false); but a language-tagged literal and
%   a literal without a tag are different values, whatever the other's
%   datatype: only language-tagged literals have values of rdf:langString
%   (RDF 1.1), so "a"@en = "a" is false (W3C open-world open-eq-08, -12).
term_equal(A, B, Equal) :-
    (   A == B
    ->  Equal = true
    ;   ( \+ is_literal(A) ; \+ is_literal(B) )
    ->  Equal = false
    ;   ( A = lang(_, _) ; B = lang(_, _) )
    ->  Equal = false
    ;   fail                                    % two different literals
    ).

negate(true, false).
negate(false, true).


                 /*******************************
                 *           MESSAGES           *
                 *******************************/

prolog:message(error(cep_error(unknown_operator(Op)), _)) -->
    [ 'cep_values: ~q is not a comparison operator (=, !=, <, >, <=, >=)'-[Op] ].
