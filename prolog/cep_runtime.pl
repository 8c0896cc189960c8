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
            cep_push/3,          % +Module, +EventsText, -AnswersText
            cep_and/3,           % +B1, +B2, -B
            cep_or/3,            % +B1, +B2, -B
            cep_not/2,           % +B, -NotB
            cep_in/2,            % +Bs, -B
            cep_notin/2,         % +Bs, -B
            cep_key/2            % +KeyTerm, -Hash
          ]).

:- use_module(library(lists)).
:- use_module(library(apply)).
:- use_module(library(pairs)).
:- use_module(cep_values).

%!  cep_load(+Module, +ProgramText) is det.
%
%   Load a compiled rule set (its Prolog text) into Module once. Loading
%   again (the same module, whose name carries the hash of the rules) does
%   nothing, so a worker that gets the same rules twice never duplicates
%   clauses. A rule set that does not load cleanly raises an error instead
%   of running half a rule set.
cep_load(Module, _Text) :-
    current_predicate(Module:'$cep_rules'/1),
    !.
cep_load(Module, Text) :-
    retractall(load_error_seen(_)),
    setup_call_cleanup(
        asserta((user:message_hook(Msg, error, _) :- cep_runtime:load_error(Msg)), Ref),
        setup_call_cleanup(
            open_string(Text, In),
            load_files(Module:Module, [stream(In), silent(true), optimise(true)]),
            close(In)),
        erase(Ref)),
    (   retract(load_error_seen(Error))
    ->  message_text(Error, Message),
        throw(error(cep_error(rules_do_not_load(Module, Message)), _))
    ;   current_predicate(Module:'$cep_rules'/1)
    ->  true
    ;   throw(error(cep_error(not_a_rule_set(Module)), _))
    ).

:- dynamic load_error_seen/1.

load_error(Msg) :-
    assertz(load_error_seen(Msg)),
    fail.

message_text(Msg, Text) :-
    (   catch(message_to_codes(Msg, [], Codes), _, fail)
    ->  string_codes(Text, Codes)
    ;   format(string(Text), "~q", [Msg])
    ).

%!  cep_push(+Module, +EventsText, -AnswersText) is det.
%
%   Process a batch of events (complete groups, ordered by end time) and
%   return the answers of all its groups.
cep_push(Module, EventsText, AnswersText) :-
    decode_events(EventsText, Events),
    groups(Events, Groups),
    findall(A, group_answer(Module, Groups, A), Answers),
    answer_lines(Answers, Module, Lines, []),
    atomics_to_string(Lines, AnswersText).

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
same_end(Rest, _, [], Rest).

%   The answers of a batch, group by group, in order: for each group the
%   events' answers, then those of the deferred checks (bottom-up), then the
%   group's end. One findall/3 over this collects a whole batch.
group_answer(M, Groups, A) :-
    M:'$deferred'(Nodes),
    member(Te-Group, Groups),
    (   open_group(M, Te),
        fail
    ;   member(e(S, P, O, Ts, _), Group),
        M:cep_event(S, P, O, Ts, Te, A)
    ;   member(N, Nodes),
        M:'$check'(N, A)
    ;   M:'$end_group',
        fail
    ).

%   Before the first event of an instant: prune goals past their window
%   when the sweep period has passed (the paper's system-generated events).
open_group(M, Te) :-
    M:'$clock'(Next, Period),
    (   Te >= Next
    ->  M:'$sweep'(Te),
        Next1 is Te + Period,
        retractall(M:'$clock'(_, _)),
        assertz(M:'$clock'(Next1, Period))
    ;   true
    ).

%   A batch's answers ans(QueryIndex, Values, Start, End), those of one
%   group next to each other (they share their End) -> text pieces.
answer_lines([], _, Lines, Lines).
answer_lines([A|As], M, Lines0, Lines) :-
    arg(4, A, Te),
    (   As = [B|_], arg(4, B, Te)
    ->  same_instant(As, Te, Same, Rest),
        group_lines([A|Same], M, Lines0, Lines1)
    ;   Rest = As,                          % the common case: one answer
        A = ans(Q, V, Ts, Te),
        M:'$project'(Q, V, Ts, Te, Fields),
        row_line(Q, Fields, Ts, Te, Lines0, Lines1)
    ),
    answer_lines(Rest, M, Lines1, Lines).

same_instant([A|As], Te, [A|Same], Rest) :-
    arg(4, A, Te),
    !,
    same_instant(As, Te, Same, Rest).
same_instant(Rest, _, [], Rest).

group_lines(Answers, M, Lines0, Lines) :-
    distinct_terms(Answers, Unique),
    findall(r(Q, Fields, Ts, Te),
            ( member(ans(Q, V, Ts, Te), Unique),
              M:'$project'(Q, V, Ts, Te, Fields)
            ), Rows0),
    distinct_rows(M, Rows0, Rows),
    foldl(row_line, Rows, Lines0, Lines).

%   Solutions are sets (paper 4.2): two derivations of the same binding and
%   interval are one solution. Unbound variables compare as equal. The
%   result is in the standard order of terms (so grouped by query).
distinct_terms(Terms, Unique) :-
    findall(K-T, (member(T, Terms), copy_term(T, K), numbervars(K, 0, _)), Keyed),
    sort(1, @<, Keyed, UniqueKeyed),
    pairs_values(UniqueKeyed, Unique).

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

row_line(r(Q, Fields, Ts, Te), Lines0, Lines) :-
    row_line(Q, Fields, Ts, Te, Lines0, Lines).

%   A row's parts go straight into the batch's list of text pieces; one
%   atomics_to_string/2 at the end makes the answer text.
row_line(Q, Fields, Ts, Te, [Q, '\t', Ts, '\t', Te|Parts], Lines) :-
    field_parts(Fields, Parts, Lines).

field_parts([], ['\n'|Lines], Lines).
field_parts([F|Fs], ['\t', Text|Parts], Lines) :-
    (   var(F)
    ->  Text = ''
    ;   cep_nt(F, Text)
    ),
    field_parts(Fs, Parts, Lines).

%!  decode_events(+Text, -Events) is det.
%
%   A batch's text (see prolog/cep_fast.c for the format) as a list of
%   e(S, P, O, Start, End). The C library does this where it was built;
%   the Prolog version below is the same decoder, slower.
decode_events(Text, Events) :-
    fast_decoder,
    !,
    cep_decode_events(Text, Events).
decode_events(Text, Events) :-
    split_string(Text, "\n", "", Lines),
    foldl(decode_line, Lines, Events, []).

decode_line("", Events, Events) :- !.
decode_line(Line, [e(S, P, O, Ts, Te)|Events], Events) :-
    (   split_string(Line, "\t", "", [SF, PF, OF, TsF, TeF])
    ->  decode_field(SF, S),
        decode_field(PF, P),
        decode_field(OF, O),
        number_string(Ts, TsF),
        number_string(Te, TeF)
    ;   throw(error(cep_error(bad_event_batch(Line)), _))
    ).

decode_field(Field, Term) :-
    sub_string(Field, 0, 1, _, Tag),
    sub_string(Field, 1, _, 0, Text),
    decode_tagged(Tag, Text, Term).

decode_tagged("I", Text, Atom) :- !, atom_string(Atom, Text).
decode_tagged("i", Text, Int) :- !, number_string(Int, Text), integer(Int).
decode_tagged("P", Text, Term) :- !, term_string(Term, Text).
decode_tagged(Tag, _, _) :- throw(error(cep_error(bad_event_batch(Tag)), _)).

:- dynamic fast_decoder/0.

%   The C decoder, where `make setup` built it (prolog/cep_fast.so);
%   CEP_NO_FOREIGN=1 forces the Prolog one (the tests run both).
load_fast_decoder :-
    retractall(fast_decoder),
    (   getenv('CEP_NO_FOREIGN', _)
    ->  true
    ;   catch(use_foreign_library(cep(cep_fast)), _, fail)
    ->  assertz(fast_decoder)
    ;   true
    ).

:- initialization(load_fast_decoder).

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
prolog:message(error(cep_error(not_a_rule_set(Module)), _)) -->
    [ 'cep: the text loaded as ~w is not a compiled rule set'-[Module] ].
