/*  Windows and aggregates of continuous queries (docs/language.md,
    "Windows and aggregates"): C-SPARQL's FROM STREAM windows with RSP-QL's
    definitions, SPARQL 1.1's GROUP BY and aggregates (section 18.5),
    C-SPARQL's AGGREGATE clauses, and RSP-QL's RStream/IStream/DStream.

    The compiled rules (cep/compile/windows.py) store each solution of a
    windowed query's pattern instead of answering it:

        '$wsol'(Hash, Q, Last, First, Values, Start, End)

    First and Last are the indexes k of the first and last window closes
    k*Step whose window (k*Step - Range, k*Step] holds the solution's
    interval (a count window stores 0, 0). Event time drives evaluation:
    cep_close/3 evaluates every evaluation time before Now (or, at the end
    of the stream, every one whose window still holds a solution), from
    the solutions stored, and drops those no later window can hold. So a
    window closes when event time passes it, whether or not an event of
    the same key arrives, and memory holds one window of solutions.
    A query grouped without a window has the window spec instant: it is
    evaluated at each instant a solution ends at, over the solutions that
    end at it (the answers of one instant), once event time passes it.
    A query evaluated over its window's content ('$wcontent'(Q): its
    pattern has OPTIONAL, MINUS, [NOT] EXISTS or OPTIONALSEQ) stores the
    solutions of those operators' operands, under part(Q, Node, Side),
    and each evaluation finds its solutions from those in the window
    ('$wsolve'/5, cep/compile/windows.py); a grouped or cut subquery there
    makes its rows at each instant the window holds
    (cep_subquery_rows_at/6).

    The predicates of the rules module this module calls, and the facts
    it asserts there (part of the rule set's state, cep_runtime:cep_dump/2),
    are listed in cep_contract.pl (those of the features windows, group,
    extend, and '$wfeed'/3).
*/

:- module(cep_window,
          [ cep_close/3,           % +Module, +ArgsText, -AnswersText
            cep_window_due/3,      % +Module, +ArgsText, -DueText
            cep_span/6,            % +S1, +E1, +S2, +E2, -S, -E
            cep_accumulate/6,      % +Module, +Query, +Last, +First, +Key, +Args
            cep_window_status/2,   % +Module, -StatusText
            cep_window_skipped/2,  % +Module, -SkippedText
            cep_window_forget/1,   % +Module
            cep_window_span/5,     % +Spec, +Start, +End, -First, -Last
            cep_window_close/2,    % +In, -Close
            cep_span/3,            % +Spans, -Start, -End
            cep_part_index/4,      % +Sols, +Pattern, +Key, -Index
            cep_part_member/3,     % +Index, ?Key, ?Sol
            cep_subquery_rows/6,   % +Module, +Node, +Spec, +Solutions, +Time, -Rows
            cep_subquery_rows_at/6 % +Module, +Node, +Spec, +Instants, +Solutions, -Rows
          ]).

:- use_module(library(lists)).
:- use_module(library(apply)).
:- use_module(library(pairs)).
:- use_module(library(varnumbers)).
:- use_module(library(ordsets)).
:- use_module(library(assoc)).
:- use_module(cep_values).
:- use_module(cep_fast).
:- use_module(cep_runtime, [cep_absence/3, cep_arrival/1, cep_feed/3, cep_queue/7, cep_reporting/1]).

%!  cep_window_span(+Spec, +Start, +End, -First, -Last) is semidet.
%
%   The window closes P + k*Step (First =< k =< Last; P the phase of the
%   closes, 0 without t0) whose window (P + k*Step - Range, P + k*Step]
%   holds [Start, End]: P + k*Step >= End and P + k*Step - Range < Start;
%   with RSP-QL's t0 (Spec time(Range, Step, Every, T0)) k is at least
%   that of the first window, (T0, T0 + Range]. Fails when no window holds it (a solution
%   longer than the range, or one in the gap of a hopping window). A
%   query grouped without a window (Spec instant) is evaluated at each
%   instant over the solutions that end at it: First = Last = End.
cep_window_span(Spec, Ts, Te, F, L) :-
    Spec = time(inf, Step, _, Origin),      % unbounded: (t0, c] for every close c from the first
    !,
    Ts > Origin,
    phase(Spec, P),
    F0 is -((P - Te) div Step),
    first_index(Spec, K0),
    F is max(F0, K0),
    L = inf.
cep_window_span(Spec, Ts, Te, F, L) :-
    Spec = time(Range, Step, _, Origin),
    phase(Spec, P),
    F0 is -((P - Te) div Step),                 % ceiling((Te - P) / Step)
    L is -((P - (Ts + Range)) div Step) - 1,    % the last k with P + k*Step < Ts + Range
    (   Origin == none -> F = F0 ; first_index(Spec, K0), F is max(F0, K0) ),
    F =< L.
cep_window_span(count(_, Unit), _, _, P, P) :-
    place(Unit, P).
cep_window_span(instant, _, Te, Te, Te).

%   What a count window stores of a solution: 0, or for one of triples the
%   place of its triple among its instant's (cutoff/6).
place(events, 0).
place(events_once, 0).
place(triples, P) :-
    cep_arrival(P).

%!  cep_span(+S1, +E1, +S2, +E2, -S, -E) is det.
%
%   The interval of two merged solutions: from the earlier start to the
%   later end; a solution of background triples alone (timeless) adds
%   no time.
cep_span(timeless, _, S2, E2, S2, E2) :- !.
cep_span(S1, E1, timeless, _, S1, E1) :- !.
cep_span(S1, E1, S2, E2, S, E) :-
    S is min(S1, S2),
    E is max(E1, E2).

%   The closes of a time-based window time(Range, Step, Every, Origin):
%   P + K*Step for every index K, P the phase. With RSP-QL's t0 (Origin
%   T0) the windows are (T0 + i*Step, T0 + i*Step + Range], i >= 0: the
%   first close is T0 + Range, of index first_index/2, and the periodic
%   evaluations (Every) are counted from it too; without (Origin none)
%   the closes and evaluations are the multiples of Step and Every.
%   An unbounded window (Range inf, RANGE UNBOUNDED) has a t0: its
%   windows are (T0, T0 + i*Step], i >= 1.
phase(Spec, P) :-
    Spec = time(_, Step, _, Origin),
    (   Origin == none -> P = 0 ; first_close(Spec, C), P is C mod Step ).

first_close(time(Range, Step, _, Origin), C) :-
    (   Range == inf -> C is Origin + Step ; C is Origin + Range ).

first_index(Spec, K0) :-
    Spec = time(_, Step, _, _),
    phase(Spec, P),
    first_close(Spec, C),
    K0 is (C - P) // Step.

close_index(Spec, T, K) :-
    Spec = time(_, Step, _, _),
    phase(Spec, P),
    K is (T - P) div Step.

close_of(Spec, K, C) :-
    Spec = time(_, Step, _, _),
    phase(Spec, P),
    C is P + K * Step.

every_phase(Spec, P) :-
    Spec = time(_, _, Every, Origin),
    (   Origin == none -> P = 0 ; first_close(Spec, C), P is C mod Every ).

%   The solutions a query keeps: its own, or its content nodes' operands'.
held(Q, Q).
held(Q, part(Q, _, _)).

%!  cep_close(+Module, +ArgsText, -AnswersText) is det.
%
%   ArgsText is "begin First" (the stream's first instant: the time-based
%   windows of '$wempty' queries are evaluated from the first evaluation
%   time at or after it, begin_empty/2), or "now Now T1 N1 E1 T2 N2 E2 ..." (event time has passed
%   every instant before Now; the instants Ti of the batch just processed
%   had Ni triples in Ei events each) or "final Last ..." (the stream ended with its last event
%   at Last: time-based windows are evaluated until they hold nothing,
%   count windows at the instants up to Last, and every NOTSEQ deadline
%   fires). Returns the answer lines of the NOTSEQ deadlines passed
%   (cep_runtime:cep_absence/3) and of the window evaluations now due, in
%   the format of cep_runtime:cep_push/3.
cep_close(M, ArgsText, Text) :-
    cep_reporting(close_due(M, ArgsText, Text)).

close_due(M, ArgsText, Text) :-
    split_string(ArgsText, " ", "", [How, TimeText|CountTexts]),
    number_string(Time, TimeText),
    (   How == "begin"
    ->  begin_empty(M, Time),
        cep_answer_text([], Text)
    ;   close_due(M, How, Time, CountTexts, Text)
    ).

close_due(M, How, Time, CountTexts, Text) :-
    maplist(number_string, Counts, CountTexts),
    count_instants(M, Counts),
    (   How == "final" -> Limit = inf ; Limit = Time ),  % the stream ended: no event can cancel a deadline
    cep_absence(M, Limit, Fired),           % NOTSEQ deadlines first: their answers may be in windows
    (   current_predicate(M:'$window'/2)   % a rule set with NOTSEQ may have no window
    ->  findall(Q-Spec, ( M:'$window'(Q, Spec), integer(Q) ), Windows)  % a part p(Q, J) with its query
    ;   Windows = []
    ),
    foldl(close_query(M, How, Time), Windows, Rows, []),
    (   How == "final" -> retractall(end_limit(M, _, _)) ; true ),
    append(Fired, Rows, All),
    cep_answer_text(All, Text).

count_instants(M, Counts) :-
    (   Counts = [_|_],
        M:'$window'(_, count(_, _))
    ->  assert_counts(Counts, M)
    ;   true
    ).

assert_counts([], _).
assert_counts([T, N, E, D|Rest], M) :-
    assertz(M:'$wcount'(T, n(N, E, D))),
    assert_counts(Rest, M).

close_query(M, How, Time, Q-Spec, Rows0, Rows) :-
    close_spec(M, How, Time, Q-Spec, Rows0, Rows),
    (   How == "final" -> true ; expire_parts(M, Q, Time) ).

close_spec(M, How, Time, Q-Spec, Rows0, Rows) :-
    (   timed(M, Q, Spec)
    ->  time_limit(M, How, Time, Q, Spec, Limit),
        close_time(M, Q, Spec, Limit, Rows0, Rows),
        (   How == "final", empty_row(M, Q)         % its evaluations are over: the group needs nothing
        ->  retractall(M:'$wnext'(Q, _)),
            assertz(M:'$wnext'(Q, idle(Limit)))
        ;   true
        )
    ;   Spec == instant                     % every instant before Limit a stored solution ends at
    ->  (   How == "final" -> Limit = inf ; Limit = Time ),
        findall(T, ( M:'$wsol'(_, Q, T, _, _, _, _), T < Limit ), Ts),
        sort(Ts, Taus),
        foldl(evaluate(M, Q, Spec), Taus, Rows0, Rows)
    ;   (   How == "final" -> Limit is Time + 1 ; Limit = Time ),
        findall(T, ( M:'$wcount'(T, _), T < Limit, \+ evaluated(M, Q, T) ), Ts),
        sort(Ts, Taus),
        foldl(evaluate(M, Q, Spec), Taus, Rows0, Rows)
    ).

%   Whether Q is evaluated on the time grid of a time-based window: its
%   own, or (a query whose groups have windows of their own) a leading
%   part's. Where a leading part's window counts (counting/3), Q is also
%   evaluated at every instant it counts (next_instant/4).
timed(_, _, Spec) :-
    Spec = time(_, _, _, _),
    !.
timed(M, Q, Spec) :-
    once(( schedule(M, Q, Spec, _-S), S = time(_, _, _, _) )).

%   Whether a leading window of Q counts: it is evaluated at every
%   instant an event comes into it (docs/language.md, "A window per
%   pattern"), as a query with one count window is.
counting(M, Q, Spec) :-
    once(( schedule(M, Q, Spec, _-S), S = count(_, _) )).

%   How far a close evaluates a time-based window: the evaluation times
%   before Now, or at the end of the stream (its last instant Last) as
%   cep_close/3 says. The end's limit depends on what the windows store,
%   which its evaluations drop: when the engine closes the end in steps
%   (cep_window_due/3), the limit of each query is kept (end_limit/3,
%   until the close "final") so that a step never ends the query's
%   evaluations sooner than one close would have.
time_limit(M, How, Time, Q, Spec, Limit) :-
    (   How \== "final" -> Limit = Time
    ;   (   ( unbounded_lead(M, Q, Spec) ; counting(M, Q, Spec) ) -> leads_end(M, Q, Spec, Time, Limit0)
        ;   empty_row(M, Q) -> empty_end(M, Q, Spec, Time, Limit0)
        ;   Limit0 = inf
        ),
        (   Limit0 \== inf, end_limit(M, Q, Kept), Kept > Limit0 -> Limit = Kept ; Limit = Limit0 ),
        retractall(end_limit(M, Q, _)),
        assertz(end_limit(M, Q, Limit))
    ).

:- dynamic end_limit/3.

%!  cep_window_due(+Module, +ArgsText, -Text) is det.
%
%   ArgsText as cep_close/3's, "now Now" or "final Last": the first
%   evaluation time that close would make of a query that joins its
%   SERVICE views at its evaluations ('$wdeferred'(Q),
%   cep/compile/services.py) over a window that holds a solution (one
%   over an empty window joins nothing), or "none". The engine closes up
%   to it first: each such evaluation has its own maintenance of the
%   views before it (the seed's Algorithm 1, cep/service/maintenance.py),
%   at the end of the stream and across a gap in event time alike. A
%   query whose groups have windows of their own and join SERVICE views
%   ('$wserved'(Q)) is due at each of its evaluation times (schedule/4)
%   while it stores a solution, unless its first group counts events (it
%   is evaluated at every instant, its views maintained before each push).
cep_window_due(M, ArgsText, Text) :-
    split_string(ArgsText, " ", "", [How, TimeText]),
    number_string(Time, TimeText),
    (   aggregate_all(min(Tau), deferred_due(M, How, Time, Tau), Due) -> true ; Due = none ),
    format(string(Text), "~w", [Due]).

deferred_due(M, How, Time, Tau) :-
    deferred(M, Q),
    M:'$window'(Q, Spec),
    Spec = time(_, _, _, _),
    next_time(M, Q, Spec, Tau),
    time_limit(M, How, Time, Q, Spec, Limit),
    Tau < Limit,
    close_index(Spec, Tau, K),
    once(( held(Q, P), M:'$wsol'(_, P, Last, First, _, _, _), First =< K, K =< Last )).
deferred_due(M, How, Time, Tau) :-
    current_predicate(M:'$wserved'/1),
    M:'$wserved'(Q),
    M:'$window'(Q, Spec),
    Spec = time(_, _, _, _),                % (over a count window: its views maintained at each push)
    next_time(M, Q, Spec, Tau),
    time_limit(M, How, Time, Q, Spec, Limit),
    Tau < Limit,
    once(stored(M, Q, _)).

%   A time-based window is evaluated at every multiple of Every (its step
%   unless COMPUTED EVERY says otherwise) before Limit, from the first one
%   whose window can hold a stored solution; evaluations with nothing
%   stored and nothing reported before are skipped (not those of a
%   '$wempty' query: empty_row/2). At the end of the stream (Limit inf) it
%   is evaluated until its windows hold nothing: every window that holds a
%   solution reports.
close_time(M, Q, Spec, Limit, Rows0, Rows) :-
    (   aggregate_all(min(T), ( next_time(M, Q, Spec, T) ; next_instant(M, Q, Spec, T) ), Tau),
        Tau < Limit
    ->  evaluate(M, Q, Spec, Tau, Rows0, Rows1),
        close_time(M, Q, Spec, Limit, Rows1, Rows)
    ;   Rows0 = Rows
    ).

%   The next instant at which a count window among Q's leading ones
%   (counting/3) is evaluated: the first the windows count
%   ('$wcount'/2) that Q has not been evaluated at ('$wdone'(Q, T): at
%   none before T).
next_instant(M, Q, Spec, Tau) :-
    counting(M, Q, Spec),
    (   M:'$wdone'(Q, From) -> true ; From = -inf ),
    aggregate_all(min(I), ( M:'$wcount'(I, _), I >= From ), Tau).

%   Whether Q is evaluated by a window of infinite width: its own, or a
%   leading part's (schedule/4).
unbounded_lead(M, Q, Spec) :-
    once(( schedule(M, Q, Spec, _-S), S = time(inf, _, _, _) )).

%   At the end of the stream the evaluations of a query evaluated by a
%   window of infinite width, which never empties, end at the last of
%   each of its windows' own last evaluations (schedule/4), whatever
%   they hold: an unbounded window's is last_evaluation/5's, a bounded
%   one's the first whose window starts at or after the stream's last
%   instant and the end of every solution it stores (empty_end_part/5).
leads_end(M, Q, Spec, Last, Limit) :-
    aggregate_all(max(L), ( schedule(M, Q, Spec, P-S),
                            (   S = time(inf, _, _, _)
                            ->  last_evaluation(M, P, S, Last, L)
                            ;   empty_end_part(M, P, S, Last, L)
                            ) ), Limit).

%   At the end of the stream (its last instant Last) an unbounded window,
%   whose content never empties, is evaluated up to the first evaluation
%   whose window holds every instant of the stream and every solution it
%   stores: Limit is just past it. The solutions count for the triples of
%   another window fed back after Last, which this one reads; its own
%   triples fed back are no solution of its own (no cycle goes through a
%   window), so they do not extend its evaluations, whatever its period.
last_evaluation(M, Q, Spec, Last, Limit) :-
    Spec = time(_, Step, Every, _),
    phase(Spec, P),
    C0 is P - ((P - Last) div Step) * Step,             % the first close at or after Last
    first_close(Spec, C1),
    (   aggregate_all(max(F), stored_own(M, Q, F), K)   % the first close holding the latest solution
    ->  close_of(Spec, K, C2)
    ;   C2 = C1
    ),
    C is max(C0, max(C1, C2)),
    every_phase(Spec, PE),
    Tau is PE - ((PE - C) div Every) * Every,           % the first evaluation at or after it
    Limit is Tau + 1.

%   Aggregates without GROUP BY ('$wempty'(Q)) give a row at every
%   evaluation, an empty window's too (docs/language.md, "Empty windows"):
%   a time-based window is evaluated at every evaluation time from the
%   first at or after the stream's first instant (and its first close,
%   with RSP-QL's t0), not from its first solution, gaps in event time
%   included (up to empty_run_limit/1 empty ones in a row, then skipped
%   until a window can hold a solution, with a warning: cep_window_skipped/2);
%   at the end of the stream up to the first evaluation whose window
%   starts at or after the stream's last instant and every stored
%   solution's end (the first that holds none of them, empty_end/5).
empty_row(M, Q) :-
    current_predicate(M:'$wempty'/1),
    M:'$wempty'(Q).

begin_empty(M, T) :-
    forall(( empty_row(M, Q),
             M:'$window'(Q, Spec),
             timed(M, Q, Spec),
             \+ M:'$wnext'(Q, _) ),
           ( first_time(M, Q, Spec, T, First),
             assertz(M:'$wnext'(Q, First)) )).

empty_end(M, Q, Spec, Last, Limit) :-
    empty_end_part(M, Q, Spec, Last, Limit0),
    findall(P-S, ( lead(M, Q, P), parted(M, Q, Parts), memberchk(P-S, Parts) ), Leads),
    foldl(empty_end_of(M, Last), Leads, Limit0, Limit).

%   The limit of another leading part of a '$wempty' query (empty_end/5),
%   over its own window Spec: the query goes on while any holds a solution.
empty_end_of(M, Last, Q-Spec, Limit0, Limit) :-
    empty_end_part(M, Q, Spec, Last, Limit1),
    Limit is max(Limit0, Limit1).

empty_end_part(_, _, count(_, _), Last, Limit) :-
    !,                                                  % a count window's last evaluation: the last instant
    Limit is Last + 1.
empty_end_part(M, Q, Spec, Last, Limit) :-
    Spec = time(Range, Step, Every, _),
    (   aggregate_all(max(E0), ( held(Q, P), M:'$wsol'(_, P, _, _, _, _, E0) ), E1)
    ->  E is max(Last, E1)
    ;   E = Last
    ),
    phase(Spec, P),
    K is -((P - E - Range) div Step),                   % the first close C with C - Range >= E
    C0 is P + K * Step,
    (   Spec = time(_, _, _, none) -> C = C0 ; first_close(Spec, C1), C is max(C0, C1) ),
    every_phase(Spec, PE),
    Tau is PE - ((PE - C) div Every) * Every,           % the first evaluation at or after it
    Limit is Tau + 1.

%   The evaluations of a '$wempty' query over an empty window in a row (a
%   gap in event time) are at most this many: past it the query is idle
%   until a window can hold a stored solution, as any other query is, and
%   cep_window_skipped/2 says so. A day of 1-second steps is 86,400, and
%   costs about a second of CPU.
empty_run_limit(100000).

%   After an evaluation of a '$wempty' query: its run of evaluations over
%   an empty window counted ('$wrun'(Q, N)), the next evaluation time
%   After0, or idle(After0) once the run reaches the limit.
empty_next(M, Q, Sols, Tau, Every, After0, After) :-
    (   Sols \== []
    ->  retractall(M:'$wrun'(Q, _)),
        After = After0
    ;   (   retract(M:'$wrun'(Q, N0)) -> true ; N0 = 0 ),
        N is N0 + 1,
        empty_run_limit(Most),
        (   N >= Most
        ->  From is Tau - (N - 1) * Every,
            assertz(skipped(M, Q, From, Tau, N)),
            After = idle(After0)
        ;   assertz(M:'$wrun'(Q, N)),
            After = After0
        )
    ).

:- dynamic skipped/5.

%!  cep_window_forget(+Module) is det.
%
%   Drop what this module keeps for the rule set Module (cep_unload/1).
cep_window_forget(M) :-
    retractall(end_limit(M, _, _)),
    retractall(skipped(M, _, _, _, _)).

%!  cep_window_skipped(+Module, -Text) is det.
%
%   The runs of empty evaluations cut by empty_run_limit/1 since the last
%   call: a line "Query From To Count" each (From and To the first and
%   last evaluation times of the run; those after To are skipped until
%   the query's window holds a solution again).
cep_window_skipped(M, Text) :-
    findall(Line, ( retract(skipped(M, Q, From, To, N)),
                    format(string(Line), "~w ~w ~w ~w", [Q, From, To, N]) ), Lines),
    atomic_list_concat(Lines, '\n', A),
    atom_string(A, Text).

%!  cep_window_status(+Module, -Text) is det.
%
%   "Due Held": Due the next evaluation time of a time-based window that
%   can report something, or the next NOTSEQ deadline ("none" if none),
%   Held "true" while the windows
%   hold anything the next evaluations need (solutions, the last rows of
%   an IStream or DStream query, the counts of a count window). The Spark
%   engine sets a group's event-time timeout to Due and keeps the group
%   while Held.
cep_window_status(M, Text) :-
    findall(Tau, ( current_predicate(M:'$window'/2),
                   M:'$window'(Q, Spec),
                   integer(Q),
                   timed(M, Q, Spec),
                   next_time(M, Q, Spec, Tau)
                 ; current_predicate(M:'$window'/2),
                   M:'$window'(Q, instant),
                   aggregate_all(min(T), M:'$wsol'(_, Q, T, _, _, _, _), Tau)
                 ; M:'$absence_nodes'(Nodes),
                   member(N, Nodes),
                   M:'$absence_next'(N, Tau) ), Taus),
    (   Taus == [] -> Due = none ; min_list(Taus, Due) ),
    (   current_predicate(M:'$wsol'/7),
        ( M:'$wsol'(_, _, _, _, _, _, _) ; M:'$wpart'(_, _, _, _, _, _) ; reported(M, _) ; M:'$wcount'(_, _)
        ; empty_row(M, Q), M:'$wnext'(Q, T), integer(T) )
    ->  Held = true
    ;   Held = false
    ),
    format(string(Text), "~w ~w", [Due, Held]).

evaluated(M, Q, T) :-
    M:'$wnext'(Q, Next),
    T < Next.

%   The next evaluation time of a time-based window: after an evaluation
%   whose window held something, the next multiple of Every ('$wnext'(Q,
%   Tau)), while anything is stored or was reported (always, for a
%   '$wempty' query, from its first: begin_empty/2; and for a query with
%   leading parts, whose solutions there may have gone, expire_parts/3:
%   they leave at that evaluation); after an empty one
%   ('$wnext'(Q, idle(Tau))) or at the start, the first evaluation time
%   at or after the earliest window close a stored solution is in (found
%   by one scan, so a gap in event time is skipped at once, and a busy
%   window costs no scan). A query with leading parts is evaluated at
%   the evaluation times of each one's window (schedule/4): the scan is
%   of each one's solutions on its own times, and the evaluation after
%   one is the earliest of their next times (first_time/5).
next_time(M, Q, Spec, Tau) :-
    (   M:'$wnext'(Q, Tau0), integer(Tau0)
    ->  (   once(stored(M, Q, _)) ; reported(M, Q) ; empty_row(M, Q) ; once(lead(M, Q, _)) ),
        Tau = Tau0
    ;   (   M:'$wnext'(Q, idle(From)) -> true ; From = inf ),
        aggregate_all(min(T), ( schedule(M, Q, Spec, L-S),
                                aggregate_all(min(F), stored_own(M, L, F), First),
                                close_of(S, First, C),
                                (   From == inf -> Bound = C ; Bound is max(C, From) ),
                                evaluation_at(S, Bound, T) ), Tau)
    ).

%   The windows whose evaluation times are the query's: its own (its
%   first part's), and those of its other leading parts (lead/3), each
%   L-Spec.
schedule(_, Q, Spec, Q-Spec).
schedule(M, Q, _, L-S) :-
    lead(M, Q, L),
    parted(M, Q, Parts),
    memberchk(L-S, Parts).

%   The first evaluation time of a time-based window at or after T: a
%   multiple of Every, or with RSP-QL's t0 one from its first close on.
evaluation_at(Spec, T, Tau) :-
    Spec = time(_, _, Every, Origin),
    every_phase(Spec, PE),
    Tau0 is PE - ((PE - T) div Every) * Every,      % the first PE + j*Every at or after T
    (   Origin == none -> Tau = Tau0 ; first_close(Spec, C1), Tau is max(Tau0, C1) ).

%   The query's first evaluation time at or after T: the earliest of its
%   windows' (schedule/4).
first_time(M, Q, Spec, T, Tau) :-
    aggregate_all(min(A), ( schedule(M, Q, Spec, _-S), evaluation_at(S, T, A) ), Tau).

reported(M, Q) :-
    M:'$wlast'(Q, Rows),
    Rows \== [].

%   What Q keeps, with its first window: its solutions (or its content
%   nodes' operands'), and the panes of its groups (an unbounded window
%   keeps those alone once evaluated, fold_unbounded/4).
stored(M, Q, F) :-
    stored_own(M, Q, F).
stored(M, Q, F) :-                          % a UNION's other leading parts: their windows are the query's
    lead(M, Q, L),
    stored_own(M, L, F).

stored_own(M, Q, F) :-
    held(Q, P),
    M:'$wsol'(_, P, _, F, _, _, _).
stored_own(M, Q, F) :-
    M:'$wpart'(_, Q, _, F, _, _).

%   The parts of Q other than its first that give it solutions on their
%   own ('$wleads'/2: UNION's other operands, cep.binarize.leading_parts),
%   whose windows' evaluation times are the query's too.
lead(M, Q, P) :-
    current_predicate(M:'$wleads'/2),
    M:'$wleads'(Q, Leads),
    member(P, Leads).

%   One evaluation of Q at Tau: the window's solutions, their rows, what is
%   reported of them, and the solutions no later window holds dropped.
%   Evaluations stop (for this call) once nothing is stored and the last
%   rows are empty: next_time/5 resumes from the next stored solution.
%   After one whose window, or that of a leading part (lead/3), held a
%   solution, the next is made: what that window held leaves there.
evaluate(M, Q, Spec, Tau, Rows0, Rows) :-
    window_solutions(Spec, M, Q, Tau, Ts, In, Sols0),
    combined(M, Q, Tau, Sols0, Sols1, Led),
    service_join(M, Q, Sols1, Sols),
    read_content(M, Q, Tau, In, Sols0, Sols, Held, Read),
    (   reports(M, Q, Spec, Tau, Read)
    ->  evaluation_rows(Spec, M, Q, Sols, Ts, Tau, New),
        report(M, Q, Ts, Tau, New, Rows0, Rows)
    ;   Rows0 = Rows
    ),
    (   counting(M, Q, Spec), timed(M, Q, Spec)
    ->  Done is Tau + 1,
        retractall(M:'$wdone'(Q, _)),
        assertz(M:'$wdone'(Q, Done))
    ;   true
    ),
    (   timed(M, Q, Spec)
    ->  Next is Tau + 1,
        first_time(M, Q, Spec, Next, After0),
        once(( schedule(M, Q, Spec, _-time(_, _, Every, _)) )),
        (   empty_row(M, Q) -> empty_next(M, Q, Held, Tau, Every, After0, After)
        ;   Sols0 == [], Led == false, \+ grouped_count(M, Q, Spec) -> After = idle(After0)
        ;   After = After0
        )
    ;   After is Tau + 1
    ),
    retractall(M:'$wnext'(Q, _)),
    assertz(M:'$wnext'(Q, After)),
    (   Spec = time(inf, _, _, _) -> fold_unbounded(M, Q, Spec, Tau) ; true ).

%   read_content(+M, +Q, +Tau, +In, +Sols0, +Sols, -Held, -Read): what
%   the window In holds (Held: whether a run of empty windows goes on,
%   empty_next/7) and the content the report policies read (Read): the
%   solutions stored in it and the query's. A query whose window holds an
%   empty group ('$wunit'(Q, Part)) has a solution at every evaluation;
%   both are then the window's events (RSP-QL's content: an empty window
%   reports nothing under REPORT NON EMPTY, and an event entering or
%   leaving it is a change), as a set of triples with their intervals (a
%   [TRIPLES n] window can hold part of an instant's triples). REPORT ON
%   CHANGE with an empty group in a part after the first reads every
%   window's content (per_window_content/6).
read_content(M, Q, Tau, In, Sols0, Sols, Held, Read) :-
    (   unit_events(M, Q, In, Events)
    ->  Held = Events,
        Read0 = Events
    ;   Held = Sols0,
        Read0 = Sols
    ),
    (   per_window_change(M, Q, Parts)
    ->  per_window_content(M, Q, Tau, Held, Parts, Read)
    ;   Read = Read0
    ).

unit_events(M, Q, In, Events) :-
    current_predicate(M:'$wunit'/2),
    M:'$wunit'(Q, _),
    !,
    findall(s(V, S, E), ( M:'$wunit'(Q, P), M:'$win'(P, In, V, S, E) ), Events0),
    sort(Events0, Events).

%   REPORT ON CHANGE over a query whose groups have windows of their own,
%   with an empty group in a part after the first: that group's solution
%   is at each evaluation's close, so the query's solutions would change
%   at every one. RSP-QL's content change is read per window instead
%   (docs/language.md, "The empty group"): the evaluation reports when the
%   content of any of the query's windows at Tau differs from the last
%   reported. A window's content is its events where its part holds an
%   empty group, else its part's solutions in it (Own: the first part's,
%   as read_content/8 holds them); a window with none is left out, so
%   that all of them empty is the empty content of the start.
per_window_change(M, Q, Parts) :-
    current_predicate(M:'$wpolicy'/2),
    M:'$wpolicy'(Q, change),
    parted(M, Q, Parts),
    current_predicate(M:'$wunit'/2),
    once(( member(P-_, Parts), M:'$wunit'(P, _) )).

per_window_content(M, Q, Tau, Own, Parts, Read) :-
    sort(Own, Content0),
    findall(P-Content, ( member(P-Spec, Parts), part_content(M, P, Spec, Tau, Content) ), Others),
    exclude(empty_content, [Q-Content0|Others], Read).

empty_content(_-[]).

part_content(M, P, Spec, Tau, Content) :-
    window_solutions(Spec, M, P, Tau, _, In, Sols),
    (   unit_events(M, P, In, Events) -> Content = Events ; sort(Sols, Content) ).

%!  cep_window_close(+In, -Close) is det.
%
%   The instant of the empty group's one solution over the window In
%   (time(K, Start, Close) or count(Cut, Tau, Low)): the window's close,
%   a count window's instant.
cep_window_close(time(_, _, Close), Close).
cep_window_close(count(_, Tau, _), Tau).

%   An unbounded window keeps what its aggregates need, not the stream:
%   after the evaluation at Tau (window K), the panes of each group that
%   window holds are merged into one (First K: every later window holds
%   it), and the marks that told its solutions seen are dropped (a
%   solution is derived at its end, and every end up to Tau has passed).
%   So a grouped query over RANGE UNBOUNDED holds a pane per group, plus
%   what came since its last evaluation.
fold_unbounded(M, Q, Spec, Tau) :-
    (   M:'$wkind'(Q, group(Funcs)),
        \+ deferred(M, Q),
        \+ parted(M, Q, _),
        \+ content(M, Q)
    ->  close_index(Spec, Tau, K),
        findall(Key-Accs, ( M:'$wpart'(_, Q, inf, F, Key, Accs), F =< K ), Panes),
        forall(( clause(M:'$wpart'(_, Q, inf, F, _, _), true, Ref), F =< K ), erase(Ref)),
        keysort(Panes, Sorted),
        group_pairs_by_key(Sorted, Groups),
        forall(member(Key-[Accs0|AccLists], Groups),
               ( foldl(merge_accs(Funcs), AccLists, Accs0, Accs),
                 term_hash(p(Q, inf, K, Key), H),
                 assertz(M:'$wpart'(H, Q, inf, K, Key, Accs)) )),
        forall(( clause(M:'$wsol'(_, Q, inf, F, _, _, _), true, Ref), F =< K ), erase(Ref))
    ;   true
    ).

%   RSP-QL's report policies (docs/language.md, "Report policies"):
%   whether the evaluation at Tau reports. The window close (the
%   default) and the periodic policy (COMPUTED EVERY, REPORT EVERY)
%   report every evaluation; nonempty those whose window holds a
%   solution; change those whose window's content (its solutions, with
%   their intervals) differs from the last one reported ('$wseen'(Q,
%   Hash); none yet: the empty content). An evaluation that does not
%   report is not one for ISTREAM and DSTREAM either.
reports(M, Q, Spec, Tau, Sols) :-
    (   current_predicate(M:'$wpolicy'/2), M:'$wpolicy'(Q, Policy) -> true ; Policy = close ),
    reports(Policy, M, Q, Spec, Tau, Sols).

reports(close, _, _, _, _, _).
reports(nonempty, _, _, _, _, Sols) :-
    Sols \== [].
reports(change, M, Q, Spec, Tau, panes(_)) :-
    Spec = time(inf, _, _, _),              % its panes are folded: what came since the last evaluation
    !,
    close_index(Spec, Tau, K),
    (   M:'$wseen'(Q, k(K0)) -> true ; K0 = -inf ),
    retractall(M:'$wseen'(Q, _)),
    assertz(M:'$wseen'(Q, k(K))),
    once(( M:'$wpart'(_, Q, inf, F, _, _), F > K0, F =< K )).
reports(change, M, Q, Spec, Tau, Sols) :-
    content_items(Sols, M, Q, Spec, Tau, Items),
    sort(Items, Content),
    variant_sha1(Content, H),
    (   M:'$wseen'(Q, H0) -> true ; variant_sha1([], H0) ),
    H \== H0,
    retractall(M:'$wseen'(Q, _)),
    assertz(M:'$wseen'(Q, H)).

%   A grouped time window's content is its panes, each with the windows
%   First..Last its solutions are in: two windows with the same groups
%   and aggregates may hold different solutions.
content_items(panes(_), M, Q, Spec, Tau, Items) :-
    !,
    close_index(Spec, Tau, K),
    findall(L-F-Key-Accs, ( M:'$wpart'(_, Q, L, F, Key, Accs), F =< K ), Items).
content_items(Sols, _, _, _, _, Sols).

%   A query that joins its SERVICE views at its evaluations
%   (cep/compile/services.py): each stored solution joined now, with the
%   views as maintained for this evaluation ('$wjoin'/4 binds the
%   SERVICE variables; a solution with no partner in a view is dropped).
service_join(M, Q, Sols0, Sols) :-
    (   Sols0 = [_|_],
        deferred(M, Q)
    ->  findall(s(V, S, E), ( member(s(V, S, E), Sols0), M:'$wjoin'(Q, V, S, E) ), Sols)
    ;   Sols = Sols0
    ).

deferred(M, Q) :-
    current_predicate(M:'$wdeferred'/1),
    M:'$wdeferred'(Q).

%   A query whose groups have windows of their own (Streaming SPARQL,
%   docs/language.md "A window per pattern"): its own solutions are its
%   first part's; at each evaluation each other part's solutions in its
%   own window at Tau are joined with them ('$wcombine'/5), as the query's
%   operators over the parts say, also where its first part has none and
%   a UNION's other leading part may (lead/3), or its inline data does
%   ('$wempty'(Q): at every evaluation). Any other query's are its
%   own. Led: whether the window of such a leading part holds a solution.
combined(M, Q, Tau, Sols0, Sols, Led) :-
    (   ( Sols0 \== [] ; lead(M, Q, _) ; empty_row(M, Q) ),
        parted(M, Q, Parts)
    ->  findall(P-SolsJ, ( member(P-Spec, Parts), window_solutions(Spec, M, P, Tau, _, _, SolsJ) ), Held),
        pairs_values(Held, Contents),
        findall(s(V, S, E), M:'$wcombine'(Q, [Sols0|Contents], V, S, E), Sols),
        (   member(P-[_|_], Held), lead(M, Q, P) -> Led = true ; Led = false )
    ;   Sols = Sols0,
        Led = false
    ).

%   The parts of a query are dropped as its evaluations pass them, and
%   also when none is due (its first part holds nothing): what no window
%   at Now or later holds goes, so a part that keeps matching while the
%   first does not holds one window's solutions, not the stream's.
expire_parts(M, Q, Now) :-
    (   parted(M, Q, Parts)
    ->  forall(member(P-Spec, Parts), expire_part(Spec, M, P, Now))
    ;   true
    ).

parted(M, Q, Parts) :-
    current_predicate(M:'$wparts'/2),
    M:'$wparts'(Q, Parts).

expire_part(Spec, M, P, Now) :-
    Spec = time(_, _, _, _),
    !,
    close_index(Spec, Now, K),
    expire(M, P, K).
expire_part(count(N, Unit), M, P, Now) :-
    cutoff(M, N, Unit, Now, Cut, _),
    forall(( held(P, H), clause(M:'$wsol'(_, H, _, _, _, S, _), true, Ref), S < Cut ), erase(Ref)),
    forget_counts(M, P, Cut).

%!  cep_span(+Spans, -Start, -End) is semidet.
%
%   The span of a solution joined from parts: the earliest start and the
%   latest end of the parts' intervals i(S, E) it holds (an optional part
%   that is not there is unbound); timeless when it holds none (join's
%   identity under a UNION: docs/language.md, "A window per pattern").
cep_span([], timeless, timeless).
cep_span([I|Is], S, E) :-
    (   var(I)
    ->  cep_span(Is, S, E)
    ;   I = i(S0, E0),
        span(Is, S0, E0, S, E)
    ).

span([], S, E, S, E).
span([I|Is], S0, E0, S, E) :-
    (   var(I)
    ->  span(Is, S0, E0, S, E)
    ;   I = i(S1, E1),
        S2 is min(S0, S1),
        E2 is max(E0, E1),
        span(Is, S2, E2, S, E)
    ).

%!  cep_part_index(+Sols, +Pattern, +Key, -Index) is det.
%
%   The solutions s(V, S, E) of a part, indexed for its join with the
%   parts before it: by their values of Key (variables of Pattern, the
%   part's s(V, _, _)). A solution that leaves a key variable unbound
%   (an OPTIONAL inside the part) is joined by unification, as are all
%   when the key is not bound at the lookup: those are kept in lists.
cep_part_index(Sols, Pattern, Key, index(Assoc, Loose, Sols)) :-
    part_keys(Sols, Pattern, Key, Keyed, Loose),
    keysort(Keyed, Sorted),
    group_pairs_by_key(Sorted, Groups),
    ord_list_to_assoc(Groups, Assoc).

part_keys([], _, _, [], []).
part_keys([Sol|Sols], Pattern, Key, Keyed, Loose) :-
    copy_term(Pattern-Key, Sol-K),
    (   ground(K)
    ->  Keyed = [K-Sol|Keyed1], Loose = Loose1
    ;   Keyed = Keyed1, Loose = [Sol|Loose1]
    ),
    part_keys(Sols, Pattern, Key, Keyed1, Loose1).

%!  cep_part_member(+Index, ?Key, ?Sol) is nondet.
%
%   The solutions of an indexed part (cep_part_index/4) that may join a
%   solution with the values Key: those with that key, and those with
%   an unbound key variable; all of them when Key is not ground. The
%   caller unifies them as a scan would, so the join is the same.
cep_part_member(index(Assoc, Loose, All), Key, Sol) :-
    (   ground(Key)
    ->  (   get_assoc(Key, Assoc, Group),
            member(Sol, Group)
        ;   member(Sol, Loose)
        )
    ;   member(Sol, All)
    ).

%   The solutions in the window evaluated at Tau, the window's start, and
%   the window (In: as '$wsolve'/5 reads it; none for an instant). Before
%   the first close of a window with RSP-QL's t0 no window has closed
%   (a group's window, read at its query's evaluations): none, not even
%   an empty group's solution.
window_solutions(Spec, M, Q, Tau, Ts, time(K, Ts, Hi), Sols) :-
    Spec = time(Range, _, _, Origin),
    !,
    close_index(Spec, Tau, K),
    close_of(Spec, K, Hi),
    (   Range == inf -> Ts = Origin ; Ts is Hi - Range ),
    expire(M, Q, K),
    (   Origin \== none,
        first_index(Spec, K0),
        K < K0
    ->  Sols = []
    ;   content(M, Q)
    ->  content_solutions(M, Q, time(K, Ts, Hi), Sols)
    ;   M:'$wkind'(Q, group(_)),            % aggregated as they came: the window's panes
        \+ deferred(M, Q),
        \+ parted(M, Q, _)
    ->  findall(Key-Accs, ( M:'$wpart'(_, Q, _, F, Key, Accs), F =< K ), Panes),
        (   Panes == [] -> Sols = [] ; Sols = panes(Panes) )
    ;   findall(s(V, S, E), ( M:'$wsol'(_, Q, _, F, V, S, E), F =< K ), Sols)
    ).
window_solutions(instant, M, Q, Tau, Tau, none, Sols) :-
    findall(s(V, S, E), retract(M:'$wsol'(_, Q, Tau, _, V, S, E)), Sols).
window_solutions(count(N, Unit), M, Q, Tau, Cut, count(Cut, Tau, Low), Sols) :-
    cutoff(M, N, Unit, Tau, Cut, Low),
    forall(( held(Q, P), clause(M:'$wsol'(_, P, _, _, _, S, _), true, Ref), S < Cut ), erase(Ref)),
    (   content(M, Q)
    ->  content_solutions(M, Q, count(Cut, Tau, Low), Sols)
    ;   findall(s(V, S, E), ( M:'$wsol'(_, Q, Place, _, V, S, E), E =< Tau, ( E > Cut -> true ; Place >= Low ) ), Sols)
    ),
    forget_counts(M, Q, Cut).

%   Whether Q is evaluated over its window's content (a rule set may
%   have no such query).
content(M, Q) :-
    current_predicate(M:'$wcontent'/1),
    M:'$wcontent'(Q).

%   The solutions of a query over the content of the window In (a set,
%   as the stored ones are).
content_solutions(M, Q, In, Sols) :-
    findall(s(V, S, E), M:'$wsolve'(Q, In, V, S, E), Sols0),
    row_set(Sols0, Sols).

%   A count window at instant T holds the last N events (Unit events:
%   timestamped graphs; events_once: those of a query that reads the
%   stream as a set, where a record of copies alone is none) or triples
%   (Unit triples): those of the latest
%   instants up to T whose counts add up to N. Cut is the oldest of them.
%   A window of events takes it whole (simultaneous events have no order,
%   Low 0); a window of triples holds exactly N: of the C triples of the
%   instant Cut it holds the last K that came (cep_runtime:cep_arrival/1),
%   those whose place is at least Low = C - K + 1 (0 when it holds all C;
%   the triples rules derive at Cut, place 0, are then in, else out).
cutoff(M, N, Unit, T, Cut, Low) :-
    findall(I-C, ( M:'$wcount'(I, Counts), I =< T, counted(Unit, Counts, C) ), Pairs0),
    sort(0, @>=, Pairs0, Pairs),
    take_count(Pairs, N, T, Cut, Left, C),
    (   Unit == triples, C > Left -> Low is C - Left + 1 ; Low = 0 ).

counted(triples, n(C, _, _), C).
counted(events, n(_, C, _), C).
counted(events_once, n(_, _, C), C).

%   take_count(+Pairs, +N, +T, -Cut, -Left, -C): Cut the instant where the
%   last N elements begin, Left of them at Cut, which has C.
take_count([], N, T, T, N, N).
take_count([I-C|Rest], N, _, Cut, Left, CutC) :-
    (   C >= N ; Rest == [] ),
    !,
    Cut = I, Left = N, CutC = C.
take_count([_-C|Rest], N, _, Cut, Left, CutC) :-
    N1 is N - C,
    Rest = [I|_],
    take_count(Rest, N1, I, Cut, Left, CutC).

%   '$wcut'(Q, Cut): the latest cutoff of each count query, which never
%   moves back; the counts of instants before the oldest of them are
%   dropped (a query with a longer window still needs what a shorter
%   one no longer does).
forget_counts(M, Q, Cut) :-
    retractall(M:'$wcut'(Q, _)),
    assertz(M:'$wcut'(Q, Cut)),
    (   M:'$window'(Q2, count(_, _)), \+ M:'$wcut'(Q2, _)
    ->  true                                % a query not evaluated yet needs them all
    ;   aggregate_all(min(C), M:'$wcut'(_, C), Oldest),
        forall(( clause(M:'$wcount'(I, _), true, Ref), I < Oldest ), erase(Ref))
    ).

%   A count window holds the events of the instants it spans, so an
%   evaluation with no solution is SPARQL's over a graph in which the
%   pattern has none: a grouped query's one group is then the empty one,
%   with GROUP BY too (the W3C test agg-empty-group: one row, the keys and
%   the aggregates that are errors over no value unbound, COUNT 0).
evaluation_rows(Spec, M, Q, [], Ts, Tau, Rows) :-
    grouped_count(M, Q, Spec),
    !,
    M:'$wkind'(Q, group(Funcs)),
    empty_group(M, Q, Funcs, Ts, Tau, Rows).
evaluation_rows(_, M, Q, Sols, Ts, Tau, Rows) :-
    rows(M, Q, Sols, Ts, Tau, Rows).

%   A grouped query whose first window counts: it gives that row at every
%   evaluation, those on the time grid of other leading windows too, so it
%   is not idle when no window holds a solution (evaluate/6).
grouped_count(M, Q, count(_, _)) :-
    M:'$wkind'(Q, group(_)).

%   The rows of an evaluation: lists of field values (cep_runtime's
%   fields), in the standard order of terms; a set unless the query's
%   rows are a multiset (a plain SELECT without DISTINCT).
rows(M, Q, [], Ts, Te, Rows) :-
    !,
    (   empty_row(M, Q), M:'$wkind'(Q, group(Funcs))
    ->  empty_group(M, Q, Funcs, Ts, Te, Rows)
    ;   Rows = []
    ).
rows(M, Q, Sols, Ts, Te, Rows) :-
    M:'$wkind'(Q, Kind),
    kind_rows(Kind, M, Q, Sols, Ts, Te, Rows0),
    (   M:'$wset'(Q) -> row_set(Rows0, Rows) ; msort(Rows0, Rows) ).

%   Rows as a set: an unbound field (an unbound variable, or the padding of
%   a shorter row) is equal to any other unbound field.
row_set(Rows, Set) :-
    findall(K-R, ( member(R, Rows), row_key(R, K) ), Keyed),
    sort(1, @<, Keyed, Unique),
    pairs_values(Unique, Set).

row_key(Row, Key) :-
    copy_term(Row, Key),
    numbervars(Key, 0, _).

kind_rows(plain, M, Q, Sols, _, _, Rows) :-
    findall(Fields, ( member(s(V, S, E), Sols), M:'$project'(Q, V, S, E, Fields) ), Rows).
kind_rows(group(Funcs), M, Q, panes(Panes), Ts, Te, Rows) :-
    !,
    keysort(Panes, Sorted),
    group_pairs_by_key(Sorted, Groups),
    findall(Fields, ( member(Key-[Accs0|AccLists], Groups),
                      foldl(merge_accs(Funcs), AccLists, Accs0, Accs),
                      maplist(acc_value, Funcs, Accs, Values),
                      M:'$wrow'(Q, Key, Values, Ts, Te, Fields) ), Rows).
kind_rows(group(Funcs), M, Q, Sols, Ts, Te, Rows) :-
    findall(Key-Args, ( member(s(V, S, E), Sols),
                        M:'$wkey'(Q, V, Key0), ground_key(Key0, Key),
                        M:'$wargs'(Q, V, S, E, Args) ), Pairs0),
    keysort(Pairs0, Pairs),
    group_pairs_by_key(Pairs, Groups),
    findall(Fields, ( member(Key-ArgLists, Groups),
                      aggregates(Funcs, ArgLists, Values),
                      M:'$wrow'(Q, Key, Values, Ts, Te, Fields) ), Rows).
kind_rows(extend(Funcs), M, Q, Sols, _, _, Rows) :-
    length(Funcs, N),
    numlist(1, N, Js),
    maplist(extension_values(M, Q, Sols), Js, Funcs, Tables),
    findall(Fields, ( member(s(V, S, E), Sols),
                      maplist(extension_value(M, Q, V), Js, Tables, Values),
                      M:'$wrow'(Q, V, S, E, Values, Fields) ), Rows).

%   C-SPARQL: the aggregate of extension J per group of its own key.
extension_values(M, Q, Sols, J, Func, Table) :-
    findall(Key-[Arg], ( member(s(V, S, E), Sols),
                         M:'$wkey'(Q, J, V, Key0), ground_key(Key0, Key),
                         M:'$wargs'(Q, J, V, S, E, Arg) ), Pairs0),
    keysort(Pairs0, Pairs),
    group_pairs_by_key(Pairs, Groups),
    findall(Key-Value, ( member(Key-ArgLists, Groups),
                         aggregates([Func], ArgLists, [Value]) ), Table).

extension_value(M, Q, V, J, Table, Value) :-
    M:'$wkey'(Q, J, V, Key0),
    ground_key(Key0, Key),
    memberchk(Key-Value, Table).

%   The row of the empty group over no solution (SPARQL 1.1, 11.2 and
%   18.5: COUNT 0, SUM 0, AVG 0, MIN, MAX and SAMPLE unbound), its keys
%   unbound (none without GROUP BY), unless HAVING rejects it.
empty_group(M, Q, Funcs, Ts, Te, Rows) :-
    (   clause(M:'$wkey'(Q, _, Key0), _)
    ->  Key0 =.. [k|Keys0],
        length(Keys0, N),
        length(Keys, N),
        maplist(=('$unbound'), Keys),
        Key =.. [k|Keys]
    ;   Key = k
    ),
    aggregates(Funcs, [], Values),
    findall(Fields, M:'$wrow'(Q, Key, Values, Ts, Te, Fields), Rows).

%   An unbound grouping variable groups as one value (SPARQL 11.2).
ground_key(Key0, Key) :-
    copy_term(Key0, Key),
    term_variables(Key, Vs),
    maplist(=('$unbound'), Vs).

%   aggregates(+Funcs, +ArgLists, -Values): ArgLists has one list per
%   solution of a group, an argument per aggregate; a Value is the
%   aggregate's value, or '$error' (the variable it binds stays unbound).
aggregates(Funcs, ArgLists, Values) :-
    maplist(empty_acc, Funcs, Accs0),
    foldl(add_args(Funcs), ArgLists, Accs0, Accs),
    maplist(acc_value, Funcs, Accs, Values).

add_args(Funcs, Args, Accs0, Accs) :-
    maplist(add_arg, Funcs, Args, Accs0, Accs).

%   SPARQL 1.1 section 18.5.1 as accumulators, so that the solutions of a
%   time-based window can be aggregated as they come, per pane (the
%   solutions that share their first and last window), and the panes of a
%   window merged when it is evaluated. An argument is val(X), or err where
%   the expression is an error or unbound. Func is f(Name, Distinct):
%   - COUNT counts the values (each once with DISTINCT), errors left out;
%   - SUM: one error makes it an error, else op:numeric-add of the values
%     (each once with DISTINCT); AVG is SUM / COUNT of them, 0 for none;
%   - MIN and MAX (Choice: values that SPARQL's < and > do not compare, an
%     IRI and a number, make them an error), errors left out;
%   - SAMPLE (Choice: the value with the least N-Triples text);
%   - GROUP_CONCAT, Func f(group_concat(Separator), Distinct): one error
%     makes it an error, else the simple literal of the STR of the values
%     (each once with DISTINCT) joined by Separator (Choice: in the order
%     of their N-Triples text, so that it does not depend on the order the
%     solutions came in; a blank node, which has no STR, is an error).
empty_acc(f(count, false), 0) :- !.
empty_acc(f(F, false), s(0, 0)) :- memberchk(F, [sum, avg]), !.
empty_acc(f(group_concat(_), false), []) :- !.
empty_acc(f(F, true), d([], false)) :- memberchk(F, [count, sum, avg, group_concat(_)]), !.
empty_acc(_, '$none').

add_arg(f(count, false), A, N0, N) :- !,
    (   A = val(_) -> N is N0 + 1 ; N = N0 ).
add_arg(f(F, false), A, S0, S) :- memberchk(F, [sum, avg]), !,
    (   S0 == err -> S = err
    ;   A = val(X), S0 = s(Sum0, N0), cep_add(Sum0, X, Sum) -> N is N0 + 1, S = s(Sum, N)
    ;   S = err                             % an error, or a value that is not a number
    ).
add_arg(f(group_concat(_), false), A, L0, L) :- !,
    (   L0 == '$error' -> L = L0 ; A = val(X) -> L = [X|L0] ; L = '$error' ).
add_arg(f(_, true), A, d(Set0, E0), d(Set, E)) :- !,
    (   A = val(X) -> ord_add_element(Set0, X, Set), E = E0 ; Set = Set0, E = true ).
add_arg(f(Op, _), A, B0, B) :-
    (   A = val(X) -> better_of(Op, X, B0, B) ; B = B0 ).

%   The better of a value and the best so far ('$none', '$error' or a value).
better_of(_, _, '$error', '$error') :- !.
better_of(_, X, '$none', X) :- !.
better_of(sample, X, B0, B) :- !,
    cep_nt(X, T), cep_nt(B0, T0),
    (   T @< T0 -> B = X ; B = B0 ).
better_of(min, X, B0, B) :- !, compared(<, X, B0, B).
better_of(max, X, B0, B) :- compared(>, X, B0, B).

%   A NaN among the numbers is the result, whatever their order (fn:min,
%   fn:max): < and > are false with it, so the fold kept it or not by
%   where it came; an xsd:double's NaN over an xsd:float's.
compared(Op, X, B0, B) :-
    (   cep_compare(Op, X, B0, R)
    ->  (   nan_kind(B0, K0)
        ->  ( K0 == float, nan_kind(X, double) -> B = X ; B = B0 )
        ;   nan_kind(X, _)
        ->  B = X
        ;   R == true
        ->  B = X
        ;   cep_compare(=, X, B0, true), first_text(X, B0)
        ->  B = X
        ;   B = B0
        )
    ;   X == B0
    ->  B = B0
    ;   B = '$error'
    ).

%   Of equal values (1 and 1.0E0, -0.0E0 and 0.0E0, a time in two zones)
%   the one whose value's N-Triples text is the least, whatever their order.
first_text(X, B0) :-
    cep_numeric_value(X, VX), cep_nt(VX, TX),
    cep_numeric_value(B0, VB), cep_nt(VB, TB),
    TX @< TB.

nan_kind(X, Kind) :-
    cep_numeric_value(X, V),
    (   float(V)
    ->  float_class(V, nan), Kind = double
    ;   V = l("NaN", xsd(float)), Kind = float
    ).

%   merge_acc(+Func, +Acc1, +Acc2, -Acc): the accumulator of two panes.
merge_acc(f(count, false), N1, N2, N) :- !, N is N1 + N2.
merge_acc(f(F, false), S1, S2, S) :- memberchk(F, [sum, avg]), !,
    (   S1 = s(A, N1), S2 = s(B, N2), cep_add(A, B, Sum) -> N is N1 + N2, S = s(Sum, N) ; S = err ).
merge_acc(f(group_concat(_), false), L1, L2, L) :- !,
    (   ( L1 == '$error' ; L2 == '$error' ) -> L = '$error' ; append(L1, L2, L) ).
merge_acc(f(_, true), d(A, E1), d(B, E2), d(Set, E)) :- !,
    ord_union(A, B, Set),
    (   E1 == true -> E = true ; E = E2 ).
merge_acc(f(Op, _), B1, B2, B) :-
    (   B2 == '$none' -> B = B1
    ;   B2 == '$error' -> B = '$error'
    ;   better_of(Op, B2, B1, B)
    ).

merge_accs(Funcs, Accs2, Accs1, Accs) :-
    maplist(merge_acc, Funcs, Accs1, Accs2, Accs).

%   acc_value(+Func, +Acc, -Value): the aggregate's value, or '$error'.
acc_value(f(count, false), N, N) :- !.
acc_value(f(count, true), d(Set, _), N) :- !, length(Set, N).
acc_value(f(group_concat(Sep), true), d(Set, E), V) :- !,
    (   E == true -> V = '$error' ; concatenated(Sep, Set, V) ).
acc_value(f(group_concat(Sep), false), L, V) :- !,
    (   L == '$error' -> V = L ; concatenated(Sep, L, V) ).
acc_value(f(F, true), d(Set, E), V) :- !,   % SUM and AVG of each value once
    (   E == true
    ->  V = '$error'
    ;   findall(val(X), member(X, Set), Args),
        foldl(add_arg(f(F, false)), Args, s(0, 0), S),
        acc_value(f(F, false), S, V)
    ).
acc_value(f(sum, false), S, V) :- !,
    (   S = s(Sum, _) -> V = Sum ; V = '$error' ).
acc_value(f(avg, false), S, V) :- !,
    (   S = s(_, 0) -> V = 0
    ;   S = s(Sum, N), cep_div(Sum, N, Avg) -> V = Avg
    ;   V = '$error'
    ).
acc_value(f(sample, _), B, V) :- !,
    (   B == '$none' -> V = '$error' ; V = B ).
acc_value(_, B, V) :-                       % MIN, MAX: a number's value (fn:min, fn:max)
    (   B == '$none' -> V = '$error' ; B == '$error' -> V = B ; cep_numeric_value(B, V) ).

%   GROUP_CONCAT's value: the STR of the values in the order of their
%   N-Triples text, joined by Sep; '$error' if one has no STR.
concatenated(Sep, Values, V) :-
    findall(T-X, ( member(X, Values), cep_nt(X, T) ), Pairs0),
    keysort(Pairs0, Pairs),
    pairs_values(Pairs, Sorted),
    (   maplist(str_of, Sorted, Strings)
    ->  atomic_list_concat(Strings, Sep, A),
        atom_string(A, V)
    ;   V = '$error'
    ).

str_of(X, S) :-
    cep_fn(str, [X], S).

%   The aggregates of a time-based window's panes: '$wpart'(Hash, Q, Last,
%   First, Key, Accs) holds the accumulators of the solutions of group Key
%   whose windows are First..Last (Hash of Q, Last, First and Key, so a
%   pane is found by the first argument's index). A solution is added to
%   its pane as it is stored (cep_accumulate/6, called by the rules'
%   '$wstore').
cep_accumulate(M, Q, L, F, Key0, Args) :-
    M:'$wkind'(Q, group(Funcs)),
    ground_key(Key0, Key),
    term_hash(p(Q, L, F, Key), H),
    (   retract(M:'$wpart'(H, Q, L, F, Key, Accs0))
    ->  true
    ;   maplist(empty_acc, Funcs, Accs0)
    ),
    maplist(add_arg, Funcs, Args, Accs0, Accs),
    assertz(M:'$wpart'(H, Q, L, F, Key, Accs)).

%   Drop the solutions and panes of Q that no window from K on holds (their
%   Last is before K), by their Last argument: '$wgone'(Q, G) says those
%   up to G are gone, and a solution stored later has a Last after it (it
%   ends after the evaluations made), so an evaluation visits only what
%   goes. The first time, and after a jump in event time, the facts are
%   scanned once instead.
expire(M, Q, K) :-
    Top is K - 1,
    (   M:'$wgone'(Q, G), Top - G =< 64
    ->  From is G + 1,
        forall(between(From, Top, L),
               ( forall(held(Q, P), retractall(M:'$wsol'(_, P, L, _, _, _, _))),
                 retractall(M:'$wpart'(_, Q, L, _, _, _)) ))
    ;   forall(( held(Q, P), clause(M:'$wsol'(_, P, L, _, _, _, _), true, Ref), L =< Top ), erase(Ref)),
        forall(( clause(M:'$wpart'(_, Q, L, _, _, _), true, Ref), L =< Top ), erase(Ref))
    ),
    retractall(M:'$wgone'(Q, _)),
    assertz(M:'$wgone'(Q, Top)).

%   What an evaluation reports (RSP-QL's stream operators): RStream every
%   row, IStream the rows not in the last evaluation, DStream the rows of
%   the last evaluation no longer there. Each row is an answer over the
%   window, r(Q, WindowStart, EvaluationTime, Fields), or at the
%   evaluation time, r(Q, EvaluationTime, EvaluationTime, Fields), for a
%   CONSTRUCT ('$winstant'(Q)): its triples are a stream timestamped at
%   the evaluation time (RSP-QL's R2S operators, C-SPARQL's REGISTER
%   STREAM), and so are those fed back.
report(M, Q, Ts0, Tau, New, Rows0, Rows) :-
    (   current_predicate(M:'$winstant'/1), M:'$winstant'(Q) -> Ts = Tau ; Ts = Ts0 ),
    M:'$wreport'(Q, Report),
    (   Report == rstream
    ->  Out = New
    ;   (   M:'$wlast'(Q, Old) -> true ; Old = [] ),    % row keys (row_key/2), a set
        findall(K, ( member(R, New), row_key(R, K) ), Keys0),
        sort(Keys0, Keys),
        retractall(M:'$wlast'(Q, _)),
        assertz(M:'$wlast'(Q, Keys)),
        (   Report == istream
        ->  ord_subtract(Keys, Old, OutKeys)
        ;   ord_subtract(Old, Keys, OutKeys)
        ),
        maplist(varnumbers, OutKeys, Out)           % their unbound fields unbound again
    ),
    findall(r(Q, Ts, Tau, Fields), member(Fields, Out), Answers),
    feed(M, Q, Ts, Tau, Out, Fed),
    append(Fed, Rows, Rows1),
    append(Answers, Rows1, Rows0).

%   A CONSTRUCT over a window whose triples other queries read: the
%   triples of the rows reported are events at Tau, fed back then (event
%   time has passed every instant before Tau and no later one), with the
%   answers they lead to (cep_runtime:cep_feed/3). They are never among
%   the events its windows keep ('$wevents'/2: '$wown'/1 while they are
%   fed), those of its parts p(Q, J) too: neither the content of its empty
%   groups nor an instant its subqueries make rows at. So its answers are
%   the same whether or not another query reads them, and a sliding
%   window does not keep itself reporting (docs/language.md, "The empty
%   group").
feed(M, Q, Ts, Tau, Out, Fed) :-
    (   Out \== [],
        current_predicate(M:'$wfeed'/3),
        clause(M:'$wfeed'(Q, _, _), _)
    ->  forall(( member(Fields, Out), M:'$wfeed'(Q, Fields, Triples), member(t(S, P, O), Triples) ),
               cep_queue(M, Q, S, P, O, Ts, Tau)),
        (   current_predicate(M:'$wevents'/2)
        ->  findall(Part, ( M:'$wevents'(Q, Part) ; M:'$wevents'(p(Q, _), Part) ), Own)
        ;   Own = []
        ),
        setup_call_cleanup(forall(member(Part, Own), assertz(M:'$wown'(Part))),
                           cep_feed(M, Tau, Fed),
                           retractall(M:'$wown'(_)))
    ;   Fed = []
    ).

%!  cep_subquery_rows(+Module, +Node, +Spec, +Solutions, +Time, -Rows) is det.
%
%   The rows of a subquery with its own aggregation or cut, evaluated at
%   the end of the instant Time over the solutions of its pattern that end
%   at it and those of the background alone, over [Time, Time]
%   (docs/language.md, "Subqueries"), taken as a set: one of the
%   background that one of the instant's equals is there once. The rows
%   are r(Fields, Start, End), a set, ordered and cut. Spec is sub(Kind, Order, Offset, Limit):
%   - Kind group(Funcs): Solutions are s(Values, Start, End); a row of
%     each group, over [Time, Time], made by the rules' '$wkey', '$wargs'
%     and '$wrow' of sq(Node), as a grouped query's; no solution is still
%     one group, the empty one (SPARQL 1.1, 11.2: COUNT(*) is 0), with
%     GROUP BY too, its keys unbound (the W3C test agg-empty-group; the
%     subquery runs in one group on Spark, which sees every instant);
%   - Kind plain: Solutions are the rows already.
%   Order (asc(I) or desc(I) per ORDER BY key, I the index of its field)
%   orders the rows as the top level's answers are (cep_order_rank/2:
%   cep.runtime.modifiers.order_ranks; rows that tie by their start, then
%   in the standard order of their fields); then Offset rows are skipped
%   and Limit (inf: all) kept.
cep_subquery_rows(M, N, sub(Kind, Order, Offset, Limit), Sols0, Te, Rows) :-
    row_set(Sols0, Sols),
    subquery_rows(Kind, M, sq(N), Sols, Te, Rows0),
    row_set(Rows0, Set0),
    findall(S-R, ( member(R, Set0), R = r(_, S, _) ), Keyed),
    keysort(Keyed, ByStart),                % ties by start, as the top level's
    pairs_values(ByStart, Set),
    ordered(Order, Set, Sorted),
    (   Limit == inf -> End = inf ; End is Offset + Limit ),
    slice(Sorted, 0, Offset, End, Rows).

%!  cep_subquery_rows_at(+Module, +Node, +Spec, +Instants, +Solutions, -Rows) is det.
%
%   The rows of a subquery with its own aggregation or cut over a window's
%   content: at each instant of Instants (those the window holds, a sorted
%   list) and each end of a solution, cep_subquery_rows/6 of the
%   solutions that end then (Solutions as there: s(Values, Start, End) or
%   r(Fields, Start, End)), as outside a window at each instant.
cep_subquery_rows_at(M, N, Spec, Instants, Sols, Rows) :-
    findall(E-Sol, ( member(Sol, Sols), arg(3, Sol, E) ), Keyed),
    keysort(Keyed, Sorted),
    group_pairs_by_key(Sorted, Groups),
    pairs_keys(Groups, Ends),
    ord_union(Instants, Ends, All),
    list_to_assoc(Groups, ByEnd),
    findall(Row, ( member(T, All),
                   ( get_assoc(T, ByEnd, At) -> true ; At = [] ),
                   cep_subquery_rows(M, N, Spec, At, T, RowsAt),
                   member(Row, RowsAt) ), Rows).

subquery_rows(plain, _, _, Rows, _, Rows).
subquery_rows(group(Funcs), M, Q, [], Te, Rows) :-
    !,
    empty_group(M, Q, Funcs, Te, Te, FieldLists),
    findall(r(Fields, Te, Te), member(Fields, FieldLists), Rows).
subquery_rows(group(Funcs), M, Q, Sols, Te, Rows) :-
    kind_rows(group(Funcs), M, Q, Sols, Te, Te, FieldLists),
    findall(r(Fields, Te, Te), member(Fields, FieldLists), Rows).

ordered([], Rows, Rows) :- !.
ordered(_, [], []) :- !.
ordered(Order, Rows, Sorted) :-
    maplist(functor_name, Order, Directions),
    atomic_list_concat(Directions, ' ', Head),
    findall(Line, ( member(r(Fields, _, _), Rows), key_line(Order, Fields, Line) ), Lines),
    atomic_list_concat([Head|Lines], '\n', Text),
    atom_string(Text, String),
    cep_order_rank(String, RankText),
    split_string(RankText, " ", "", RankStrings),
    maplist(number_string, Ranks, RankStrings),
    maplist(nth0_of(Rows), Ranks, Sorted).

functor_name(T, Name) :-
    functor(T, Name, _).

nth0_of(List, I, X) :-
    nth0(I, List, X).

%   The N-Triples texts of a row's ORDER BY keys, separated by tabs (an
%   unbound key: nothing).
key_line(Order, Fields, Line) :-
    findall(T, ( member(Key, Order), arg(1, Key, I), nth0(I, Fields, X), key_text(X, T) ), Texts),
    atomic_list_concat(Texts, '\t', Line).

key_text(X, T) :-
    (   var(X) -> T = '' ; cep_nt(X, T) ).

slice([], _, _, _, []).
slice([X|Xs], I, From, To, Out) :-
    (   To \== inf, I >= To
    ->  Out = []
    ;   I1 is I + 1,
        (   I >= From -> Out = [X|Rest] ; Out = Rest ),
        slice(Xs, I1, From, To, Rest)
    ).
