/*  Numbers: the canonical lexical forms of xsd:double and xsd:decimal,
    the parsers of the numeric lexical forms (xsd:integer, decimal, double,
    float), and IEEE 754 doubles and xsd:float singles (rounding, shortest
    digits, arithmetic with infinities and NaN). Its predicates serve the
    other value modules; none is called from outside them.

    Every predicate follows the rules of cep_values.pl: encoded terms in
    and out, deterministic, SPARQL evaluation errors as failure.
*/

:- module(cep_values_numbers,
          [ dbl_op/4,
            decimal_lexical/2,
            digit/3,
            digits1/3,
            double_lexical/2,
            float32_lexical/2,
            lexical_codes/2,
            parse_decimal/2,
            parse_double/2,
            parse_double_lex/2,
            parse_float32/2,
            parse_integer/2,
            pow10/2,
            strip_trailing_zeros/2,
            to_double/3,
            to_float32/3
          ]).

:- set_prolog_flag(optimise, true).   % arithmetic compiled inline (file-local flag): hot paths
:- use_module(library(lists)).
:- use_module(library(apply)).
:- use_module(library(error)).

:- include(cep_values_iris).

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
    float_of_lex(V, rat_double, F).

parse_float32(S, F) :-
    parse_double_lex(S, V),
    float_of_lex(V, rat_float32, F).

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

%   The double (rat_double/2) or single (rat_float32/2) nearest to
%   Mantissa*10^Exp, as Round rounds. Exponents far outside the double range are
%   cut short before building huge powers of ten.
float_of_lex(nan, _, F) :- F is nan.
float_of_lex(inf, _, F) :- F is inf.
float_of_lex(ninf, _, F) :- F is -inf.
float_of_lex(n(Sg, M, E), Round, F) :-
    (   huge_or_tiny(M, E, A)
    ->  true
    ;   pow10(E, P),
        R is M * P,
        call(Round, R, A)
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
