/*  The runtime's hot loops: decoding a batch of events, telling which
    IRIs can be written as they are, writing answer lines, the band of a
    number, and the goal stores of SEQ and band joins. The C library prolog/cep_fast.so does
    them where `make setup` built it (an installed package builds it on
    first use: cep/runtime/native.py); the Prolog clauses below do the same,
    slower, where it was not built. CEP_NO_FOREIGN=1 forces the Prolog
    versions (the tests run both).
*/

:- module(cep_fast,
          [ cep_batch_item/5,      % +Text, +NextSweep, +Period, +Ends, -Item
            cep_counted_item/5,    % +Text, +NextSweep, +Period, +Ends, -Item
            cep_room_reset/1,      % +Most
            cep_room_item/1,       % +Item
            cep_room_take/1,       % +Weight
            cep_room_most/1,       % -Most
            cep_room_place/1,      % -Place
            cep_iri_plain/1,       % +Atom
            cep_iri_forbidden/1,   % +Code
            cep_answer_text/2,     % +Rows, -Text
            cep_answers_text/4,    % +Answers, +Columns, :RowsOf, -Text
            cep_fast_band/2,       % +Value, -Band
            cep_band_add/8,        % +Module, +Store, +Bands, +Key, +Generation, +Values, +Start, +End
            cep_band_goal/11,      % +Module, +Store, +Bands, +Key, +Op, +Probe, ?Before, ?Since, ?Values, ?Start, ?End
            cep_band_drop/3,       % +Module, +Store, +Generation
            cep_band_goals/2,      % +Module, -Goals
            cep_band_store/3,      % +Module, ?Store, ?Bands
            cep_band_clear/1,      % +Module
            cep_band_pending/1,    % +Module
            cep_band_key/3,        % +Key, +Band, -BandKey
            cep_band_admits/3,     % +Direction, +Band, +ProbeBand
            cep_seq_add/7,         % +Module, +Store, +Key, +Generation, +Values, +Start, +End
            cep_seq_goal/8,        % +Module, +Store, +Key, ?Before, ?Since, ?Values, ?Start, ?End
            cep_seq_drop/3,        % +Module, +Store, +Generation
            cep_seq_goals/2        % +Module, -Facts
          ]).

:- use_module(library(apply)).
:- use_module(library(lists)).
:- use_module(library(sha)).

:- dynamic foreign_loaded/0, foreign_library_path/1, foreign_source/1.

%   The library is looked for beside this file (prolog/cep_fast.so), and
%   used only when it was built from the source beside it (cep_fast.c).
:- prolog_load_context(directory, Dir),
   atom_concat(Dir, '/cep_fast', Lib),
   asserta(foreign_library_path(Lib)),
   atom_concat(Lib, '.c', Source),
   asserta(foreign_source(Source)).

%!  cep_batch_item(+Text, +NextSweep, +Period, +Ends, -Item) is nondet.
%
%   The items of a batch (format: prolog/cep_fast.c), in order. For each
%   instant (a run of events with the same end): sweep(End) if End >=
%   NextSweep (the next sweep is then due at End + Period), e(S, P, O,
%   Start, End) for each of its events, then end(End) if Ends is true.
%
%   @error cep_error(bad_event_batch(What)) on a line that is not an event,
%   a Start or End that is not an integer of 64 bits (as the C library:
%   the same error with and without it) or events out of end-time order
cep_batch_item(Text, Next, Period, Ends, Item) :-
    foreign_loaded,
    !,
    c_batch_item(Text, Next, Period, Ends, Item).
cep_batch_item(Text, Next, Period, Ends, Item) :-
    split_string(Text, "\n", "", Lines),
    foldl(decode_line, Lines, Events, []),
    groups(Events, Groups),
    batch_items(Groups, Period, Ends, Next, Items),
    member(Item, Items).

batch_items([], _, _, _, []).
batch_items([Group|Groups], Period, Ends, Next0, Items0) :-
    instant_items(Period, Ends, Group, Items0, Items, Next0, Next),
    batch_items(Groups, Period, Ends, Next, Items).

instant_items(Period, Ends, Te-Events, Items0, Items, Next0, Next) :-
    (   Te >= Next0
    ->  Items0 = [sweep(Te)|Items1],
        Next is Te + Period
    ;   Items0 = Items1,
        Next = Next0
    ),
    append(Events, Items2, Items1),
    (   Ends == true
    ->  Items2 = [end(Te)|Items]
    ;   Items2 = Items
    ).

%!  cep_counted_item(+Text, +NextSweep, +Period, +Ends, -Item) is nondet.
%
%   cep_batch_item/5, each item counted in the match room
%   (cep_room_item/1) as it is given.
cep_counted_item(Text, Next, Period, Ends, Item) :-
    foreign_loaded,
    !,
    c_counted_item(Text, Next, Period, Ends, Item).
cep_counted_item(Text, Next, Period, Ends, Item) :-
    cep_batch_item(Text, Next, Period, Ends, Item),
    cep_room_item(Item).

%!  cep_room_reset(+Most) is det.
%!  cep_room_item(+Item) is det.
%!  cep_room_take(+Weight) is semidet.
%!  cep_room_most(-Most) is det.
%!  cep_room_place(-Place) is det.
%
%   The match room of the call that runs the rules (cep_runtime:cep_match/3):
%   the partial matches the item being processed may still make, Most
%   for an event or a sweep, Most times the events since the last
%   instant's end for an instant's end (its optional checks take each
%   solution of the instant in turn). cep_room_reset/1 starts a call with
%   no event; cep_room_item/1 counts an item (an event e(S, P, O, Start,
%   End), an instant's end end(End), a sweep); cep_room_take/1 takes
%   Weight from what is left, or fails where less is left;
%   cep_room_place/1 gives the place of the event being processed among
%   the events of its instant, in the order they came (1, 2, ...; 0 at
%   the instant's end). The C library keeps it in C; here it is a term
%   room(Left, Most, Events, Instant, Place) in a global variable, made
%   once and changed in place (nb_setarg/3): setting a global variable to
%   a new compound at every call would freeze the global stack above what
%   the call had put there (its batch text). Its arguments are small
%   integers and an atom, which nb_setarg/3 sets without freezing.
cep_room_reset(Most) :-
    foreign_loaded,
    !,
    c_room_reset(Most).
cep_room_reset(Most) :-
    (   nb_current(cep_match_room, R)
    ->  nb_setarg(1, R, Most),
        nb_setarg(2, R, Most),
        nb_setarg(3, R, 0),
        nb_setarg(4, R, none),
        nb_setarg(5, R, 0)
    ;   nb_setval(cep_match_room, room(Most, Most, 0, none, 0))
    ).

cep_room_item(Item) :-
    foreign_loaded,
    !,
    c_room_item(Item).
cep_room_item(e(_, _, _, _, Te)) :-
    !,
    nb_getval(cep_match_room, R),
    arg(2, R, Most),
    nb_setarg(1, R, Most),
    arg(3, R, N0),
    N is N0 + 1,
    nb_setarg(3, R, N),
    (   arg(4, R, Te) -> arg(5, R, P0), P is P0 + 1 ; nb_setarg(4, R, Te), P = 1 ),
    nb_setarg(5, R, P).
cep_room_item(end(_)) :-
    !,
    nb_getval(cep_match_room, R),
    arg(2, R, Most),
    arg(3, R, N),
    Left is Most * max(N, 1),
    nb_setarg(1, R, Left),
    nb_setarg(3, R, 0),
    nb_setarg(5, R, 0).
cep_room_item(_) :-                         % a sweep
    nb_getval(cep_match_room, R),
    arg(2, R, Most),
    nb_setarg(1, R, Most).

cep_room_take(Weight) :-
    foreign_loaded,
    !,
    c_room_take(Weight).
cep_room_take(Weight) :-
    nb_getval(cep_match_room, R),
    arg(1, R, Room),
    Room >= Weight,
    Left is Room - Weight,
    nb_setarg(1, R, Left).

cep_room_most(Most) :-
    foreign_loaded,
    !,
    c_room_most(Most).
cep_room_most(Most) :-
    nb_getval(cep_match_room, R),
    arg(2, R, Most).

cep_room_place(Place) :-
    foreign_loaded,
    !,
    c_room_place(Place).
cep_room_place(Place) :-
    nb_getval(cep_match_room, R),
    arg(5, R, Place).

%!  cep_iri_plain(+Atom) is semidet.
%
%   True when Atom holds no character that an N-Triples IRIREF must escape.
cep_iri_plain(Atom) :-
    foreign_loaded,
    !,
    c_iri_plain(Atom).
cep_iri_plain(Atom) :-
    atom_codes(Atom, Codes),
    \+ ( member(C, Codes), cep_iri_forbidden(C) ).

%!  cep_iri_forbidden(+Code) is semidet.
%
%   The characters an N-Triples IRIREF must escape (the C library has the
%   same test, iri_forbidden()).
cep_iri_forbidden(C) :- C =< 0x20, !.
cep_iri_forbidden(C) :- memberchk(C, `<>"{}|^\`\\`).

%!  cep_answer_text(+Rows, -Text:string) is det.
%
%   The answer lines of a batch: Rows a list of r(Q, Start, End, Fields),
%   each a line Q TAB Start TAB End (TAB Field)*, a Field the canonical
%   N-Triples text of a value (cep_values:cep_nt/2), empty when unbound.
cep_answer_text(Rows, Text) :-
    foreign_loaded,
    !,
    c_answer_text(Rows, Text).
cep_answer_text(Rows, Text) :-
    foldl(row_parts, Rows, Parts, []),
    atomics_to_string(Parts, Text).

row_parts(r(Q, Ts, Te, Fields), [Q, '\t', Ts, '\t', Te|Parts], Rest) :-
    field_parts(Fields, Parts, Rest).

field_parts([], ['\n'|Rest], Rest).
field_parts([F|Fs], ['\t'|Parts0], Rest) :-
    (   var(F)
    ->  Parts0 = Parts
    ;   cep_values:cep_nt(F, Text),     % loaded by cep_runtime, beside
        Parts0 = [Text|Parts]
    ),
    field_parts(Fs, Parts, Rest).

%!  cep_answers_text(+Answers, +Columns, :RowsOf, -Text:string) is semidet.
%
%   The answer lines of a batch's answers ans(Q, Values, Start, End), in
%   the order they were found, as cep_runtime makes them from rows (its
%   answers_text/3: the answers of an instant distinct and in standard
%   order, each projected by its query): made by the C library in one
%   pass, with no list of rows. Columns lists Q-(Name/Arity-Indexes) for
%   the queries whose projection only picks values: Values is Name/Arity
%   and Indexes gives the argument of Values of each field (0: unbound).
%   An instant with an answer not of that kind has its lines made from
%   the rows call(RowsOf, InstantAnswers, Rows) gives (rows of
%   cep_answer_text/2), each other instant's still by the library.
%   Fails, having made nothing, without the library (prolog/cep_fast.c,
%   c_answers_text/4).
:- meta_predicate cep_answers_text(+, +, 2, -).

cep_answers_text(Answers, Columns, RowsOf, Text) :-
    foreign_loaded,
    c_answers_text(Answers, Columns, RowsOf, Text).

%!  cep_fast_band(+Value, -Band) is semidet.
%
%   The band of Value (cep_values:cep_band/2) where the C library computes
%   it: Value an integer, a double or a decimal whose parts are exact in a
%   double. Fails for the other values, and without the library: then
%   cep_band/2 computes it in Prolog, with the same double arithmetic.
cep_fast_band(V, B) :-
    foreign_loaded,
    c_band(V, B).

%!  cep_band_add(+Module, +Store, +Bands, +Key, +Generation, +Values, +Start, +End) is det.
%!  cep_band_goal(+Module, +Store, +Bands, +Key, +Op, +Probe, ?Before, ?Since, ?Values, ?Start, ?End) is nondet.
%!  cep_band_drop(+Module, +Store, +Generation) is semidet.
%
%   The goal store Store of the rule set Module, of a SEQ step whose check compares a right value with
%   a value stored in the goal (cep/compile/steps.py, Band): the last
%   argument of a goal's Values. Its goals are kept by join key and band
%   of that value (cep_values:cep_band/2), so that a right solution
%   visits only the bands that can hold a match (cep_band_admits/3).
%   cep_band_add/8 stores a goal of Values over [Start, End] in its
%   generation (Start div GenerationMs), unless the store has one of the
%   same values (a variant) and interval: solutions are sets (paper 4.2).
%   cep_band_goal/11 gives, in the order they came, the goals of Key
%   whose value V passes the band check, the SPARQL comparison Probe Op V
%   (Op one of <, <=, >, >=; cep_values:cep_compare/4, an unbound value
%   passes none), and that end before Before and start at or after Since
%   (either unbound: no bound): the step's interval test and window. The
%   C library compares the numbers it holds natively (integers,
%   decimals, doubles: prolog/cep_fast.c, num_order()) and gives the
%   others to cep_compare/4. cep_band_drop/3 drops the goals of
%   generation Generation and before, and the bands left empty, where
%   the C library keeps the store, and fails without it
%   (cep_runtime:cep_band_expire/6 then prunes the facts as it prunes
%   other stores).
%
%   The C library keeps them (prolog/cep_fast.c, band stores), with no
%   clause database work per goal; without it they are dynamic facts of
%   the rule set's module: Store(BandKey, Generation, Values, Start, End),
%   BandKey a hash of the key and the band (cep_band_key/3), and
%   Bands(Key, Band) for the bands a key has goals in. Both give the same
%   goals in the same order (but for an unbound Key's probe: the keys in
%   another order).
%
%   Key is unbound where a join variable is (clauses.py, key_goal): its goal
%   meets the probes of every key, and such a probe visits every key's
%   goals, each once, leaving Key unbound (the C library's KEY_ANY). The
%   facts keep such goals under the key unbound(key), no IRI nor hash.
cep_band_add(M, Store, Bands, H, G, V, Ts, Te) :-
    foreign_loaded,
    !,
    c_band_add(M, Store, Bands, H, G, V, Ts, Te).
cep_band_add(M, Store, Bands, H0, G, V, Ts, Te) :-
    (   var(H0)
    ->  any_key(H)
    ;   H = H0
    ),
    band_value(V, X),
    cep_values:cep_band(X, B),      % loaded by cep_runtime, beside
    Band =.. [Bands, H, B],
    (   M:Band
    ->  true
    ;   assertz(M:Band)
    ),
    cep_band_key(H, B, HB),
    Seen =.. [Store, HB, _, V0, Ts, Te],
    (   M:Seen, V0 =@= V
    ->  true
    ;   Goal =.. [Store, HB, G, V, Ts, Te],
        assertz(M:Goal)
    ).

cep_band_goal(M, Store, _, H, Op, P, Before, Since, V, Ts, Te) :-
    foreign_loaded,
    !,
    c_band_goal(M, Store, H, Op, P, Before, Since, V, Ts, Te).
cep_band_goal(M, Store, Bands, H0, Op, P, Before, Since, V, Ts, Te) :-
    nonvar(P),
    band_direction(Op, Direction),
    cep_values:cep_band(P, PB),
    Band =.. [Bands, H, B],
    (   var(H0)
    ->  M:Band                                  % every key's bands, the unbound key's too
    ;   (   H = H0
        ;   any_key(H)
        ),
        M:Band
    ),
    cep_band_admits(Direction, B, PB),
    cep_band_key(H, B, HB),
    Goal =.. [Store, HB, _, V0, Ts0, Te0],
    M:Goal,
    within(Before, Since, Ts0, Te0),
    band_value(V0, X),
    nonvar(X),
    cep_values:cep_compare(Op, P, X, true),
    V = V0,
    Ts = Ts0,
    Te = Te0.

band_value(V, X) :-
    functor(V, _, N),
    arg(N, V, X).

band_direction(<, above).
band_direction(<=, above).
band_direction(>, below).
band_direction(>=, below).

any_key(unbound(key)).

cep_band_drop(M, Store, Max) :-
    foreign_loaded,
    c_band_expire(M, Store, Max).

%!  cep_band_goals(+Module, -Goals) is det.
%!  cep_band_clear(+Module) is det.
%!  cep_band_pending(+Module) is semidet.
%
%   The goals of Module's band stores, a term band_goals(Store, Bands,
%   Key, Band, [g(Generation, Values, Start, End), ...]) for each key and
%   band, from the C library or, without it, from the facts
%   (cep_runtime:cep_dump/2 keeps them in the state in place of the facts,
%   and cep_restore/2 gives each to cep_band_add/8: a state written with
%   the library is read without it, and the other way round).
%   cep_band_clear/1 drops the C library's stores, band and plain
%   (cep_seq_add/7); cep_band_pending/1 is true while one has a goal.
cep_band_goals(M, Goals) :-
    (   foreign_loaded
    ->  c_band_goals(M, Goals)
    ;   findall(band_goals(Store, Bands, H, B, Gs),
                ( cep_band_store(M, Store, Bands),
                  Band =.. [Bands, K, B],
                  M:Band,
                  (   any_key(K)                    % unbound, as the library gives it
                  ->  true
                  ;   H = K
                  ),
                  cep_band_key(K, B, HB),
                  Goal =.. [Store, HB, G, V, Ts, Te],
                  findall(g(G, V, Ts, Te), M:Goal, Gs)
                ),
                Goals)
    ).

%!  cep_band_store(+Module, ?Store, ?Bands) is nondet.
%
%   Store is a band store of Module's facts, Bands its band list (the
%   compiled rules name it Store_bands: cep/compile/steps.py, BANDS).
cep_band_store(M, Store, Bands) :-
    current_predicate(M:Bands/2),
    atom_concat(Store, '_bands', Bands),
    current_predicate(M:Store/5).

cep_band_clear(M) :-
    (   foreign_loaded
    ->  c_band_clear(M)
    ;   true
    ).

cep_band_pending(M) :-
    foreign_loaded,
    c_band_count(M, N),
    N > 0.

%!  cep_band_key(+Key, +Band, -BandKey) is det.
%!  cep_band_admits(+Direction, +Band, +ProbeBand) is semidet.
%
%   The key of the goals of a join key's band in the dynamic facts, and
%   whether a goal of Band can pass a check against a right value of
%   band ProbeBand: Direction `above` (the stored value must be greater)
%   or `below`. One band of slack covers the rounding of the bands, so
%   the comparison itself, made on every visited goal, decides (the C
%   library has the same test, band_admits()).
cep_band_key(H, B, HB) :-
    term_hash(H-B, HB).

cep_band_admits(_, other, _) :- !.
cep_band_admits(_, _, other) :- !.
cep_band_admits(above, B, P) :- B >= P - 1.
cep_band_admits(below, B, P) :- B =< P + 1.

%!  cep_seq_add(+Module, +Store, +Key, +Generation, +Values, +Start, +End) is det.
%!  cep_seq_goal(+Module, +Store, +Key, ?Before, ?Since, ?Values, ?Start, ?End) is nondet.
%!  cep_seq_drop(+Module, +Store, +Generation) is semidet.
%!  cep_seq_goals(+Module, -Facts) is det.
%
%   The goal store Store of the rule set Module of a SEQ step with no
%   band (cep/compile/steps.py, _seq): the goals its left solutions
%   leave, each a solution's Values over [Start, End] in its generation
%   (steps.py, _generation), by join key (clauses.py, key_goal; unbound
%   where a join variable is). cep_seq_add/7 stores a goal unless the
%   store has one of the same values (a variant) and interval: solutions
%   are sets (paper 4.2). cep_seq_goal/8 gives the goals whose values
%   unify with Values, of Key and those stored with the key unbound
%   (every goal where Key is unbound), that end before Before and start
%   at or after Since (either unbound: no bound): the step's interval
%   test and window. cep_seq_drop/3 drops the goals of generation
%   Generation and before where the C library keeps the store, and fails
%   without it (cep_runtime:cep_seq_expire/5 then prunes the facts).
%   cep_seq_goals/2 gives the C library's goals as the facts that hold
%   them without it (none without it: the facts are the store's), for
%   cep_runtime:cep_dump/2.
%
%   The C library keeps them (prolog/cep_fast.c, c_seq_add/7), with no
%   clause database work per goal; without it they are the dynamic facts
%   Store(Key, Generation, Values, Start, End) of Module. Both give the
%   same goals, a key's in the order they came (but for the goals of an
%   unbound key, which the library gives after the others).
cep_seq_add(M, Store, H, G, V, Ts, Te) :-
    foreign_loaded,
    !,
    c_seq_add(M, Store, H, G, V, Ts, Te).
cep_seq_add(M, Store, H, G, V, Ts, Te) :-
    Seen =.. [Store, H, _, V0, Ts, Te],
    (   M:Seen, V0 =@= V
    ->  true
    ;   Goal =.. [Store, H, G, V, Ts, Te],
        assertz(M:Goal)
    ).

cep_seq_goal(M, Store, H, Before, Since, V, Ts, Te) :-
    foreign_loaded,
    !,
    c_seq_goal(M, Store, H, Before, Since, V, Ts, Te).
cep_seq_goal(M, Store, H, Before, Since, V, Ts, Te) :-
    Goal =.. [Store, H, _, V, Ts, Te],
    M:Goal,
    within(Before, Since, Ts, Te).

% within(?Before, ?Since, +Start, +End): a goal ends before Before and
% starts at or after Since (either unbound: no bound)
within(Before, Since, Ts, Te) :-
    (   var(Before)
    ->  true
    ;   Te < Before
    ),
    (   var(Since)
    ->  true
    ;   Ts >= Since
    ).

cep_seq_drop(M, Store, Max) :-
    foreign_loaded,
    c_band_expire(M, Store, Max).

cep_seq_goals(M, Facts) :-
    (   foreign_loaded
    ->  c_seq_goals(M, Facts)
    ;   Facts = []
    ).

decode_line("", Events, Events) :- !.
decode_line(Line, [e(S, P, O, Ts, Te)|Events], Events) :-
    (   split_string(Line, "\t", "", [SF, PF, OF, TsF, TeF])
    ->  decode_field(SF, S),
        decode_field(PF, P),
        decode_field(OF, O),
        decode_time(TsF, Ts),
        decode_time(TeF, Te)
    ;   throw(error(cep_error(bad_event_batch(Line)), _))
    ).

%   A time is what the C library's parse_int() takes: an optional minus
%   sign and at most 19 digits making an integer of 64 bits (the runtime
%   computes with 64-bit milliseconds). number_string/2 would also take
%   an integer beyond 64 bits, a float, 0x1F, 1_000 or a leading space.
decode_time(Text, Time) :-
    (   string_codes(Text, Codes),
        (   Codes = [0'-|Digits]
        ->  true
        ;   Digits = Codes
        ),
        length(Digits, N),
        between(1, 19, N),
        forall(member(D, Digits), between(0'0, 0'9, D)),
        number_codes(Time, Codes),
        Time >= -(2**63),
        Time =< 2**63 - 1
    ->  true
    ;   throw(error(cep_error(bad_event_batch('a time that is not an integer of 64 bits')), _))
    ).

decode_field(Field, Term) :-
    sub_string(Field, 0, 1, _, Tag),
    sub_string(Field, 1, _, 0, Text),
    decode_tagged(Tag, Text, Term).

decode_tagged("I", Text, Atom) :- !, atom_string(Atom, Text).
decode_tagged("i", Text, Int) :- !, number_string(Int, Text), integer(Int).
decode_tagged("P", Text, Term) :- !, term_string(Term, Text).
decode_tagged(Tag, _, _) :- throw(error(cep_error(bad_event_batch(Tag)), _)).

%   Events ordered by end -> End-Events groups of simultaneous events.
groups([], []).
groups([E|Es], [Te-[E|Group]|Groups]) :-
    arg(5, E, Te),
    same_end(Es, Te, Group, Rest),
    groups(Rest, Groups).

same_end([E|Es], Te, [E|Group], Rest) :-
    arg(5, E, Te),
    !,
    same_end(Es, Te, Group, Rest).
same_end([E|_], Te, _, _) :-
    arg(5, E, Te1),
    Te1 < Te,
    throw(error(cep_error(bad_event_batch('events not ordered by end time')), _)).
same_end(Rest, _, [], Rest).

load_foreign :-
    retractall(foreign_loaded),
    (   getenv('CEP_NO_FOREIGN', _)
    ->  true
    ;   foreign_library_path(Lib),
        load_foreign(Lib)
    ->  true
    ;   true
    ).

%!  load_foreign(+Lib) is semidet.
%
%   Use the C library Lib (a path without its extension). An installed
%   package has none beside this file: cep.runtime.native builds one on
%   first use and the session loads it with this.
load_foreign(Lib) :-
    catch(load_foreign_library(Lib), _, fail),  % now, not at the end of loading as
    (   built_from_source                       % use_foreign_library/1 would: a missing
    ->  assertz(foreign_loaded)                 % library falls back to Prolog
    ;   foreign_source(Source),
        print_message(warning, format("~w.so was built from another version of ~w, so it is \c
                                        not used (its predicates may be missing or differ): \c
                                        run `make setup` to rebuild it", [Lib, Source])),
        fail
    ).

%   Whether the library just loaded was built from the source beside
%   this file: the SHA-256 compiled into it (prolog/cep_fast.c,
%   c_source/1; a library older than c_source/1 has none) is the source's.
built_from_source :-
    catch(c_source(Built), error(existence_error(procedure, _), _), fail),
    foreign_source(Source),
    read_file_to_codes(Source, Bytes, [type(binary)]),
    sha_hash(Bytes, Hash, [algorithm(sha256), encoding(octet)]),
    hash_atom(Hash, Built).

:- initialization(load_foreign).
