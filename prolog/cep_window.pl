/*  Windows and aggregates of continuous queries (docs/language.md,
    "Windows and aggregates"): C-SPARQL's FROM STREAM windows with RSP-QL's
    definitions, SPARQL 1.1's GROUP BY and aggregates (section 18.5),
    C-SPARQL's AGGREGATE clauses, and RSP-QL's RStream/IStream/DStream.

    The compiled rules (cep/compile/windows.py) store each solution of a
    windowed query's pattern instead of answering it:

        '$wsol'(Q, Last, First, Hash, Values, Start, End)

    First and Last are the indexes k of the first and last window closes
    k*Step whose window (k*Step - Range, k*Step] holds the solution's
    interval (a count window stores 0, 0). Event time drives evaluation:
    cep_close/3 evaluates every evaluation time before Now (or, at the end
    of the stream, every one whose window still holds a solution), from
    the solutions stored, and drops those no later window can hold. So a
    window closes when event time passes it, whether or not an event of
    the same key arrives, and memory holds one window of solutions.

    The rules module M provides, per windowed query Q:
        '$window'(Q, Spec)       time(Range, Step, Every) or count(N)
        '$wkind'(Q, Kind)        plain, group(Funcs) or extend(Funcs)
        '$wreport'(Q, Report)    rstream, istream or dstream
        '$wset'(Q)               the rows of an evaluation are a set
        '$wkey'(Q, V, Key)       group: the group key of a solution
        '$wargs'(Q, V, S, E, As) the aggregates' arguments (val(X) or err)
        '$wrow'(Q, ...)          the row of a group (or an extended
                                 solution): HAVING, then the projection
        '$project'(Q, V, S, E, Fields)  plain: a solution's row
    and the dynamic facts '$wsol'/7, '$wnext'/2 (the next evaluation
    time), '$wlast'/2 (the rows of the last evaluation, for IStream and
    DStream) and '$wcount'/2 (events per instant, for count windows): they
    are part of the rule set's state (cep_runtime:cep_dump/2).
*/

:- module(cep_window,
          [ cep_close/3,           % +Module, +ArgsText, -AnswersText
            cep_window_status/2,   % +Module, -StatusText
            cep_window_span/5      % +Spec, +Start, +End, -First, -Last
          ]).

:- use_module(library(lists)).
:- use_module(library(apply)).
:- use_module(library(pairs)).
:- use_module(library(varnumbers)).
:- use_module(library(ordsets)).
:- use_module(cep_values).
:- use_module(cep_fast).
:- use_module(cep_runtime, [cep_absence/3]).

%!  cep_window_span(+Spec, +Start, +End, -First, -Last) is semidet.
%
%   The window closes k*Step (First =< k =< Last) whose window
%   (k*Step - Range, k*Step] holds [Start, End]: k*Step >= End and
%   k*Step - Range < Start. Fails when no window holds it (a solution
%   longer than the range, or one in the gap of a hopping window).
cep_window_span(time(Range, Step, _), Ts, Te, F, L) :-
    F is -((-Te) div Step),                 % ceiling(Te / Step)
    L is -((-(Ts + Range)) div Step) - 1,   % the last k with k*Step < Ts + Range
    F =< L.
cep_window_span(count(_), _, _, 0, 0).

%!  cep_close(+Module, +ArgsText, -AnswersText) is det.
%
%   ArgsText is "now Now T1 N1 T2 N2 ..." (event time has passed every
%   instant before Now; the instants Ti of the batch just processed had Ni
%   events each) or "final Last ..." (the stream ended with its last event
%   at Last: time-based windows are evaluated until they hold nothing,
%   count windows at the instants up to Last). Returns the answer lines of
%   the NOTSEQ deadlines passed (before Now, or up to Last:
%   cep_runtime:cep_absence/3) and of the window evaluations now due, in
%   the format of cep_runtime:cep_push/3.
cep_close(M, ArgsText, Text) :-
    split_string(ArgsText, " ", "", [How, TimeText|CountTexts]),
    number_string(Time, TimeText),
    maplist(number_string, Counts, CountTexts),
    count_instants(M, Counts),
    (   How == "final" -> Limit is Time + 1 ; Limit = Time ),
    cep_absence(M, Limit, Fired),           % NOTSEQ deadlines first: their answers may be in windows
    (   current_predicate(M:'$window'/2)   % a rule set with NOTSEQ may have no window
    ->  findall(Q-Spec, M:'$window'(Q, Spec), Windows)
    ;   Windows = []
    ),
    foldl(close_query(M, How, Time), Windows, Rows, []),
    append(Fired, Rows, All),
    cep_answer_text(All, Text).

count_instants(_, []).
count_instants(M, [T, N|Rest]) :-
    (   M:'$window'(_, count(_))
    ->  assertz(M:'$wcount'(T, N))
    ;   true
    ),
    count_instants(M, Rest).

close_query(M, How, Time, Q-Spec, Rows0, Rows) :-
    (   Spec = time(_, _, _)
    ->  (   How == "final" -> Limit = inf ; Limit = Time ),
        close_time(M, Q, Spec, Limit, Rows0, Rows)
    ;   (   How == "final" -> Limit is Time + 1 ; Limit = Time ),
        findall(T, ( M:'$wcount'(T, _), T < Limit, \+ evaluated(M, Q, T) ), Ts),
        sort(Ts, Taus),
        foldl(evaluate(M, Q, Spec), Taus, Rows0, Rows)
    ).

%   A time-based window is evaluated at every multiple of Every (its step
%   unless COMPUTED EVERY says otherwise) before Limit, from the first one
%   whose window can hold a stored solution; evaluations with nothing
%   stored and nothing reported before are skipped. At the end of the
%   stream (Limit inf) it is evaluated until its windows hold nothing:
%   every window that holds a solution reports.
close_time(M, Q, Spec, Limit, Rows0, Rows) :-
    Spec = time(_, Step, Every),
    (   next_time(M, Q, Step, Every, Tau),
        Tau < Limit
    ->  evaluate(M, Q, Spec, Tau, Rows0, Rows1),
        close_time(M, Q, Spec, Limit, Rows1, Rows)
    ;   Rows0 = Rows
    ).

%!  cep_window_status(+Module, -Text) is det.
%
%   "Due Held": Due the next evaluation time of a time-based window that
%   can report something ("none" if none), Held "true" while the windows
%   hold anything the next evaluations need (solutions, the last rows of
%   an IStream or DStream query, the counts of a count window). The Spark
%   engine sets a group's event-time timeout to Due and keeps the group
%   while Held.
cep_window_status(M, Text) :-
    findall(Tau, ( M:'$window'(Q, time(_, Step, Every)),
                   next_time(M, Q, Step, Every, Tau) ), Taus),
    (   Taus == [] -> Due = none ; min_list(Taus, Due) ),
    (   ( M:'$wsol'(_, _, _, _, _, _, _) ; reported(M, _) ; M:'$wcount'(_, _) )
    ->  Held = true
    ;   Held = false
    ),
    format(string(Text), "~w ~w", [Due, Held]).

evaluated(M, Q, T) :-
    M:'$wnext'(Q, Next),
    T < Next.

%   The first evaluation time not yet evaluated: the stored one, or after a
%   skip the first multiple of Every at or after the earliest window close
%   a stored solution is in.
next_time(M, Q, Step, Every, Tau) :-
    (   M:'$wnext'(Q, Tau0)
    ->  true
    ;   Tau0 = none
    ),
    (   Tau0 \== none, reported(M, Q)
    ->  Tau = Tau0
    ;   aggregate_all(min(F), M:'$wsol'(Q, _, F, _, _, _, _), First),
        Earliest is -((-(First * Step)) div Every) * Every,
        (   Tau0 == none -> Tau = Earliest ; Tau is max(Tau0, Earliest) )
    ).

reported(M, Q) :-
    M:'$wlast'(Q, Rows),
    Rows \== [].

%   One evaluation of Q at Tau: the window's solutions, their rows, what is
%   reported of them, and the solutions no later window holds dropped.
%   Evaluations stop (for this call) once nothing is stored and the last
%   rows are empty: next_time/5 resumes from the next stored solution.
evaluate(M, Q, Spec, Tau, Rows0, Rows) :-
    (   M:'$wnext'(Q, Next), Tau < Next
    ->  Rows0 = Rows                        % evaluated already (a skip computed it again)
    ;   window_solutions(Spec, M, Q, Tau, Ts, Sols),
        rows(M, Q, Sols, Ts, Tau, New),
        report(M, Q, Ts, Tau, New, Rows0, Rows),
        (   Spec = time(_, _, Every) -> After is Tau + Every ; After is Tau + 1 ),
        retractall(M:'$wnext'(Q, _)),
        assertz(M:'$wnext'(Q, After))
    ).

%   The solutions in the window evaluated at Tau, and the window's start.
window_solutions(time(Range, Step, _), M, Q, Tau, Ts, Sols) :-
    K is Tau div Step,
    Ts is K * Step - Range,
    forall(( clause(M:'$wsol'(Q, L, _, _, _, _, _), true, Ref), L < K ), erase(Ref)),
    findall(s(V, S, E), ( M:'$wsol'(Q, _, F, _, V, S, E), F =< K ), Sols).
window_solutions(count(N), M, Q, Tau, Cut, Sols) :-
    cutoff(M, N, Tau, Cut),
    forall(( clause(M:'$wsol'(Q, _, _, _, _, S, _), true, Ref), S < Cut ), erase(Ref)),
    findall(s(V, S, E), ( M:'$wsol'(Q, _, _, _, V, S, E), E =< Tau ), Sols),
    forget_counts(M, Cut).

%   A count window at instant T holds the last N events: those of the
%   latest instants up to T whose counts add up to N, the oldest of them
%   whole (simultaneous events have no order). Cut is that instant.
cutoff(M, N, T, Cut) :-
    findall(I-C, ( M:'$wcount'(I, C), I =< T ), Pairs0),
    sort(0, @>=, Pairs0, Pairs),
    take_count(Pairs, N, T, Cut).

take_count([], _, T, T).
take_count([I-C|Rest], N, _, Cut) :-
    (   C >= N ; Rest == [] ),
    !,
    Cut = I.
take_count([_-C|Rest], N, _, Cut) :-
    N1 is N - C,
    Rest = [I|_],
    take_count(Rest, N1, I, Cut).

%   Counts of instants before the oldest cutoff any count query still needs.
forget_counts(M, Cut) :-
    (   M:'$window'(Q2, count(_)), \+ M:'$wnext'(Q2, _)
    ->  true                                % a query not evaluated yet needs them all
    ;   forall(( clause(M:'$wcount'(I, _), true, Ref), I < Cut,
                 \+ ( M:'$window'(Q2, count(_)), M:'$wnext'(Q2, Next), Next =< I ) ),
               erase(Ref))
    ).

%   The rows of an evaluation: lists of field values (cep_runtime's
%   fields), in the standard order of terms; a set unless the query's
%   rows are a multiset (a plain SELECT without DISTINCT).
rows(_, _, [], _, _, []) :- !.
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

%   An unbound grouping variable groups as one value (SPARQL 11.2).
ground_key(Key0, Key) :-
    copy_term(Key0, Key),
    term_variables(Key, Vs),
    maplist(=('$unbound'), Vs).

%   aggregates(+Funcs, +ArgLists, -Values): ArgLists has one list per
%   solution of a group, an argument per aggregate; a Value is the
%   aggregate's value, or '$error' (the variable it binds stays unbound).
aggregates(Funcs, ArgLists, Values) :-
    transpose_args(Funcs, ArgLists, Columns),
    maplist(aggregate, Funcs, Columns, Values).

transpose_args([], _, []).
transpose_args([_|Fs], ArgLists, [Col|Cols]) :-
    maplist(first_rest, ArgLists, Col, Rests),
    transpose_args(Fs, Rests, Cols).

first_rest([A|As], A, As).

%!  aggregate(+Func, +Args, -Value) is det.
%
%   SPARQL 1.1 section 18.5.1 over a group's arguments (val(X), or err
%   where the expression is an error or unbound): f(Name, Distinct).
aggregate(f(count, D), Args, N) :-
    bound_values(D, Args, Vs),
    length(Vs, N).
aggregate(f(sum, D), Args, Sum) :-
    (   memberchk(err, Args)
    ->  Sum = '$error'                      % Sum is op:numeric-add of all: one error, an error
    ;   bound_values(D, Args, Vs),
        (   foldl(add, Vs, 0, Sum0) -> Sum = Sum0 ; Sum = '$error' )
    ).
aggregate(f(avg, D), Args, Avg) :-
    aggregate(f(sum, D), Args, Sum),
    bound_values(D, Args, Vs),
    length(Vs, N),
    (   Sum == '$error'
    ->  Avg = '$error'
    ;   N =:= 0
    ->  Avg = 0
    ;   cep_div(Sum, N, Avg0)
    ->  Avg = Avg0
    ;   Avg = '$error'
    ).
aggregate(f(min, D), Args, Min) :-
    bound_values(D, Args, Vs),
    extreme(Vs, <, Min).
aggregate(f(max, D), Args, Max) :-
    bound_values(D, Args, Vs),
    extreme(Vs, >, Max).
aggregate(f(sample, D), Args, Sample) :-
    bound_values(D, Args, Vs),
    (   Vs == []
    ->  Sample = '$error'
    ;   findall(Text-V, ( member(V, Vs), cep_nt(V, Text) ), Pairs),
        keysort(Pairs, [_-Sample|_])        % Choice: the value with the least N-Triples text
    ).

add(V, S0, S) :-
    cep_add(S0, V, S).

%   The values the aggregate reads: the bound ones (COUNT, MIN, MAX and
%   SAMPLE leave errors out), each once with DISTINCT.
bound_values(D, Args, Vs) :-
    findall(V, member(val(V), Args), Vs0),
    (   D == true -> sort(Vs0, Vs) ; Vs = Vs0 ).

%   Choice: MIN and MAX compare with SPARQL's < and >; values that do not
%   compare (an IRI and a number) make the aggregate an error.
extreme([], _, '$error').
extreme([V|Vs], Op, X) :-
    foldl(better(Op), Vs, V, X0),
    X = X0.

better(_, _, '$error', '$error') :- !.
better(Op, V, Best, X) :-
    (   cep_compare(Op, V, Best, B)
    ->  ( B == true -> X = V ; X = Best )
    ;   V == Best
    ->  X = Best
    ;   X = '$error'
    ).

%   What an evaluation reports (RSP-QL's stream operators): RStream every
%   row, IStream the rows not in the last evaluation, DStream the rows of
%   the last evaluation no longer there. Each row is an answer over the
%   window: r(Q, WindowStart, EvaluationTime, Fields).
report(M, Q, Ts, Tau, New, Rows0, Rows) :-
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
    append(Answers, Rows, Rows0).
