/*  The N-Triples text of encoded values (cep_nt/2) and their lexical
    forms (what STR() returns), over the encoding of cep_values.pl.

    Every predicate follows the rules of cep_values.pl: encoded terms in
    and out, deterministic, SPARQL evaluation errors as failure.
*/

:- module(cep_values_terms,
          [ cep_nt/2,
            % for the other value modules
            lexical/2,
            parse_boolean/2
          ]).

:- use_module(library(lists)).
:- use_module(library(apply)).
:- use_module(library(error)).
:- use_module(cep_fast, [cep_iri_plain/1, cep_iri_forbidden/1]).
:- use_module(cep_values_numbers, [decimal_lexical/2, double_lexical/2, lexical_codes/2]).
:- use_module(cep_values_dates, [datetime_lexical/2, duration_lexical/3]).

:- include(cep_values_iris).

:- multifile prolog:message//1.

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
nt_compound(lv(Lex, T, _), S) :-
    !,
    nt_compound(l(Lex, T), S).
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
lexical(lv(S0, _, _), S) :- !, S = S0.
lexical(l(S0, _), S) :- S = S0.

parse_boolean(S, B) :-
    lexical_codes(S, Cs),
    atom_codes(A, Cs),
    boolean_lex(A, B).

boolean_lex(true, true).
boolean_lex('1', true).
boolean_lex(false, false).
boolean_lex('0', false).


                 /*******************************
                 *           MESSAGES           *
                 *******************************/

prolog:message(error(cep_error(not_a_value(V)), _)) -->
    [ 'cep_values: ~q is not an encoded RDF term (see cep/terms.py)'-[V] ].
