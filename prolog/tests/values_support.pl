/*  What the plunit suites of the cep_values_* modules share: encoded
    literals, special doubles, a cast by XSD local name, the round trip of
    a value through str() and a cast back.
*/

:- module(values_support,
          [ xsd/2, ty/3, nt/2, inf/1, ninf/1, nan/1, is_nan/1, is_neg_zero/1, t0/1,
            cast/3, round_trip/2, bits_double/2
          ]).

:- use_module('../cep_values').

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

cast(Local, V, R) :-
    xsd(Local, T),
    cep_fn(cast(T), [V], R).

%   str() then the cast back gives the same term, for many values.
round_trip(Local, V) :-
    cep_fn(str, [V], S),
    cast(Local, S, V2),
    (   V2 == V
    ->  true
    ;   format(user_error, "~q -> ~q -> ~q~n", [V, S, V2]),
        fail
    ).

%   The double with the given IEEE bits (positive, finite).
bits_double(Bits, X) :-
    E is Bits >> 52,
    M is Bits /\ (1 << 52 - 1),
    (   E =:= 0
    ->  X is M * 2.0 ** -1074
    ;   X is float((M + 1 << 52) * 2.0 ** (E - 1075))
    ).
