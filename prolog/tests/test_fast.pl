/*  plunit tests of prolog/cep_fast.pl: batch decoding and answer lines.

    Run from the repository root (CEP_NO_FOREIGN=1 tests the Prolog
    versions instead of the C library):
        swipl -q -g "consult('prolog/tests/test_fast.pl'), run_tests" -t halt
*/

:- module(test_fast, []).

:- use_module('../cep_values').         % cep_answer_text/2 writes values with cep_nt/2
:- use_module('../cep_fast').
:- use_module('../cep_runtime').        % cep_band_expire/6
:- use_module(band_stores).
:- use_module(library(plunit)).
:- use_module(library(lists)).
:- use_module(library(random)).

items(Text, Next, Period, Ends, Items) :-
    findall(I, cep_batch_item(Text, Next, Period, Ends, I), Items).

:- begin_tests(cep_batch_item).

test(events_in_order) :-
    items("Ihttp://e/s\tIhttp://e/p\tIhttp://e/o\t1\t2\nIhttp://e/s\tIhttp://e/p\ti42\t3\t3",
          100, 10, false, Items),
    assertion(Items == [ e('http://e/s', 'http://e/p', 'http://e/o', 1, 2),
                         e('http://e/s', 'http://e/p', 42, 3, 3) ]).
test(repeated_iris) :-                   % the C library keeps the last line's IRI atoms
    items("Iab\tIp\ti1\t1\t1\nIa\tIp\ti2\t2\t2\nIab\tIq\ti3\t3\t3\nIab\tIq\tIab\t4\t4\nPf(x)\tIq\ti5\t5\t5\nIab\tIq\ti6\t6\t6",
          100, 10, false, Items),
    assertion(Items == [ e(ab, p, 1, 1, 1), e(a, p, 2, 2, 2), e(ab, q, 3, 3, 3), e(ab, q, ab, 4, 4),
                         e(f(x), q, 5, 5, 5), e(ab, q, 6, 6, 6) ]).
test(prolog_text_field) :-
    items("Ihttp://e/s\tP'$in'('http://e/g','http://e/p')\tPdec(5r2)\t7\t7", 100, 10, false, Items),
    assertion(Items == [e('http://e/s', '$in'('http://e/g', 'http://e/p'), dec(5r2), 7, 7)]).
test(decimal_fields_as_read) :-
    % dec(...) fields: as Prolog reads their text
    % (the C library makes those in lowest terms of at most 18 digits itself)
    Texts = ["dec(5r2)", "dec(-5r2)", "dec(10r4)", "dec(0)", "dec(-0)", "dec(007)",
             "dec(123456789012345678901234567890r7)", "dec(-)", "dec(r)", "dec(1)+dec(2)",
             "dec(6893r50)", "dec(-1r999999999999999999)", "dec(999999999999999999r2)",
             "dec(9223372036854775807r2)", "dec(99999999999999999999)", "dec(-9223372036854775808)",
             "dec(5r1)", "dec(0r5)", "dec(-0r5)", "dec(6r4)", "dec(+5)", "dec(1r2 )", "dec( 1r2)"],
    forall(member(T, Texts),
           ( format(string(Line), "Ia\tIp\tP~w\t1\t1", [T]),
             items(Line, 100, 10, false, [e(a, p, O, 1, 1)]),
             term_string(Expected, T),
             assertion(O == Expected) )).
test(integer_fields_as_read) :-
    % i... fields: the integer of their digits, also beyond 64 bits (19 digits
    % over 2^63 - 1 were taken for a negative number)
    Texts = ["0", "-0", "42", "-42", "9223372036854775807", "-9223372036854775808",
             "9223372036854775808", "-9223372036854775809", "9999999999999999999",
             "-9999999999999999999", "10000000000000000000", "123456789012345678901234567890"],
    forall(member(T, Texts),
           ( format(string(Line), "Ia\tIp\ti~w\t1\t1", [T]),
             items(Line, 100, 10, false, [e(a, p, O, 1, 1)]),
             number_string(Expected, T),
             assertion(O == Expected) )).
test(sweeps_and_ends) :-
    % the sweep is due at 5: before the first instant at or after it, then every 10 ms
    items("Ia\tIp\tIb\t1\t1\nIa\tIp\tIc\t6\t6\nIa\tIp\tId\t6\t6\nIa\tIp\tIe\t9\t9\nIa\tIp\tIf\t20\t20",
          5, 10, true, Items),
    assertion(Items == [ e(a, p, b, 1, 1), end(1),
                         sweep(6), e(a, p, c, 6, 6), e(a, p, d, 6, 6), end(6),
                         e(a, p, e, 9, 9), end(9),
                         sweep(20), e(a, p, f, 20, 20), end(20) ]).
test(empty_batch) :-
    items("", 0, 10, true, Items),
    assertion(Items == []).
test(out_of_order, [throws(error(cep_error(bad_event_batch(_)), _))]) :-
    items("Ia\tIp\tIb\t5\t5\nIa\tIp\tIc\t4\t4", 100, 10, false, _).
test(not_an_event, [throws(error(cep_error(bad_event_batch(_)), _))]) :-
    items("Ia\tIp\tIb\t5", 100, 10, false, _).
test(times_of_64_bits) :-
    forall(member(T, ["9223372036854775807", "-9223372036854775808", "0", "-0", "007"]),
           ( format(string(Line), "Ia\tIp\tIb\t~w\t~w", [T, T]),
             items(Line, 100, 10, false, Items),
             memberchk(e(a, p, b, Ts, Te), Items),
             number_string(Expected, T),
             assertion(Ts-Te == Expected-Expected) )).
test(times_beyond_64_bits_or_not_integers) :-
    % the same error with the C library and without it (whose
    % number_string/2 took all of these)
    forall(member(T, ["9223372036854775808", "-9223372036854775809", "10000000000000000000",
                      "123456789012345678901234567890", "1.5", "1e3", "0x10", "1_000", " 5", "+5", "-", ""]),
           forall(member(Fields, [T-"1", "1"-T]),
                  ( Fields = Ts-Te,
                    format(string(Line), "Ia\tIp\tIb\t~w\t~w", [Ts, Te]),
                    catch(( items(Line, 100, 10, false, _), Error = none ), error(Error, _), true),
                    assertion(Error == cep_error(bad_event_batch('a time that is not an integer of 64 bits')))
                  ))).

:- end_tests(cep_batch_item).

:- begin_tests(cep_room).

%   The room after each item of a batch as cep_counted_item/5 counts them:
%   place of the event, and how much of a limit of 3 each item may take
%   (an instant's end: 3 for each of its events).
room_after_items(Text, Ends, Rooms) :-
    cep_room_reset(3),
    findall(Item-Place-Left,
            ( cep_counted_item(Text, 5, 100, Ends, Item),
              cep_room_place(Place),
              room_left(Left) ),
            Rooms).

room_left(Left) :-
    between(0, 100, Left),
    \+ cep_room_take(1),
    !.

test(events_ends_and_sweeps) :-
    room_after_items("Ia\tIp\ti1\t1\t1\nIa\tIp\ti2\t7\t7\nIa\tIp\ti3\t7\t7\nIa\tIp\ti4\t8\t8",
                     true, Rooms),
    assertion(Rooms == [ e(a, p, 1, 1, 1)-1-3, end(1)-0-3,
                         sweep(7)-0-3, e(a, p, 2, 7, 7)-1-3, e(a, p, 3, 7, 7)-2-3, end(7)-0-6,
                         e(a, p, 4, 8, 8)-1-3, end(8)-0-3 ]).
test(places_without_ends) :-
    room_after_items("Ia\tIp\ti1\t1\t1\nIa\tIp\ti2\t1\t1\nIa\tIp\ti3\t2\t2", false, Rooms),
    assertion(Rooms == [e(a, p, 1, 1, 1)-1-3, e(a, p, 2, 1, 1)-2-3, e(a, p, 3, 2, 2)-1-3]).
test(items_the_runtime_makes) :-
    cep_room_reset(2),
    cep_room_item(e(a, p, 1, 4, 4)),
    cep_room_item(e(a, p, 2, 4, 4)),
    cep_room_place(Place),
    assertion(Place == 2),
    cep_room_item(end(4)),
    assertion(cep_room_take(4)),
    assertion(\+ cep_room_take(1)),
    cep_room_item(sweep(5)),
    assertion(cep_room_take(2)),
    cep_room_most(Most),
    assertion(Most == 2).

:- end_tests(cep_room).

:- begin_tests(cep_answer_text).

test(lines) :-
    cep_answer_text([ r(0, 1, 2, ['http://e/a', "x", 3]),
                      r(1, 5, 5, []) ], Text),
    assertion(Text == "0\t1\t2\t<http://e/a>\t\"x\"\t\"3\"^^<http://www.w3.org/2001/XMLSchema#integer>\n1\t5\t5\n").
test(unbound_field_is_empty) :-
    cep_answer_text([r(2, 1, 1, [_, lang("a", en), _])], Text),
    assertion(Text == "2\t1\t1\t\t\"a\"@en\t\n").
test(no_rows) :-
    cep_answer_text([], Text),
    assertion(Text == "").

:- end_tests(cep_answer_text).

:- begin_tests(cep_iri).

test(plain) :-
    cep_iri_plain('http://example.org/caf\u00e9?a=1#x').
test(space, [fail]) :-
    cep_iri_plain('http://example.org/a b').
test(angle, [fail]) :-
    cep_iri_plain('http://example.org/<a>').
test(forbidden) :-
    forall(member(C, [0'<, 0'>, 0'", 0'{, 0'}, 0'|, 0'^, 0'`, 0'\\, 0' , 0'\n, 0]),
           cep_iri_forbidden(C)),
    \+ cep_iri_forbidden(0'a),
    \+ cep_iri_forbidden(0'/).

:- end_tests(cep_iri).

:- begin_tests(cep_answer_text_decimals).

%   The C writer's decimals against cep_nt/2 (the Prolog writer)
test(decimals_as_cep_nt) :-
    set_random(seed(11)),
    findall(dec(R), ( between(1, 3000, _),
                      Lo is -10**20, Hi is 10**20, random_between(Lo, Hi, N0), random_between(0, 25, A), random_between(0, 25, B),
                      random_between(0, 3, Shift), N is N0 // 10**(Shift*6),
                      R is N rdiv (2**A * 5**B) ), Random),
    Fixed = [dec(0), dec(-1), dec(1r2), dec(-1r2), dec(1r1000000000000000000), dec(123456789012345678),
             dec(-9223372036854775808), dec(9223372036854775807r1024), dec(1000000000000000000000000000000), dec(R70)],
    R70 is 1r2**70,
    append(Fixed, Random, Values),
    forall(member(V, Values),
           ( cep_fast:cep_answer_text([r(0, 1, 2, [V])], Text),
             cep_nt(V, Expected),
             format(string(Text), "0\t1\t2\t~w~n", [Expected]) )).

%   Another lexical form of a value (lv/3) as cep_nt/2 writes it: the plain
%   ones written in C, the ones with characters to escape by cep_nt/2
test(lexical_forms_as_cep_nt) :-
    D = 'http://www.w3.org/2001/XMLSchema#decimal',
    Values = [lv("1.50", D, dec(3r2)), lv("+3", D, dec(3)), lv(" 1.5", D, dec(3r2)),
              lv("1.5\n", D, dec(3r2)), lv("7", 'http://e/caf\u00e9', 7), l("x\"y", D)],
    forall(member(V, Values),
           ( cep_fast:cep_answer_text([r(0, 1, 2, [V])], Text),
             cep_nt(V, Expected),
             format(string(Text), "0\t1\t2\t~w~n", [Expected]) )).

%   A field equal to the one above it in its column, or an IRI or a
%   decimal written before, has its text copied from there (C writer):
%   each row as written alone, whatever repeats
test(repeated_fields_as_written_alone) :-
    D = 'http://www.w3.org/2001/XMLSchema#decimal',
    Rows = [ r(0, 1, 2, [a, dec(7r10), dec(21r20), lv("1.50", D, dec(3r2))]),
             r(0, 1, 2, [a, dec(7r10), dec(5), lv("1.50", D, dec(3r2))]),
             r(0, 1, 2, [b, dec(7r10), _, lv("1.5", D, dec(3r2))]),
             r(1, 3, 3, [b, dec(-1r8), dec(5), lv("1.50", D, dec(3r2))]),
             r(1, 3, 3, [dec(5), dec(-1r8), dec(-1r8), 7]),
             r(1, 4, 4, [dec(5), 7, dec(-1r8), dec(7r10), dec(123456789r1000)]),
             r(2, 4, 4, [dec(5), 7, dec(-1r8), dec(7r10), dec(123456789r1000)]),
             r(2, 4, 4, [dec(R1), dec(R2), dec(1), c, 'http://e/caf\u00e9']),
             r(2, 5, 5, [dec(R2), dec(R1), dec(R2), 'http://e/caf\u00e9', c]) ],
    % the same nearest double: the writer tells them apart
    R1 is 100000000000000001r100000000000000000,
    R2 is 100000000000000003r100000000000000000,
    cep_fast:cep_answer_text(Rows, Text),
    findall(T, ( member(Row, Rows), cep_fast:cep_answer_text([Row], T) ), Alone),
    atomics_to_string(Alone, Expected),
    assertion(Text == Expected).

:- end_tests(cep_answer_text_decimals).

:- begin_tests(cep_answer_text_buffer).

%   The C writer keeps its buffer from call to call: a call gives its own
%   rows only, after a call that wrote non-ASCII text and one that failed
%   half-way
test(each_call_its_own_rows) :-
    cep_answer_text([r(0, 1, 2, ['http://e/caf\u00e9'])], _),
    catch(cep_answer_text([r(0, 1, 2, ['http://e/a']), r(x, 1, 2, [])], _), _, true),
    cep_answer_text([r(1, 3, 4, ['http://e/b'])], Text),
    Text == "1\t3\t4\t<http://e/b>\n".

:- end_tests(cep_answer_text_buffer).

:- begin_tests(cep_fast_band).

%   The band as cep_values:cep_band/2 computes it in Prolog
prolog_band(V, B) :-
    cep_values_compare:numeric(V, K, N),
    cep_values_numbers:to_double(K, N, F),
    cep_values_compare:double_band(F, B).

band_values(Vs) :-
    set_random(seed(23)),
    findall(V, ( between(1, 3000, _),
                 random_between(-9007199254740992, 9007199254740992, N0),
                 random_between(0, 4, S),
                 N is N0 >> (S * 12),
                 random_between(1, 1000000000, D),
                 R is N rdiv D,
                 F is float(R),
                 member(V, [N, dec(R), dec(N), F, lv("x", xsd(decimal), dec(R))]) ),
            Vs0),
    Big is 2**53 + 1,
    Vs = [0, -0.0, 1.0e301, -1.0e301, dec(2735r100), dec(Big), dec(1 rdiv Big), Big|Vs0].

test(as_in_prolog) :-
    band_values(Vs),
    forall(member(V, Vs),
           (   cep_fast_band(V, B)
           ->  prolog_band(V, B1),
               assertion(B == B1)
           ;   true
           )).
test(takes_the_common_numbers, [condition(cep_fast:foreign_loaded)]) :-
    forall(member(V, [27, -3, dec(2735r100), dec(12), 2.5, lv("1.50", xsd(decimal), dec(3r2))]),
           assertion(cep_fast_band(V, _))).
test(leaves_the_others_to_prolog) :-
    Big is 2**53 + 1,
    forall(member(V, [dec(Big), Big, dec(1 rdiv Big), "5", 'http://a', l("5", xsd(integer)), _]),
           assertion(\+ cep_fast_band(V, _))).

:- end_tests(cep_fast_band).

%   The band stores: band_stores.pl.

:- begin_tests(cep_seq_store).

test(a_key_meets_its_goals_in_order_and_those_of_an_unbound_key) :-
    seq_module(M),
    forall(member(K-V-T, [a-v(a, 1)-1, b-v(b, 2)-2, a-v(a, 3)-3, _-v(_, 4)-4]),
           cep_seq_add(M, g, K, 0, V, T, T)),
    seq_goals(M, a, A),
    assertion(A =@= [v(a, 1)-1, v(a, 3)-3, v(_, 4)-4]),
    seq_goals(M, c, C),
    assertion(C =@= [v(_, 4)-4]),                           % an unbound key's goal meets every key
    seq_goals(M, _, All0),                                  % an unbound probe meets every goal
    sort(2, @<, All0, All),
    assertion(All =@= [v(a, 1)-1, v(b, 2)-2, v(a, 3)-3, v(_, 4)-4]).
test(values_unify_with_the_probe) :-
    seq_module(M),
    cep_seq_add(M, g, a, 0, v(a, 1), 1, 1),
    cep_seq_add(M, g, a, 0, v(a, 2), 2, 2),
    findall(T, cep_seq_goal(M, g, a, _, _, v(a, 2), T, _), Ts),
    assertion(Ts == [2]).
test(goals_within_the_bounds) :-
    seq_module(M),
    forall(member(Ts-Te, [1-1, 2-5, 3-3]), cep_seq_add(M, g, a, 0, v(Ts), Ts, Te)),
    findall(Ts-Te, cep_seq_goal(M, g, a, 5, _, _, Ts, Te), Before),
    assertion(Before == [1-1, 3-3]),
    findall(Ts-Te, cep_seq_goal(M, g, a, _, 2, _, Ts, Te), Since),
    assertion(Since == [2-5, 3-3]).
test(a_goal_is_stored_once) :-
    seq_module(M),
    cep_seq_add(M, g, a, 0, v(_, 1), 5, 6),
    cep_seq_add(M, g, a, 0, v(_, 1), 5, 6),                 % a variant: the same solution
    cep_seq_add(M, g, a, 0, v(y, 1), 5, 6),
    cep_seq_add(M, g, a, 0, v(y, 1), 5, 7),
    cep_seq_add(M, g, a, 0, v(y, 1), 4, 7),
    cep_seq_add(M, g, a, 0, v(y, 1), 5, 6),                 % not the last goal's interval: found among them all
    seq_goals(M, a, Goals),
    assertion(Goals = [v(V, 1)-5, v(y, 1)-5, v(y, 1)-5, v(y, 1)-4]),
    assertion(var(V)).
%   The C library's walk ends where no goal is left to try (the facts'
%   clause indexing may leave one: plunit would warn of it)
test(the_last_goal_leaves_no_choice_point, [condition(cep_fast:foreign_loaded)]) :-
    seq_module(M),
    cep_seq_add(M, g, a, 0, v(1), 1, 1),
    cep_seq_add(M, g, a, 0, v(2), 2, 2),
    cep_seq_add(M, g, a, 0, v(3), 3, 3),
    cep_seq_goal(M, g, a, 3, _, v(X), _, _),                % the goal of 3 is out of bounds
    X == 2.
test(goals_as_facts) :-
    seq_module(M),
    cep_seq_add(M, g, a, 7, v(a, 1), 1, 2),
    cep_seq_add(M, g, _, 7, v(_, 2), 3, 4),
    cep_seq_goals(M, Facts0),
    findall(g(K, G, V, Ts, Te), M:g(K, G, V, Ts, Te), Facts1),
    append(Facts0, Facts1, Facts),
    msort(Facts, Sorted),
    assertion(Sorted =@= [g(_, 7, v(_, 2), 3, 4), g(a, 7, v(a, 1), 1, 2)]).

:- end_tests(cep_seq_store).

% the same goal lists whatever the order of their keys
same_goals(As, Bs) :-
    length(As, N),
    length(Bs, N),
    forall(member(B, Bs), ( member(A, As), A =@= B )).

:- begin_tests(cep_band_store).

test(goals_that_pass_the_check_band_by_band_in_order) :-
    band_module(M),
    forall(member(K-V-T, [a-v(100)-1, a-v(200)-2, a-v(101)-3, b-v(100)-4, a-v("x")-5]),
           cep_band_add(M, g, g_bands, K, 0, V, T, T)),
    band_goals(M, a, <, 99, Above),
    assertion(Above == [v(100)-1, v(101)-3, v(200)-2]),     % band by band, as they first came
    band_goals(M, a, <, 100, Above100),
    assertion(Above100 == [v(101)-3, v(200)-2]),
    band_goals(M, a, >=, 100, Below),
    assertion(Below == [v(100)-1]),
    band_goals(M, a, <, "a", Strings),                      % no band: every band visited
    assertion(Strings == [v("x")-5]),
    band_goals(M, c, <, 0, None),
    assertion(None == []).
test(the_check_is_sparql_comparison) :-
    % each value stored alone and probed with each value and operator:
    % given back exactly when cep_compare/4 holds (numbers the C library
    % compares itself, and the others it leaves to cep_compare/4; decimals
    % whose doubles are equal: R1 and R2 have the double 1.0, and 1 and
    % dec(1) are that double)
    Big is 2**70,
    Exact is 2**53 + 1,
    NaN is nan,
    R1 is 100000000000000001r100000000000000000,
    R2 is 100000000000000003r100000000000000000,
    Values = [3, -2, 0, dec(7r10), dec(-7r10), dec(3), 0.7, 0.7000000000000001, 3.0, -0.0, NaN,
              inf, -inf, Big, Exact, dec(1 rdiv Big), dec(R1), dec(R2), 1, dec(1), lv("03", xsd(integer), 3),
              l("0.7", xsd(float)), l("abc", xsd(integer)), "s", lang("s", en), 'http://e/x', dt(5), _],
    forall(( member(X, Values), member(P, Values), nonvar(P), member(Op, [<, <=, >, >=]) ),
           ( band_module(M),
             cep_band_add(M, g, g_bands, k, 0, v(X), 1, 1),
             band_goals(M, k, Op, P, Goals),
             (   nonvar(X), cep_compare(Op, P, X, true)
             ->  Expected = [v(X)-1]
             ;   Expected = []
             ),
             assertion(Goals =@= Expected)
           )).
test(goals_within_the_bounds) :-
    band_module(M),
    forall(member(Ts-Te, [1-1, 2-5, 3-3]), cep_band_add(M, g, g_bands, a, 0, v(1), Ts, Te)),
    findall(Ts-Te, cep_band_goal(M, g, g_bands, a, <, 0, 5, _, _, Ts, Te), Before),
    assertion(Before == [1-1, 3-3]),
    findall(Ts-Te, cep_band_goal(M, g, g_bands, a, <, 0, _, 2, _, Ts, Te), Since),
    assertion(Since == [2-5, 3-3]).
test(a_goal_is_stored_once) :-
    band_module(M),
    cep_band_add(M, g, g_bands, a, 0, v(_, 1), 5, 6),
    cep_band_add(M, g, g_bands, a, 0, v(_, 1), 5, 6),       % a variant: the same solution
    cep_band_add(M, g, g_bands, a, 0, v(y, 1), 5, 6),
    cep_band_add(M, g, g_bands, a, 0, v(y, 1), 5, 7),
    band_goals(M, a, <, 0, Goals),
    assertion(Goals = [v(V, 1)-5, v(y, 1)-5, v(y, 1)-5]),
    assertion(var(V)).
%   Goals added in order of their ends and not (a repeat is found among
%   the goals that end with it, and anywhere once ends came out of
%   order), and after an expiry has taken the first goals: each once
test(a_goal_is_stored_once_whatever_the_order_of_ends) :-
    band_module(M),
    Adds = [ v(a, 1)-1-4, v(b, 1)-2-6, v(a, 1)-1-4, v(c, 1)-3-6, v(b, 1)-2-6, v(c, 1)-3-6,
             v(d, 1)-1-5, v(b, 1)-2-6, v(d, 1)-1-5, v(e, 1)-4-6, v(a, 1)-1-4 ],
    forall(member(V-Ts-Te, Adds), cep_band_add(M, g, g_bands, a, 0, V, Ts, Te)),
    findall(V-Ts-Te, cep_band_goal(M, g, g_bands, a, <, 0, _, _, V, Ts, Te), Goals),
    assertion(Goals == [v(a, 1)-1-4, v(b, 1)-2-6, v(c, 1)-3-6, v(d, 1)-1-5, v(e, 1)-4-6]),
    band_module(M2),
    forall(member(G-V-Ts-Te, [0-v(a, 1)-1-4, 1-v(b, 1)-2-6, 1-v(c, 1)-3-6]),
           cep_band_add(M2, g, g_bands, a, G, V, Ts, Te)),
    cep_band_expire(M2, g, g_bands, 0, 1, 1),          % generation 0 goes
    forall(member(V-Ts-Te, [v(b, 1)-2-6, v(c, 1)-3-6, v(f, 1)-5-6, v(c, 1)-3-6]),
           cep_band_add(M2, g, g_bands, a, 1, V, Ts, Te)),
    findall(V-Ts-Te, cep_band_goal(M2, g, g_bands, a, <, 0, _, _, V, Ts, Te), Left),
    assertion(Left == [v(b, 1)-2-6, v(c, 1)-3-6, v(f, 1)-5-6]).
test(values_unify_with_the_probe) :-
    band_module(M),
    cep_band_add(M, g, g_bands, a, 0, v(a, 1), 1, 1),
    cep_band_add(M, g, g_bands, a, 0, v(a, 2), 2, 2),
    findall(T, cep_band_goal(M, g, g_bands, a, <, 0, _, _, v(a, 2), T, _), Ts),
    assertion(Ts == [2]).
test(goals_survive_a_dump) :-
    band_module(M),
    cep_band_add(M, g, g_bands, k, 1, v(_, dec(7r10)), 10, 11),
    cep_band_add(M, g, g_bands, 42, 2, v("x"), 20, 21),
    cep_band_goals(M, Goals),                               % the same terms with the library and without
    assertion(length(Goals, 2)),
    band_module(M),
    forall(( member(band_goals(S, Bs, K, _, Gs), Goals), member(g(G, V, Ts, Te), Gs) ),
           cep_band_add(M, S, Bs, K, G, V, Ts, Te)),
    band_goals(M, k, >, 1, [v(U, dec(7r10))-10]),
    assertion(var(U)),
    band_goals(M, 42, <, "a", [v("x")-20]),
    cep_band_goals(M, Again),                               % keys sharing a hash slot come back in
    assertion(same_goals(Again, Goals)).                    % another order: a slot's chain is pushed
test(an_unbound_key_meets_every_key) :-                     % an unbound join variable
    band_module(M),
    forall(member(K-V, [a-v(1), b-v(2), _-v(3), a-v(4)]),
           cep_band_add(M, g, g_bands, K, 0, V, 5, 5)),
    band_goals(M, a, <, 0, A),
    assertion(A == [v(1)-5, v(4)-5, v(3)-5]),               % the key's goals, then the unbound key's
    band_goals(M, z, <, 0, Z),
    assertion(Z == [v(3)-5]),
    findall(K-V, cep_band_goal(M, g, g_bands, K, <, 0, _, _, V, _, _), Every),
    pairs_keys_values(Every, Keys, Values),
    assertion(maplist(var, Keys)),                          % not bound to a stored key
    msort(Values, Sorted),
    assertion(Sorted == [v(1), v(2), v(3), v(4)]),          % each goal once
    cep_band_goals(M, Goals),
    findall(H, ( member(band_goals(_, _, H, _, _), Goals), var(H) ), [_]),
    band_module(M),
    forall(( member(band_goals(S, Bs, H, _, Gs), Goals), member(g(G, V, Ts, Te), Gs) ),
           cep_band_add(M, S, Bs, H, G, V, Ts, Te)),
    band_goals(M, z, <, 0, Restored),
    assertion(Restored == [v(3)-5]).

:- end_tests(cep_band_store).
