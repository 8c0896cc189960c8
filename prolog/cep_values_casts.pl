/*  XSD casts (SPARQL 1.1 section 17.5 and its casting table), for
    cep_fn(cast(Datatype), ...) of cep_values_functions.pl.

    Every predicate follows the rules of cep_values.pl: encoded terms in
    and out, deterministic, SPARQL evaluation errors as failure.
*/

:- module(cep_values_casts,
          [ cast/3
          ]).

:- use_module(library(lists)).
:- use_module(library(apply)).
:- use_module(library(error)).
:- use_module(cep_values_numbers, [double_lexical/2, float32_lexical/2, parse_decimal/2,
                                   parse_double/2, parse_double_lex/2, parse_float32/2,
                                   parse_integer/2, pow10/2, to_double/3, to_float32/3]).
:- use_module(cep_values_dates, [parse_datetime/2, parse_duration/3]).
:- use_module(cep_values_terms, [lexical/2, parse_boolean/2]).
:- use_module(cep_values_compare, [bool_key/2, cep_numeric_value/2, float_ebv/2, in_range/2, is_literal/1, numeric/3,
                                   numeric_datatype/3, string_arg/3, value_class/3]).

:- include(cep_values_iris).

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
        cep_numeric_value(V, Value),
        lexical(Value, S)
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
