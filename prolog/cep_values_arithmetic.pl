/*  Arithmetic (SPARQL 17.3 op:numeric-add and the others) on numbers, and
    on dateTimes and durations (a Choice: SPARQL 1.1 defines none).

    Every predicate follows the rules of cep_values.pl: encoded terms in
    and out, deterministic, SPARQL evaluation errors as failure.
*/

:- module(cep_values_arithmetic,
          [ cep_add/3,
            cep_sub/3,
            cep_mul/3,
            cep_div/3,
            cep_neg/2,
            cep_pos/2,
            % for the other value modules
            number_value/3
          ]).

:- set_prolog_flag(optimise, true).   % arithmetic compiled inline (file-local flag): hot paths
:- use_module(library(lists)).
:- use_module(library(apply)).
:- use_module(library(error)).
:- use_module(cep_values_numbers, [dbl_op/4, to_double/3, to_float32/3]).
:- use_module(cep_values_compare, [number_value/3, numeric/3, value_class/3]).

:- include(cep_values_iris).

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
%   float, double. integer / integer is a decimal. A decimal quotient is
%   exact, then rounded half away from zero to 20 fractional digits
%   (terms.DECIMAL_DIVISION_DIGITS). Integer or decimal division by zero
%   fails; float and double arithmetic follow IEEE 754 (infinities, NaN,
%   signed zeros). An xsd:float result (float with float, integer or
%   decimal) is computed on doubles and rounded to single precision,
%   which gives the correctly rounded single result of + - * /.
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
num_op(2, Op, KA, A, KB, B, Z) :- !,          % float
    to_float32(KA, A, X),
    to_float32(KB, B, Y),
    dbl_op(Op, X, Y, D),
    to_float32(3, D, F),
    number_value(2, F, Z).
num_op(3, Op, KA, A, KB, B, Z) :-              % double
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
temporal(lv(_, _, V), T) :- !, temporal(V, T).
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
%   integer type becomes xsd:integer.
%   Fails on anything else.

cep_neg(A, C) :-
    nonvar(A),
    numeric(A, K, N),
    neg(K, N, C).

neg(0, N, C) :- C is -N.
neg(1, N, dec(R)) :- R is -N.
neg(2, N, C) :- M is -N, number_value(2, M, C).
neg(3, N, C) :- C is -N.

cep_pos(A, C) :-
    nonvar(A),
    numeric(A, K, N),
    number_value(K, N, C).
