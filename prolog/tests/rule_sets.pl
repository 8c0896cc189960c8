/*  Rule sets written by hand for the plunit suites of the runtime
    (test_runtime.pl, test_window.pl), the way cep/compile writes them:
    the clauses a test needs, and a default that does nothing for every
    other predicate the contract (cep_contract.pl) requires of each rule
    set.
*/

:- module(rule_sets, [rule_set_text/3, load_rule_set/2]).

:- use_module('../cep_runtime').
:- use_module(library(lists)).

%!  rule_set_text(+Module, +Clauses:string, -Text:string) is det.
%
%   The text of rule set Module: Clauses, and a default for each
%   predicate every rule set defines that Clauses do not name.
rule_set_text(M, Clauses, Text) :-
    Defaults = [ '$sweep'-"'$sweep'(_, _).",
                 '$clock'-"'$clock'(-4611686018427387904, 1).",
                 '$absence_nodes'-"'$absence_nodes'([]).",
                 '$absence_fire'-"'$absence_fire'(_, _, _) :- fail.",
                 '$absence_next'-"'$absence_next'(_, _) :- fail.",
                 '$chaining'-"'$chaining'(false).",
                 '$check'-"'$check'(_, _, _) :- fail.",
                 '$deferred'-"'$deferred'([]).",
                 '$end_group'-"'$end_group'.",
                 '$seq_store'-"'$seq_store'(_) :- fail.",
                 '$distinct'-":- dynamic('$distinct'/1).",
                 '$instant_ends'-"'$instant_ends'(true)." ],
    findall(D, ( member(Name-D, Defaults),
                 format(string(Quoted), "~q", [Name]),
                 \+ sub_string(Clauses, _, _, _, Quoted) ), Missing),
    format(string(Head), ":- module(~w, [cep_event/6]).~n'$cep_rules'(~w).~n:- dynamic('$clock'/2).", [M, M]),
    atomic_list_concat([Head, Clauses|Missing], '\n', Atom),
    atom_string(Atom, Text).

%!  load_rule_set(+Module, +Clauses:string) is det.
%
%   Loads rule set Module of Clauses (rule_set_text/3) with the limits
%   `cep run` sets by default.
load_rule_set(M, Clauses) :-
    rule_set_text(M, Clauses, Text),
    cep_load(M, Text),
    cep_set_limits(M, "100000 16777216 250000").
