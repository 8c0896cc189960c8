/*  The SPARQL 1.1 functions of section 17.4 (cep_fn/3), the casts of 17.5
    as cast(Datatype) (done by cep_values_casts.pl), and REGEX run by
    PCRE2 with a guard against catastrophic patterns (cep_regex/4).

    Every predicate follows the rules of cep_values.pl: encoded terms in
    and out, deterministic, SPARQL evaluation errors as failure.
*/

:- module(cep_values_functions,
          [ cep_fn/3,
            cep_bnode/3,
            cep_regex/4,
            cep_regex_gave_up/1,
            cep_regex_problem/3
          ]).

:- use_module(library(lists)).
:- use_module(library(apply)).
:- use_module(library(error)).
:- use_module(cep_values_terms, [lexical/2]).
:- use_module(cep_values_compare, [compatible/2, is_literal/1, numeric/3, string_arg/3, with_tag/3]).
:- use_module(cep_values_arithmetic, [number_value/3]).
:- use_module(cep_values_casts, [cast/3]).
:- use_module(cep_values_dates, [datetime_fields/7, datetime_zone/2, duration_lexical/3]).
:- use_module(library(random), [random/1, random_between/3]).

% REGEX uses PCRE2. The library is part of the standard SWI-Prolog
% distribution but is a separate package; without it REGEX raises
% cep_error(regex_unavailable) instead of silently answering wrongly.
:- if(exists_source(library(pcre))).
:- use_module(library(pcre)).
:- endif.
% MD5 ... SHA512 use library(crypto) (the ssl package); without it they
% raise cep_error(crypto_unavailable).
:- if(exists_source(library(crypto))).
:- use_module(library(crypto), [crypto_data_hash/3]).
:- endif.

:- include(cep_values_iris).

:- multifile prolog:message//1.

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
fn_arity(substr, 2).
fn_arity(substr, 3).
fn_arity(strbefore, 2).
fn_arity(strafter, 2).
fn_arity(encode_for_uri, 1).
fn_arity(replace, 3).
fn_arity(replace, 4).
fn_arity(strlang, 2).
fn_arity(strdt, 2).
fn_arity(iri, 1).
fn_arity(year, 1).
fn_arity(month, 1).
fn_arity(day, 1).
fn_arity(hours, 1).
fn_arity(minutes, 1).
fn_arity(seconds, 1).
fn_arity(timezone, 1).
fn_arity(tz, 1).
fn_arity(md5, 1).
fn_arity(sha1, 1).
fn_arity(sha256, 1).
fn_arity(sha384, 1).
fn_arity(sha512, 1).
fn_arity(rand, 0).
fn_arity(uuid, 0).
fn_arity(struuid, 0).
fn_arity(bnode, 0).
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
    whole_number_value(K, A, R).
fn(floor, [V], R) :-
    numeric(V, K, N),
    num_round(floor, K, N, A),
    whole_number_value(K, A, R).
fn(round, [V], R) :-
    numeric(V, K, N),
    num_round(round, K, N, A),
    whole_number_value(K, A, R).
fn(substr, [V, Start], R) :-
    string_arg(V, S, Tag),
    numeric(Start, 0, From),
    string_length(S, Len),
    substr(S, Len, From, Len, Sub),
    with_tag(Sub, Tag, R).
fn(substr, [V, Start, Length], R) :-
    string_arg(V, S, Tag),
    numeric(Start, 0, From),
    numeric(Length, 0, N),
    string_length(S, Len),
    substr(S, Len, From, N, Sub),
    with_tag(Sub, Tag, R).
fn(strbefore, [A, B], R) :-
    string_args(A, B, SA, SB),
    string_arg(A, _, Tag),
    (   sub_string(SA, Before, _, _, SB)
    ->  sub_string(SA, 0, Before, _, Sub),
        with_tag(Sub, Tag, R)
    ;   R = ""
    ).
fn(strafter, [A, B], R) :-
    string_args(A, B, SA, SB),
    string_arg(A, _, Tag),
    (   sub_string(SA, _, _, After, SB)
    ->  sub_string(SA, _, After, 0, Sub),
        with_tag(Sub, Tag, R)
    ;   R = ""
    ).
fn(encode_for_uri, [V], R) :-
    string_arg(V, S, _),
    string_codes(S, Cs),
    phrase(utf8_codes(Cs), Bytes),
    foldl(percent_encode, Bytes, Parts, []),
    atomics_to_string(Parts, R).
fn(replace, [Text, Pattern, With], R) :-
    fn(replace, [Text, Pattern, With, ""], R).
fn(replace, [Text, Pattern, With, Flags], R) :-
    string_arg(Text, S, Tag),
    string_arg(Pattern, P, []),
    string_arg(With, W, []),
    string_arg(Flags, F, []),
    string_codes(W, WCs),
    phrase(replacement(Parts0), WCs),
    (   sub_atom(F, _, _, _, q)
    ->  G = 0
    ;   pattern_groups(P, G)
    ),
    group_refs(G, Parts0, Parts),
    regex_replace(S, P, F, Parts, Out),
    with_tag(Out, Tag, R).
fn(strlang, [V, Tag], lang(S, T)) :-
    string_arg(V, S, []),
    string_arg(Tag, T0, []),
    string_codes(T0, Cs),
    phrase(language_tag, Cs),
    string_lower(T0, T1),
    atom_string(T, T1).
fn(strdt, [V, T], R) :-
    string_arg(V, S, []),
    atom(T),
    typed_literal(S, T, R).
fn(iri, [V], I) :-                          % Choice: no base IRI, so an absolute IRI
    (   atom(V)
    ->  I = V
    ;   string_arg(V, S, []),
        string_codes(S, Cs),
        phrase(scheme, Cs, _),
        \+ ( member(C, Cs), iri_forbidden(C) ),
        atom_string(I, S)
    ).
fn(year, [V], Y) :- datetime_arg(V, Ms, _), datetime_fields(Ms, Y, _, _, _, _, _).
fn(month, [V], M) :- datetime_arg(V, Ms, _), datetime_fields(Ms, _, M, _, _, _, _).
fn(day, [V], D) :- datetime_arg(V, Ms, _), datetime_fields(Ms, _, _, D, _, _, _).
fn(hours, [V], H) :- datetime_arg(V, Ms, _), datetime_fields(Ms, _, _, _, H, _, _).
fn(minutes, [V], M) :- datetime_arg(V, Ms, _), datetime_fields(Ms, _, _, _, _, M, _).
fn(seconds, [V], R) :-
    datetime_arg(V, Ms, _),
    datetime_fields(Ms, _, _, _, _, _, SecMs),
    S is SecMs rdiv 1000,
    whole_number_value(1, S, R).
fn(timezone, [V], l(Lex, xsd(dayTimeDuration))) :-      % an error where there is no time zone
    datetime_arg(V, _, z(_, Min)),
    MinMs is Min * 60000,
    duration_lexical(0, MinMs, Lex).
fn(tz, [V], Text) :-
    datetime_arg(V, _, Zone),
    (   Zone = z(Text, _)
    ->  true
    ;   Text = ""
    ).
fn(md5, [V], H) :- hash(md5, V, H).
fn(sha1, [V], H) :- hash(sha1, V, H).
fn(sha256, [V], H) :- hash(sha256, V, H).
fn(sha384, [V], H) :- hash(sha384, V, H).
fn(sha512, [V], H) :- hash(sha512, V, H).
fn(rand, [], X) :-
    random(X).
fn(uuid, [], I) :-
    uuid4(S),
    atom_concat('urn:uuid:', S, I).
fn(struuid, [], S) :-
    uuid4(A),
    atom_string(A, S).
fn(bnode, [], bn(L)) :-
    uuid4(U),
    atomic_list_concat(Parts, '-', U),
    atomic_list_concat([b|Parts], L).
fn(cast(T0), [V], R) :-
    (   atom_concat('<', T1, T0),
        atom_concat(T, '>', T1)
    ->  true
    ;   T = T0
    ),
    cast(T, V, R).

%   SUBSTR (17.4.3.3, fn:substring): the characters at the 1-based
%   positions P with From =< P < From + N, From and N integers.
substr(S, Len, From, N, Sub) :-
    B is max(1, From),
    E is min(Len + 1, From + N),
    (   E > B
    ->  B0 is B - 1,
        L is E - B,
        sub_string(S, B0, L, _, Sub)
    ;   Sub = ""
    ).

%   ENCODE_FOR_URI (fn:encode-for-uri): every UTF-8 byte but those of the
%   unreserved characters of RFC 3986 as %XX.
utf8_codes([]) --> [].
utf8_codes([C|Cs]) --> utf8_code(C), utf8_codes(Cs).

utf8_code(C) --> { C < 0x80 }, !, [C].
utf8_code(C) --> { C < 0x800 }, !,
    { B1 is 0xC0 \/ (C >> 6), B2 is 0x80 \/ (C /\ 0x3F) }, [B1, B2].
utf8_code(C) --> { C < 0x10000 }, !,
    { B1 is 0xE0 \/ (C >> 12), B2 is 0x80 \/ ((C >> 6) /\ 0x3F), B3 is 0x80 \/ (C /\ 0x3F) },
    [B1, B2, B3].
utf8_code(C) -->
    { B1 is 0xF0 \/ (C >> 18), B2 is 0x80 \/ ((C >> 12) /\ 0x3F),
      B3 is 0x80 \/ ((C >> 6) /\ 0x3F), B4 is 0x80 \/ (C /\ 0x3F) },
    [B1, B2, B3, B4].

percent_encode(B, [P|T], T) :-
    (   unreserved(B)
    ->  char_code(P, B)
    ;   format(atom(P), "%~|~`0t~16R~2+", [B])
    ).

unreserved(B) :- code_type(B, alnum), B < 0x80, !.
unreserved(B) :- memberchk(B, `-._~`).

%   The replacement string of REPLACE (fn:replace): $ and digits refer
%   to a group (group_refs/3 says which), \$ and \\ are $ and \; any
%   other $ or \ is an error (fails).
replacement([]) --> [].
replacement([lit(C)|Ps]) --> `\\`, [C], { memberchk(C, `$\\`) }, !, replacement(Ps).
replacement([group(Ds)|Ps]) --> `$`, digits1(Ds), !, replacement(Ps).
replacement([lit(C)|Ps]) --> [C], { C \== 0'$, C \== 0'\\ }, replacement(Ps).

digits1([D|Ds]) --> [D], { code_type(D, digit) }, digits0(Ds).
digits0([D|Ds]) --> [D], { code_type(D, digit) }, !, digits0(Ds).
digits0([]) --> [].

:- if(current_predicate(re_match/3)).
regex_replace(S, Pattern, Flags, Parts, Out) :-
    regex_prepare(Pattern, Flags, P, PFlags),
    regex_options(Options),
    catch(( \+ re_match(P/PFlags, "", Options),          % a pattern that matches "" is an error
            re_foldl(add_match, P/PFlags, S, [], Matches, [capture_type(range)|Options])
          ),
          error(syntax_error(_), _),
          fail),
    reverse(Matches, InOrder),
    string_length(S, Len),
    splice(InOrder, S, 0, Len, Parts, Pieces),
    atomics_to_string(Pieces, Out).

add_match(M, Ms, [M|Ms]).
:- else.
regex_replace(_, _, _, _, _) :-
    throw(error(cep_error(regex_unavailable), _)).
:- endif.

splice([], S, At, Len, _, [Rest]) :-
    N is Len - At,
    sub_string(S, At, N, _, Rest).
splice([M|Ms], S, At, Len, Parts, [Before|Pieces]) :-
    get_dict(0, M, Start-N),
    L is Start - At,
    sub_string(S, At, L, _, Before),
    foldl(replacement_text(M, S), Parts, Texts, []),
    atomics_to_string(Texts, With),
    Pieces = [With|Pieces1],
    Next is Start + N,
    splice(Ms, S, Next, Len, Parts, Pieces1).

replacement_text(_, _, lit(C), [T|R], R) :-
    char_code(T, C).
replacement_text(M, S, group(K), [T|R], R) :-
    (   get_dict(K, M, Start-N),
        Start >= 0,
        string_length(S, Len),
        Start + N =< Len
    ->  sub_string(S, Start, N, _, T)
    ;   T = ""                                  % a group that took no part
    ).

%   The groups $N refers to, given the number of groups of the pattern
%   (fn:replace): the first digit, then each next one while the number
%   stays at most the number of groups; the digits after are text.
group_refs(_, [], []).
group_refs(G, [lit(C)|Ps], [lit(C)|Rs]) :-
    group_refs(G, Ps, Rs).
group_refs(G, [group([D|Ds])|Ps], [group(K)|Rs]) :-
    K0 is D - 0'0,
    more_digits(Ds, K0, G, K, Rest),
    findall(lit(C), member(C, Rest), Lits),
    append(Lits, Rs1, Rs),
    group_refs(G, Ps, Rs1).

more_digits([D|Ds], K0, G, K, Rest) :-
    K1 is K0 * 10 + D - 0'0,
    K1 =< G,
    !,
    more_digits(Ds, K1, G, K, Rest).
more_digits(Ds, K, _, K, Ds).

%   The number of capturing groups of a pattern: the ( outside character
%   classes that are not escaped and not followed by ?.
pattern_groups(P, G) :-
    string_codes(P, Cs),
    groups(Cs, 0, G).

groups([], G, G).
groups([0'\\, _|Cs], G0, G) :- !, groups(Cs, G0, G).
groups([0'[|Cs], G0, G) :- !, class_end(Cs, Rest), groups(Rest, G0, G).
groups([0'(, C|Cs], G0, G) :- C \== 0'?, !, G1 is G0 + 1, groups([C|Cs], G1, G).
groups([0'(], G0, G) :- !, G is G0 + 1.
groups([_|Cs], G0, G) :- groups(Cs, G0, G).

class_end([], []).
class_end([0'\\, _|Cs], Rest) :- !, class_end(Cs, Rest).
class_end([0']|Cs], Cs) :- !.
class_end([_|Cs], Rest) :- class_end(Cs, Rest).

%   RFC 5646 in the shape SPARQL's LANGTAG has: letters, then
%   hyphen-separated letters and digits.
language_tag --> alphas1, subtags.
subtags --> [].
subtags --> `-`, alnums1, subtags.
alphas1 --> [C], { code_type(C, alpha), C < 0x80 }, alphas0.
alphas0 --> [C], { code_type(C, alpha), C < 0x80 }, !, alphas0.
alphas0 --> [].
alnums1 --> [C], { code_type(C, alnum), C < 0x80 }, alnums0.
alnums0 --> [C], { code_type(C, alnum), C < 0x80 }, !, alnums0.
alnums0 --> [].

%   STRDT: the value of Lexical^^Datatype as the readers encode it
%   (cep/terms.py to_prolog): a value for a valid lexical form of the
%   datatypes the engine computes with, else the term as written.
typed_literal(S, xsd(string), S) :- !.
typed_literal(S, T, V) :-                   % the value, or lv/3 for another lexical form of it
    memberchk(T, [xsd(integer), xsd(decimal), xsd(double), xsd(boolean), xsd(dateTime), xsd(duration)]),
    cast(T, S, V0),
    !,
    lexical(V0, S0),
    (   S0 == S
    ->  V = V0
    ;   V = lv(S, T, V0)
    ).
typed_literal(S, T, l(S, T)).

%   RFC 3987: scheme ":" ...
scheme --> [C], { code_type(C, alpha), C < 0x80 }, scheme_rest.
scheme_rest --> `:`, !.
scheme_rest --> [C], { C < 0x80, ( code_type(C, alnum) ; memberchk(C, `+-.`) ) }, scheme_rest.

iri_forbidden(C) :- C =< 0x20.
iri_forbidden(C) :- memberchk(C, `<>"{}|^\`\\`).

%   datetime_arg(+V, -LocalMs, -Zone): a dateTime's fields as written (its
%   wall-clock time, as the epoch milliseconds of those fields in UTC) and
%   its time zone (datetime_zone/2). dt(Ms) is a UTC time written with Z.
datetime_arg(dt(Ms), Ms, z("Z", 0)) :- !.
datetime_arg(lv(Lex, T, dt(Ms)), Local, Zone) :-
    T == xsd(dateTime),
    datetime_zone(Lex, Zone),
    (   Zone = z(_, Min)
    ->  Local is Ms + Min * 60000
    ;   Local = Ms
    ).

%   MD5 ... SHA512 (17.4.6) of the UTF-8 text of a simple literal or
%   xsd:string, in lower-case hex.
:- if(current_predicate(crypto_data_hash/3)).
hash(Algorithm, V, H) :-
    string_arg(V, S, []),
    crypto_data_hash(S, H0, [algorithm(Algorithm), encoding(utf8)]),
    atom_string(H0, H).
:- else.
hash(_, _, _) :-
    throw(error(cep_error(crypto_unavailable), _)).
:- endif.

%   A version 4 UUID from SWI-Prolog's random generator, which is seeded
%   from the system's entropy: UUIDs of different workers do not collide.
uuid4(A) :-
    length(Ns, 16),
    maplist([N]>>random_between(0, 255, N), Ns),
    Ns = [B0, B1, B2, B3, B4, B5, B6a, B7, B8a|Rest],
    B6 is (B6a /\ 0x0F) \/ 0x40,
    B8 is (B8a /\ 0x3F) \/ 0x80,
    format(atom(A), "~|~`0t~16r~2+~|~`0t~16r~2+~|~`0t~16r~2+~|~`0t~16r~2+-~|~`0t~16r~2+~|~`0t~16r~2+-~|~`0t~16r~2+~|~`0t~16r~2+-~|~`0t~16r~2+~|~`0t~16r~2+-~|~`0t~16r~2+~|~`0t~16r~2+~|~`0t~16r~2+~|~`0t~16r~2+~|~`0t~16r~2+~|~`0t~16r~2+",
           [B0, B1, B2, B3, B4, B5, B6, B7, B8|Rest]).

%!  cep_bnode(+String, +Solution, -BlankNode) is semidet.
%
%   BNODE(String) (17.4.2.9): the same blank node for the same string in
%   the same Solution (a term of the solution's values and interval, the
%   compiler's), a different one in another. The label is a hash of
%   both: a solution seen again (by another worker) gets the same node.
cep_bnode(V, Solution, bn(L)) :-
    nonvar(V),
    string_arg(V, S, []),
    variant_sha1(bnode(S, Solution), H),
    sub_atom(H, 0, 24, _, Short),
    atom_concat(b, Short, L).

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
datatype_(lv(_, T, _), T).
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

num_abs(K, X, A) :-
    K >= 2,
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

%   Choice (SPARQL 1.1's tests ceil01, floor01, round01 and seconds): the
%   xsd:decimal that CEIL, FLOOR, ROUND or SECONDS returns is written in
%   XSD 1.1's canonical form, without a point when it is whole ("2",
%   "13.815"), as XPath's fn:ceiling ... fn:seconds-from-dateTime give it;
%   the decimals of arithmetic and AVG keep "2.0" (the tests agg-avg-02,
%   agg-err-02). The value is the same decimal: only the term differs.
whole_number_value(1, N, R) :-
    integer(N),
    !,
    number_string(N, Lex),
    R = lv(Lex, xsd(decimal), dec(N)).
whole_number_value(K, N, R) :-
    number_value(K, N, R).

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

%!  cep_regex(+Where, +Fn, +Args:list, -Value) is semidet.
%
%   REGEX or REPLACE (Fn: regex, replace) as cep_fn(Fn, Args, Value), but
%   where PCRE gives up on the
%   text (its match limit or its heap limit: a pattern such as
%   "^(a+)+$" backtracks catastrophically on "aaa...a!"), the call is an
%   evaluation error (it fails, SPARQL's error value) instead of an
%   exception that would stop the run, and Where (the indexes of the
%   queries whose expression it is, cep/compile/expr.py) is noted for
%   cep_regex_gave_up/1, so the run can warn.
cep_regex(Where, Fn, Args, V) :-
    catch(cep_fn(Fn, Args, V),
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
%   The Where of every cep_regex/4 call that gave up since the last call
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
                 *           MESSAGES           *
                 *******************************/

prolog:message(error(cep_error(unknown_function(Name/Arity)), _)) -->
    [ 'cep_values: no function ~q with ~d argument(s)'-[Name, Arity] ].
prolog:message(error(cep_error(crypto_unavailable), _)) -->
    [ 'cep_values: MD5 and the SHA functions need library(crypto), which this SWI-Prolog lacks' ].
prolog:message(error(cep_error(regex_unavailable), _)) -->
    [ 'cep_values: REGEX needs library(pcre), which this SWI-Prolog lacks' ].
