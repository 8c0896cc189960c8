/*  Included by every cep_values_* module (it is not a module of its own):
    xsd(Local) and rdf(Local) anywhere in a clause of the including file
    expand to the full datatype IRI atom when the file is loaded. The
    expansion is the including module's own term_expansion/2, so it
    touches no other module's clauses.
*/

term_expansion_iri(xsd(L), IRI) :-
    atom(L),
    atom_concat('http://www.w3.org/2001/XMLSchema#', L, IRI).
term_expansion_iri(rdf(L), IRI) :-
    atom(L),
    atom_concat('http://www.w3.org/1999/02/22-rdf-syntax-ns#', L, IRI).

expand_iris(T, T) :-
    var(T),
    !.
expand_iris(T, E) :-
    term_expansion_iri(T, E),
    !.
expand_iris(T, E) :-
    compound(T),
    !,
    compound_name_arguments(T, N, As),
    maplist(expand_iris, As, Es),
    compound_name_arguments(E, N, Es).
expand_iris(T, T).

term_expansion((H :- B), (H1 :- B1)) :-
    expand_iris(H, H1),
    expand_iris(B, B1),
    (H1 :- B1) \== (H :- B).
term_expansion(H, H1) :-
    H \= (_ :- _),
    H \= (:- _),
    expand_iris(H, H1),
    H1 \== H.
