/*  The contract between the runtime and a compiled rule set.

    A rule set is compiled (cep/compile) into a module of its own; the
    runtime (cep_runtime.pl, cep_window.pl) calls predicates of that module
    by name, and asserts and retracts some of its facts. This module lists
    every such predicate, in one place: its name and arity, when a rule set
    defines it, and what it means. The compiled rules' own helpers (goal
    stores g<N>_l/5, steps n<N>/4, '$wstore'/4, '$derive'/4, '$update'/4
    and the like) are the compiler's business and are not listed: the
    runtime never calls them.

    cep_load/2 checks a loaded rule set against this list
    (cep_contract_missing/2), and tests/unit/test_runtime_contract.py
    checks that compiled rule sets define what it lists and that the
    runtime (Prolog and Python) names no '$' predicate it does not list.
    docs/runtime.md explains the runtime around it.

    Each entry says when a rule set must define the predicate:
        always      every rule set
        chaining    a rule set whose CONSTRUCT rules feed triples back
                    ('$chaining'(true))
        windows     a rule set with a windowed query ('$window'/2 defined)
        group       a rule set with a GROUP BY over a window (a grouped
                    subquery's '$wkey', '$wargs' and '$wrow' of sq(Node)
                    stand beside them, cep_window:cep_subquery_rows/6 and,
                    over a window's content, cep_subquery_rows_at/6)
        extend      a rule set with a C-SPARQL AGGREGATE over a window
        paths       a rule set with a property path closure (p+, p*, p?)
                    outside a window (inside one it walks the window's content)
        pruning     a rule set whose sweep prunes windowed goal stores
                    ('$sweep'/2 calls cep_runtime:cep_expire/5 or
                    cep_seq_expire/5)
        optional    the runtime looks for it (current_predicate/1) first
        background  a background module (cep_load_background/2 and
                    cep_load_instances/2 make it; not a rule set)
        event_term  no predicate: a term the runtime (cep/runtime/batch.py)
                    wraps an event's predicate in, which the rules' leaf
                    clauses take apart
*/

:- module(cep_contract,
          [ cep_contract/4,          % ?Name, ?Arity, ?When, ?Meaning
            cep_contract_applies/2,  % +Module, ?When
            cep_contract_missing/2   % +Module, -Missing
          ]).

:- use_module(library(apply)).
:- use_module(library(lists)).

%!  cep_contract(?Name, ?Arity, ?When, ?Meaning:string) is nondet.
%
%   A predicate of a compiled rule set (or a background module, or an
%   event term) that the runtime uses. Dynamic ones are marked so in
%   Meaning: the runtime asserts or retracts their facts, and they are
%   part of the rule set's state (cep_runtime:cep_dump/2).

% -- every rule set: the event-driven rules (cep_runtime.pl)
cep_contract('$cep_rules', 1, always,
             "'$cep_rules'(Name): the rule set's name (cep_rs_ and a hash of its program); marks a loaded rule set").
cep_contract(cep_event, 6, always,
             "cep_event(S, P, O, Start, End, Answer): an event; its answers are the ways it succeeds, Answer = ans(Query, Values, Start, End)").
cep_contract('$clock', 2, always,
             "'$clock'(Next, Period), dynamic: the event time of the next sweep and the sweep period (ms); the runtime moves it on").
cep_contract('$sweep', 2, always,
             "'$sweep'(Module, Now): prune the windowed goal stores at event time Now (the paper's system-generated events)").
cep_contract('$instant_ends', 1, always,
             "'$instant_ends'(Bool): true if the runtime must stop at the end of every instant (deferred checks, group-scoped goals, updates, deadlines)").
cep_contract('$end_group', 0, always,
             "'$end_group': at the end of an instant, drop the goals scoped to it and apply the instant's updates").
cep_contract('$deferred', 1, always,
             "'$deferred'(Strata): lists of plan nodes (N, or fire(N) for a NOTSEQ deadline) whose checks run at the end of an instant, bottom-up").
cep_contract('$check', 3, always,
             "'$check'(Node, Instant, Answer): the deferred check of a node (an optional operator, a path, a subquery evaluated per instant) at the end of an instant; its answers").
cep_contract('$absence_nodes', 1, always,
             "'$absence_nodes'(Nodes): the NOTSEQ nodes of the plan ([] if none)").
cep_contract('$absence_next', 2, always,
             "'$absence_next'(Node, Deadline): the earliest deadline of a NOTSEQ node's pending solutions").
cep_contract('$absence_fire', 3, always,
             "'$absence_fire'(Node, Deadline, Answer): the pending solutions of a NOTSEQ node whose deadline is Deadline, as answers").
cep_contract('$chaining', 1, always,
             "'$chaining'(Bool): true if CONSTRUCT rules derive triples that queries of the rule set read (rule chaining)").
cep_contract('$seq_store', 1, always,
             "'$seq_store'(Store): Store/5 is a plain SEQ goal store, kept by the C library where it is built (cep_fast:cep_seq_add/7); a state's facts of it go there (cep_runtime:cep_restore/2)").
cep_contract('$project', 5, always,
             "'$project'(Query, Values, Start, End, Fields): an answer's row, its fields padded to the rule set's width").
cep_contract('$static', 2, optional,
             "'$static'(Query, Values): a solution of Query in the background alone, answered once at the first instant (cep_static/3)").
cep_contract('$answer_columns', 1, always,
             "'$answer_columns'(Columns): the queries whose rows are their values picked (cep_runtime:answer_columns/2); the runtime adds it when it loads the rule set").
cep_contract('$distinct', 1, always,
             "'$distinct'(Query): the rows of Query at one instant are a set (SELECT DISTINCT, CONSTRUCT); dynamic when no query is").
% -- rule chaining (cep_runtime.pl)
cep_contract('$waiting', 1, chaining,
             "'$waiting'(Node): the optional node's check still has mandatory solutions to decide at this instant").
cep_contract('$queued', 5, chaining,
             "'$queued'(S, P, O, Start, End), dynamic: a derived triple to feed back at this instant (cep_runtime:cep_queue/7)").
cep_contract('$derived', 6, chaining,
             "'$derived'(Hash, S, P, O, Start, End), dynamic: the triples derived at this instant, each queued once").
cep_contract('$rule', 2, chaining,
             "'$rule'(Query, Name): the name of a deriving rule, for the derivation limit's error").
% -- property paths over the graph of an instant (cep_paths.pl)
cep_contract('$pathev', 6, paths,
             "'$pathev'(Node, S, P, O, Start, End), dynamic: a triple of the instant that the path of Node walks at its end").
% -- goal stores pruned by window (cep_runtime:cep_expire/5)
cep_contract('$expired', 2, pruning,
             "'$expired'(Store, Generation), dynamic: the last generation of a windowed goal store dropped").
% -- windows and aggregates (cep_window.pl)
cep_contract('$window', 2, windows,
             "'$window'(Query, Spec): a windowed query, Spec time(Range, Step, Every, Origin) (Origin: RSP-QL's t0, or none) or count(N, events|triples)").
cep_contract('$wkind', 2, windows,
             "'$wkind'(Query, Kind): plain, group(Funcs) or extend(Funcs)").
cep_contract('$wreport', 2, windows,
             "'$wreport'(Query, Report): rstream, istream or dstream").
cep_contract('$wpolicy', 2, optional,
             "'$wpolicy'(Query, Policy): RSP-QL's report policy change or nonempty (none: the window close)").
cep_contract('$wseen', 2, optional,
             "'$wseen'(Query, Seen), dynamic: under the policy change, the hash of the content last reported (k(K): the last window K evaluated, of an unbounded grouped window)").
cep_contract('$wset', 1, windows,
             "'$wset'(Query), dynamic: the rows of an evaluation of Query are a set").
cep_contract('$wsol', 7, windows,
             "'$wsol'(Hash, Query, Last, First, Values, Start, End), dynamic: a stored solution and the windows that hold it").
cep_contract('$wpart', 6, windows,
             "'$wpart'(Hash, Query, Last, First, Key, Accs), dynamic: the aggregates of a pane of a grouped time window").
cep_contract('$wgone', 2, windows,
             "'$wgone'(Query, Last), dynamic: the solutions and panes up to window Last are dropped").
cep_contract('$wnext', 2, windows,
             "'$wnext'(Query, Time), dynamic: the next evaluation time (idle(Time) after an empty one)").
cep_contract('$wdone', 2, windows,
             "'$wdone'(Query, Time), dynamic: of a query with leading count and time-based windows, evaluated at every counted instant before Time").
cep_contract('$wlast', 2, windows,
             "'$wlast'(Query, Rows), dynamic: the rows of the last evaluation (IStream, DStream)").
cep_contract('$wempty', 1, optional,
             "'$wempty'(Query): Query aggregates without GROUP BY: every evaluation of its window gives a row, an empty window's too (COUNT(*) 0)").
cep_contract('$wrun', 2, optional,
             "'$wrun'(Query, Run), dynamic: of a '$wempty' query, its evaluations over an empty window in a row (skipped past cep_window:empty_run_limit/1)").
cep_contract('$winstant', 1, optional,
             "'$winstant'(Query): a CONSTRUCT's rows are answers at the evaluation time, not over the window").
cep_contract('$wcontent', 1, optional,
             "'$wcontent'(Query): Query (or a part p(Query, J) of a query whose groups have windows of their own) is evaluated over its window's content (its pattern has OPTIONAL, MINUS, [NOT] EXISTS, OPTIONALSEQ, a property path or a subquery with its own aggregation or cut)").
cep_contract('$wunit', 2, optional,
             "'$wunit'(Query, Part): Query's window holds an empty group, whose node keeps the window's events under Part (its content, which the report policies read)").
cep_contract('$wevents', 2, optional,
             "'$wevents'(Query, Part): Query's window keeps its events under Part: those of an empty group's node ('$wunit'/2), and the instants leaf of a subquery with its own aggregation or cut").
cep_contract('$wown', 1, optional,
             "'$wown'(Part), dynamic: while a windowed CONSTRUCT's triples are fed back, the parts its windows keep their events under ('$wevents'/2): they do not store them").
cep_contract('$win', 5, optional,
             "'$win'(Part, In, Values, Start, End): a solution stored under Part (part(Query, Node, Side)) that the window In holds").
cep_contract('$wsolve', 5, optional,
             "'$wsolve'(Query, In, Values, Start, End): a solution of a query evaluated over the content of the window In (time(K, Start, Close) or count(Cut, Tau, Low))").
cep_contract('$wcount', 2, windows,
             "'$wcount'(Instant, n(Triples, Events, EventsOnce)), dynamic: the triples and the events of each instant (once: without the records of copies alone), for count windows").
cep_contract('$wcut', 2, windows,
             "'$wcut'(Query, Instant), dynamic: the latest cutoff of a count window").
cep_contract('$wleads', 2, optional,
             "'$wleads'(Query, Parts): the parts p(Query, J) other than its first that give a query whose groups have windows of their own solutions on their own (UNION): it is evaluated when their windows hold one too").
cep_contract('$wparts', 2, optional,
             "'$wparts'(Query, Parts): the parts of a query whose groups have windows of their own, Parts a list of p(Query, J)-Spec (none: no clause holds)").
cep_contract('$wcombine', 5, optional,
             "'$wcombine'(Query, Contents, Values, Start, End): a solution of Query from its parts' solutions in their windows (Contents: a list of s(V, S, E) per part)").
cep_contract('$wkey', 3, group,
             "'$wkey'(Query, Values, Key): the group key of a solution of a GROUP BY").
cep_contract('$wargs', 5, group,
             "'$wargs'(Query, Values, Start, End, Args): the arguments of a GROUP BY's aggregates (val(X) or err)").
cep_contract('$wrow', 6, group,
             "'$wrow'(Query, Key, Values, Start, End, Fields): a group's row (HAVING, then the projection)").
cep_contract('$wkey', 4, extend,
             "'$wkey'(Query, J, Values, Key): the group key of a solution for the AGGREGATE clause J").
cep_contract('$wargs', 6, extend,
             "'$wargs'(Query, J, Values, Start, End, Arg): the argument of the AGGREGATE clause J").
cep_contract('$wrow', 6, extend,
             "'$wrow'(Query, Values, Start, End, AggValues, Fields): a solution's row with its AGGREGATE values").
cep_contract('$wserved', 1, optional,
             "'$wserved'(Query): a query whose groups have windows of their own joins a group's SERVICE views at its evaluations ('$wcombine')").
cep_contract('$wdeferred', 1, optional,
             "'$wdeferred'(Query): the query joins its SERVICE views at its evaluations (cep/compile/services.py)").
cep_contract('$wjoin', 4, optional,
             "'$wjoin'(Query, Values, Start, End): a stored solution of a '$wdeferred' query joined with its SERVICE views").
cep_contract('$wfeed', 3, optional,
             "'$wfeed'(Query, Fields, Triples): the template triples of a reported row of a windowed CONSTRUCT that other queries read").
% -- background modules (cep_runtime:cep_load_background/2, cep_load_instances/2)
cep_contract('$cep_background', 0, background,
             "'$cep_background': the module's t/3 facts (the RDFS closure of the background graph) are loaded").
cep_contract('$cep_instances', 0, background,
             "'$cep_instances': the module's i/3 facts (the instance triples of the background files) are loaded").
cep_contract(t, 3, background,
             "t(S, P, O): a triple of the background's RDFS closure").
cep_contract(i, 3, background,
             "i(S, P, O): an instance triple of the background's files (read by rule sets with updates)").
% -- event terms (cep/runtime/batch.py writes them, leaf rules take them apart)
cep_contract('$updates_only', 1, event_term,
             "'$updates_only'(P): the event's predicate P, for the update rules alone").
cep_contract('$in', 2, event_term,
             "'$in'(Stream, P): the event's predicate P, for an event of the stream Stream").
cep_contract('$copy', 2, event_term,
             "'$copy'(K, P): the event's predicate P, for the K-th copy (K >= 1) of a repeated event, which only the leaves of windowed queries read (cep/algebra/copies.py)").

%!  cep_contract_applies(+Module, ?When) is nondet.
%
%   The rule set loaded in Module has the feature When (see above): the
%   predicates listed for When must be defined in it. The tests of a
%   feature are those the runtime itself makes before it calls them.
cep_contract_applies(_, always).
cep_contract_applies(M, chaining) :-
    M:'$chaining'(true).
cep_contract_applies(M, windows) :-
    current_predicate(M:'$window'/2).
cep_contract_applies(M, group) :-
    current_predicate(M:'$wkind'/2),
    once(M:'$wkind'(_, group(_))).
cep_contract_applies(M, extend) :-
    current_predicate(M:'$wkind'/2),
    once(M:'$wkind'(_, extend(_))).
cep_contract_applies(M, paths) :-
    current_predicate(M:'$pathev'/6).
cep_contract_applies(M, pruning) :-
    clause(M:'$sweep'(_, _), Body),
    sub_term(Call, Body),
    compound(Call),
    (   Call = cep_runtime:cep_expire(_, _, _, _, _)
    ;   Call = cep_runtime:cep_seq_expire(_, _, _, _, _)
    ),
    !.

%!  cep_contract_missing(+Module, -Missing:list) is det.
%
%   The predicates (Name/Arity) the rule set loaded in Module must define
%   and does not.
cep_contract_missing(M, Missing) :-
    findall(Name/Arity,
            ( cep_contract(Name, Arity, When, _),
              \+ memberchk(When, [optional, background, event_term]),
              \+ current_predicate(M:Name/Arity),
              ( When == always -> true ; catch(cep_contract_applies(M, When), _, fail) )
            ),
            Missing0),
    sort(Missing0, Missing).
