"""Hypothesis strategies: small random RDF streams and random EP-SPARQL
algebra (no parser involved), for the property tests.

Streams use few keys so that joins meet: 2-3 subjects, 2-3 predicates,
integer objects 0..4, start times 0..12 ms with many ties, and (optionally)
events that last a few ms. Queries are SELECT * over trees of every pattern
operator, with FILTERs and join conditions over the integer variables, BOUND,
!, &&, || and the interval functions (durations in the same ms range) and
C-SPARQL's timestamp(?v), of bound, optional and never bound variables:
`queries` (trees up to depth 3), `operator_queries` (one operator over small
operands: its edge cases come up often), `projected_queries` (projection and
`expr AS ?e`), `timestamp_queries` (the timestamp of every variable),
`construct_queries`, `query_sets` (several queries sharing a
pattern, for one engine), `expression_queries` over `typed_streams`
(values of every datatype the expressions know, for the SPARQL functions),
and `service_queries` (SERVICE joined, in OPTIONAL or deep in a plain or
windowed pattern, with OPTIONAL, FILTER and blank nodes inside) with a
snapshot of their endpoint's graph (`endpoint_graphs`).

Seeds: every test decorated with `seeded` runs from CEP_SEED when that is set
(to replay a failure), otherwise from a fresh random seed; `note_seed()` puts
the seed into the failure report. `examples(n)` scales example counts by
CEP_EXAMPLES_SCALE.
"""

from __future__ import annotations

import dataclasses
import os
import random
from collections import Counter

from hypothesis import assume, note, seed
from hypothesis import strategies as st

from cep import reference, terms
from cep.algebra import ops, sexpr
from cep.binarize import CONTENT_OPERATORS
from cep.events import Event

EX = "http://example.org/"
SUBJECTS = [terms.iri(EX + n) for n in ("s1", "s2", "s3")]
PREDICATES = [terms.iri(EX + n) for n in ("p", "q", "r")]
MAX_TIME = 12


def integer(n: int) -> str:
    return terms.literal(str(n), terms.XSD_INTEGER)


def padded(n: int) -> str:
    """Another term of the value n: "0n"^^xsd:integer (RDF 1.1 term equality
    keeps it apart from n, comparisons by value do not)."""
    return terms.literal(f"0{n}", terms.XSD_INTEGER)


def duration_ms(ms: int) -> str:
    return terms.literal(terms.format_duration(0, ms), terms.XSD_DURATION)


def datetime_ms(ms: int) -> str:
    return terms.datetime_literal(ms)


# ------------------------------------------------------------------ seeds

SEED = int(os.environ.get("CEP_SEED") or random.SystemRandom().randrange(2**32))


def seeded(test):
    return seed(SEED)(test)


def examples(n: int) -> int:
    """n examples, times CEP_EXAMPLES_SCALE (for longer runs than the default)."""
    return max(1, int(n * float(os.environ.get("CEP_EXAMPLES_SCALE") or 1)))


def note_seed():
    note(f"replay: CEP_SEED={SEED} (with the same hypothesis settings)")


# ---------------------------------------------------------------- streams


@st.composite
def streams(draw, max_events: int = 20, intervals: bool = True, repeats: int = 3):
    """A list of events, some of them repeated in one draw in `repeats` (0: never; a
    stream is a multiset: a query over a window counts each copy, an event
    pattern reads the set; cep/algebra/copies.py). Each
    stream draws how crowded it is: a short time range gives many ties, few
    object values many joins."""
    n_subjects = draw(st.integers(2, 3))
    n_predicates = draw(st.integers(2, 3))
    last_time = draw(st.sampled_from([4, 8, MAX_TIME]))
    last_object = draw(st.sampled_from([1, 2, 4]))
    lengths = st.sampled_from([0, 0, 0, 1, 2, 4]) if intervals else st.just(0)
    # now and then an object in another lexical form of its value
    event = st.builds(
        lambda s, p, o, form, start, length: Event(s, p, form(o), start, start + length),
        st.sampled_from(SUBJECTS[:n_subjects]),
        st.sampled_from(PREDICATES[:n_predicates]),
        st.integers(0, last_object),
        st.sampled_from([integer] * 5 + [padded]),
        st.integers(0, last_time),
        lengths,
    )
    # the size drawn first and uniformly: hypothesis' own lists favour short ones
    size = draw(st.integers(min(2, max_events), max_events))
    events = [draw(event) for _ in range(size)]
    # now and then some events given again (equal events also come by chance)
    repeated = draw(st.lists(st.integers(0, size - 1), max_size=3)) if repeats and draw(st.integers(1, repeats)) == 1 else []
    return events + [events[i] for i in repeated]


# ------------------------------------------------------------- expressions

NUMERIC_VARS = ("x", "y", "z")


def _numeric(draw, names, depth):
    choice = draw(st.integers(0, 9 if depth > 0 else 5))
    if choice <= 3 and names:
        return ops.Var(draw(st.sampled_from(names)))
    if choice <= 5:
        return ops.Const(integer(draw(st.integers(0, 4))))
    op = draw(st.sampled_from(["+", "-", "*", "+", "-", "/"]))
    return ops.Call(op, _numeric(draw, names, depth - 1), _numeric(draw, names, depth - 1))


def _timestamp(draw, names):
    """timestamp(?v) of a variable of `names`, a subject variable, or ?u,
    which no pattern binds."""
    return ops.Call("timestamp", ops.Var(draw(st.sampled_from(list(names) + ["s", "t", "u"]))))


def _time_test(draw, names):
    op = draw(st.sampled_from(["<", "<=", ">", ">=", "=", "!="]))
    fn = draw(st.sampled_from(["getDURATION", "getDURATION", "getSTARTTIME", "getENDTIME", "timestamp"]))
    k = draw(st.integers(0, MAX_TIME + 2))
    const = duration_ms(k) if fn == "getDURATION" else datetime_ms(k)
    call = _timestamp(draw, names) if fn == "timestamp" else ops.Call(fn)
    if fn == "timestamp" and draw(st.booleans()):  # C-SPARQL's use: two timestamps, or with the interval
        other = draw(st.sampled_from(["timestamp", "getSTARTTIME", "getENDTIME"]))
        return ops.Call(op, call, _timestamp(draw, names) if other == "timestamp" else ops.Call(other))
    if draw(st.booleans()):
        return ops.Call(op, call, ops.Const(const))
    return ops.Call(op, ops.Const(const), call)


def _condition(draw, names, depth):
    """A boolean-ish expression over the integer variables `names`."""
    choice = draw(st.integers(0, 9 if depth > 0 else 6))
    if choice <= 3:
        op = draw(st.sampled_from(["=", "!=", "<", ">", "<=", ">="]))
        return ops.Call(op, _numeric(draw, names, 1), _numeric(draw, names, 1))
    if choice <= 5:
        return _time_test(draw, names)
    if choice == 6:
        return ops.Call("bound", ops.Var(draw(st.sampled_from(NUMERIC_VARS))))
    if choice == 7:
        return ops.Call("not", _condition(draw, names, depth - 1))
    op = draw(st.sampled_from(["and", "or"]))
    return ops.Call(op, _condition(draw, names, depth - 1), _condition(draw, names, depth - 1))


# ---------------------------------------------------------------- patterns

BINARY = list(ops.BINARY)
# NOTSEQ is refused (by the engine and the reference) with rule chaining and updates
WITHOUT_ABSENCE = [cls for cls in BINARY if cls is not ops.SeqAbsence]
# without the operators decided at the end of the instant whose answers a
# later event may remove (OPTIONAL, EQUALSOPTIONAL, whose optional part is
# on the right, MINUS and NOT EXISTS) nor NOTSEQ
WITHOUT_LEFT_JOINS = [cls for cls in WITHOUT_ABSENCE
                      if cls.spec.optional != "right" and cls not in (ops.Minus, ops.NotExists)]
# MINUS and [NOT] EXISTS, and the operators that join background solutions
NEGATIONS_AND_JOINS = [ops.Minus, ops.Exists, ops.NotExists, ops.Join, ops.LeftJoin, ops.Union_]
# Allen's interval relations, and operators to combine them with
INTERVAL_RELATIONS = [ops.During, ops.Starts, ops.Finishes, ops.Meets, ops.Overlaps]
WITH_INTERVAL_RELATIONS = INTERVAL_RELATIONS + [ops.Join, ops.SeqJoin, ops.Union_, ops.SeqRightJoin, ops.LeftJoin]


SUBJECT_SLOTS = [ops.Var("s"), ops.Var("t"), ops.Var("s"), ops.Var("t")] + SUBJECTS[:2]
PREDICATE_SLOTS = PREDICATES[:2] * 4 + PREDICATES[2:] + [ops.Var("p")]
OBJECT_SLOTS = [ops.Var(n) for n in NUMERIC_VARS] * 3 + [integer(n) for n in range(5)]


def _triple(draw):
    # the first entries are the common case: hypothesis favours and shrinks towards them
    return ops.Triple(*(draw(st.sampled_from(slots)) for slots in (SUBJECT_SLOTS, PREDICATE_SLOTS, OBJECT_SLOTS)))


def _numeric_vars(op):
    return sorted(v.name for v in ops.variables(op) if v.name in NUMERIC_VARS)


LEAF_CHANCE = {0: 20, 1: 12, 2: 7, 3: 2}  # in twentieths, by remaining depth


def _pattern(draw, depth, operators, unary=False):
    """`unary`: BIND, VALUES and subqueries among the operators."""
    if unary and depth > 0 and draw(st.integers(0, 3)) == 0:
        return _unary(draw, _pattern(draw, depth - 1, operators, unary))
    kind = draw(st.integers(0, 19))
    if kind < LEAF_CHANCE.get(depth, 2):
        triples = tuple(_triple(draw) for _ in range(draw(st.integers(1, 2))))
        return ops.BGP(triples) if len(triples) > 1 or draw(st.booleans()) else triples[0]
    if kind < LEAF_CHANCE.get(depth, 2) + 3:
        inner = _pattern(draw, depth - 1, operators, unary)
        return ops.Filter(_condition(draw, _numeric_vars(inner), 2), inner)
    cls = draw(st.sampled_from(operators))
    return _operator(draw, cls, _pattern(draw, depth - 1, operators, unary),
                     _pattern(draw, depth - 1, operators, unary))


def _unary(draw, inner):
    """BIND of a new variable (numeric, or the interval's length), a join
    with inline data over a numeric variable (UNDEF among the rows), or a
    subquery that projects some of the variables."""
    kind = draw(st.integers(0, 2))
    bound = ops.variables(inner)
    if kind == 0:
        free = [n for n in NUMERIC_VARS if ops.Var(n) not in bound]
        if free:
            expr = ops.Call("getDURATION") if draw(st.integers(0, 4)) == 0 else \
                _numeric(draw, _numeric_vars(inner) + ["u"], 1)  # ?u: unbound, an error
            return ops.Extend(inner, ops.Var(draw(st.sampled_from(free))), expr)
    if kind <= 1:
        var = ops.Var(draw(st.sampled_from(NUMERIC_VARS)))
        rows = draw(st.lists(st.one_of(st.none(), st.integers(0, 4).map(integer)), min_size=0, max_size=3))
        return ops.Join(inner, ops.Values((var,), tuple((r,) for r in rows)))
    names = sorted(bound, key=lambda v: v.name)
    kept = tuple(draw(st.lists(st.sampled_from(names), unique=True, min_size=1))) if names else ()
    return ops.Project(inner, kept)


@st.composite
def unary_queries(draw, depth: int = 3):
    """A SELECT * query (sometimes DISTINCT) over a random pattern with
    BIND, VALUES and subqueries among its operators."""
    pattern = _pattern(draw, depth, BINARY, unary=True)
    return ops.Query("q", "select", pattern, distinct=draw(st.integers(0, 4)) == 0)


@st.composite
def patterns(draw, depth: int = 3, operators=tuple(BINARY)):
    return _pattern(draw, depth, list(operators))


def _operator(draw, cls, left, right):
    fields = {"left": left, "right": right}
    if cls is ops.SeqAbsence:  # a deadline in the streams' ms
        fields["deadline_ms"] = draw(st.sampled_from([1, 2, 3, 5]))
    if cls.spec.conditioned:  # sometimes the condition (the optional or negated group's filter)
        fields["cond"] = None
        if draw(st.integers(0, 2)) == 0:
            names = sorted(set(_numeric_vars(left)) | set(_numeric_vars(right)))
            fields["cond"] = _condition(draw, names, 1)
    return cls(**fields)


@st.composite
def operator_queries(draw, operators=tuple(BINARY)):
    """SELECT * over one binary operator whose operands are small patterns
    (sometimes under a FILTER): the edge cases of each operator are met far
    more often than in deep trees."""
    cls = draw(st.sampled_from(list(operators)))
    left, right = _pattern(draw, 1, list(operators)), _pattern(draw, 1, list(operators))
    pattern = _operator(draw, cls, left, right)
    if draw(st.integers(0, 3)) == 0:
        pattern = ops.Filter(_condition(draw, _numeric_vars(pattern), 2), pattern)
    return ops.Query("q", "select", pattern, distinct=draw(st.integers(0, 4)) == 0)


@st.composite
def unit_queries(draw):
    """SELECT * over the empty group (ops.Unit: one empty solution per
    instant): alone, filtered by a condition on no variable, or an operand
    of any binary operator (the translation makes LeftJoin({}, P) and
    Union({}, P) of SPARQL text; the algebra has every operator defined on
    it) beside a small pattern, sometimes under a FILTER."""
    unit = ops.Unit()
    if draw(st.booleans()):
        unit = ops.Filter(_condition(draw, [], 1), unit)
    kind = draw(st.integers(0, 3))
    if kind == 0:
        pattern = unit
    else:
        cls = ops.LeftJoin if kind == 1 else draw(st.sampled_from(list(BINARY)))
        other = _pattern(draw, 1, list(BINARY))
        left, right = (unit, other) if kind == 1 or draw(st.booleans()) else (other, unit)
        pattern = _operator(draw, cls, left, right)
    if draw(st.integers(0, 3)) == 0:
        pattern = ops.Filter(_condition(draw, _numeric_vars(pattern), 2), pattern)
    return ops.Query("q", "select", pattern, distinct=draw(st.integers(0, 4)) == 0)


@st.composite
def queries(draw, depth: int = 3, operators=tuple(BINARY)):
    """A SELECT * query (sometimes DISTINCT) over a random pattern."""
    pattern = draw(patterns(depth, operators))
    distinct = draw(st.integers(0, 4)) == 0
    return ops.Query("q", "select", pattern, distinct=distinct)


@st.composite
def projected_queries(draw):
    """SELECT [DISTINCT] with plain variables (bound or not) and (expr AS ?e)."""
    base = draw(st.one_of(queries(), operator_queries()))
    names = sorted(v.name for v in ops.variables(base.pattern)) + ["z", "t"]
    chosen = draw(st.lists(st.sampled_from(names), unique=True, max_size=3))
    items = [ops.ProjectItem(ops.Var(n)) for n in chosen]
    if draw(st.booleans()):
        kind = draw(st.integers(0, 2))
        names = _numeric_vars(base.pattern)
        expr = (_numeric(draw, names, 2) if kind == 0 else _condition(draw, names, 1) if kind == 1
                else _timestamp(draw, sorted(v.name for v in ops.variables(base.pattern))))
        items.insert(draw(st.integers(0, len(items))), ops.ProjectItem(ops.Var("e"), expr))
    return ops.Query("q", "select", base.pattern, projection=tuple(items), distinct=base.distinct)


@st.composite
def timestamp_queries(draw):
    """SELECT * with (timestamp(?v) AS ?ts_v) for every variable of the
    pattern and for ?u (never bound), sometimes under a FILTER that compares
    timestamps as C-SPARQL's example does: every answer shows the
    timestamps, which the optional parts, unions and repeated variables
    make differ."""
    base = draw(st.one_of(queries(depth=2), operator_queries()))
    pattern, names = base.pattern, sorted(v.name for v in ops.variables(base.pattern))
    if draw(st.booleans()):
        pattern = ops.Filter(_time_test(draw, names), pattern)
    items = [ops.ProjectItem(ops.Var(n)) for n in names]
    items += [ops.ProjectItem(ops.Var("ts_" + n), ops.Call("timestamp", ops.Var(n))) for n in names + ["u"]]
    return ops.Query("q", "select", pattern, projection=tuple(items), distinct=base.distinct)


TEMPLATE_SUBJECTS = [ops.Var("s"), "_:b", ops.Var("t"), SUBJECTS[0], ops.Var("x")]
# predicates no pattern reads (chained rules have chained_rule_sets)
OUTPUTS = [terms.iri(EX + n) for n in ("out", "out2")]
TEMPLATE_PREDICATES = [OUTPUTS[0], OUTPUTS[1], ops.Var("x")]
TEMPLATE_OBJECTS = [ops.Var("x"), ops.Var("y"), "_:b", ops.Var("e"), integer(1), "_:c"]


@st.composite
def construct_queries(draw):
    """CONSTRUCT with blank nodes, possibly unbound variables, literal
    subjects and non-IRI predicates (skipped triples), and sometimes the
    sub-select form that binds ?e by an expression. Its triples are
    output only: no pattern reads their predicates (but a variable
    predicate reads them: chaining, so no NOTSEQ here)."""
    plain = tuple(WITHOUT_ABSENCE)
    base = draw(st.one_of(queries(operators=plain), operator_queries(plain)))
    slots = (TEMPLATE_SUBJECTS, TEMPLATE_PREDICATES, TEMPLATE_OBJECTS)
    template = tuple(ops.Triple(*(draw(st.sampled_from(x)) for x in slots)) for _ in range(draw(st.integers(1, 3))))
    projection = None
    if draw(st.booleans()):
        names = _numeric_vars(base.pattern)
        projection = (ops.ProjectItem(ops.Var("e"), _numeric(draw, names, 2)),)
    return ops.Query("c", "construct", base.pattern, projection=projection, template=template)


def closure_is_finite(queries) -> bool:
    """Whether the rules' chaining is stratified and derives from the
    stream's own terms alone: no rule whose triples a query reads (a
    pattern with a variable predicate reads every rule's) makes blank
    nodes or computes values, which could give new terms without end
    (the engine stops such a run after 1,000 rounds at one instant)."""
    from cep.algebra.chaining import analyse
    from cep.errors import QueryError

    try:
        producers = analyse(queries).producers
    except QueryError:
        return False
    for q in queries:
        if q.name in producers:
            slots = [x for t in q.template for x in (t.s, t.p, t.o)]
            if any(isinstance(x, str) and x.startswith("_:") for x in slots) or q.projection:
                return False
    return True


@st.composite
def chained_rule_sets(draw, operators=tuple(WITHOUT_ABSENCE)):
    """Two or three CONSTRUCT rules whose templates derive triples of the
    stream's own predicates (or of the predicate a pattern bound), so that
    the rules read each other's triples and their own, at the instant they
    are derived and later, then a SELECT over the whole. Templates hold
    variables and constants only: every derived term is a term of the
    stream, so the closure is finite. (A rule set that is not stratified
    is refused by the engine and the reference alike; tests skip it.)"""
    rules = []
    plain = tuple(operators)
    for n in range(draw(st.integers(2, 3))):
        base = draw(st.one_of(queries(depth=2, operators=plain), operator_queries(plain)))
        names = sorted(v.name for v in ops.variables(base.pattern) if not v.name.startswith("_:"))
        subjects = [ops.Var(v) for v in names if v in ("s", "t")] + SUBJECTS[:1]
        objects = [ops.Var(v) for v in names if v in NUMERIC_VARS] + [integer(1)]
        predicates = PREDICATES + ([ops.Var("p")] if "p" in names else [])
        template = tuple(ops.Triple(draw(st.sampled_from(subjects)), draw(st.sampled_from(predicates)),
                                    draw(st.sampled_from(objects))) for _ in range(draw(st.integers(1, 2))))
        rules.append(ops.Query(f"c{n}", "construct", base.pattern, template=template))
    reader = draw(st.one_of(queries(depth=2, operators=plain), operator_queries(plain)))
    return rules + [ops.Query("q", "select", reader.pattern, distinct=reader.distinct)]


@st.composite
def query_sets(draw):
    """Two to four queries for one engine, built around a shared pattern so
    that the engine shares their common steps: the pattern itself, the
    pattern under a FILTER or inside another operator, and an unrelated one."""
    base = _pattern(draw, 2, BINARY)
    variants = [base, ops.Filter(_condition(draw, _numeric_vars(base), 1), base)]
    other = _pattern(draw, 1, BINARY)
    pair = (base, other) if draw(st.booleans()) else (other, base)
    variants.append(_operator(draw, draw(st.sampled_from(BINARY)), *pair))
    variants.append(_pattern(draw, 2, BINARY))
    chosen = draw(st.lists(st.sampled_from(range(len(variants))), min_size=2, max_size=4))
    return [ops.Query(f"q{n}", "select", variants[k], distinct=draw(st.integers(0, 4)) == 0)
            for n, k in enumerate(chosen)]


# ------------------------------------------------- expressions on typed values

XSD = terms.XSD
VALUES = [
    integer(0), integer(2), integer(-3), terms.literal("7", XSD + "int"),
    terms.literal("1.5", XSD + "decimal"), terms.literal("-0.25", XSD + "decimal"),
    terms.literal("0.0", XSD + "decimal"),
    terms.literal("1.5E0", XSD + "double"), terms.literal("NaN", XSD + "double"), terms.literal("INF", XSD + "double"),
    terms.literal("2.5", XSD + "float"),
    terms.literal(""), terms.literal("abc"), terms.literal("ABC"), terms.literal("b"),
    terms.literal("chat", lang="fr"), terms.literal("ab", lang="en"),
    terms.literal("true", XSD + "boolean"), terms.literal("false", XSD + "boolean"),
    terms.datetime_literal(0), terms.datetime_literal(86_400_000),
    terms.literal("PT1S", XSD + "duration"), terms.literal("P1M", XSD + "duration"),
    terms.literal("x", XSD + "integer"), terms.literal("v", EX + "type"),
    SUBJECTS[0], "_:n1",
    # other lexical forms of values: kept as terms, compared by value
    terms.literal("01", XSD + "integer"), terms.literal("1.50", XSD + "decimal"),
    terms.literal("1.5e0", XSD + "double"), terms.literal("0", XSD + "boolean"),
    terms.literal("2026-01-01T05:00:00+05:00", XSD + "dateTime"),
    terms.literal("2026-01-01T00:00:00", XSD + "dateTime"), terms.literal("PT60M", XSD + "duration"),
]
VALUES = [terms.canonical(v) for v in VALUES]
UNARY = ["not", "neg", "pos", "str", "lang", "datatype", "isIRI", "isBlank", "isLiteral", "isNumeric",
         "strlen", "ucase", "lcase", "abs", "ceil", "floor", "round", "encode_for_uri", "iri", "md5",
         "sha1", "sha256", "sha384", "sha512", "year", "month", "day", "hours", "minutes", "seconds",
         "timezone", "tz"]
BINARY_FUNCTIONS = ["or", "and", "=", "!=", "<", ">", "<=", ">=", "+", "-", "*", "/", "sameTerm",
                    "langMatches", "contains", "strstarts", "strends", "regex", "concat", "coalesce",
                    "substr", "strbefore", "strafter", "strlang", "strdt"]
# RAND, UUID, STRUUID and BNODE are not drawn: their values are new for each
# solution, so no two evaluations agree (tests/unit/test_functions.py)
CASTS = [ops.CAST_PREFIX + XSD + t for t in ("integer", "decimal", "double", "float", "boolean", "string",
                                             "dateTime")]


def _regex_pattern(draw, pattern):
    """A REGEX pattern: a constant that is no string, or no regular
    expression, is a compile-time error (cep/compile/expr.py), so a string."""
    if isinstance(pattern, ops.Const):
        return ops.Const(draw(st.sampled_from([v for v in VALUES if v.startswith('"') and v.endswith('"')])))
    return pattern


def _typed_expr(draw, depth):
    kind = draw(st.integers(0, 9)) if depth > 0 else draw(st.integers(0, 2))
    if kind == 0:
        return ops.Var(draw(st.sampled_from(["a", "b", "a", "b", "u"])))
    if kind <= 2:
        return ops.Const(draw(st.sampled_from(VALUES)))
    sub = lambda: _typed_expr(draw, depth - 1)  # noqa: E731
    if kind <= 4:
        return ops.Call(draw(st.sampled_from(UNARY)), sub())
    if kind <= 7:
        name = draw(st.sampled_from(BINARY_FUNCTIONS))
        return ops.Call(name, sub(), _regex_pattern(draw, sub()) if name == "regex" else sub())
    if kind == 8:
        name = draw(st.sampled_from(["if", "in", "notin", "regex", "bound", "cast", "substr", "replace"]))
        if name == "bound":
            return ops.Call("bound", ops.Var(draw(st.sampled_from(["a", "u"]))))
        if name == "cast":
            return ops.Call(draw(st.sampled_from(CASTS)), sub())
        if name in ("regex", "replace"):
            args = [sub(), _regex_pattern(draw, sub())] + ([sub()] if name == "replace" else [])
            return ops.Call(name, *args, ops.Const(draw(st.sampled_from(
                [terms.literal(f) for f in ("i", "", "s", "q")]))))
        return ops.Call(name, sub(), sub(), sub())
    fn = draw(st.sampled_from(["getDURATION", "getSTARTTIME", "getENDTIME", "now", "timestamp"]))
    if fn == "timestamp":
        return ops.Call(fn, ops.Var(draw(st.sampled_from(["a", "b", "s", "u"]))))
    return ops.Call(fn)


@st.composite
def typed_streams(draw):
    """Events <s> :p A and <s> :q B with objects of many datatypes."""
    event = st.builds(
        lambda s, p, o, t: Event(s, p, o, t, t),
        st.sampled_from(SUBJECTS[:2]), st.sampled_from(PREDICATES[:2]), st.sampled_from(VALUES), st.integers(0, 3),
    )
    return [draw(event) for _ in range(draw(st.integers(2, 10)))]


@st.composite
def expression_queries(draw):
    """?a and ?b from a join of two triple patterns; SELECT (expr AS ?e) and
    a FILTER over random expressions on them."""
    pattern = ops.BGP((ops.Triple(ops.Var("s"), PREDICATES[0], ops.Var("a")),
                       ops.Triple(ops.Var("s"), PREDICATES[1], ops.Var("b"))))
    if draw(st.booleans()):
        pattern = ops.Filter(_typed_expr(draw, 2), pattern)
    items = (ops.ProjectItem(ops.Var("a")), ops.ProjectItem(ops.Var("b")),
             ops.ProjectItem(ops.Var("e"), _typed_expr(draw, 2)))
    return ops.Query("q", "select", pattern, projection=items)


@st.composite
def seq_filter_queries(draw):
    """?a SEQ ?b with a FILTER over random expressions on both: the parts
    that depend on ?a alone are computed when ?a's goal is stored, and a
    comparison of ?b with one of them (or with ?a) indexes the goals by
    band of value."""
    left = ops.Triple(ops.Var("s"), PREDICATES[0], ops.Var("a"))
    right = ops.Triple(ops.Var("s"), PREDICATES[1], ops.Var("b"))
    # one side a function of ?a (hoisted), the other anything
    of_a = ops.Call(draw(st.sampled_from(UNARY + BINARY_FUNCTIONS)), ops.Var("a"))
    if draw(st.integers(0, 3)) == 0:
        of_a = ops.Var("a")  # stored as it is (the goals' range index may use it)
    elif of_a.name in BINARY_FUNCTIONS:
        const = ops.Const(draw(st.sampled_from(VALUES)))
        of_a = ops.Call(of_a.name, ops.Var("a"), _regex_pattern(draw, const) if of_a.name == "regex" else const)
    sides = [of_a, ops.Var("b") if draw(st.booleans()) else _typed_expr(draw, 2)]
    if draw(st.booleans()):
        sides.reverse()
    cond = ops.Call(draw(st.sampled_from(["<", ">", "=", "!=", "<=", ">="])), *sides)
    if draw(st.booleans()):
        cond = ops.Call("and", cond, _typed_expr(draw, 2))
    return ops.Query("q", "select", ops.Filter(cond, ops.SeqJoin(left, right)))


# ------------------------------------------------------------------ helpers


def multiset(answers) -> Counter:
    return reference.multiset(answers)


@st.composite
def records(draw, events):
    """The events grouped into records (multi-triple events, timestamped
    graphs): each gets one of a few sources, and those that share a
    source, interval and stream are one record (one element of a count
    window of events)."""
    return [dataclasses.replace(e, source=f"r{draw(st.integers(0, 2))}") for e in events]


def show_stream(events) -> str:
    ordered = sorted(events, key=lambda e: (e.start, e.end, e.s, e.p, e.o, e.stream, e.source))
    return "\n".join(f"  {e.s} {e.p} {e.o} [{e.start}, {e.end}]" + (f" in {e.stream}" if e.stream else "")
                     + (f" record {e.source}" if e.source else "") for e in ordered)


def note_case(queries, events):
    """Put the seed, the queries' algebra and the stream into a failure report."""
    note_seed()
    for q in queries if isinstance(queries, list) else [queries]:
        note(f"query {q.name}:\n" + sexpr.query(q))
    note("stream (as a set):\n" + show_stream(events))


# ------------------------------------------------------------ background

CLASSES = [terms.iri(EX + n) for n in ("C1", "C2", "C3")]
RDFS_ = "http://www.w3.org/2000/01/rdf-schema#"


@st.composite
def background_triples(draw):
    """A small ontology over the streams' vocabulary (subproperties among
    the predicates, cycles included; domains and ranges; a class
    hierarchy) and a few timeless instance triples of the streams' shape."""
    def some(options, most):
        return draw(st.lists(st.sampled_from(options), max_size=most, unique=True))

    sub = terms.iri(RDFS_ + "subPropertyOf")
    schema = [(a, sub, b) for a, b in some([(a, b) for a in PREDICATES for b in PREDICATES if a != b], 3)]
    schema += [(a, terms.iri(RDFS_ + "subClassOf"), b)
               for a, b in some([(a, b) for a in CLASSES for b in CLASSES if a != b], 3)]
    schema += [(p, terms.iri(RDFS_ + kind), c) for kind, p, c in
               some([(k, p, c) for k in ("domain", "range") for p in PREDICATES for c in CLASSES], 3)]
    facts = [(s, p, integer(o)) for s, p, o in
             some([(s, p, o) for s in SUBJECTS for p in PREDICATES for o in range(3)], 4)]
    types = [(s, terms.iri(terms.RDF + "type"), c) for s, c in some([(s, c) for s in SUBJECTS for c in CLASSES], 2)]
    return schema + facts + types


LINKS = [terms.iri(EX + n) for n in ("next", "link")]
NODES = SUBJECTS + [terms.iri(EX + n) for n in ("n1", "n2")]


@st.composite
def path_backgrounds(draw):
    """background_triples and a small random graph of links between the
    streams' subjects and two nodes of the background only (cycles and
    self-loops included), for property paths to walk."""
    links = draw(st.lists(st.tuples(st.sampled_from(NODES), st.sampled_from(LINKS), st.sampled_from(NODES)),
                          max_size=7, unique=True))
    return draw(background_triples()) + links


@st.composite
def path_streams(draw):
    """streams() and events of links between the subjects and nodes (the
    graph of an instant that a property path walks: docs/language.md)."""
    link = st.builds(lambda s, p, o, t, length: Event(s, p, o, t, t + length), st.sampled_from(NODES),
                     st.sampled_from(LINKS), st.sampled_from(NODES), st.integers(0, 4), st.sampled_from([0, 0, 1]))
    return draw(streams()) + draw(st.lists(link, max_size=6))


def _path(draw, depth, iris=LINKS + PREDICATES[:1]):
    kind = draw(st.integers(0, 9))
    if depth == 0 or kind < 4:
        return draw(st.sampled_from(iris))
    if kind < 6:
        return ops.Path(draw(st.sampled_from(ops.PATH_CLOSURES)), (_path(draw, depth - 1, iris),))
    if kind == 6:
        return ops.Path("^", (_path(draw, depth - 1, iris),))
    return ops.Path(draw(st.sampled_from(["/", "|"])), (_path(draw, depth - 1, iris), _path(draw, depth - 1, iris)))


@st.composite
def path_queries(draw):
    """SELECT * over a property path (a closure, as after SPARQL's
    translation, over any path inside) whose ends are the streams' subject
    variables or constants, alone (a group made only of a path) or joined
    with a random pattern."""
    ends = [ops.Var("s"), ops.Var("t"), ops.Var("s")] + NODES
    path = ops.Path(draw(st.sampled_from(ops.PATH_CLOSURES)), (_path(draw, 2),))
    triple = ops.Triple(draw(st.sampled_from(ends)), path, draw(st.sampled_from(ends)))
    if draw(st.integers(0, 4)) == 0:
        return ops.Query("q", "select", triple, distinct=draw(st.booleans()))
    base = _pattern(draw, 2, BINARY)
    if draw(st.booleans()) and isinstance(base, (ops.Triple, ops.BGP)):
        inner = base.triples if isinstance(base, ops.BGP) else (base,)
        pattern = ops.BGP(inner + (triple,))
    else:
        pattern = ops.Join(base, triple) if draw(st.booleans()) else ops.Join(triple, base)
    return ops.Query("q", "select", pattern, distinct=draw(st.integers(0, 4)) == 0)


RDF_TYPE = terms.iri(terms.RDF + "type")


@st.composite
def update_cases(draw, windowed=False):
    """(queries, background triples): DELETE/INSERT rules triggered by
    events (`?s P ?x`, sometimes filtered) that change links between nodes
    and the classes of the streams' subjects, and a query whose timed part
    (over the streams' predicates only, which no background triple has)
    joins a part that reads the background: a path over the links, a
    link, or a class (by subclass, domain or range too). `windowed`: the
    query is over a time-based window (sliding, tumbling or hopping), which
    reads the background as it is at each evaluation time, sometimes
    through a grouped subquery."""
    updates = []
    for i in range(draw(st.integers(1, 3))):
        where = ops.Triple(ops.Var("s"), draw(st.sampled_from(PREDICATES)), ops.Var("x"))
        pattern = where if draw(st.booleans()) else ops.Filter(
            ops.Call("<", ops.Var("x"), ops.Const(integer(draw(st.integers(1, 4))))), where)
        node = draw(st.sampled_from(NODES))
        template = (draw(st.sampled_from([
            ops.Triple(ops.Var("s"), draw(st.sampled_from(LINKS)), node),
            ops.Triple(node, draw(st.sampled_from(LINKS)), ops.Var("s")),
            ops.Triple(ops.Var("s"), RDF_TYPE, draw(st.sampled_from(CLASSES))),
        ])),)
        delete = draw(st.booleans())
        updates.append(ops.Query(f"u{i}", "update", pattern, template=() if delete else template,
                                 deletions=template if delete else ()))
    kind = draw(st.integers(0, 2))
    if kind == 0:
        path = ops.Path(draw(st.sampled_from(ops.PATH_CLOSURES)), (_path(draw, 1),))
        reads = ops.Triple(ops.Var("s"), path, ops.Var("n"))
    elif kind == 1:
        reads = ops.Triple(ops.Var("s"), draw(st.sampled_from(LINKS)), ops.Var("n"))
    else:
        reads = ops.Triple(ops.Var("s"), RDF_TYPE, draw(st.sampled_from(CLASSES + [ops.Var("c")])))
    timed = _pattern(draw, 2, WITHOUT_ABSENCE)
    timed = _only_stream_predicates(timed)
    pattern = ops.Join(timed, reads)
    if windowed and draw(st.integers(0, 2)) == 0:
        # a grouped subquery (its rows made at each instant over the window's
        # content) over the background alone, or over the timed part too
        inner = draw(st.sampled_from([reads, pattern]))
        keys = (ops.Var("s"),) if draw(st.booleans()) else ()
        count = ops.Var("agg")
        items = tuple(ops.ProjectItem(k) for k in keys) + (ops.ProjectItem(count),)
        pattern = ops.Join(timed, ops.Project(inner, tuple(i.var for i in items), items=items, grouping=ops.Grouping(
            keys, ((count, ops.Aggregate("count", None, False)),))))
    query = ops.Query("q", "select", pattern, distinct=draw(st.integers(0, 4)) == 0)
    if windowed:
        range_ms = draw(st.integers(1, 8))
        step_ms = draw(st.sampled_from([range_ms, max(1, range_ms // 2), 1, 3, range_ms + 2]))
        query = dataclasses.replace(query, window=ops.Window("<http://example.org/s>", range_ms=range_ms,
                                                             step_ms=step_ms),
                                    report=draw(st.sampled_from(ops.REPORTS)))
    background = draw(background_triples())
    background = [t for t in background if t[1] in (RDF_TYPE,) or t[1].startswith("<" + RDFS_)]
    background += draw(st.lists(st.tuples(st.sampled_from(NODES), st.sampled_from(LINKS), st.sampled_from(NODES)),
                                max_size=6, unique=True))
    return updates + [query], background


@st.composite
def group_window_update_cases(draw):
    """update_cases(windowed=True) whose query's groups have windows of
    their own (Streaming SPARQL): the part that reads the background (a
    path, a link, a class, or the grouped subquery), alone or joined with
    a triple pattern of the streams, in a group over a window of any size
    or kind, joined (or joined as OPTIONAL) with the timed part, which is
    sometimes a group of its own too (the query is then evaluated when its
    window is). Every part reads the background as the updates up to the
    evaluation time left it."""
    queries, background = draw(update_cases(windowed=True))
    *updates, query = queries
    timed, reads = query.pattern.left, query.pattern.right
    if draw(st.booleans()):
        reads = ops.Join(_triple(draw), reads)
    group = ops.pattern_window(ops.variables(reads), reads, _window(draw))
    if draw(st.integers(0, 2)) == 0:
        timed = ops.pattern_window(ops.variables(timed), timed, _window(draw))
    pattern = ops.LeftJoin(timed, group) if draw(st.integers(0, 2)) == 0 else ops.Join(timed, group)
    return updates + [dataclasses.replace(query, pattern=pattern)], background


def _only_stream_predicates(op):
    """The pattern with a variable predicate replaced by :p (so that no
    background triple matches inside the timed part)."""
    if isinstance(op, ops.Triple):
        return ops.Triple(op.s, PREDICATES[0], op.o) if isinstance(op.p, ops.Var) else op
    if isinstance(op, ops.BGP):
        return ops.BGP(tuple(_only_stream_predicates(t) for t in op.triples))
    if isinstance(op, ops.Filter):
        return ops.Filter(op.cond, _only_stream_predicates(op.pattern))
    import dataclasses

    return dataclasses.replace(op, left=_only_stream_predicates(op.left), right=_only_stream_predicates(op.right))


# ---------------------------------------------------------------- windows

AGGREGATE_FUNCS = ("count", "sum", "avg", "min", "max", "sample", "group_concat")


CONTENT_OPERATORS = (ops.LeftJoin, ops.Minus, ops.Exists, ops.NotExists, ops.SeqRightJoin)


@st.composite
def content_queries(draw):
    """SELECT * over an operator a window evaluates over its content
    (OPTIONAL, MINUS, [NOT] EXISTS, OPTIONALSEQ) whose operands are small
    patterns of any operator (sometimes BIND, VALUES and subqueries),
    sometimes joined with one more, sometimes under a FILTER."""
    cls = draw(st.sampled_from(CONTENT_OPERATORS))
    unary = draw(st.booleans())  # BIND, VALUES and subqueries among them
    pattern = _operator(draw, cls, _pattern(draw, 1, list(BINARY), unary), _pattern(draw, 1, list(BINARY), unary))
    if draw(st.integers(0, 2)) == 0:
        pattern = ops.Join(pattern, _pattern(draw, 0, list(BINARY)))
    if draw(st.integers(0, 3)) == 0:
        pattern = ops.Filter(_condition(draw, _numeric_vars(pattern), 2), pattern)
    return ops.Query("q", "select", pattern, distinct=draw(st.integers(0, 4)) == 0)


@st.composite
def windowed_queries(draw, content=False, base=None):
    """A query over a window (time-based sliding, tumbling or hopping, with
    or without COMPUTED EVERY, or count-based) with a report operator: plain
    (projected), SPARQL's GROUP BY (variables and expressions) with
    aggregates and HAVING, or C-SPARQL's AGGREGATE extensions; or a query
    grouped without a window (evaluated per instant). Times are the
    streams' ms. `content`: its pattern has an operator the window
    evaluates over its content (content_queries), a quarter of them beside
    the empty group ({ OPTIONAL { P } }, {} UNION { P }); `base`: the strategy
    of the query whose pattern it takes, instead."""
    if base is None:
        base = content_queries() if content else st.one_of(queries(depth=2), operator_queries())
    base = draw(base)
    if content and draw(st.integers(0, 3)) == 0:  # the empty group's one solution per evaluation, beside P
        unit, p = ops.Unit(), base.pattern
        base = dataclasses.replace(base, pattern=draw(st.sampled_from([ops.LeftJoin(unit, p), ops.Union_(unit, p)])))
    if draw(st.integers(0, 3)) == 0:
        window = ops.Window("<http://example.org/s>", count=draw(st.integers(1, 6)),
                            counts=draw(st.sampled_from(["events", "triples"])))
        every = None
    else:
        range_ms = draw(st.integers(1, 8))
        step_ms = draw(st.sampled_from([range_ms, max(1, range_ms // 2), 1, 3, range_ms + 2]))
        window = ops.Window("<http://example.org/s>", range_ms=range_ms, step_ms=step_ms)
        every = draw(st.sampled_from([None, None, 1, 2, 5]))
    window, every = _report_policy(draw, window, every)
    report = draw(st.sampled_from(ops.REPORTS))
    names = sorted(v.name for v in ops.variables(base.pattern))
    numeric = _numeric_vars(base.pattern)

    def aggregate():
        func = draw(st.sampled_from(AGGREGATE_FUNCS))
        if func == "count" and draw(st.booleans()):
            return ops.Aggregate("count", None, draw(st.booleans()))
        arg = _numeric(draw, numeric, 1) if numeric and draw(st.booleans()) else ops.Var(draw(st.sampled_from(names)))
        separator = draw(st.sampled_from([" ", ", ", ""])) if func == "group_concat" else None
        return ops.Aggregate(func, arg, draw(st.integers(0, 3)) == 0, separator)

    kind = draw(st.sampled_from(["plain", "group", "extend"])) if names else "star"
    projection, grouping, distinct = None, None, draw(st.integers(0, 3)) == 0
    if kind == "star":  # a pattern without variables: SELECT *
        pass
    elif kind == "plain":
        chosen = draw(st.lists(st.sampled_from(names), unique=True, min_size=1, max_size=3))
        projection = tuple(ops.ProjectItem(ops.Var(n)) for n in chosen)
    elif kind == "group":
        keys = tuple(ops.Var(n) for n in draw(st.lists(st.sampled_from(names), unique=True, max_size=2)))
        computed = ()
        if draw(st.integers(0, 2)) == 0:  # no GROUP BY: one group, which an empty window gives a row
            keys = ()
        elif numeric and draw(st.integers(0, 2)) == 0:  # GROUP BY (expr [AS ?g])
            key = ops.Var(draw(st.sampled_from(["g", ".key0"])))
            computed = ((key, _numeric(draw, numeric, 1)),)
            keys += (key,)
        aggs = tuple((ops.Var(f".agg{i}"), aggregate()) for i in range(draw(st.integers(1, 3))))
        having = ()
        if draw(st.booleans()):
            having = (ops.Call(draw(st.sampled_from(["<", ">", "="])), aggs[0][0], ops.Const(integer(draw(st.integers(0, 4))))),)
        projection = tuple(ops.ProjectItem(k) for k in keys) + tuple(
            ops.ProjectItem(ops.Var(f"a{i}"), v) for i, (v, _) in enumerate(aggs))
        grouping = ops.Grouping(keys, aggs, (), having, computed)
    else:
        extensions = []
        for i in range(draw(st.integers(1, 2))):
            keys = tuple(ops.Var(n) for n in draw(st.lists(st.sampled_from(names), unique=True, max_size=2)))
            agg = aggregate()
            if not isinstance(agg.arg, (ops.Var, type(None))):
                agg = ops.Aggregate(agg.func, ops.Var(draw(st.sampled_from(names))))
            extensions.append((ops.Var(f"n{i}"), ops.Aggregate(agg.func, agg.arg), keys))
        having = ()
        if draw(st.booleans()):
            having = (ops.Call(">", ops.Var("n0"), ops.Const(integer(draw(st.integers(0, 3))))),)
        chosen = draw(st.lists(st.sampled_from(names), unique=True, max_size=2))
        projection = tuple(ops.ProjectItem(ops.Var(n)) for n in chosen) + tuple(
            ops.ProjectItem(v) for v, _, _ in extensions)
        grouping = ops.Grouping(None, (), tuple(extensions), having)
    streams, pattern = _drawn_streams(draw, base.pattern)
    if kind == "group" and draw(st.integers(0, 3)) == 0:  # grouped without a window: per instant
        window, every, report, streams, pattern = None, None, "rstream", (), base.pattern
    return ops.Query("w", "select", pattern, projection, distinct, window=window, every_ms=every,
                     report=report, grouping=grouping, streams=streams)


def _report_policy(draw, window, every):
    """The window with one of RSP-QL's report policies (or none), perhaps
    a t0, perhaps of infinite width, and the query's period: REPORT EVERY
    p is COMPUTED EVERY p, REPORT ON CLOSE has none."""
    policy = draw(st.sampled_from([None, None, "close", "change", "nonempty", "every"]))
    if policy == "every" and window.count is not None:
        policy = None
    if policy == "close":
        every = None
    if policy == "every":
        every = every or draw(st.sampled_from([1, 2, 5]))
    # RSP-QL's t0 (START), before, among or after the stream's instants
    t0 = draw(st.sampled_from([None, None, -2, 0, 3, 7])) if window.count is None else None
    if window.count is None and draw(st.integers(0, 4)) == 0:  # RANGE UNBOUNDED, which takes a t0
        window = dataclasses.replace(window, range_ms=None)
        t0 = draw(st.sampled_from([-2, 0, 3])) if t0 is None else t0
    return dataclasses.replace(window, policy=policy, period_ms=every if policy == "every" else None,
                               t0_ms=t0), every


def _window(draw) -> ops.Window:
    """A time-based (sliding, tumbling or hopping) or count-based window;
    a time-based one sometimes with RSP-QL's t0 (START, before, among or
    after the stream's instants), sometimes of infinite width from it."""
    if draw(st.integers(0, 2)) == 0:
        return ops.Window("<http://example.org/s>", count=draw(st.integers(1, 6)),
                          counts=draw(st.sampled_from(["events", "triples"])))
    range_ms = draw(st.integers(1, 8))
    step_ms = draw(st.sampled_from([range_ms, max(1, range_ms // 2), 1, 3, range_ms + 2]))
    t0 = draw(st.sampled_from([None, None, None, -2, 0, 3, 7]))
    if draw(st.integers(0, 5)) == 0:  # RANGE UNBOUNDED, which takes a t0
        range_ms, t0 = None, draw(st.sampled_from([-2, 0, 3])) if t0 is None else t0
    return ops.Window("<http://example.org/s>", range_ms=range_ms, step_ms=step_ms, t0_ms=t0)


@st.composite
def group_windowed_queries(draw, changes=False):
    """Streaming SPARQL's windows in graph patterns: a windowed query
    (windowed_queries) whose pattern is joined, or joined as OPTIONAL
    (with a condition or not, one that reads the time too), or combined by
    another operator (_between_groups), with a group that has a window of its own,
    of any size or kind ([TRIPLES n] too); sometimes its own pattern is such a group too, so
    that the query is evaluated when that group's window is. Inside a
    group every operator is evaluated over its window's content: the
    patterns drawn hold any operator, and a group often ends in one that
    depends on what the window does not hold (_inner_content). The empty
    group, one solution per evaluation at its own window's close, is
    drawn in either: the first part {} ({ OPTIONAL { P WINDOW ... } }) or
    {} UNION P, the group { WINDOW ... } alone or { {} UNION { P }
    WINDOW ... } (then REPORT ON CHANGE reads every window's content).
    `changes`: always such a group after the first, under REPORT ON
    CHANGE."""
    query = draw(windowed_queries().filter(lambda q: q.window is not None))
    first = query.pattern
    later = ["group", "group-union"]
    unit = draw(st.sampled_from(later if changes else [None] * 4 + ["first", "first-union"] + later))
    if unit == "first":
        first = ops.Unit()
    elif unit == "first-union":
        first = ops.Union_(ops.Unit(), first)
    if draw(st.integers(0, 2)) == 0:
        first = _inner_content(draw, first)
        first = ops.pattern_window(ops.variables(first), first, _window(draw))
    # often one triple pattern (which shares ?s, ?t or ?x with the first
    # part more often than not: answers to compare), else a small pattern
    other = _triple(draw) if draw(st.booleans()) else draw(queries(depth=1)).pattern
    if unit == "group":
        other = ops.Unit()
    elif unit == "group-union":
        other = ops.Union_(ops.Unit(), other)
    other = _inner_content(draw, other)
    group = ops.pattern_window(ops.variables(other), other, _window(draw))
    how = draw(st.sampled_from(["join", "optional", "optional-if", "optional-time", "between", "union-first",
                                "union-first"]))
    if how == "union-first":
        # UNION of the first group and another, evaluated at both windows' times: time windows of one
        # slide or each its own, sometimes from a START, sometimes of infinite width (RANGE UNBOUNDED,
        # from its START), sometimes count windows (evaluated at every instant they count), sometimes
        # joined with a third group
        step = draw(st.sampled_from([1, 2, 3]))
        own = draw(st.booleans())

        def time():
            if draw(st.integers(0, 3)) == 0:
                return ops.Window("<http://example.org/s>", count=draw(st.integers(1, 4)),
                                  counts=draw(st.sampled_from(["events", "triples"])))
            if own and draw(st.integers(0, 3)) == 0:
                return ops.Window("<http://example.org/s>", step_ms=draw(st.sampled_from([1, 2, 3, 5])),
                                  t0_ms=draw(st.sampled_from([-2, 0, 3, 7])))
            return ops.Window("<http://example.org/s>", range_ms=draw(st.integers(1, 8)),
                              step_ms=draw(st.sampled_from([1, 2, 3, 5])) if own else step,
                              t0_ms=draw(st.sampled_from([None, None, -2, 0, 3, 7])) if own else None)
        if isinstance(first, ops.Project) and first.window is not None:
            first = dataclasses.replace(first, window=time())
        else:
            window = time()
            policy, period = query.window.policy, query.window.period_ms
            if window.count is not None:  # a count window takes no period (REPORT EVERY, COMPUTED EVERY)
                policy, period = (None if policy == "every" else policy), None
                query = dataclasses.replace(query, every_ms=None)
            query = dataclasses.replace(query, window=dataclasses.replace(window, policy=policy, period_ms=period))
        group = dataclasses.replace(group, window=time())
        if draw(st.integers(0, 3)) == 0:
            # { OPTIONAL { P } WINDOW ... }: join's identity, its solutions at every evaluation
            group = dataclasses.replace(group, pattern=ops.LeftJoin(ops.Unit(), group.pattern, None))
        pattern = ops.Union_(first, group)
        if draw(st.booleans()):
            extra = _triple(draw)
            third = ops.pattern_window(ops.variables(extra), extra, _window(draw))
            pattern = draw(st.sampled_from([ops.Join(pattern, third), ops.LeftJoin(pattern, third)]))
    elif how == "join":
        pattern = ops.Join(first, group)
    elif how == "between":
        pattern = _between_groups(draw, first, group)
    else:
        shared = sorted(ops.variables(first) & ops.variables(other), key=lambda v: v.name)
        cond = None
        if how == "optional-if" and shared:
            cond = ops.Call("!=", shared[0], ops.Const(integer(draw(st.integers(0, 3)))))
        elif how == "optional-time":  # read on the joined solution: its span over the parts
            fn = draw(st.sampled_from(["getDURATION", "getSTARTTIME", "getENDTIME", "now"]))
            k = draw(st.integers(0, MAX_TIME + 2))
            const = duration_ms(k) if fn == "getDURATION" else datetime_ms(k)
            cond = ops.Call(draw(st.sampled_from(["<", "<=", ">", ">="])), ops.Call(fn), ops.Const(const))
        pattern = ops.LeftJoin(first, group, cond)
    window = query.window
    if changes:
        window = dataclasses.replace(window, policy="change", period_ms=None)
    # a rule set with NOTSEQ and a grouped subquery is refused
    assume(not (any(isinstance(x, ops.SeqAbsence) for x in ops.walk(pattern))
                and any(isinstance(x, ops.Project) and x.evaluated for x in ops.walk(pattern))))
    query = dataclasses.replace(query, pattern=pattern, window=window)
    return query


def _between_groups(draw, first, group):
    """The other operators between groups with windows of their own, the
    first part kept where its solutions are needed (the query is evaluated
    when its window holds one): UNION of the group and another (joined
    with the first), MINUS, [NOT] EXISTS, BIND (of the time, or of a
    variable) read by a FILTER, a FILTER that reads the time, VALUES."""
    how = draw(st.sampled_from(["union", "minus", "exists", "not-exists", "bind", "filter-time", "values"]))
    if how == "union":
        extra = _triple(draw)
        other = ops.pattern_window(ops.variables(extra), extra, _window(draw))
        return ops.Join(first, ops.Union_(group, other) if draw(st.booleans()) else ops.Union_(other, group))
    fn = draw(st.sampled_from(["getDURATION", "getSTARTTIME", "getENDTIME", "now"]))
    k = draw(st.integers(0, MAX_TIME + 2))
    const = ops.Const(duration_ms(k) if fn == "getDURATION" else datetime_ms(k))
    test = draw(st.sampled_from(["<", "<=", ">", ">="]))
    if how in ("minus", "exists", "not-exists"):
        # the group's own FILTER (its condition, on the merge): of the variables of both, or of the time
        cond = draw(st.sampled_from([None, None, "vars", "time"]))
        names = sorted(ops.variables(first) | ops.variables(group), key=lambda v: v.name)
        if cond == "vars" and names:
            cond = ops.Call("!=", draw(st.sampled_from(names)), draw(st.sampled_from(names)))
        else:
            cond = ops.Call(test, ops.Call(fn), const) if cond == "time" else None
        return {"minus": ops.Minus, "exists": ops.Exists, "not-exists": ops.NotExists}[how](first, group, cond)
    joined = ops.Join(first, group)
    if how == "filter-time":
        return ops.Filter(ops.Call(test, ops.Call(fn), const), joined)
    names = sorted(ops.variables(joined), key=lambda v: v.name)
    if not names:
        return joined
    if how == "values":
        v = draw(st.sampled_from(names))
        rows = tuple((draw(st.sampled_from([None, integer(draw(st.integers(0, 3))), "<http://example.org/a>"])),)
                     for _ in range(draw(st.integers(1, 3))))
        return ops.Join(joined, ops.Values((v,), rows))
    z = ops.Var("bound")  # of no pattern
    if draw(st.booleans()):  # BIND of the time, read by a FILTER
        return ops.Filter(ops.Call(test, z, const), ops.Extend(joined, z, ops.Call(fn)))
    v = draw(st.sampled_from(names))
    if draw(st.booleans()):  # in the group's own scope, joined after: a variable of the first part is unbound there
        return ops.Filter(ops.Call("bound", z), ops.Join(first, ops.Extend(group, z, v)))
    return ops.Filter(ops.Call("!=", z, ops.Const(integer(draw(st.integers(0, 3))))), ops.Extend(joined, z, v))


def _inner_content(draw, pattern):
    """The pattern of a group with a window of its own, sometimes with an
    operator after it that is evaluated over the window's content
    (RSP-QL): OPTIONAL (with a condition or not, which splits the group),
    MINUS, [NOT] EXISTS, OPTIONALSEQ, EQUALSOPTIONAL, OPTIONAL under BIND
    or UNION, or a join with a grouped subquery, of a triple pattern."""
    how = draw(st.sampled_from([None, None, "optional", "optional-if", "negated", "negated", "temporal",
                                "optional-bind", "optional-union", "subquery"]))
    if how is None:
        return pattern
    extra = _triple(draw)
    shared = sorted(ops.variables(pattern) & ops.variables(extra), key=lambda v: v.name)
    if how in ("optional", "optional-if"):
        cond = None
        if how == "optional-if" and shared:
            cond = ops.Call("!=", shared[0], ops.Const(integer(draw(st.integers(0, 3)))))
        return ops.LeftJoin(pattern, extra, cond)
    if how == "negated":
        return _operator(draw, draw(st.sampled_from([ops.Minus, ops.Exists, ops.NotExists])), pattern, extra)
    if how == "temporal":
        cls = draw(st.sampled_from([ops.SeqRightJoin, ops.EqLeftJoin]))
        return _operator(draw, cls, *((extra, pattern) if cls is ops.SeqRightJoin else (pattern, extra)))
    if how == "optional-bind":
        free = [n for n in NUMERIC_VARS if ops.Var(n) not in ops.variables(pattern) | ops.variables(extra)]
        optional = ops.LeftJoin(pattern, extra)
        return ops.Extend(optional, ops.Var(free[0]), ops.Call("getDURATION")) if free else optional
    if how == "optional-union":
        return ops.Union_(ops.LeftJoin(pattern, extra), _triple(draw))
    return ops.Join(pattern, draw(grouped_subquery_queries(depth=1)).pattern.right)


STREAM_IRIS = ("<http://example.org/s>", "<http://example.org/t>")  # the first is the windows' stream


def _drawn_streams(draw, pattern):
    """The streams a windowed query reads (FROM STREAM, FROM NAMED STREAM)
    and its pattern with some triple patterns in GRAPH <stream> { ... }:
    one stream; two; or one and a named one read through GRAPH."""
    kind = draw(st.sampled_from(["one", "one", "two", "named"]))
    s, t = STREAM_IRIS
    streams = {"one": ((s, False),), "two": ((s, False), (t, False)), "named": ((s, False), (t, True))}[kind]

    def put(op):
        if isinstance(op, ops.Triple):
            if isinstance(op.p, ops.Path) or draw(st.integers(0, 2)) == 0:
                return op
            return dataclasses.replace(op, stream=draw(st.sampled_from([iri for iri, _ in streams])))
        if isinstance(op, ops.BGP):
            return dataclasses.replace(op, triples=tuple(put(x) for x in op.triples))
        if isinstance(op, (ops.Filter,) + ops.UNARY):
            return dataclasses.replace(op, pattern=put(op.pattern))
        if isinstance(op, (ops.Values, ops.Unit)):
            return op
        return dataclasses.replace(op, left=put(op.left), right=put(op.right))
    return streams, put(pattern) if kind != "one" or draw(st.booleans()) else pattern


@st.composite
def stream_timestamp_queries(draw):
    """C-SPARQL's timestamp(?v, <stream>) selected by a windowed query
    without grouping (windowed_queries), of a variable of its pattern (or
    ?u, never bound) and a stream the query reads; some with timestamp(?v)
    beside it. The events are drawn of both streams (streamed)."""
    query = draw(windowed_queries().filter(lambda q: q.window is not None and q.grouping is None
                                           and q.projection is not None))
    names = sorted(v.name for v in ops.variables(query.pattern)) + ["u"]
    streams = [iri for iri, _ in query.streams]
    items = []
    for i in range(draw(st.integers(1, 3))):
        v = ops.Var(draw(st.sampled_from(names)))
        args = (v,) if draw(st.integers(0, 3)) == 0 else (v, ops.Const(draw(st.sampled_from(streams))))
        items.append(ops.ProjectItem(ops.Var(f"ts{i}"), ops.Call("timestamp", *args)))
    return dataclasses.replace(query, projection=query.projection + tuple(items))


@st.composite
def streamed(draw, events):
    """The events, each of stream s, stream t or of none (every stream)."""
    out = []
    for e in events:
        g = draw(st.sampled_from(["", "", STREAM_IRIS[0], STREAM_IRIS[1]]))
        out.append(dataclasses.replace(e, stream=g))
    return out


@st.composite
def modified_queries(draw):
    """A SELECT (plain, projected or over a window) with solution
    modifiers: ORDER BY some of the variables its answers hold and an
    expression, each ascending or descending, OFFSET and LIMIT; or the query made an ASK.
    Ties are cut in a fixed order (docs/language.md), so the engine and the
    reference keep the same answers."""
    base = draw(st.one_of(queries(), projected_queries(), windowed_queries()))
    if draw(st.integers(0, 3)) == 0:
        return dataclasses.replace(base, form="ask", projection=(), distinct=True, grouping=None,
                                   report="rstream")
    visible = ([item.var for item in base.projection] if base.projection is not None
               else sorted(ops.variables(base.pattern), key=lambda v: v.name))
    visible = [v for v in visible if v.name[:1] not in ("_", ".")]
    keys = draw(st.lists(st.sampled_from(visible), unique=True, max_size=2)) if visible else []
    if base.report == "rstream" and draw(st.booleans()):
        # a key the rules compute as a hidden field: an expression over what the
        # projection reads (a group's row, or the pattern's variables), or a
        # variable that is not selected
        grouped = base.grouping is not None and base.grouping.keys is not None
        readable = visible if grouped else sorted(ops.variables(base.pattern), key=lambda v: v.name)
        readable = [v for v in readable if v.name[:1] not in ("_", ".")]
        numeric = [] if grouped else _numeric_vars(base.pattern)
        if numeric and draw(st.booleans()):
            keys.insert(0, _numeric(draw, numeric, 1))
        elif readable:
            v = draw(st.sampled_from(readable))
            keys.insert(0, v if not grouped and draw(st.booleans()) else ops.Call("str", v))
    order = tuple(ops.OrderKey(v, draw(st.booleans())) for v in keys)
    offset = draw(st.sampled_from([0, 0, 1, 2]))
    limit = draw(st.sampled_from([None, 0, 1, 2, 3]))
    return dataclasses.replace(base, order=order, offset=offset, limit=limit)


@st.composite
def grouped_subquery_queries(draw, depth: int = 2, content=False):
    """A random pattern joined with a grouped subquery over another (SPARQL
    1.1, 18.2.1 and 11): an aggregate of one of its numeric variables (or
    COUNT(*)), grouped by one of its variables or not at all, its rows
    sometimes ordered by their key and cut by LIMIT (ops.Project.evaluated).
    No NOTSEQ: the engine refuses it beside such a subquery. `content`:
    the subquery's pattern is an operator a window evaluates over its
    content (OPTIONAL, MINUS, [NOT] EXISTS, OPTIONALSEQ)."""
    binary = [cls for cls in BINARY if cls is not ops.SeqAbsence]
    outer = _pattern(draw, depth - 1, binary)
    if content:
        inner = _operator(draw, draw(st.sampled_from(CONTENT_OPERATORS)), _pattern(draw, depth - 1, binary),
                          _pattern(draw, depth - 1, binary))
    else:
        inner = _pattern(draw, depth, binary)
    names = sorted(ops.variables(inner), key=lambda v: v.name)
    numeric = _numeric_vars(inner)
    func = draw(st.sampled_from(["count", "sum", "min", "max", "sample"] if numeric else ["count"]))
    arg = ops.Var(draw(st.sampled_from(numeric))) if numeric and (func != "count" or draw(st.booleans())) else None
    keys = (draw(st.sampled_from(names)),) if names and draw(st.booleans()) else ()
    value = ops.Var("agg")
    grouping = ops.Grouping(keys, ((value, ops.Aggregate(func, arg, draw(st.integers(0, 3)) == 0)),))
    items = tuple(ops.ProjectItem(k) for k in keys) + (ops.ProjectItem(value),)
    cut = {}
    if keys and draw(st.booleans()):
        cut = {"order": (ops.OrderKey(keys[0], draw(st.booleans())),), "limit": draw(st.integers(0, 2))}
    sub = ops.Project(inner, tuple(i.var for i in items), grouping=grouping, items=items, **cut)
    return ops.Query("q", "select", ops.Join(outer, sub))


# ---------------------------------------------------------------- SERVICE

ENDPOINT = "http://127.0.0.1:1/sparql"  # replaced by the test's endpoint (service_at)
REMOTE = [terms.iri(EX + n) for n in ("f", "g")]


@st.composite
def endpoint_graphs(draw):
    """A snapshot of a remote endpoint's graph over the streams' subjects:
    :f an integer (a few subjects with two or none), :g a subject."""
    f = draw(st.lists(st.tuples(st.sampled_from(SUBJECTS), st.integers(0, 4)), min_size=1, max_size=6, unique=True))
    g = draw(st.lists(st.tuples(st.sampled_from(SUBJECTS), st.sampled_from(SUBJECTS)), max_size=3, unique=True))
    return {(s, REMOTE[0], integer(n)) for s, n in f} | {(s, REMOTE[1], o) for s, o in g}


def _service(draw, key: ops.Var) -> ops.Service:
    """SERVICE [SILENT] { ?key :f ?w [OPTIONAL { ?key :g ?v }] [FILTER] }:
    its FILTER on ?w, or on ?x (outside the group: unbound there)."""
    w, v = ops.Var("w"), ops.Var("v")
    triples = (ops.Triple(key, REMOTE[0], w),)
    if draw(st.booleans()):  # a blank node: a hidden variable
        triples += (ops.Triple(key, REMOTE[1], ops.Var("_:b9")),)
    optional = ((ops.Triple(key, REMOTE[1], v),),) if draw(st.booleans()) else ()
    cond = None
    if draw(st.booleans()):
        cond = ops.Call(draw(st.sampled_from(["<", ">", "="])), ops.Var(draw(st.sampled_from(["w", "w", ".unbound0"]))),
                        ops.Const(integer(draw(st.integers(0, 4)))))
    own = {key, w} | ({v} if optional else set()) | {x for t in triples for x in ops.slots_vars(t)}
    return ops.Service(ENDPOINT, draw(st.integers(0, 3)) == 0, triples, tuple(sorted(own, key=lambda x: x.name)),
                       optional=optional, filter=cond)


@st.composite
def service_queries(draw):
    """A query with a SERVICE joined (P . SERVICE), in OPTIONAL (P
    OPTIONAL { SERVICE }, sometimes with the optional group's FILTER), or
    deep in the pattern ({ P . SERVICE } SEQ Q: joined last where the rest
    does not read its variables); plain, or over a window (SELECT *, the
    solutions of each evaluation), and the endpoint's graph."""
    pattern = _pattern(draw, 2, BINARY)
    keys = sorted((v for v in ops.certain_variables(pattern) if v.name in ("s", "t")), key=lambda v: v.name)
    if not keys:
        pattern = ops.Join(pattern, ops.Triple(ops.Var("s"), PREDICATES[0], ops.Var("x")))
        keys = [ops.Var("s")]
    windowed = draw(st.booleans())
    streams = ()
    if windowed:
        streams, pattern = _drawn_streams(draw, pattern)
    service = _service(draw, draw(st.sampled_from(keys)))
    kind = draw(st.sampled_from(["join", "optional", "deep"]))
    if kind == "join":
        pattern = ops.Join(pattern, service)
    elif kind == "optional":
        cond = None
        if draw(st.integers(0, 2)) == 0:
            cond = ops.Call(">", ops.Var("w"), ops.Var(draw(st.sampled_from(_numeric_vars(pattern) or ["x"]))))
        pattern = ops.LeftJoin(pattern, service, cond)
    else:
        other = _pattern(draw, 1, BINARY)
        if windowed:
            other = _drawn_streams(draw, other)[1] if streams else other
        pattern = ops.SeqJoin(ops.Join(pattern, service), other)
    if not windowed:
        return ops.Query("q", "select", pattern, distinct=draw(st.integers(0, 4)) == 0), draw(endpoint_graphs())
    range_ms = draw(st.integers(1, 8))
    step_ms = draw(st.sampled_from([range_ms, max(1, range_ms // 2), 1, 3]))
    window = ops.Window(STREAM_IRIS[0], range_ms=range_ms, step_ms=step_ms)
    if draw(st.integers(0, 3)) == 0:  # RANGE UNBOUNDED: every solution since t0, rejoined at each evaluation
        window = ops.Window(STREAM_IRIS[0], step_ms=step_ms, t0_ms=draw(st.integers(-1, 2)))
    query = ops.Query("w", "select", pattern, None, draw(st.integers(0, 3)) == 0, window=window,
                      report=draw(st.sampled_from(ops.REPORTS)), streams=streams)
    return query, draw(endpoint_graphs())


def service_at(query, url: str):
    """The query with its SERVICE's endpoint `url`."""
    def put(op):
        if isinstance(op, ops.Service):
            return dataclasses.replace(op, endpoint=url)
        if isinstance(op, ops.Triple):
            return op
        if isinstance(op, (ops.Filter,) + ops.UNARY):
            return dataclasses.replace(op, pattern=put(op.pattern))
        if isinstance(op, ops.Binary):
            return dataclasses.replace(op, left=put(op.left), right=put(op.right))
        return op
    return dataclasses.replace(query, pattern=put(query.pattern))


@st.composite
def named_window_queries(draw):
    """The query text of RSP-QL's named windows (FROM NAMED
    WINDOW ... ON <s>) read by WINDOW ?w { P }, alone or beside WINDOW <w>
    { P } (joined, as OPTIONAL on either side, UNION): two or three
    windows over streams s and t of different sizes and one STEP, now and
    then one of another kind (another STEP, a START, RANGE UNBOUNDED, a
    count window),
    with a report policy on the first window and perhaps the others, and
    RSTREAM, ISTREAM or DSTREAM, plain or counted per window.
    The count window, the first or the second, is evaluated at every
    instant it counts, with the others' times."""
    step = draw(st.sampled_from([1, 2, 3]))
    policy = draw(st.sampled_from(["", "", " REPORT ON CHANGE", " REPORT NON EMPTY", " REPORT ON CLOSE"]))
    odd = draw(st.sampled_from([None, None, None, "step", "start", "count", "unbounded"]))
    counted = draw(st.sampled_from([0, 1])) if odd == "count" else None
    froms = []
    for i in range(draw(st.integers(2, 3))):
        stream = draw(st.sampled_from(STREAM_IRIS))
        if i == counted:
            spec = f"TRIPLES {draw(st.integers(1, 4))}"
        elif i > 0 and odd == "unbounded" and i == 1:
            start = draw(st.sampled_from(["00", "01", "03"]))
            spec = (f'RANGE UNBOUNDED STEP {draw(st.sampled_from([1, 2, 3]))}ms START '
                    f'"1970-01-01T00:00:00.0{start}Z"^^<http://www.w3.org/2001/XMLSchema#dateTime>')
        else:
            spec = f"RANGE {draw(st.integers(1, 8))}ms STEP {step + 1 if i == 1 and odd == 'step' else step}ms"
            if i == 1 and odd == "start":
                spec += ' START "1970-01-01T00:00:00.002Z"^^<http://www.w3.org/2001/XMLSchema#dateTime>'
        if i == 0 or (policy and draw(st.booleans())):
            spec += policy
        froms.append(f"FROM NAMED WINDOW :w{i} ON STREAM {stream} [{spec}]")

    def group():  # a triple pattern or two, sometimes an OPTIONAL inside (over the window's content)
        pattern = lambda: f"?x {draw(st.sampled_from([':p', ':q', ':r', '?p']))} ?{draw(st.sampled_from('yz'))}"
        text = pattern()
        how = draw(st.sampled_from([None, None, "join", "optional"]))
        if how == "join":
            text += f" . {pattern()}"
        elif how == "optional":
            text += f" OPTIONAL {{ {pattern()} }}"
        return "{ " + text + " }"
    where = draw(st.sampled_from([
        "WINDOW ?w {a}", "WINDOW :w0 {a} WINDOW ?w {b}", "WINDOW ?w {a} OPTIONAL {{ WINDOW :w1 {b} }}",
        "WINDOW :w0 {a} OPTIONAL {{ WINDOW ?w {b} }}", "{{ WINDOW ?w {a} }} UNION {{ WINDOW :w1 {b} }}"]))
    where = where.format(a=group(), b=group())
    report = draw(st.sampled_from(["", "", "ISTREAM ", "DSTREAM "]))
    select = draw(st.sampled_from([f"SELECT {report}*", f"SELECT {report}?w (COUNT(*) AS ?n)"]))
    grouped = " GROUP BY ?w" if "COUNT" in select else ""
    text = "PREFIX : <http://example.org/>\n" + select + "\n" + "\n".join(froms) + f"\nWHERE {{ {where} }}{grouped}"
    return text
