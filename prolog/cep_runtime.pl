/*  The event-driven runtime of compiled EP-SPARQL rule sets.

    A rule set is compiled (cep/compile) into a module of its own whose
    clauses are the paper's event-driven backward-chaining rules: leaf rules
    that match triples, goal-insertion rules that store partial solutions
    (goals) and checking rules that combine a new solution with the stored
    goals (paper, rules (10)-(15)). This module drives them:

    - a batch of events arrives as one text of terms e(S,P,O,Start,End),
      ordered by End; events with the same End form one *group* (they are
      simultaneous: SEQ does not join them, EQUALS can);
    - each event of a group triggers the leaf rules; at the end of the group
      the deferred checks of the optional operators run (bottom-up), the
      group's answers are deduplicated (solutions are sets, paper 4.2),
      projected and written as lines, and group-scoped goals are dropped;
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
            cep_push/3,          % +Module, +EventsText, -AnswersText
            cep_answer/4,        % +QueryIndex, +Values, +Start, +End
            cep_and/3,           % +B1, +B2, -B
            cep_or/3,            % +B1, +B2, -B
            cep_not/2,           % +B, -NotB
            cep_key/2            % +KeyTerm, -Hash
          ]).

:- use_module(library(lists)).
:- use_module(cep_values).

:- dynamic ans/4.   % ans(QueryIndex, Values, Start, End): the open group's answers

%!  cep_load(+Module, +ProgramText) is det.
%
%   Load a compiled rule set (its Prolog text) into Module once. Loading
%   again (the same module, whose name carries the hash of the rules) does
%   nothing, so a worker that gets the same rules twice never duplicates
%   clauses.
cep_load(Module, _Text) :-
    current_predicate(Module:'$cep_rules'/1),
    !.
cep_load(Module, Text) :-
    setup_call_cleanup(
        asserta((user:message_hook(Msg, error, _) :- cep_runtime:load_error(Msg)), Ref),
        setup_call_cleanup(
            open_string(Text, In),
            load_files(Module:Module, [stream(In), silent(true)]),
            close(In)),
        erase(Ref)),
    (   retract(load_error_seen(Error))
    ->  retractall(load_error_seen(_)),
        message_to_codes(Error, Codes),
        throw(error(cep_error(rules_do_not_load(Module, Codes)), _))
    ;   current_predicate(Module:'$cep_rules'/1)
    ->  true
    ;   throw(error(cep_error(not_a_rule_set(Module)), _))
    ).

:- dynamic load_error_seen/1.

%   A compiled rule set that does not load cleanly is a bug of the
%   compiler: fail loudly instead of running half a rule set.
load_error(Msg) :-
    assertz(load_error_seen(Msg)),
    fail.

message_to_codes(Msg, Codes) :-
    message_to_codes(Msg, [], Codes0),
    !,
    Codes = Codes0.
message_to_codes(Msg, Codes) :-
    format(codes(Codes), "~q", [Msg]).

%!  cep_push(+Module, +EventsText, -AnswersText) is det.
%
%   Process a batch of events (complete groups, ordered by end time) and
%   return the answers of all groups it closes.
cep_push(Module, EventsText, AnswersText) :-
    setup_call_cleanup(
        open_string(EventsText, In),
        read_events(In, Module, none, Lines, []),
        close(In)),
    atomic_list_concat(Lines, AnswersText0),
    atom_string(AnswersText0, AnswersText).

%   Lines is a difference list of answer lines (text ending in a newline).
read_events(In, M, Open, Lines0, Lines) :-
    read_term(In, Term, []),
    (   Term == end_of_file
    ->  close_group(M, Open, Lines0, Lines)
    ;   Term = e(S, P, O, Ts, Te),
        (   Open == Te
        ->  Lines1 = Lines0
        ;   close_group(M, Open, Lines0, Lines1),
            open_group(M, Te)
        ),
        M:cep_event(S, P, O, Ts, Te),
        read_events(In, M, Te, Lines1, Lines)
    ).

open_group(M, Te) :-
    M:'$clock'(Next, Period),
    (   Te >= Next
    ->  M:'$sweep'(Te),
        Next1 is Te + Period,
        retractall(M:'$clock'(_, _)),
        assertz(M:'$clock'(Next1, Period))
    ;   true
    ).

close_group(_, none, Lines, Lines) :- !.
close_group(M, _Te, Lines0, Lines) :-
    M:'$deferred'(Nodes),
    forall(member(N, Nodes), M:'$check'(N)),
    M:'$end_group',
    answer_lines(M, Lines0, Lines).

%!  cep_answer(+QueryIndex, +Values, +Start, +End) is det.
%
%   Called by a query's root node: keep the solution until its group closes.
cep_answer(Q, V, Ts, Te) :-
    assertz(ans(Q, V, Ts, Te)).

answer_lines(M, Lines0, Lines) :-
    retract(ans(Q, V, Ts, Te)),
    !,
    (   ans(_, _, _, _)
    ->  findall(Q1-s(V1, Ts1, Te1), retract(ans(Q1, V1, Ts1, Te1)), Rest),
        keysort([Q-s(V, Ts, Te)|Rest], Sorted),
        group_pairs_by_key(Sorted, ByQuery),
        foldl(query_lines(M), ByQuery, Lines0, Lines)
    ;   query_lines(M, Q-[s(V, Ts, Te)], Lines0, Lines)   % the common case: one answer
    ).
answer_lines(_, Lines, Lines).

query_lines(M, Q-Sols, Lines0, Lines) :-
    distinct_solutions(Sols, Unique),
    findall(Fields-Ts-Te,
            ( member(s(V, Ts, Te), Unique),
              M:'$project'(Q, V, Ts, Te, Fields)
            ),
            Rows0),
    (   M:'$distinct'(Q)
    ->  distinct_rows(Rows0, Rows)
    ;   Rows = Rows0
    ),
    foldl(row_line(Q), Rows, Lines0, Lines).

row_line(Q, Fields-Ts-Te, [Line|Lines], Lines) :-
    field_parts(Fields, Parts),
    atomic_list_concat([Q, '\t', Ts, '\t', Te|Parts], Line).

field_parts([], ['\n']).
field_parts([F|Fs], ['\t', Text|Parts]) :-
    (   var(F)
    ->  Text = ''
    ;   cep_nt(F, Text)
    ),
    field_parts(Fs, Parts).

%   Solutions are sets (paper 4.2): two derivations of the same binding and
%   interval are one solution. Unbound variables compare as equal.
distinct_solutions([S], [S]) :- !.
distinct_solutions(Sols, Unique) :-
    findall(K-S, (member(S, Sols), copy_term(S, K), numbervars(K, 0, _)), Keyed),
    sort(1, @<, Keyed, UniqueKeyed),
    pairs_values(UniqueKeyed, Unique).

distinct_rows(Rows, Unique) :-
    findall(K-R, (member(R, Rows), copy_term(R, K), numbervars(K, 0, _)), Keyed),
    sort(1, @<, Keyed, UniqueKeyed),
    pairs_values(UniqueKeyed, Unique0),
    msort(Unique0, Unique).

%!  cep_key(+KeyTerm, -Hash) is det.
%
%   The index key of a goal store: a hash of the join variables' values.
cep_key(K, H) :- term_hash(K, H).

%!  cep_and(+A, +B, -R) is semidet.
%!  cep_or(+A, +B, -R) is semidet.
%!  cep_not(+A, -R) is semidet.
%
%   SPARQL's three-valued logic over true, false and error (SPARQL 17.2):
%   fails where the result is an error.
cep_and(true, true, true).
cep_and(false, _, false).
cep_and(true, false, false).
cep_and(error, false, false).

cep_or(true, _, true).
cep_or(false, true, true).
cep_or(error, true, true).
cep_or(false, false, false).

cep_not(true, false).
cep_not(false, true).

:- multifile prolog:message//1.
prolog:message(error(cep_error(rules_do_not_load(Module, Codes)), _)) -->
    [ 'cep: the compiled rule set ~w does not load: ~s'-[Module, Codes] ].
prolog:message(error(cep_error(not_a_rule_set(Module)), _)) -->
    [ 'cep: the text loaded as ~w is not a compiled rule set'-[Module] ].
