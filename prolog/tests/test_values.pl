/*  plunit tests of prolog/cep_values.pl, the one entry of the value
    modules: what it exports and where each predicate lives. The values
    themselves are tested per module: test_values_terms.pl,
    test_values_numbers.pl, test_values_dates.pl, test_values_compare.pl,
    test_values_arithmetic.pl, test_values_functions.pl,
    test_values_casts.pl.

    Run from the repository root:
        swipl -q -g "consult('prolog/tests/test_values.pl'), run_tests" -t halt
*/

:- module(test_values, []).

:- use_module('../cep_values').
:- use_module(library(plunit)).
:- use_module(library(lists)).
:- use_module(library(pairs)).

:- begin_tests(cep_values).

%   What the compiled rules, the runtime and Python call (cep/compile/expr.py,
%   cep/runtime/session.py), and the module of each.
api([ cep_nt/2-cep_values_terms,
      cep_ebv/2-cep_values_compare, cep_compare/4-cep_values_compare, cep_band/2-cep_values_compare,
      cep_numeric_value/2-cep_values_compare,
      cep_add/3-cep_values_arithmetic, cep_sub/3-cep_values_arithmetic, cep_mul/3-cep_values_arithmetic,
      cep_div/3-cep_values_arithmetic, cep_neg/2-cep_values_arithmetic, cep_pos/2-cep_values_arithmetic,
      cep_fn/3-cep_values_functions, cep_bnode/3-cep_values_functions, cep_regex/4-cep_values_functions,
      cep_regex_gave_up/1-cep_values_functions, cep_regex_problem/3-cep_values_functions,
      cep_time_duration/3-cep_values_dates, cep_time_point/2-cep_values_dates,
      cep_timestamp/2-cep_values_dates, cep_stream_end/4-cep_values_dates ]).

test(exports) :-
    api(Api),
    pairs_keys(Api, Expected0),
    msort(Expected0, Expected),
    module_property(cep_values, exports(Exports0)),
    msort(Exports0, Exports),
    assertion(Exports == Expected).
test(each_from_its_family) :-
    api(Api),
    forall(member(Name/Arity-Module, Api),
           ( functor(Head, Name, Arity),
             assertion(predicate_property(cep_values:Head, imported_from(Module))) )).
test(qualified_calls) :-
    % the compiled rules call cep_values:Name(...)
    cep_values:cep_add(1, dec(1r2), S),
    assertion(S == dec(3r2)),
    cep_values:cep_nt(S, T),
    assertion(T == "\"1.5\"^^<http://www.w3.org/2001/XMLSchema#decimal>").
test(messages) :-
    forall(member(E, [ cep_error(unknown_function(f/1)),
                       cep_error(unknown_operator(<>)),
                       cep_error(not_a_value(foo)),
                       cep_error(regex_unavailable)
                     ]),
           ( phrase(prolog:message(error(E, _)), Lines),
             Lines \== [] )).

:- end_tests(cep_values).
