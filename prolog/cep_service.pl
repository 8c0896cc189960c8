/*  The local views of SERVICE patterns (docs/language.md, "SERVICE";
    cep/service/view.py keeps them): the solutions of each SERVICE pattern
    as facts, one entry per join key, so that joining a stream solution
    with a view is an indexed lookup, as a join with background triples is.

        entry(Rules, Service, Key, Id)     an entry of the view, numbered
        row(Rules, Service, Key, Row)      its solutions, v(X1, ..., Xn)
        key_positions(Rules, Service, Ps)  the arguments of Row that make Key
        touched(Rules, Service, Id, End)   the latest end of a stream
                                           solution that needed the entry
        silent_empty(Rules, Service)       SERVICE SILENT whose endpoint
                                           failed with nothing in the view:
                                           its one empty solution

    Rules is the module of the engine's rule set (each engine has its own
    views); Service the plan node of the SERVICE pattern. The facts are
    data, never called: values come in as terms read from text.
*/

:- module(cep_service,
          [ cep_service_row/5,       % +Rules, +Service, +End, ?Row, -Empty
            cep_service_touch/4,     % +Rules, +Service, +End, +Row
            cep_service_define/3,    % +Rules, +ServiceText, +PositionsText
            cep_service_set/3,       % +Rules, +ServiceText, +EntriesText
            cep_service_silent/3,    % +Rules, +ServiceText, +FlagText
            cep_service_touched/4,   % +Rules, +ServiceText, +SinceText, -Text
            cep_service_needed/3,    % +Rules, +ServiceText, +LinesText
            cep_service_forget/1     % +Rules
          ]).

:- use_module(library(apply)).
:- use_module(library(lists)).

:- dynamic entry/4, row/4, key_positions/3, touched/4, silent_empty/2.

%!  cep_service_forget(+Rules) is det.
%
%   Drop the views' entries of the rule set Rules (cep_unload/1).
cep_service_forget(M) :-
    retractall(entry(M, _, _, _)),
    retractall(row(M, _, _, _)),
    retractall(key_positions(M, _, _)),
    retractall(touched(M, _, _, _)),
    retractall(silent_empty(M, _)).

%!  cep_service_row(+Rules, +Service, +End, ?Row, -Empty) is nondet.
%
%   The view's solutions compatible with Row (the stream solution's values
%   of the SERVICE pattern's variables, the others unbound). End: the end
%   of the stream solution (or timeless), remembered per entry: the
%   entries the current window needs are the candidates of WSJ. Empty is
%   true for SILENT's one empty solution (its FILTER is not read), false
%   for a solution of the view.
cep_service_row(M, S, Te, Row, Empty) :-
    (   silent_empty(M, S)
    ->  Empty = true
    ;   Empty = false,
        key_positions(M, S, Ps),
        key_of(Ps, Row, Key),
        entry(M, S, Key, Id),
        touch(M, S, Id, Te),
        row(M, S, Key, Row)
    ).

%!  cep_service_touch(+Rules, +Service, +End, +Row) is det.
%
%   A stream solution of a query that joins the view at its window's
%   evaluations (cep/compile/services.py): the entry it will need is
%   remembered with End, nothing is joined yet.
cep_service_touch(M, S, Te, Row) :-
    (   key_positions(M, S, Ps),
        key_of(Ps, Row, Key),
        ground(Key),
        entry(M, S, Key, Id)
    ->  touch(M, S, Id, Te)
    ;   true
    ).

key_of([], _, k).
key_of([P], Row, Key) :-
    !,
    arg(P, Row, Key).
key_of(Ps, Row, Key) :-
    maplist([P, X]>>arg(P, Row, X), Ps, Xs),
    Key =.. [k|Xs].

touch(M, S, Id, Te) :-
    integer(Te),
    !,
    (   touched(M, S, Id, T0), T0 >= Te
    ->  true
    ;   retractall(touched(M, S, Id, _)),
        assertz(touched(M, S, Id, Te))
    ).
touch(_, _, _, _).

%!  cep_service_define(+Rules, +ServiceText, +PositionsText) is det.
%
%   A new, empty view whose key is made of the arguments at
%   PositionsText ("1 3") of a row.
cep_service_define(M, SText, Text) :-
    number_string(S, SText),
    split_string(Text, " ", " ", Parts0),
    exclude(==(""), Parts0, Parts),
    maplist(number_string, Ps, Parts),
    forget(M, S),
    assertz(key_positions(M, S, Ps)).

forget(M, S) :-
    retractall(key_positions(M, S, _)),
    retractall(entry(M, S, _, _)),
    retractall(row(M, S, _, _)),
    retractall(touched(M, S, _, _)),
    retractall(silent_empty(M, S)).

%!  cep_service_set(+Rules, +ServiceText, +EntriesText) is det.
%
%   EntriesText reads as a list of e(Id, Key, Rows): each entry replaces
%   the entry of its key (Rows may be [], a key the endpoint no longer
%   knows; its entry stays, with no solution).
cep_service_set(M, SText, Text) :-
    number_string(S, SText),
    term_string(Entries, Text),
    forall(member(e(Id, Key, Rows), Entries),
           ( retractall(entry(M, S, Key, _)),
             retractall(row(M, S, Key, _)),
             assertz(entry(M, S, Key, Id)),
             forall(member(Row, Rows), assertz(row(M, S, Key, Row))) )).

%!  cep_service_silent(+Rules, +ServiceText, +FlagText) is det.
%
%   "true": the SERVICE gives its one empty solution (SILENT, endpoint
%   failed, nothing in the view); "false": it reads its view.
cep_service_silent(M, SText, Flag) :-
    number_string(S, SText),
    retractall(silent_empty(M, S)),
    (   Flag == "true" -> assertz(silent_empty(M, S)) ; true ).

%!  cep_service_touched(+Rules, +ServiceText, +SinceText, -Text) is det.
%
%   The entries needed by a stream solution that ends after Since, as
%   lines "Id End"; those needed only up to Since are forgotten.
cep_service_touched(M, SText, SinceText, Text) :-
    number_string(S, SText),
    number_string(Since, SinceText),
    forall(( touched(M, S, Id, Te), Te =< Since ), retractall(touched(M, S, Id, Te))),
    findall(Line, ( touched(M, S, Id, Te), format(string(Line), "~w ~w~n", [Id, Te]) ), Lines),
    atomics_to_string(Lines, Text).

%!  cep_service_needed(+Rules, +ServiceText, +LinesText) is det.
%
%   The entries needed, lines "Id End" as cep_service_touched/4 gives them
%   (a view restored from an engine's state).
cep_service_needed(M, SText, Text) :-
    number_string(S, SText),
    split_string(Text, "\n", " ", Lines),
    forall(( member(Line, Lines), Line \== "" ),
           ( split_string(Line, " ", "", [IdText, TeText]),
             number_string(Id, IdText), number_string(Te, TeText),
             retractall(touched(M, S, Id, _)),
             assertz(touched(M, S, Id, Te)) )).
