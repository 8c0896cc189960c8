/*  The event-driven runtime of compiled EP-SPARQL rule sets.

    A rule set is compiled (cep/compile) into a module of its own whose
    clauses are the paper's event-driven backward-chaining rules: leaf rules
    that match triples, goal-insertion rules that store partial solutions
    (goals) and checking rules that combine a new solution with the stored
    goals (paper, rules (10)-(15)). This module drives them:

    - a batch of events arrives as one text (format: prolog/cep_fast.c),
      ordered by end time; events with the same end form one *group* (they
      are simultaneous: SEQ does not join them, EQUALS can);
    - each event of a group triggers the leaf rules; the rules are
      nondeterministic and their solutions are the answers, so a group's
      answers are one findall/3 (no database traffic per answer); then the
      deferred checks of the optional operators run, bottom-up;
    - a group's answers are deduplicated (solutions are sets, paper 4.2),
      projected and turned into lines; group-scoped goals are dropped;
    - goals past their window are pruned by periodic sweeps (the paper's
      system-generated events), so the cost of an event does not grow with
      the number of pending goals.

    Answers come back as one text, a line per answer:
        QueryIndex TAB Start TAB End (TAB Field)*
    where a Field is the canonical N-Triples text of a value, or empty when
    the variable is unbound.
*/

:- module(cep_runtime,
          [ cep_load/2,          % +Module, +ProgramText
            cep_unload/1,        % +Module
            cep_load_background/2, % +Module, +TriplesText
            cep_load_instances/2,  % +Module, +TriplesText
            cep_describe/4,      % +Module, +Kind, +Name, -TriplesText
            cep_push/3,          % +Module, +EventsText, -AnswersText
            cep_static/3,        % +Module, +TimeText, -AnswersText
            cep_not/2,           % +B, -NotB
            cep_in/2,            % +Bs, -B
            cep_notin/2,         % +Bs, -B
            cep_skolem/2,        % +Key, -BlankNode
            cep_expire/5,        % +Module, +Store, +Window, +GenerationMs, +Now
            cep_band_expire/6,   % +Module, +Store, +Bands, +Window, +GenerationMs, +Now
            cep_seq_expire/5,    % +Module, +Store, +Window, +GenerationMs, +Now
            cep_advance/3,       % +Module, +NowText, -Pending
            cep_absence/3,       % +Module, +Limit, -Rows
            cep_feed/3,          % +Module, +Time, -Rows
            cep_queue/7,         % +Module, +Rule, +S, +P, +O, +Start, +End
            cep_arrival/1,       % -Place
            cep_reporting/1,     % :Goal
            cep_set_limits/2,    % +Module, +LimitsText
            cep_match/3,         % +Queries, +End, +Weight
            cep_dump/2,          % +Module, -State
            cep_restore/2        % +Module, +State
          ]).

:- set_prolog_flag(optimise, true).   % arithmetic compiled inline (file-local flag): hot paths
:- use_module(library(lists)).
:- use_module(library(apply)).
:- use_module(library(pairs)).
:- use_module(library(aggregate)).
:- use_module(library(ordsets)).
:- use_module(library(modules), []).     % destroy_module/1 (cep_unload/1)
:- use_module(cep_values).
:- use_module(cep_fast).
:- use_module(cep_paths).      % called by compiled rules: cep_paths:cep_path/5
:- use_module(cep_contract).   % what a compiled rule set defines for this module

%!  cep_load(+Module, +ProgramText) is det.
%
%   Load a compiled rule set (its Prolog text) into Module once. Loading
%   again (the same module, whose name carries the hash of the rules) does
%   nothing, so a worker that gets the same rules twice never duplicates
%   clauses. A rule set that does not load cleanly raises an error instead
%   of running half a rule set; one that lacks a predicate the runtime
%   calls (cep_contract.pl) raises an error naming it. The text loaded
%   ends with the queries whose rows are values picked (answer_columns/2).
cep_load(Module, _Text) :-
    current_predicate(Module:'$cep_rules'/1),
    !.
cep_load(Module, Text) :-
    retractall(load_error_seen(_)),
    setup_call_cleanup(
        asserta((user:message_hook(Msg, error, _) :- cep_runtime:load_error(Msg)), Ref),
        setup_call_cleanup(
            ( string_concat(Text, "\n:- cep_runtime:note_answer_columns.\n", Loaded),
              open_string(Loaded, In) ),
            load_files(Module:Module, [stream(In), silent(true), optimise(true)]),
            close(In)),
        erase(Ref)),
    (   retract(load_error_seen(Error))
    ->  message_text(Error, Message),
        throw(error(cep_error(rules_do_not_load(Module, Message)), _))
    ;   \+ current_predicate(Module:'$cep_rules'/1)
    ->  throw(error(cep_error(not_a_rule_set(Module)), _))
    ;   cep_contract_missing(Module, Missing),
        Missing \== []
    ->  throw(error(cep_error(incomplete_rule_set(Module, Missing)), _))
    ;   true
    ).

:- dynamic load_error_seen/1.

%!  cep_unload(+Module) is det.
%
%   Drop a rule set cep_load/2 loaded and everything held under its
%   name: its clauses and goals, its band stores (in C), and the facts
%   other modules keep per rule set. The module itself is destroyed as
%   library(modules)' in_temporary_module/3 destroys its own (the rule set's text
%   makes it temporary: cep/compile/__init__.py), so a process that
%   makes engine after engine stays flat (Engine.close).
cep_unload(Module) :-
    cep_band_clear(Module),
    retractall(instant_answers(Module, _, _)),
    retractall(limit_of(Module, _, _, _)),
    cep_window:cep_window_forget(Module),    % loaded beside this module (cep/runtime/session.py)
    cep_service:cep_service_forget(Module),
    (   current_module(Module)
    ->  modules:destroy_module(Module)       % library(modules)' own, unexported
    ;   true
    ).

load_error(Msg) :-
    assertz(load_error_seen(Msg)),
    fail.

message_text(Msg, Text) :-
    (   catch(message_to_codes(Msg, [], Codes), _, fail)
    ->  string_codes(Text, Codes)
    ;   format(string(Text), "~q", [Msg])
    ).

%!  cep_load_background(+Module, +TriplesText) is det.
%
%   Load background knowledge (the RDFS closure of a background graph)
%   into Module as facts t(S, P, O), once: Module's name carries the hash
%   of the graph. TriplesText is in the format of an event batch
%   (prolog/cep_fast.c), so no term of it is read as Prolog code, and a
%   million triples load in seconds where consulting them as clauses
%   would take minutes.
cep_load_background(Module, Text) :-
    load_facts(Module, t, '$cep_background', Text).

%!  cep_load_instances(+Module, +TriplesText) is det.
%
%   Load the instance triples of a background graph's files (its triples
%   other than schema) into Module as facts i(S, P, O), once: the rule
%   sets that update the background (DELETE/INSERT rules) read them to
%   tell which triples of the closure a deletion takes away.
cep_load_instances(Module, Text) :-
    load_facts(Module, i, '$cep_instances', Text).

%   load_facts(+Module, +Name, +Flag, +TriplesText): Module:Name(S, P, O)
%   for every triple of the text, once (Flag marks it done); static once
%   loaded, as updates go elsewhere (an empty one stays dynamic: calling
%   it fails instead of raising).
load_facts(Module, _, Flag, _) :-
    current_predicate(Module:Flag/0),
    !.
load_facts(Module, Name, Flag, Text) :-
    dynamic(Module:Name/3),
    Head =.. [Name, S, P, O],
    forall(cep_batch_item(Text, 4611686018427387904, 1, false, e(S, P, O, _, _)),
           assertz(Module:Head)),
    (   predicate_property(Module:Head, number_of_clauses(N)), N > 0
    ->  compile_predicates([Module:Name/3])
    ;   true
    ),
    assertz(Module:Flag).

%!  cep_describe(+Module, +Kind, +Name, -TriplesText) is det.
%
%   The concise bounded description (DESCRIBE) of a resource in the
%   background facts of Module: the triples with it as subject, and those
%   of every blank node object they reach, recursively. Kind is iri (Name
%   the IRI) or bnode (Name the label). TriplesText holds one triple a
%   line, its terms in N-Triples separated by tabs (which N-Triples
%   escapes inside a literal and an IRI cannot hold).
cep_describe(Module, Kind, Name, Text) :-
    (   Kind == iri
    ->  S = Name
    ;   S = bn(Name)
    ),
    (   current_predicate(Module:t/3)
    ->  describe([S], [S], Module, Triples)
    ;   Triples = []
    ),
    with_output_to(string(Text), forall(member(t(A, B, C), Triples), write_described(A, B, C))).

describe([], _, _, []).
describe([S|Ss], Seen, M, Triples) :-
    findall(t(S, P, O), M:t(S, P, O), Own),
    findall(O, ( member(t(_, _, O), Own), O = bn(_), \+ memberchk(O, Seen) ), New0),
    sort(New0, New),
    append(Seen, New, Seen1),
    append(Ss, New, Todo),
    describe(Todo, Seen1, M, Rest),
    append(Own, Rest, Triples).

write_described(S, P, O) :-
    cep_nt(S, ST),
    cep_nt(P, PT),
    cep_nt(O, OT),
    format("~w\t~w\t~w\n", [ST, PT, OT]).

%!  cep_push(+Module, +EventsText, -AnswersText) is det.
%
%   Process a batch of events (complete groups, ordered by end time) and
%   return the answers of all its groups. An error of the rules' own
%   (cep_error) is thrown as cep_message(Text), its words for the user.
cep_push(Module, EventsText, AnswersText) :-
    match_room(Module),
    cep_reporting(findall(A, batch_answer(Module, EventsText, A), Answers)),
    (   current_predicate(Module:'$wfeed'/3)  % windows feed back: cep_feed/3 reads the last instant's answers
    ->  last_instant_answers(Module, Answers)
    ;   true
    ),
    answers_text(Answers, Module, AnswersText).

%!  cep_reporting(:Goal) is det.
%
%   Goal, with an error of the rules' own (cep_error) thrown as
%   cep_message(Text), its words for the user (cep/runtime/session.py
%   gives them as they are).
:- meta_predicate cep_reporting(0).
cep_reporting(Goal) :-
    catch(Goal, error(cep_error(E), C),
          ( phrase(prolog:message(error(cep_error(E), C)), Lines),
            with_output_to(string(Text0), print_message_lines(current_output, '', Lines)),
            split_string(Text0, "", "\n", [Text]),
            throw(cep_message(Text)) )).

%   The answers of a batch, instant by instant, in order: for each
%   instant the events' answers, then those of the deferred checks
%   (bottom-up), then the instant's end. One findall/3 over this collects
%   a whole batch; the items of the batch are made one at a time, on
%   backtracking. Before an instant, goals past their window are pruned
%   when the sweep period has passed (the paper's system-generated events).
batch_answer(M, EventsText, A) :-
    M:'$clock'(Next, Period),
    M:'$instant_ends'(Ends),
    cep_counted_item(EventsText, Next, Period, Ends, Item),
    item_answers(Item, M, A).

%   The answers of an item: an event, a sweep before an instant, an
%   instant's end. An event may make as many partial matches as the limit
%   (cep_match/3) set by the call that runs the rules (match_room/1), and
%   an instant's end as many for each event of the instant (its optional
%   checks take each solution of the instant in turn): the match room
%   (cep_fast:cep_room_item/1), which counts the items of a batch as
%   they are given (cep_counted_item/5) and these as they come.
item_answer(Item, M, A) :-
    cep_room_item(Item),
    item_answers(Item, M, A).

%!  cep_arrival(-Place) is det.
%
%   The place of the event being processed among the events of its
%   instant, in the order they came (1, 2, ...); 0 at the instant's end
%   (the triples rules derive then). A [TRIPLES n] window keeps the last
%   triples of its oldest instant by it (cep_window:cutoff/6).
cep_arrival(Place) :-
    cep_room_place(Place).

item_answers(e(S, P, O, Ts, Te), M, A) :-
    M:cep_event(S, P, O, Ts, Te, A).
item_answers(sweep(Te), M, A) :-
    (   absence_answer(M, Te, A)            % first: what fires before Te may join goals the sweep drops
    ;   sweep(M, Te),
        fail
    ).
item_answers(end(Te), M, A) :-
    M:'$deferred'(Strata),
    (   M:'$chaining'(true),
        derived_answer(M, Te, 0, A)
    ;   member(Nodes, Strata),
        stratum_answer(M, Te, Nodes, A)
    ;   M:'$end_group',
        fail
    ).

%   Rule chaining (the paper's Q-closure): the triples that CONSTRUCT
%   answers derived at an instant ('$queued', with their intervals) are
%   events of that instant too. They are fed back in rounds until a round
%   derives nothing new, first before the instant's optional checks, then
%   after each stratum of them (cep/algebra/chaining.py): the checks of a
%   stratum run once all it reads at the instant is derived, and again
%   while derived events leave them mandatory solutions to decide.
stratum_answer(M, Te, Nodes, A) :-
    (   member(N, Nodes),
        node_answer(N, M, Te, A)
    ;   M:'$chaining'(true),
        (   derived_answer(M, Te, 0, A)
        ;   once(( member(N, Nodes), M:'$waiting'(N) )),
            stratum_answer(M, Te, Nodes, A)
        )
    ).

%   At the end of an instant, in the order of the plan's nodes (bottom-up):
%   the deferred check of an optional operator, or the firing of the
%   NOTSEQ solutions whose deadline is the instant.
node_answer(fire(N), M, Te, A) :-
    !,
    M:'$absence_fire'(N, Te, A).
node_answer(N, M, Te, A) :-
    M:'$check'(N, Te, A).

%   Absence by a deadline (NOTSEQ): event time has passed every instant
%   before Limit, so the pending solutions whose deadline is before Limit
%   are answers. Each deadline D, earliest first, is an instant of its own
%   with no event: its firings and checks (end(D)), then its end. (A
%   deadline that is an instant of the stream fires at that instant's end,
%   after its events.)
absence_answer(M, Limit, A) :-
    M:'$absence_nodes'(Nodes),
    Nodes \== [],
    aggregate_all(min(D), ( member(N, Nodes), M:'$absence_next'(N, D) ), Due),
    Due < Limit,
    (   item_answer(end(Due), M, A)
    ;   absence_answer(M, Limit, A)
    ).

%!  cep_absence(+Module, +Limit, -Rows) is det.
%
%   The answers of the NOTSEQ deadlines before Limit (event time has
%   passed them with no event to process: a watermark, the end of the
%   stream), as rows r(Q, Start, End, Fields) for cep_window:cep_close/3.
cep_absence(M, Limit, Rows) :-
    match_room(M),
    findall(A, absence_answer(M, Limit, A), Answers),
    answer_rows(Answers, M, Rows, []).

%!  cep_feed(+Module, +Time, -Rows) is det.
%
%   The triples a window's evaluation at Time queued (cep_queue/7) are
%   events of the instant Time, fed back as rule chaining feeds an
%   instant's derived triples (event time has passed every instant
%   before Time and no later one); Rows are the answers they lead to, as
%   rows r(Q, Start, End, Fields) for cep_window:cep_close/3.
cep_feed(M, Te, Rows) :-
    match_room(M),
    findall(A, item_answer(end(Te), M, A), Answers0),
    (   retract(instant_answers(M, Te, Given)) -> true ; Given = [] ),
    keyed(Answers0, Keyed),
    findall(K-A, ( member(K-A, Keyed), \+ ord_memberchk(K, Given) ), New),
    pairs_keys_values(New, NewKeys, Answers),
    sort(NewKeys, Sorted),
    ord_union(Given, Sorted, Now),
    assertz(instant_answers(M, Te, Now)),
    answer_rows(Answers, M, Rows, []).

%   instant_answers(Module, Te, Keys): the answers already given at the
%   instant Te, the last one a push processed, while windows evaluated at
%   Te feed their triples back (cep_feed/3): a solution is answered once in
%   its instant (answer_rows/4), also when the fed triples find it again.
:- dynamic instant_answers/3.

last_instant_answers(M, Answers) :-
    retractall(instant_answers(M, _, _)),
    (   last(Answers, A)
    ->  arg(4, A, Te),
        findall(B, ( member(B, Answers), arg(4, B, Te) ), Last),
        keyed(Last, Keyed),
        pairs_keys(Keyed, Keys0),
        sort(Keys0, Keys),
        assertz(instant_answers(M, Te, Keys))
    ;   true
    ).

keyed(Answers, Keyed) :-
    findall(K-A, ( member(A, Answers), copy_term(A, K), numbervars(K, 0, _) ), Keyed).

derived_answer(M, Te, Round, A) :-
    findall(e(S, P, O, Ts), retract(M:'$queued'(S, P, O, Ts, _)), Events),
    Events \== [],
    derivation_rounds(Limit),
    (   Round >= Limit
    ->  derivation_error(M, rounds(Limit), Te)
    ;   true
    ),
    (   member(e(S, P, O, Ts), Events),
        M:cep_event(S, P, O, Ts, Te, A)
    ;   Next is Round + 1,
        derived_answer(M, Te, Next, A)
    ).

%   More rounds than this at one instant: a cycle of rules that computes
%   a new value each round (a counter), which would never end.
derivation_rounds(1000).

%!  cep_queue(+Module, +Rule, +S, +P, +O, +Ts, +Te) is det.
%
%   The CONSTRUCT rule of index Rule derived the triple (S, P, O) over
%   [Ts, Te] at the instant Te: it is queued to be fed back ('$queued'/5),
%   once per instant ('$derived'/6, first the triple's hash). New triples are counted per rule and
%   instant: past the rule set's limit (cep_set_limits/2), or with a value
%   whose N-Triples text is longer than its limit, the run stops with an
%   error that names the rules deriving at the instant, before a cycle of
%   rules that never ends (a new blank node or a new value every round)
%   takes all memory. Counted as they come, so a single round that
%   explodes stops too.
cep_queue(M, Q, S, P, O, Ts, Te) :-
    term_hash(t(S, P, O, Ts), H),           % the first argument: always indexed well
    (   M:'$derived'(H, S, P, O, Ts, Te)
    ->  true
    ;   limits(M, Most, Chars, _),
        (   member(V, [S, P, O]),
            \+ value_fits(V, Chars)
        ->  derivation_error(M, value(Chars, Q), Te)
        ;   true
        ),
        count_derived(M, Q, Te, Total),
        (   Total > Most
        ->  derivation_error(M, triples(Most), Te)
        ;   true
        ),
        assertz(M:'$derived'(H, S, P, O, Ts, Te)),
        assertz(M:'$queued'(S, P, O, Ts, Te))
    ).

value_fits(V, Chars) :-
    (   atom(V)                             % an IRI: <...>
    ->  atom_length(V, N)
    ;   cep_nt(V, Text),
        string_length(Text, N)
    ),
    N =< Chars.

%   The count of an instant's derived triples is a global variable of the
%   module, derived(Te, Total, N0, N1, ...), Nq the count of the rule of
%   index q: one fact retracted and asserted per triple would leave a chain
%   of erased clauses that every later retract walks while the instant's
%   answers are being collected. The term is made once and changed in
%   place, its arguments small integers (and the atom none): setting the
%   variable to a new term would freeze the global stack above all the
%   call had put there (match_room/1).
count_derived(M, Q, Te, Total) :-
    derived_counts(M, D),
    (   arg(1, D, Te)
    ->  arg(2, D, Total0)
    ;   nb_setarg(1, D, Te),
        functor(D, _, Arity),
        forall(between(3, Arity, I), nb_setarg(I, D, 0)),
        Total0 = 0
    ),
    Total is Total0 + 1,
    nb_setarg(2, D, Total),
    I is Q + 3,
    arg(I, D, N0),
    N is N0 + 1,
    nb_setarg(I, D, N).

derived_counts(M, D) :-
    atom_concat('$cep_derived:', M, Key),
    (   nb_current(Key, D)
    ->  true
    ;   (   aggregate_all(max(Q), M:'$rule'(Q, _), Last)
        ->  Rules is Last + 1
        ;   Rules = 0
        ),
        length(Counts, Rules),
        maplist(=(0), Counts),
        D0 =.. [derived, none, 0|Counts],
        nb_setval(Key, D0),
        nb_getval(Key, D)
    ).

%   derivation_error(+Module, +What, +Te): the rules that derived triples
%   at the instant Te (name-count pairs, most first) in the error.
derivation_error(M, What, Te) :-
    derived_counts(M, D),
    findall(N-Name, ( arg(1, D, Te), M:'$rule'(Q, Name), I is Q + 3, arg(I, D, N), N > 0 ), Pairs),
    sort(0, @>=, Pairs, Sorted),
    findall(Name-N, member(N-Name, Sorted), Rules),
    (   What = value(Chars, Q), M:'$rule'(Q, Name)
    ->  What1 = value(Chars, Name)
    ;   What1 = What
    ),
    throw(error(cep_error(derivation_limit(What1, Rules, Te)), _)).

%!  cep_set_limits(+Module, +Text) is det.
%
%   The limits of a loaded rule set (cep/limits.py), Text "Derived
%   ValueChars PartialMatches": the most triples its CONSTRUCT rules
%   derive at one instant, the most characters of the N-Triples text of
%   a value of a derived triple, and the most partial matches one event
%   (or one instant's end) makes (cep_match/3).
cep_set_limits(M, Text) :-
    split_string(Text, " ", "", Parts),
    maplist(number_string, [Most, Chars, Matches], Parts),
    retractall(limit_of(M, _, _, _)),
    assertz(limit_of(M, Most, Chars, Matches)).

:- dynamic limit_of/4.

%   The limits of rule set M; an error where none were set, never a
%   failure (which would lose the batch's answers without a word).
limits(M, Most, Chars, Matches) :-
    (   limit_of(M, Most, Chars, Matches)
    ->  true
    ;   throw(error(existence_error(cep_limits, M), _))
    ).

%!  cep_match(+Queries, +End, +Weight) is det.
%
%   The compiled rules made a partial match, ending at End, of a part of
%   Queries (an atom, their names): a solution stored to be joined with
%   later ones, or kept for a window's evaluation (the emitters of
%   cep/compile/program.py). Counted, Weight for its size (one per 32
%   variables, cep.limits.MATCH_VARIABLES), against the room left to the item
%   being processed (item_answer/3), so that patterns whose matches
%   multiply with each event (parts that share no variable, a pattern
%   repeated) stop with an error before the goal stores, which no Prolog
%   stack bounds, take all memory. The room (cep_fast:cep_room_take/1)
%   is the process's: one call runs the rules at a time in a process,
%   and each sets it (match_room/1).
cep_match(Queries, Te, Weight) :-
    (   cep_room_take(Weight)
    ->  true
    ;   cep_room_most(Most),
        throw(error(cep_error(match_limit(Most, Queries, Te)), _))
    ).

match_room(M) :-
    limits(M, _, _, Most),
    cep_room_reset(Most).

%!  cep_skolem(+Key, -BlankNode) is det.
%
%   The blank node of a CONSTRUCT template for Key: k(Query, Label,
%   TemplateValues, Start, End). The same derivation always names the same
%   node, so a rule set that derives again what it derived at the same
%   instant (a cycle) derives nothing new and ends, and the fed-back triples
%   are those the answer shows.
cep_skolem(Key, bn(Label)) :-
    variant_sha1(Key, Hash),
    sub_atom(Hash, 0, 16, _, Short),
    atom_concat(sk, Short, Label).

sweep(M, Te) :-
    M:'$sweep'(M, Te),
    M:'$clock'(_, Period),
    Next is Te + Period,
    retractall(M:'$clock'(_, _)),
    assertz(M:'$clock'(Next, Period)).

%!  cep_advance(+Module, +NowText, -Pending:string) is det.
%
%   Event time has reached Now (a watermark) with no event to process:
%   prune the goals past their window, as the sweep before an event at
%   Now would. Pending is "true" while a goal (a partial match) is still
%   stored, else "false" (the Spark engine then drops the group's state).
cep_advance(M, NowText, Pending) :-
    number_string(Now, NowText),
    (   M:'$clock'(Next, _), Now >= Next
    ->  sweep(M, Now)
    ;   true
    ),
    (   pending(M)
    ->  Pending = "true"
    ;   Pending = "false"
    ).

%   A goal store or band list holds a fact (the '$' predicates are the
%   module's bookkeeping: the clock, expired generations, distinct answers),
%   or a band store of the C library a goal.
pending(M) :-
    cep_band_pending(M),
    !.
pending(M) :-
    state_predicate(M, Head),
    functor(Head, Name, _),
    \+ sub_atom(Name, 0, _, _, '$'),
    clause(M:Head, true),
    !.

%   A batch's answers ans(QueryIndex, Values, Start, End), those of one
%   instant next to each other (they share their End) -> their lines
%   (cep_answer_text/2). The C library makes them in one pass: the lines
%   of each instant whose answers' queries project by picking values
%   (answer_columns/2) itself, those of any other instant from its rows
%   made here (instant_rows/4), so no instant is made twice. Without the
%   library all are made rows first, here.
answers_text(Answers, M, Text) :-
    (   answer_columns(M, Columns),
        cep_answers_text(Answers, Columns, instant_rows_of(M), Text)
    ->  true
    ;   answer_rows(Answers, M, Rows, []),
        cep_answer_text(Rows, Text)
    ).

instant_rows_of(M, Answers, Rows) :-
    instant_rows(Answers, M, Rows, []).

%   answer_columns(+Module, -Columns): Q-(Name/Arity-Indexes) for each
%   query of Module whose rows are its solutions' values picked
%   (cep_fast:cep_answers_text/4): its '$project'/5 is one clause with no
%   goal, whose Values term Name/Arity has distinct variables for
%   arguments, and whose fields are each one of them (Indexes gives its
%   argument) or a variable of none (0, unbound). Not a DISTINCT query:
%   its rows are made a set after the projection (distinct_rows/3).
%   Worked out once, when the rule set is loaded (cep_load/2), and kept
%   in its module ('$answer_columns'/1), which it goes with.
answer_columns(M, Columns) :-
    (   current_predicate(M:'$answer_columns'/1)
    ->  M:'$answer_columns'(Columns)
    ;   picked_queries(M, Columns)
    ).

%   The last directive of a rule set's text (cep_load/2): its columns, a
%   clause of its source, which is unloaded with it.
note_answer_columns :-
    prolog_load_context(module, M),
    picked_queries(M, Columns),
    compile_aux_clauses(['$answer_columns'(Columns)]).

picked_queries(M, Columns) :-
    findall(Q-Body-p(V, Ts, Te, Fields), clause(M:'$project'(Q, V, Ts, Te, Fields), Body), Clauses),
    findall(Q-(Name/Arity-Indexes),
            ( append(Before, [Q-true-p(V, Ts, Te, Fields)|After], Clauses),
              integer(Q),
              \+ memberchk(Q-_-_, Before),     % its only clause
              \+ memberchk(Q-_-_, After),
              \+ ( current_predicate(M:'$distinct'/1),   % (one that lacks it is not loaded: cep_load/2)
                   M:'$distinct'(Q) ),
              picked_columns(V, Ts, Te, Fields, Name, Arity, Indexes) ),
            Columns).

picked_columns(V, Ts, Te, Fields, Name, Arity, Indexes) :-
    (   atom(V)
    ->  Name = V, Arity = 0, Args = []
    ;   compound(V),
        compound_name_arguments(V, Name, Args),
        length(Args, Arity)
    ),
    maplist(var, Args),
    term_variables(Args, Distinct),
    length(Distinct, Arity),
    is_list(Fields),
    maplist(picked_column(Args, Ts, Te), Fields, Indexes).

picked_column(Args, Ts, Te, Field, Index) :-
    var(Field),
    Field \== Ts,
    Field \== Te,
    (   nth1(I, Args, A), A == Field
    ->  Index = I
    ;   Index = 0
    ).

%   ... the same in Prolog -> rows r(Q, Start, End, Fields), projected,
%   and distinct within their instant.
answer_rows([], _, Rows, Rows).
answer_rows([A|As], M, Rows0, Rows) :-
    arg(4, A, Te),
    (   As = [B|_], arg(4, B, Te)
    ->  same_instant(As, Te, Same, Rest),
        instant_rows([A|Same], M, Rows0, Rows1)
    ;   Rest = As,                          % the common case: one answer
        project_rows([A], M, Rows0, Rows1)
    ),
    answer_rows(Rest, M, Rows1, Rows).

same_instant([A|As], Te, [A|Same], Rest) :-
    arg(4, A, Te),
    !,
    same_instant(As, Te, Same, Rest).
same_instant(Rest, _, [], Rest).

instant_rows(Answers, M, Rows0, Rows) :-
    distinct_terms(Answers, Unique),
    project_rows(Unique, M, Rows1, []),
    distinct_rows(M, Rows1, Rows2),
    append(Rows2, Rows, Rows0).

project_rows([], _, Rows, Rows).
project_rows([ans(Q, V, Ts, Te)|As], M, [r(Q, Ts, Te, Fields)|Rows0], Rows) :-
    M:'$project'(Q, V, Ts, Te, Fields),
    project_rows(As, M, Rows0, Rows).

%!  cep_static(+Module, +TimeText, -AnswersText) is det.
%
%   The answers of the solutions found in the background alone
%   ('$static'/2, cep/compile/static.py), which no event makes: answered
%   once, at the first instant of the stream (TimeText), in the format of
%   cep_push/3.
cep_static(M, TimeText, Text) :-
    number_string(T, TimeText),
    (   current_predicate(M:'$static'/2)    % a rule set with a query over static data
    ->  findall(ans(Q, V, T, T), M:'$static'(Q, V), Answers)
    ;   Answers = []
    ),
    answer_rows(Answers, M, Rows, []),
    cep_answer_text(Rows, Text).

%   Solutions are sets (paper 4.2): two derivations of the same binding and
%   interval are one solution. Unbound variables compare as equal. The
%   result is in the standard order of terms (so grouped by query). Ground
%   terms (the common case) are their own keys: sorted as they are, with no
%   copy made.
distinct_terms(Terms, Unique) :-
    (   ground(Terms)
    ->  sort(0, @<, Terms, Unique)
    ;   findall(K-T, (member(T, Terms), copy_term(T, K), numbervars(K, 0, _)), Keyed),
        sort(1, @<, Keyed, UniqueKeyed),
        pairs_values(UniqueKeyed, Unique)
    ).

%   SELECT DISTINCT: equal rows of a DISTINCT query's group are one row.
distinct_rows(M, Rows0, Rows) :-
    (   M:'$distinct'(_)
    ->  partition(distinct_row(M), Rows0, Distinct0, Others),
        distinct_terms(Distinct0, Distinct),
        append(Others, Distinct, Rows1),
        sort(1, @=<, Rows1, Rows)           % stable: grouped by query again
    ;   Rows = Rows0
    ).

distinct_row(M, r(Q, _, _, _)) :-
    M:'$distinct'(Q).

%!  cep_expire(+Module, +Store, +Window, +P, +Now) is det.
%
%   Drop the goals of a windowed store that no solution from Now on can
%   use. A goal of Store (Module:Store/5, see cep/compile/program.py) is
%   in generation Start div P; every goal of generation G started before
%   (G+1)*P, so when (G+1)*P =< Now - Window its start is more than Window
%   before Now, and it can join nothing more: a solution made with it
%   spans its interval (cep/compile/steps.py, _generation). Whole
%   generations go at once (retractall/1 on the generation argument), so
%   expiry costs no Prolog work per goal. '$expired'(Store, G) remembers
%   the last generation dropped; after a jump in time the few generations
%   in between are dropped one by one, or the store is scanned once.
cep_expire(M, Store, Window, P, Now) :-
    Max is (Now - Window) div P - 1,
    functor(Goal, Store, 5),
    arg(2, Goal, G),
    (   M:'$expired'(Store, Last)
    ->  true
    ;   Last = none
    ),
    (   Last \== none, Max =< Last
    ->  true
    ;   (   Last \== none, Max - Last =< 16
        ->  First is Last + 1,
            forall(between(First, Max, G), retractall(M:Goal))
        ;   forall(( clause(M:Goal, true, Ref), G =< Max ), erase(Ref))
        ),
        retractall(M:'$expired'(Store, _)),
        assertz(M:'$expired'(Store, Max))
    ).

%!  cep_band_expire(+Module, +Store, +Bands, +Window, +P, +Now) is det.
%
%   cep_expire/5 for a band store (cep_fast.pl, cep_band_add/8): the C
%   library drops the generations past the window itself; without it the
%   store's facts are pruned as any store's, and then the bands whose
%   goals have all expired are forgotten.
cep_band_expire(M, Store, Bands, Window, P, Now) :-
    Max is (Now - Window) div P - 1,
    (   cep_band_drop(M, Store, Max)
    ->  true
    ;   cep_expire(M, Store, Window, P, Now),
        functor(Goal, Store, 5),
        arg(1, Goal, HB),
        Band =.. [Bands, H, B],
        forall(( M:Band, cep_band_key(H, B, HB), \+ M:Goal ),
               retract(M:Band))
    ).

%!  cep_seq_expire(+Module, +Store, +Window, +P, +Now) is det.
%
%   cep_expire/5 for a plain SEQ store (cep_fast.pl, cep_seq_add/7): the
%   C library drops the generations past the window itself; without it
%   the store's facts are pruned as any store's.
cep_seq_expire(M, Store, Window, P, Now) :-
    Max is (Now - Window) div P - 1,
    (   cep_seq_drop(M, Store, Max)
    ->  true
    ;   cep_expire(M, Store, Window, P, Now)
    ).

%!  cep_dump(+Module, -State:string) is det.
%!  cep_restore(+Module, +State:string) is det.
%
%   The state of a loaded rule set: every fact of its dynamic predicates
%   (goal stores, band lists, the sweep clock, expired generations; the
%   goals of the C library's stores in the same form) as one
%   string of bytes (fast_term_serialized/2, which keeps rationals, big
%   integers and strings exact; it is read by the same SWI-Prolog version).
%   cep_restore/2 replaces the module's facts by those of State. The Spark
%   engine keeps a group's State in Spark's state store between batches.
cep_dump(M, State) :-
    findall(Fact, ( state_predicate(M, Fact), \+ band_fact(M, Fact), clause(M:Fact, true) ), Facts0),
    cep_band_goals(M, Goals),               % band stores, in one form with the C library or without (cep_fast.pl)
    cep_seq_goals(M, SeqFacts),             % plain stores: the library's goals as their facts
    append([Facts0, Goals, SeqFacts], Facts),
    fast_term_serialized(Facts, State).

cep_restore(M, State) :-
    fast_term_serialized(Facts, State),
    forall(state_predicate(M, Fact), retractall(M:Fact)),
    cep_band_clear(M),
    forall(member(Fact, Facts), restore_fact(M, Fact)).

restore_fact(M, band_goals(Store, Bands, H, _Band, Goals)) :-   % the band follows from each goal's values
    !,
    forall(member(g(G, V, Ts, Te), Goals),
           cep_band_add(M, Store, Bands, H, G, V, Ts, Te)).
restore_fact(M, Fact) :-
    functor(Fact, Store, 5),
    M:'$seq_store'(Store),                  % a plain store: the C library's where it is built
    !,
    Fact =.. [Store, H, G, V, Ts, Te],
    cep_seq_add(M, Store, H, G, V, Ts, Te).
restore_fact(M, Fact) :-
    assertz(M:Fact).

band_fact(M, Head) :-
    functor(Head, Name, _),
    (   cep_band_store(M, Name, _)
    ->  true
    ;   cep_band_store(M, _, Name)
    ).

state_predicate(M, Head) :-
    current_predicate(_, M:Head),
    \+ predicate_property(M:Head, imported_from(_)),
    predicate_property(M:Head, dynamic).

%!  cep_not(+A, -R) is semidet.
%
%   SPARQL's ! over true, false and error (SPARQL 17.2): fails where the
%   result is an error. (&& and || are compiled as n-ary operators:
%   cep_in/2 is ||, cep/compile/expr.py.)
cep_not(true, false).
cep_not(false, true).

%!  cep_in(+Tests, -R) is semidet.
%!  cep_notin(+Tests, -R) is semidet.
%
%   IN over the results (true, false, error) of its = tests: true if one
%   is true, else an error (failure) if one is an error, else false.
cep_in(Tests, R) :-
    (   memberchk(true, Tests)
    ->  R = true
    ;   \+ memberchk(error, Tests),
        R = false
    ).

cep_notin(Tests, R) :-
    cep_in(Tests, B),
    cep_not(B, R).

:- multifile prolog:message//1.
prolog:message(error(cep_error(rules_do_not_load(Module, Message)), _)) -->
    [ 'cep: the compiled rule set ~w does not load: ~w'-[Module, Message] ].
prolog:message(error(cep_error(bad_event_batch(What)), _)) -->
    [ 'cep: malformed event batch: ~w'-[What] ].
prolog:message(error(cep_error(derivation_limit(What, Rules, Te)), _)) -->
    { Stamp is Te / 1000.0, stamp_date_time(Stamp, Date, 'UTC'),
      format_time(atom(At), '%FT%T%:z', Date),
      findall(Text, ( member(Name-N, Rules),
                      format(string(Text), "~w (~D new triples)", [Name, N]) ), Texts),
      atomic_list_concat(Texts, ', ', Derived) },
    derivation_limit(What, At, Derived).
prolog:message(error(cep_error(match_limit(Most, Queries, Te)), _)) -->
    { Stamp is Te / 1000.0, stamp_date_time(Stamp, Date, 'UTC'),
      format_time(atom(At), '%FT%T.%3f%:z', Date) },
    [ 'at ~w one event made more than ~D partial matches of ~w, the limit of one event '-[At, Most, Queries],
      '(or of the end of an instant): the query matches each new event with many stored partial ',
      'matches (parts that share no variable, a pattern repeated), so they multiply with each ',
      'event. Join its parts on shared variables or bound them in time (WITHIN, a window); if ',
      'the query does need more, raise the limit: cep run --max-partial-matches, ',
      'cep.limits.Limits.partial_matches (a match of more than 32 variables counts once per 32)' ].
prolog:message(error(cep_error(not_a_rule_set(Module)), _)) -->
    [ 'cep: the text loaded as ~w is not a compiled rule set'-[Module] ].
prolog:message(error(cep_error(incomplete_rule_set(Module, Missing)), _)) -->
    [ 'cep: the compiled rule set ~w lacks ~q, which the runtime calls (prolog/cep_contract.pl)'-[Module, Missing] ].

derivation_limit(rounds(Limit), At, Derived) -->
    [ 'at ~w the CONSTRUCT rules ~w derived new triples for ~D rounds: '-[At, Derived, Limit],
      'a cycle of rules that computes a new value each round never ends' ].
derivation_limit(triples(Most), At, Derived) -->
    [ 'at ~w the CONSTRUCT rules ~w derived more than ~D triples, the limit '-[At, Derived, Most],
      'of one instant: a cycle of rules that derives a new blank node or a new value each round ',
      'never ends (if the rules do need more, raise the limit: cep run --max-derived, ',
      'cep.limits.Limits.derived)' ].
derivation_limit(value(Chars, Name), At, _) -->
    [ 'at ~w the CONSTRUCT rule ~w derived a value longer than ~D characters: '-[At, Name, Chars],
      'a cycle of rules that grows a value each round never ends (the limit is ',
      'cep.limits.Limits.derived_value_chars)' ].
