/*  A rule set module with one band store, for the plunit suites of the
    band stores (test_fast.pl) and of their expiry (test_runtime.pl), and
    one with a plain SEQ store (cep_seq_add/7 and the rest), the same way.

    The band stores (cep_band_add/8 and the rest) keep the goals of a
    range-indexed SEQ store of a rule set module: in C, or as dynamic
    facts of the module without the library; the same goals in the same
    order either way (the suites run both).
*/

:- module(band_stores, [band_module/1, band_goals/5, seq_module/1, seq_goals/3]).

:- use_module('../cep_values').         % the band check: cep_compare/4
:- use_module('../cep_fast').

%!  band_module(-Module) is det.
%
%   The module of store g and its band list g_bands, emptied.
band_module(M) :-
    M = test_bands,
    dynamic(M:g/5),
    dynamic(M:g_bands/2),
    dynamic(M:'$expired'/2),
    retractall(M:g(_, _, _, _, _)),
    retractall(M:g_bands(_, _)),
    retractall(M:'$expired'(_, _)),
    cep_band_clear(M).

%!  band_goals(+Module, +Key, +Op, +Probe, -Goals) is det.
%
%   Values-Start of the goals of Key whose value passes Probe Op Value.
band_goals(M, Key, Op, Probe, Goals) :-
    findall(V-Ts, cep_band_goal(M, g, g_bands, Key, Op, Probe, _, _, V, Ts, _), Goals).

%!  seq_module(-Module) is det.
%
%   The module of plain store g, emptied.
seq_module(M) :-
    M = test_seq,
    dynamic(M:g/5),
    dynamic(M:'$expired'/2),
    retractall(M:g(_, _, _, _, _)),
    retractall(M:'$expired'(_, _)),
    cep_band_clear(M).

%!  seq_goals(+Module, ?Key, -Goals) is det.
%
%   Values-Start of the goals Key's probe meets, in order.
seq_goals(M, Key, Goals) :-
    findall(V-Ts, cep_seq_goal(M, g, Key, _, _, V, Ts, _), Goals).
