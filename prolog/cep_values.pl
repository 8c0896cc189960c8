/*  SPARQL 1.1 values, operators and functions over the Prolog encoding of
    RDF terms (SPARQL 1.1 sections 17.2-17.5).

    It takes encoded terms (see the docstring of cep/terms.py) and returns
    encoded terms:

        IRI                 atom                'http://...'
        blank node          bn(Label)
        simple/xsd:string   SWI string          "abc"
        language-tagged     lang(String, Tag)   (Tag lower case)
        xsd:integer         integer
        xsd:decimal         dec(R)              (R integer or rational)
        xsd:double          float
        xsd:boolean         bool(true|false)
        xsd:dateTime        dt(EpochMillis)     (UTC)
        xsd:duration        dur(Months, Millis)
        another lexical     lv(Lexical, DatatypeIRI, Value)   (of the six above:
          form                "01"^^xsd:integer is lv("01", 'http://...#integer', 1))
        any other literal   l(Lexical, DatatypeIRI)            (ill-typed ones too)

    An unbound SPARQL variable is an unbound Prolog variable.

    Every predicate is deterministic. Where SPARQL raises an evaluation
    error (a type error, an invalid lexical form, division by zero, an
    unbound argument) the predicate *fails*: the compiled expressions
    (cep/compile/expr.py) turn that failure into SPARQL's error value. Only
    programming errors (an unknown function or operator, a term that is not
    an encoded value where one must be written) raise exceptions; they are
    rendered by the prolog:message//1 section at the end of this file.
    Nothing built from data is ever called as a goal.

    Where SPARQL 1.1 leaves room, or where this module does more than
    SPARQL 1.1 asks, the comment next to the code says "Choice:".

    This module is the family's one entry (the runtime, the compiled
    rules and the user's predicates call cep_values:Name); the code is in
    one module per kind of value:

        cep_values_terms.pl       N-Triples text, lexical forms
        cep_values_numbers.pl     numeric lexical forms, doubles and floats
        cep_values_dates.pl       dateTime and duration, time functions
        cep_values_compare.pl     value classes, EBV, comparison, bands
        cep_values_arithmetic.pl  + - * / on numbers, dates and durations
        cep_values_functions.pl   SPARQL functions and REGEX
        cep_values_casts.pl       XSD casts
*/


:- module(cep_values,
          [ cep_nt/2,               % +Value, -Text
            cep_ebv/2,              % +Value, -Bool
            cep_compare/4,          % +Op, +A, +B, -Bool
            cep_band/2,             % +Value, -Band
            cep_numeric_value/2,    % +Value, -CanonicalValue
            cep_add/3,              % +A, +B, -Sum
            cep_sub/3,              % +A, +B, -Difference
            cep_mul/3,              % +A, +B, -Product
            cep_div/3,              % +A, +B, -Quotient
            cep_neg/2,              % +A, -Negated
            cep_pos/2,              % +A, -Value
            cep_fn/3,               % +Name, +Args, -Value
            cep_bnode/3,            % +String, +Solution, -BlankNode
            cep_regex/4,            % +Where, +Fn, +Args, -Value
            cep_regex_gave_up/1,    % -Wheres
            cep_time_duration/3,    % +StartMs, +EndMs, -Duration
            cep_time_point/2,       % +Ms, -DateTime
            cep_timestamp/2,        % +Ends, -DateTime
            cep_stream_end/4,       % ?Stream, +Of, +End, -Bound
            cep_regex_problem/3     % +Pattern, +Flags, -Problem
          ]).

:- reexport(cep_values_terms, [cep_nt/2]).
:- reexport(cep_values_compare, [cep_ebv/2, cep_compare/4, cep_band/2, cep_numeric_value/2]).
:- reexport(cep_values_arithmetic, [cep_add/3, cep_sub/3, cep_mul/3, cep_div/3, cep_neg/2, cep_pos/2]).
:- reexport(cep_values_functions, [cep_fn/3, cep_bnode/3, cep_regex/4, cep_regex_gave_up/1, cep_regex_problem/3]).
:- reexport(cep_values_dates, [cep_time_duration/3, cep_time_point/2, cep_timestamp/2, cep_stream_end/4]).
