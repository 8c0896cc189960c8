/*  plunit tests of prolog/cep_values_functions.pl.

    Run from the repository root:
        swipl -q -g "consult('prolog/tests/test_values_functions.pl'), run_tests" -t halt

    SPARQL evaluation errors are failures of the predicate under test, so
    most error cases are `fail` tests; programming errors are exceptions.
*/

:- module(test_values_functions, []).

:- use_module('../cep_values').
:- use_module(values_support).
:- use_module(library(plunit)).
:- use_module(library(lists)).
:- use_module(library(random)).

:- begin_tests(cep_fn_terms).

test(str_iri, S == "http://a") :- cep_fn(str, ['http://a'], S).
test(str_string, S == "x") :- cep_fn(str, ["x"], S).
test(str_lang, S == "x") :- cep_fn(str, [lang("x", en)], S).
test(str_integer, S == "5") :- cep_fn(str, [5], S).
test(str_decimal, S == "1.5") :- cep_fn(str, [dec(3r2)], S).
test(str_double, S == "1.5E0") :- cep_fn(str, [1.5], S).
test(str_bool, S == "true") :- cep_fn(str, [bool(true)], S).
test(str_datetime, S == "2026-01-01T00:00:05Z") :- t0(T), cep_fn(str, [dt(T)], S).
test(str_duration, S == "P1M") :- cep_fn(str, [dur(1, 0)], S).
test(str_other, S == "x") :- cep_fn(str, [l("x", 'http://t')], S).
test(str_bnode, fail) :- cep_fn(str, [bn(b)], _).
test(str_unbound, fail) :- cep_fn(str, [_], _).
test(lang, S == "en") :- cep_fn(lang, [lang("x", en)], S).
test(lang_plain, S == "") :- cep_fn(lang, ["x"], S).
test(lang_integer, S == "") :- cep_fn(lang, [1], S).
test(lang_iri, fail) :- cep_fn(lang, ['http://a'], _).
test(lang_bnode, fail) :- cep_fn(lang, [bn(b)], _).
test(datatype_all, Ts == [integer, decimal, double, boolean, dateTime, duration, string, string]) :-
    findall(L,
            ( member(V, [1, dec(1r2), 1.0, bool(true), dt(0), dur(0, 1), "s", l("s", 'http://www.w3.org/2001/XMLSchema#string')]),
              cep_fn(datatype, [V], T),
              atom_concat('http://www.w3.org/2001/XMLSchema#', L, T)
            ),
            Ts).
test(datatype_lang, T == 'http://www.w3.org/1999/02/22-rdf-syntax-ns#langString') :-
    cep_fn(datatype, [lang("x", en)], T).
test(datatype_other, T == 'http://t') :- cep_fn(datatype, [l("x", 'http://t')], T).
test(datatype_iri, fail) :- cep_fn(datatype, ['http://a'], _).
test(is_iri, [B1, B2, B3] == [bool(true), bool(false), bool(false)]) :-
    cep_fn(isIRI, ['http://a'], B1), cep_fn(isIRI, [bn(b)], B2), cep_fn(isIRI, ["a"], B3).
test(is_blank, [B1, B2] == [bool(true), bool(false)]) :-
    cep_fn(isBlank, [bn(b)], B1), cep_fn(isBlank, ['http://a'], B2).
test(is_literal, Bs == [bool(true), bool(true), bool(true), bool(false), bool(false)]) :-
    maplist([V, B]>>cep_fn(isLiteral, [V], B), ["a", 1, dt(0), 'http://a', bn(b)], Bs).
test(is_numeric, Bs == [bool(true), bool(true), bool(true), bool(true), bool(false), bool(false), bool(true)]) :-
    ty("1200", byte, Bad), ty("12", byte, Good),
    maplist([V, B]>>cep_fn(isNumeric, [V], B), [1, dec(1r2), 1.5, Good, Bad, "1", 1], Bs).
test(is_iri_unbound, fail) :- cep_fn(isIRI, [_], _).
test(same_term, B == bool(true)) :- cep_fn(sameTerm, [1, 1], B).
test(same_term_types, B == bool(false)) :- cep_fn(sameTerm, [1, 1.0], B).
test(same_term_decimal, B == bool(false)) :- cep_fn(sameTerm, [dec(1), 1], B).
test(same_term_zeros, B == bool(false)) :- cep_fn(sameTerm, [-0.0, 0.0], B).
test(same_term_nan, B == bool(true)) :- nan(X), cep_fn(sameTerm, [X, X], B).
test(same_term_iri, B == bool(false)) :- cep_fn(sameTerm, ['http://a', 'http://b'], B).
test(lang_matches, B == bool(true)) :- cep_fn(langMatches, ["en-GB", "en"], B).
test(lang_matches_case, B == bool(true)) :- cep_fn(langMatches, ["en", "EN"], B).
test(lang_matches_not_prefix_of_subtag, B == bool(false)) :- cep_fn(langMatches, ["english", "en"], B).
test(lang_matches_longer_range, B == bool(false)) :- cep_fn(langMatches, ["en", "en-GB"], B).
test(lang_matches_star, B == bool(true)) :- cep_fn(langMatches, ["fr", "*"], B).
test(lang_matches_star_empty, B == bool(false)) :- cep_fn(langMatches, ["", "*"], B).
test(lang_matches_empty_range, B == bool(false)) :- cep_fn(langMatches, ["en", ""], B).
test(lang_matches_both_empty, B == bool(true)) :- cep_fn(langMatches, ["", ""], B).
test(lang_matches_lang_argument, fail) :- cep_fn(langMatches, [lang("en", en), "en"], _).
test(lang_matches_number, fail) :- cep_fn(langMatches, [1, "en"], _).

:- end_tests(cep_fn_terms).

:- begin_tests(cep_fn_strings).

test(strlen, N == 3) :- cep_fn(strlen, ["abc"], N).
test(strlen_astral, N == 2) :- cep_fn(strlen, ["\U0001F600x"], N).
test(strlen_lang, N == 2) :- cep_fn(strlen, [lang("ab", en)], N).
test(strlen_number, fail) :- cep_fn(strlen, [5], _).
test(ucase, S == "A\u00c9") :- cep_fn(ucase, ["a\u00e9"], S).
test(ucase_lang, S == lang("AB", en)) :- cep_fn(ucase, [lang("ab", en)], S).
test(lcase, S == "ab") :- cep_fn(lcase, ["AB"], S).
test(lcase_xsd_string, S == "ab") :- ty("AB", string, V), cep_fn(lcase, [V], S).
test(lcase_iri, fail) :- cep_fn(lcase, ['http://A'], _).
test(contains, B == bool(true)) :- cep_fn(contains, ["abc", "b"], B).
test(contains_not, B == bool(false)) :- cep_fn(contains, ["abc", "d"], B).
test(contains_empty, B == bool(true)) :- cep_fn(contains, ["abc", ""], B).
test(contains_lang_simple, B == bool(true)) :- cep_fn(contains, [lang("abc", en), "b"], B).
test(contains_same_tags, B == bool(true)) :- cep_fn(contains, [lang("abc", en), lang("b", en)], B).
test(contains_other_tags, fail) :- cep_fn(contains, [lang("abc", en), lang("b", fr)], _).
test(contains_simple_lang, fail) :- cep_fn(contains, ["abc", lang("b", en)], _).
test(contains_number, fail) :- cep_fn(contains, ["abc", 1], _).
test(strstarts, B == bool(true)) :- cep_fn(strstarts, ["abc", "ab"], B).
test(strstarts_not, B == bool(false)) :- cep_fn(strstarts, ["abc", "bc"], B).
test(strends, B == bool(true)) :- cep_fn(strends, ["abc", "bc"], B).
test(strends_not, B == bool(false)) :- cep_fn(strends, ["abc", "ab"], B).
test(strends_lang, B == bool(true)) :- cep_fn(strends, [lang("abc", en), lang("c", en)], B).
test(concat_none, S == "") :- cep_fn(concat, [], S).
test(concat, S == "abc") :- cep_fn(concat, ["a", "b", "c"], S).
test(concat_same_tag, S == lang("ab", en)) :- cep_fn(concat, [lang("a", en), lang("b", en)], S).
test(concat_other_tags, S == "ab") :- cep_fn(concat, [lang("a", en), lang("b", fr)], S).
test(concat_tag_and_simple, S == "ab") :- cep_fn(concat, [lang("a", en), "b"], S).
test(concat_xsd_string, S == "ab") :- ty("b", string, V), cep_fn(concat, ["a", V], S).
test(concat_number, fail) :- cep_fn(concat, ["a", 1], _).
test(concat_unbound, fail) :- cep_fn(concat, ["a", _], _).

test(regex, B == bool(true)) :- cep_fn(regex, ["abc", "b"], B).
test(regex_no, B == bool(false)) :- cep_fn(regex, ["abc", "^b"], B).
test(regex_i, B == bool(true)) :- cep_fn(regex, ["ABC", "b", "i"], B).
test(regex_i_unicode, B == bool(true)) :- cep_fn(regex, ["\u00c9T\u00c9", "^\u00e9t\u00e9$", "i"], B).
test(regex_unicode_word, B == bool(true)) :- cep_fn(regex, ["\u00e9", "^\\w$"], B).
test(regex_dot_newline, B == bool(false)) :- cep_fn(regex, ["a\nb", "a.b"], B).
test(regex_dot_cr, B == bool(false)) :- cep_fn(regex, ["a\rb", "a.b"], B).
test(regex_s, B == bool(true)) :- cep_fn(regex, ["a\nb", "a.b", "s"], B).
test(regex_m, B == bool(true)) :- cep_fn(regex, ["a\nb", "^b$", "m"], B).
test(regex_dollar_end_only, B == bool(false)) :- cep_fn(regex, ["ab\n", "b$"], B).
test(regex_x, B == bool(true)) :- cep_fn(regex, ["abc", " a b\nc ", "x"], B).
test(regex_x_keeps_class_space, B == bool(true)) :- cep_fn(regex, ["a c", "a[ ]c", "x"], B).
test(regex_x_hash_literal, B == bool(true)) :- cep_fn(regex, ["a#b", "a # b", "x"], B).
test(regex_x_escaped_space, B == bool(true)) :- cep_fn(regex, ["a b", "a\\ b", "x"], B).
test(regex_q, B == bool(false)) :- cep_fn(regex, ["abc", ".", "q"], B).
test(regex_q_match, B == bool(true)) :- cep_fn(regex, ["a.(c", ".(", "q"], B).
test(regex_q_i, B == bool(true)) :- cep_fn(regex, ["A.C", "a.c", "qi"], B).
test(regex_flags_combined, B == bool(true)) :- cep_fn(regex, ["X\nAB", "^a.$", "mi"], B).
test(regex_lang_text, B == bool(true)) :- cep_fn(regex, [lang("Abc", en), "^a", "i"], B).
test(regex_empty_pattern, B == bool(true)) :- cep_fn(regex, ["abc", ""], B).
test(regex_lang_pattern, fail) :- cep_fn(regex, ["abc", lang("b", en)], _).
test(regex_bad_flag, fail) :- cep_fn(regex, ["abc", "b", "z"], _).
test(regex_bad_pattern, fail) :- cep_fn(regex, ["abc", "a("], _).
test(regex_number_text, fail) :- cep_fn(regex, [1, "1"], _).
test(regex_iri_text, fail) :- cep_fn(regex, ['http://a', "a"], _).

:- end_tests(cep_fn_strings).

:- begin_tests(cep_fn_numbers).

test(abs_integer, X == 5) :- cep_fn(abs, [-5], X).
test(abs_decimal, X == dec(1r2)) :- cep_fn(abs, [dec(-1r2)], X).
test(abs_double, X == 1.5) :- cep_fn(abs, [-1.5], X).
test(abs_negative_zero, X == 0.0) :- cep_fn(abs, [-0.0], X).
test(abs_nan, true(is_nan(X))) :- nan(N), cep_fn(abs, [N], X).
test(abs_float, X == Y) :- ty("-1.5", float, A), cep_fn(abs, [A], X), ty("1.5E0", float, Y).
test(abs_derived, X == 3) :- ty("-3", int, A), cep_fn(abs, [A], X).
test(abs_string, fail) :- cep_fn(abs, ["1"], _).
test(ceil_integer, X == 3) :- cep_fn(ceil, [3], X).
test(ceil_decimal, X == lv("3", 'http://www.w3.org/2001/XMLSchema#decimal', dec(3))) :- cep_fn(ceil, [dec(5r2)], X).
test(ceil_decimal_negative, X == lv("-2", 'http://www.w3.org/2001/XMLSchema#decimal', dec(-2))) :- cep_fn(ceil, [dec(-5r2)], X).
test(ceil_double, X == 3.0) :- cep_fn(ceil, [2.1], X).
test(ceil_double_negative_zero, true(is_neg_zero(X))) :- cep_fn(ceil, [-0.5], X).
test(floor_double, X == -3.0) :- cep_fn(floor, [-2.1], X).
test(floor_decimal, X == lv("-1", 'http://www.w3.org/2001/XMLSchema#decimal', dec(-1))) :- cep_fn(floor, [dec(-1r2)], X).
test(round_half_up, X == 3.0) :- cep_fn(round, [2.5], X).
test(round_half_negative, X == -2.0) :- cep_fn(round, [-2.5], X).
test(round_negative_zero, true(is_neg_zero(X))) :- cep_fn(round, [-0.5], X).
test(round_below_half, X == 0.0) :- cep_fn(round, [0.49999999999999994], X).
test(round_decimal, X == lv("3", 'http://www.w3.org/2001/XMLSchema#decimal', dec(3))) :- cep_fn(round, [dec(5r2)], X).
test(round_decimal_negative, X == lv("-2", 'http://www.w3.org/2001/XMLSchema#decimal', dec(-2))) :- cep_fn(round, [dec(-5r2)], X).
test(round_integer, X == -7) :- cep_fn(round, [-7], X).
test(round_big_double, X == 1.0e300) :- cep_fn(round, [1.0e300], X).
test(round_inf, X == I) :- inf(I), cep_fn(round, [I], X).
test(round_float, X == Y) :- ty("2.5", float, A), cep_fn(round, [A], X), ty("3.0E0", float, Y).
test(floor_string, fail) :- cep_fn(floor, ["1.5"], _).

:- end_tests(cep_fn_numbers).

:- begin_tests(cep_fn_errors).

test(unknown_function, error(cep_error(unknown_function(nosuch/2)))) :- cep_fn(nosuch, ["a", 1], _).
test(wrong_arity, error(cep_error(unknown_function(str/2)))) :- cep_fn(str, ["a", "b"], _).
test(cast_arity, error(cep_error(unknown_function(cast(x)/2)))) :- cep_fn(cast(x), ["a", "b"], _).
test(unbound_function, error(instantiation_error)) :- cep_fn(_, ["a"], _).
test(args_not_a_list, error(type_error(list, foo))) :- cep_fn(str, foo, _).
test(deterministic) :-
    forall(member(G, [ cep_nt(1.5, _), cep_nt("a\nb", _), cep_ebv(dec(1r2), _),
                       cep_compare(<, 1, dec(3r2), _), cep_compare(=, 'http://a', "a", _),
                       cep_add(1, 2.0, _), cep_div(1, 3, _), cep_sub(dt(1), dt(0), _),
                       cep_fn(regex, ["abc", "b", "i"], _), cep_fn(concat, ["a", "b"], _),
                       cep_fn(cast('http://www.w3.org/2001/XMLSchema#dateTime'), ["2026-01-01T00:00:00Z"], _),
                       cep_fn(cast('http://www.w3.org/2001/XMLSchema#duration'), ["P1Y2M3DT4H"], _)
                     ]),
           ( call_cleanup(G, Det = true), Det == true )).

:- end_tests(cep_fn_errors).

:- begin_tests(cep_fn_library).

%   SPARQL 1.1 section 17.4: the string, hash, date and constructor
%   functions, with their error cases (failure) and result tags.

test(substr_from, R == "bar") :- cep_fn(substr, ["foobar", 4], R).
test(substr_keeps_tag, R == lang("fo", en)) :- cep_fn(substr, [lang("foobar", en), 0, 3], R).
test(substr_beyond_bmp, R == "😀b") :- cep_fn(substr, ["a😀bc", 2, 2], R).
test(substr_empty, R == "") :- cep_fn(substr, ["abc", 5, 2], R).
test(substr_negative_length, R == "") :- cep_fn(substr, ["abc", 2, -1], R).
test(substr_decimal_start, fail) :- cep_fn(substr, ["abc", dec(2)], _).
test(substr_not_string, fail) :- cep_fn(substr, ['http://a', 1], _).
test(strbefore_tag, R == lang("a", en)) :- cep_fn(strbefore, [lang("abc", en), "b"], R).
test(strbefore_empty_keeps_tag, R == lang("", en)) :- cep_fn(strbefore, [lang("abc", en), ""], R).
test(strbefore_no_match_simple, R == "") :- cep_fn(strbefore, [lang("abc", en), "z"], R).
test(strbefore_incompatible, fail) :- cep_fn(strbefore, ["abc", lang("b", en)], _).
test(strafter, R == "c") :- cep_fn(strafter, ["abc", "b"], R).
test(strafter_first_match, R == "cbd") :- cep_fn(strafter, ["abcbd", "b"], R).
test(strafter_same_tag, R == lang("c", fr)) :- cep_fn(strafter, [lang("abc", fr), lang("b", fr)], R).
test(encode_for_uri, R == "Los%20Angeles~%C3%A9%F0%9F%98%80") :-
    cep_fn(encode_for_uri, [lang("Los Angeles~é😀", en)], R).
test(replace, R == "aZcd") :- cep_fn(replace, ["abcd", "b", "Z"], R).
test(replace_groups, R == "ba$ba$") :- cep_fn(replace, ["abab", "(a)(b)", "$2$1\\$"], R).
test(replace_group_digits, R == "[a3][b3]") :- cep_fn(replace, ["ab", "(a)|(b)", "[$1$2$53]"], R).
test(replace_flags_tag, R == lang("axax", en)) :- cep_fn(replace, [lang("abab", en), "B", "x", "i"], R).
test(replace_matches_empty, fail) :- cep_fn(replace, ["abab", "x*", "y"], _).
test(replace_lone_dollar, fail) :- cep_fn(replace, ["abab", "a", "$"], _).
test(strlang, R == lang("chat", 'en-us')) :- cep_fn(strlang, ["chat", "EN-us"], R).
test(strlang_tagged, fail) :- cep_fn(strlang, [lang("chat", en), "fr"], _).
test(strlang_bad_tag, fail) :- cep_fn(strlang, ["chat", "e n"], _).
test(strdt_integer, R == 1) :- xsd(integer, T), cep_fn(strdt, ["1", T], R).
test(strdt_keeps_the_lexical_form, R == lv("01", T, 1)) :- xsd(integer, T), cep_fn(strdt, ["01", T], R).
test(strdt_other, R == l("x", 'http://t')) :- cep_fn(strdt, ["x", 'http://t'], R).
test(strdt_string, R == "x") :- xsd(string, T), cep_fn(strdt, ["x", T], R).
test(strdt_not_iri, fail) :- cep_fn(strdt, ["x", "http://t"], _).
test(iri, R == 'http://a/b') :- cep_fn(iri, ["http://a/b"], R).
test(iri_of_iri, R == 'http://a') :- cep_fn(iri, ['http://a'], R).
test(iri_space, fail) :- cep_fn(iri, ["http://a b"], _).
test(date_parts, [Y, Mo, D, H, Mi] == [2026, 1, 1, 0, 0]) :-
    t0(T),
    maplist([F, V]>>cep_fn(F, [dt(T)], V), [year, month, day, hours, minutes], [Y, Mo, D, H, Mi]).
test(seconds_decimal, S == dec(11r2)) :- cep_fn(seconds, [dt(1767225605500)], S).
test(seconds_whole, S == lv("5", 'http://www.w3.org/2001/XMLSchema#decimal', dec(5))) :- cep_fn(seconds, [dt(1767225605000)], S).
test(timezone_utc, [Z, T] == [l("PT0S", D), "Z"]) :-
    xsd(dayTimeDuration, D), cep_fn(timezone, [dt(0)], Z), cep_fn(tz, [dt(0)], T).
test(date_parts_in_their_zone, [H, Z, T] == [15, l("-PT8H", D), "-08:00"]) :-
    xsd(dateTime, T0), V = lv("2010-12-21T15:38:02-08:00", T0, dt(1292974682000)),
    xsd(dayTimeDuration, D),
    cep_fn(hours, [V], H), cep_fn(timezone, [V], Z), cep_fn(tz, [V], T).
test(tz_without_zone, T == "") :-
    xsd(dateTime, D), cep_fn(tz, [lv("2011-02-01T01:02:03", D, dt(1296522123000))], T).
test(timezone_without_zone, fail) :-
    xsd(dateTime, D), cep_fn(timezone, [lv("2011-02-01T01:02:03", D, dt(1296522123000))], _).
test(year_not_date, fail) :- cep_fn(year, ["2026"], _).
test(md5, H == "900150983cd24fb0d6963f7d28e17f72") :- cep_fn(md5, ["abc"], H).
test(sha1_tagged, fail) :- cep_fn(sha1, [lang("abc", en)], _).
test(sha512_length, L == 128) :- cep_fn(sha512, ["é"], H), string_length(H, L).
test(rand, true((float(X), X >= 0.0, X < 1.0))) :- cep_fn(rand, [], X).
test(uuid_v4, true(sub_atom(U, 23, 1, _, '4'))) :- cep_fn(uuid, [], U), atom_length(U, 45).
test(struuid_distinct, true(A \== B)) :- cep_fn(struuid, [], A), cep_fn(struuid, [], B).
test(bnode_fresh, true(A \== B)) :- cep_fn(bnode, [], bn(A)), cep_fn(bnode, [], bn(B)).
test(bnode_per_solution, true((A == B, A \== C))) :-
    cep_bnode("x", s(1, 2, [a]), A),
    cep_bnode("x", s(1, 2, [a]), B),
    cep_bnode("x", s(1, 2, [b]), C).
test(bnode_not_string, fail) :- cep_bnode(1, s(1, 2, []), _).

:- end_tests(cep_fn_library).
