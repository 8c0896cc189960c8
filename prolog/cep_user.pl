/*  The user's Prolog predicates, called from FILTER and SELECT expressions
    (`cep run --prolog FILE`; docs/language.md, "Prolog predicates in
    FILTER").

    A run's files are loaded from their text into one module of their own,
    named after a hash of their contents (cep_user_<hash>, made by
    cep/user_prolog.py), once per process. A query calls a predicate by
    its bare name; the compiler (cep/compile/expr.py) checks the name
    against the predicates *defined in those files* and writes the call
    with the name fixed, Module:name(A1, ..., An[, R]). The compiled goal
    uses this module for what surrounds the call:

    - cep_user_args/2 turns the encoded values (cep/terms.py) into the
      arguments' Prolog form (see cep_user_arg/2);
    - cep_user_ready/3 checks, before every call, that the name still
      denotes a predicate of the loaded files (so a definition gone since
      compilation can never let the name reach a built-in predicate);
    - cep_user_caught/2 makes an exception of the predicate a SPARQL
      error (the goal fails), reported once per predicate;
    - cep_user_result/2 turns a function's result back into a value.

    Nothing built from a query or an event is ever called as a goal: the
    values reach the user's predicate as arguments only.
*/

:- module(cep_user,
          [ cep_user_is_loaded/2,   % +Module, -Loaded:string
            cep_user_load_file/4,   % +Module, +Id, +Text, -Report:string
            cep_user_done/1,        % +Module
            cep_user_predicates/2,  % +Module, -Text:string
            cep_user_ready/3,       % +Module, +Name, +Arity
            cep_user_args/2,        % +Values, -Args
            cep_user_arg/2,         % +Value, -Arg
            cep_user_result/2,      % +Result, -Value
            cep_user_caught/2       % +Error, +Module:Name/Arity
          ]).

:- use_module(library(lists)).
:- use_module(library(apply)).
:- use_module(library(error)).
:- use_module(cep_values).

:- dynamic loaded/1, source/2, loading/2, seen/3, reported/1.


                 /*******************************
                 *            LOADING           *
                 *******************************/

%!  cep_user_is_loaded(+Module, -Loaded:string) is det.
%
%   Loaded is "true" when Module's files were all loaded (cep_user_done/1)
%   in this process, else "false".

cep_user_is_loaded(M, Loaded) :-
    (   loaded(M)
    ->  Loaded = "true"
    ;   Loaded = "false"
    ).

%!  cep_user_load_file(+Module, +Id, +Text, -Report:string) is det.
%
%   Load the text of a user file into Module. Id is the file's absolute
%   path, the name of the source in SWI-Prolog's messages and in
%   predicate_property/2. SWI-Prolog loads a plain (non-module) file into
%   one module only, so when Id is loaded already into another module (an
%   older version of the file, or another set of files, in this process),
%   this copy is the source 'Id (Module)' and both stay. The errors and
%   warnings of the load are not printed but returned, a line each: Kind
%   TAB Location TAB Message, where Kind is error or warning and Location
%   is Id:Line:Column, Id:Line or Id.

cep_user_load_file(M, Id, Text, Report) :-
    must_be(atom, M),
    must_be(atom, Id),
    source_id(Id, M, Source),
    retractall(seen(_, _, _)),
    retractall(loading(_, _)),
    assertz(loading(Id, Source)),
    setup_call_cleanup(
        asserta((user:message_hook(Msg, Kind, _) :- cep_user:captured(Msg, Kind)), Ref),
        catch(setup_call_cleanup(open_string(Text, In),
                                 load_files(M:Source, [stream(In), silent(true)]),
                                 close(In)),
              Error,
              captured(Error, error)),
        ( erase(Ref), retractall(loading(_, _)) )),
    (   source(M, Source)
    ->  true
    ;   assertz(source(M, Source))
    ),
    findall(Line, report_line(Line), Lines),
    atomic_list_concat(Lines, Report0),
    atom_string(Report0, Report).

source_id(Id, M, Source) :-
    (   source_file_property(Id, load_context(Other, _, _)),
        Other \== M,
        \+ source_file_property(Id, module(_))
    ->  format(atom(Source), "~w (~w)", [Id, M])
    ;   Source = Id
    ).

report_line(Line) :-
    retract(seen(Kind, Where, Message)),
    format(atom(Line), "~w\t~w\t~w~n", [Kind, Where, Message]).

%   The message hook while a user file loads: keep its errors and
%   warnings (and print them not); let every other message through.
captured(Msg, Kind) :-
    (   Kind == error
    ;   Kind == warning
    ),
    loading(Id, Source),
    !,
    message_location(Msg, Source, Where0),
    (   atom_concat(Source, Rest, Where0)       % the file as the user named it
    ->  atom_concat(Id, Rest, Where)
    ;   Where = Where0
    ),
    message_text(Msg, Text),
    assertz(seen(Kind, Where, Text)).

message_location(error(syntax_error(_), file(F, L, C, _)), _, Where) :-
    !,
    format(atom(Where), "~w:~d:~d", [F, L, C]).
message_location(error(syntax_error(_), stream(_, L, C, _)), Id, Where) :-
    !,
    format(atom(Where), "~w:~d:~d", [Id, L, C]).
message_location(_, Id, Where) :-
    (   source_location(F, L)
    ->  format(atom(Where), "~w:~d", [F, L])
    ;   Where = Id
    ).

%   A message's text on one line (its lines joined by "; "); a syntax
%   error without its location, which the report gives apart.
message_text(error(syntax_error(What), _), Text) :-
    !,
    message_text_(error(syntax_error(What), _), Text).
message_text(Msg, Text) :-
    message_text_(Msg, Text).

message_text_(Msg, Text) :-
    (   catch(( '$messages':translate_message(Msg, Lines, []),
                with_output_to(string(S), print_message_lines(current_output, '', Lines)) ),
              _, fail)
    ->  true
    ;   format(string(S), "~q", [Msg])
    ),
    split_string(S, "\n", " \t", Parts0),
    exclude(==(""), Parts0, Parts),
    atomic_list_concat(Parts, '; ', Text0),
    split_string(Text0, "\t", "", Pieces),
    atomic_list_concat(Pieces, ' ', Text).

%!  cep_user_done(+Module) is det.
%
%   Module's files are all loaded: cep_user_is_loaded/2 says so from now on.

cep_user_done(M) :-
    (   loaded(M)
    ->  true
    ;   assertz(loaded(M))
    ).

%!  cep_user_predicates(+Module, -Text:string) is det.
%
%   The predicates a query may call: those visible in Module whose
%   definition is in one of Module's files (a module file's exported
%   predicates included; built-in and library predicates never), a line
%   each: Arity TAB Name.

cep_user_predicates(M, Text) :-
    findall(Line,
            ( predicate_property(M:Head, file(F)),
              source(M, F),
              functor(Head, Name, Arity),
              callable_name(Name),
              format(atom(Line), "~d\t~w~n", [Arity, Name])
            ),
            Lines0),
    sort(Lines0, Lines),
    atomic_list_concat(Lines, Text0),
    atom_string(Text0, Text).

callable_name(Name) :-
    \+ sub_atom(Name, 0, _, _, '$'),
    \+ sub_atom(Name, _, _, _, '\t'),
    \+ sub_atom(Name, _, _, _, '\n').


                 /*******************************
                 *            CALLING           *
                 *******************************/

%!  cep_user_ready(+Module, +Name, +Arity) is det.
%
%   Name/Arity is still a predicate of Module's files. Checked before
%   every call: were the definition gone (abolished, its file unloaded),
%   the call Module:Name(...) would reach whatever else the name denotes
%   there, a built-in predicate perhaps.
%
%   @error cep_error(user_predicate_gone(Module:Name/Arity))

cep_user_ready(M, Name, Arity) :-
    functor(Head, Name, Arity),
    (   predicate_property(M:Head, file(F)),
        source(M, F)
    ->  true
    ;   throw(error(cep_error(user_predicate_gone(M:Name/Arity)), _))
    ).

%!  cep_user_args(+Values:list, -Args:list) is semidet.
%!  cep_user_arg(+Value, -Arg) is semidet.
%
%   The Prolog form in which a user predicate receives a value:
%
%       IRI                         atom (the full IRI)
%       simple literal, xsd:string  string
%       xsd:integer (and derived)   integer
%       xsd:decimal, xsd:float,
%       xsd:double                  float
%       xsd:boolean                 true or false
%       language-tagged literal     lang(String, Tag)   (Tag a lower-case atom)
%       blank node                  bnode(Label)        (Label an atom)
%       any other literal           lit(Lexical, Datatype)
%                                   (a string and the datatype IRI, an atom;
%                                   xsd:dateTime, xsd:duration, ill-typed
%                                   literals, other datatypes)
%
%   Fails (an error: the call is not made) on an unbound value.

cep_user_args([], []).
cep_user_args([V|Vs], [A|As]) :-
    cep_user_arg(V, A),
    cep_user_args(Vs, As).

cep_user_arg(V, _) :-
    var(V),
    !,
    fail.
cep_user_arg(V, A) :-
    (   ( atom(V) ; string(V) ; integer(V) ; float(V) )
    ->  A = V
    ;   arg_(V, A0)
    ->  A = A0
    ;   cep_numeric_value(V, V1),               % "01"^^xsd:integer, "1.0e0"^^xsd:double, ...
        V1 \== V
    ->  cep_user_arg(V1, A)
    ;   cep_fn(isNumeric, [V], bool(true))      % l(Lexical, T) of a numeric T
    ->  V = l(_, T),
        (   T == 'http://www.w3.org/2001/XMLSchema#float'
        ->  cep_fn(cast('http://www.w3.org/2001/XMLSchema#double'), [V], A)
        ;   cep_fn(cast('http://www.w3.org/2001/XMLSchema#integer'), [V], A)
        )
    ;   cep_fn(str, [V], Lexical),
        cep_fn(datatype, [V], Datatype),
        A = lit(Lexical, Datatype)
    ).

arg_(bool(B), B).
arg_(dec(R), F) :-
    catch(F is float(R), _, fail).         % beyond the floats: an error
arg_(lang(S, Tag), lang(S, Tag)).
arg_(bn(Label), bnode(Label)).

%!  cep_user_result(+Result, -Value) is semidet.
%
%   The value of a function's result: an integer is an xsd:integer, a
%   float an xsd:double, a string a simple literal, true and false
%   xsd:booleans, any other atom an IRI. Fails (an error) on anything
%   else: an unbound result, a compound term, a rational number, ...

cep_user_result(R, V) :-
    (   ( integer(R) ; float(R) ; string(R) )
    ->  V = R
    ;   R == true
    ->  V = bool(true)
    ;   R == false
    ->  V = bool(false)
    ;   atom(R)
    ->  V = R
    ).

%!  cep_user_caught(+Error, +Predicate) is failure.
%
%   The recovery of a user predicate's call that raised Error: the call
%   is a SPARQL error (the FILTER rejects the solution), so this fails.
%   The first exception of each predicate is printed as a warning; an
%   abort goes on up, and so does a signal (Ctrl-C or SIGTERM stopping
%   the run where it is: cep/runtime/session.py, interruptible).

cep_user_caught(E, _) :-
    (   E == '$aborted'
    ;   E = unwind(_)
    ;   E = time_limit_exceeded
    ;   E = error(signal(_, _), _)
    ),
    !,
    throw(E).
cep_user_caught(E, Predicate) :-
    (   reported(Predicate)
    ->  true
    ;   assertz(reported(Predicate)),
        print_message(warning, cep_user_raised(Predicate, E))
    ),
    fail.


                 /*******************************
                 *           MESSAGES           *
                 *******************************/

:- multifile prolog:message//1.

prolog:message(cep_user_raised(_:Name/Arity, E)) -->
    [ 'cep: the Prolog predicate ~q raised an exception; the call is an error '-[Name/Arity],
      '(the FILTER rejects the solution; this predicate\'s later exceptions are not reported):', nl,
      '    ' ],
    translated(E).
prolog:message(error(cep_error(user_predicate_gone(M:Name/Arity)), _)) -->
    [ 'cep: the user predicate ~q is no longer defined by the --prolog files (in ~w)'-[Name/Arity, M] ].

translated(E) -->
    { catch('$messages':translate_message(E, Lines, []), _, fail) },
    !,
    Lines.
translated(E) -->
    [ '~q'-[E] ].
