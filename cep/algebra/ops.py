"""The EP-SPARQL algebra (paper, section 4.2): operator classes and expressions.

A query's WHERE part translates to a tree of these operators. Graph patterns:
Triple (one triple pattern), BGP (a list of them), Join, Union, LeftJoin
(SPARQL OPTIONAL), SeqJoin (SEQ), EqJoin (EQUALS), SeqRightJoin (OPTIONALSEQ:
the *left* operand is optional and occurs strictly before the right one),
EqLeftJoin (EQUALSOPTIONAL: the *right* operand is optional and simultaneous),
SeqAbsence (NOTSEQ: the left operand not followed by the right one within
a deadline), Minus (SPARQL 1.1 MINUS, within the left operand's interval),
Exists and NotExists (FILTER EXISTS / NOT EXISTS, alike), Allen's interval relations During, Starts, Finishes, Meets and
Overlaps, and Filter. Each binary operator's class carries its Operator
entry (`spec`): what every stage decides about it. Every solution is a binding plus a time interval [start, end].

Terms in patterns and expressions are `Var` or canonical N-Triples text
(cep.terms). All nodes are immutable and hashable; `pos` is where the node
came from in the query text and takes no part in equality.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar, Optional, Union


@dataclass(frozen=True)
class Pos:
    file: str
    line: int
    column: int

    def __str__(self):
        return f"{self.file}:{self.line}:{self.column}"


@dataclass(frozen=True)
class Var:
    """A variable. The ones the compiler makes have a name no query can
    write, as SPARQL's variable names (VARNAME, grammar rule [166]) hold no
    ":" or ".": `_:b0`, `_:end0` are hidden pattern variables (blank nodes,
    the end of a matched event; SELECT * leaves them out), `.agg0`,
    `.hoisted0` values the compiler computes (an aggregate, a subexpression
    of a SEQ filter). So no user name meets one of them."""

    name: str  # without the leading ? or $

    def __str__(self):
        return "?" + self.name


Slot = Union[Var, str]  # a variable or a canonical N-Triples term


# ------------------------------------------------------------ expressions


@dataclass(frozen=True)
class Const:
    term: str  # canonical N-Triples text


@dataclass(frozen=True)
class Call:
    """A function application. `name` is one of FUNCTIONS, `cast:<IRI>`
    for an XSD cast such as xsd:integer(?x), or `prolog:<name>` for a call
    of a predicate of the user's Prolog files (cep/user_prolog.py). `pos`
    (where the call is in the query) takes no part in equality."""

    name: str
    args: tuple
    pos: Optional[Pos] = field(default=None, compare=False, repr=False)

    def __init__(self, name, *args, pos=None):
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "args", tuple(args))
        object.__setattr__(self, "pos", pos)


Expr = Union[Var, Const, Call]

# Function names shared by the parser, the compiler and the reference
# evaluator; each follows SPARQL 1.1 section 17 unless marked (paper).
FUNCTIONS = {
    # logical and comparison
    "or", "and", "not", "=", "!=", "<", ">", "<=", ">=", "in", "notin",
    # arithmetic
    "+", "-", "*", "/", "neg", "pos",
    # terms
    "bound", "str", "lang", "datatype", "isIRI", "isBlank", "isLiteral",
    "isNumeric", "sameTerm", "langMatches", "regex", "if", "coalesce",
    # strings and numbers
    "strlen", "ucase", "lcase", "contains", "strstarts", "strends", "concat",
    "abs", "ceil", "floor", "round", "substr", "strbefore", "strafter",
    "encode_for_uri", "replace", "strlang", "strdt", "iri", "md5", "sha1",
    "sha256", "sha384", "sha512", "year", "month", "day", "hours", "minutes",
    "seconds", "timezone", "tz",
    # a new value per solution (docs/language.md, "Functions")
    "rand", "uuid", "struuid", "bnode",
    # NOW(): the end of the solution's interval, as getENDTIME()
    "now",
    # the paper's interval functions
    "getDURATION", "getSTARTTIME", "getENDTIME",
    # C-SPARQL's timestamp(?v) (cep/algebra/timestamps.py)
    "timestamp",
}
CAST_PREFIX = "cast:"
# a bare name that is not a SPARQL function: a user Prolog predicate, resolved
# by the compiler against the --prolog files (cep/user_prolog.py)
USER_PREFIX = "prolog:"
TIME_FUNCTIONS = {"getDURATION", "getSTARTTIME", "getENDTIME", "now"}


# ------------------------------------------------------- graph patterns


@dataclass(frozen=True)
class Path:
    """A SPARQL 1.1 property path (section 9): `op` is "|" (alternatives),
    "/" (sequence), "^" (inverse), "!" (a negated property set: its args
    are IRIs and inverses of IRIs), or one of PATH_CLOSURES; `args` are
    Paths or IRIs (canonical N-Triples text). After translation (SPARQL
    18.2.2.4) a triple pattern's predicate is a Path only for a closure,
    evaluated over the events of each instant, with background knowledge
    over their union with the background graph; the other forms appear
    inside one."""

    op: str
    args: tuple

    def iris(self) -> set:
        """The IRIs of its steps."""
        return set().union(*({a} if isinstance(a, str) else a.iris() for a in self.args))

    def zero_length(self) -> bool:
        """Whether it connects a node with itself by no step (p*, p?)."""
        if self.op in ("*", "?"):
            return True
        steps = [not isinstance(a, str) and a.zero_length() for a in self.args]
        return any(steps) if self.op == "|" else all(steps)

    def reads_every_event(self, s, o) -> bool:
        """Whether, between the ends s and o, it reads every triple of an
        instant: a path that can be of length zero between two variables
        ranges over the nodes of the whole graph (SPARQL 18.5); any other
        reads the triples of its own IRIs only."""
        return isinstance(s, Var) and isinstance(o, Var) and self.zero_length()

    def __str__(self):
        def text(x):
            return x if isinstance(x, str) else f"({x})"
        if self.op in PATH_CLOSURES:
            return text(self.args[0]) + self.op
        if self.op == "^":
            return "^" + text(self.args[0])
        if self.op == "!":
            return "!(" + "|".join(str(a) for a in self.args) + ")"
        return self.op.join(text(a) for a in self.args)


PATH_CLOSURES = ("+", "*", "?")  # one or more, zero or more, zero or one steps


@dataclass(frozen=True)
class Triple:
    s: Slot
    p: Slot  # or a Path whose op is in PATH_CLOSURES
    o: Slot
    pos: Optional[Pos] = field(default=None, compare=False, repr=False)
    # the hidden variable bound to the end of the event the pattern matched,
    # for timestamp() (cep/algebra/timestamps.py); None until that rewrite
    end: Optional[Var] = None
    # for timestamp(?v, <stream>): (stream IRI, hidden variable) pairs, each
    # bound to the event's end when the event is of that stream
    stream_ends: tuple = ()
    # the hidden variable bound to the copy index of the event the pattern
    # matched (a stream is a multiset: cep/algebra/copies.py); None until
    # that rewrite
    copy: Optional[Var] = None
    # GRAPH <stream> { ... }: the stream (an IRI, N-Triples text) whose
    # events the pattern matches; None: the query's FROM STREAM streams (or
    # every event, in a query without them); see Query.streams
    stream: Optional[str] = None


@dataclass(frozen=True)
class BGP:
    triples: tuple
    pos: Optional[Pos] = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Unit:
    """The empty group `{}` where it must stand as a pattern of its own
    (a whole WHERE, the group an OPTIONAL or a FILTER is in, an operand of
    UNION): SPARQL's one empty solution, the identity of join (18.2.2.8;
    juxtaposed with another pattern it is dropped). On a stream it has one
    solution per instant at which an event arrives, the empty binding over
    [t, t] (docs/language.md, "The empty group"); `stream` as Triple's:
    the instants of those streams' events."""

    stream: Optional[str] = None
    pos: Optional[Pos] = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Operator:
    """What every stage decides about a binary operator, in one place: the
    stages read it (and fail on an operator without it) rather than each
    keep a list of classes. Operands are `left` [s1, e1] and `right` [s2, e2].

    - keyword: the EP-SPARQL keyword between two groups (`{P1} SEQ {P2}`);
      None where the syntax is another (a join is juxtaposition, OPTIONAL
      a keyword inside a group).
    - sexpr: the name in the S-expression text (cep.algebra.sexpr).
    - associative: chains of it may be coupled from either end (binarize).
    - optional: the operand that may be missing from a solution ("left",
      "right"), or None.
    - negated: the right operand only decides absence (NOTSEQ): the
      solutions bind the left operand's variables only.
    - alternative: the solutions are either operand's (UNION), not a
      combination of both.
    - interval: the test on the two operands' intervals for them to make a
      solution, as comparisons (op, x, y) of "s1", "e1", "s2", "e2" that
      must all hold; () for none. A solution made of both spans both.
    - timeless: an operand may be a background solution, which has no
      interval (joins, unions, OPTIONAL, MINUS and [NOT] EXISTS only:
      every other test reads intervals). OPTIONAL's background optional
      part joins a mandatory solution of either kind, and MINUS's or
      EXISTS's background right part tests a left solution of either
      kind; a background mandatory (left) solution takes only a
      background optional (right) part (docs/language.md).
    - ends_last: per operand, whether it can end where the solution ends
      (rule chaining reads a derived triple at that instant,
      cep.algebra.chaining).
    - store: how long the compiled step keeps the solutions it stores
      (cep.compile): None (nothing), "instant" (one instant: the operands
      share the interval), "deadline" (NOTSEQ's), "window" (until older
      than the step's window, if it has one, else for ever), "forever".
    - kept: what it keeps for ever, as the unbounded-state warning says it.

    Adding an operator: its class with its entry here (and in BINARY), its
    keyword in cep/syntax/epsparql.lark, its clause builder in
    cep.compile.steps.BUILDERS, its meaning in cep/reference/patterns.py
    (written from its definition, not from this entry), its text in
    tests/unit/test_operator_checklist.py's SYNTAX, a golden case, and
    docs/language.md. The checklist test fails until each is there.
    """

    keyword: Optional[str]
    sexpr: str
    associative: bool
    optional: Optional[str]
    negated: bool
    alternative: bool
    interval: tuple
    timeless: bool
    ends_last: tuple  # (left, right)
    store: Optional[str]
    kept: Optional[str]

    @property
    def mandatory(self) -> tuple:
        """Per operand, whether every solution has one of it."""
        if self.alternative:
            return (False, False)
        return (self.optional != "left", self.optional != "right" and not self.negated)

    @property
    def conditioned(self) -> Optional[str]:
        """The operand whose own FILTER is the operator's condition (`cond`):
        the optional one, or NOTSEQ's right; None without a condition."""
        return self.optional or ("right" if self.negated else None)


BEFORE = (("<", "e1", "s2"),)  # the left operand ends before the right one starts
SAME_INTERVAL = (("=", "s1", "s2"), ("=", "e1", "e2"))


class Binary:
    """A binary graph pattern operator: `left`, `right` and `pos` fields,
    and its `spec`, an Operator."""

    spec: ClassVar[Operator]


@dataclass(frozen=True)
class Join(Binary):
    spec: ClassVar[Operator] = Operator(
        keyword=None, sexpr="join", associative=True, optional=None, negated=False, alternative=False,
        interval=(), timeless=True, ends_last=(True, True), store="window", kept="both sides of joins")
    left: object
    right: object
    pos: Optional[Pos] = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Union_(Binary):
    spec: ClassVar[Operator] = Operator(
        keyword="UNION", sexpr="union", associative=True, optional=None, negated=False, alternative=True,
        interval=(), timeless=True, ends_last=(True, True), store=None, kept=None)
    left: object
    right: object
    pos: Optional[Pos] = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class LeftJoin(Binary):
    spec: ClassVar[Operator] = Operator(
        keyword=None, sexpr="leftjoin", associative=False, optional="right", negated=False, alternative=False,
        interval=(("<=", "e2", "e1"),), timeless=True, ends_last=(True, True), store="forever",
        kept="the optional part of OPTIONAL")
    left: object  # mandatory
    right: object  # optional, ends no later than the mandatory part
    cond: Optional[Expr] = None
    pos: Optional[Pos] = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class SeqJoin(Binary):
    spec: ClassVar[Operator] = Operator(
        keyword="SEQ", sexpr="seqjoin", associative=True, optional=None, negated=False, alternative=False,
        interval=BEFORE, timeless=False, ends_last=(False, True), store="window", kept="the left side of SEQ")
    left: object
    right: object
    pos: Optional[Pos] = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class EqJoin(Binary):
    spec: ClassVar[Operator] = Operator(
        keyword="EQUALS", sexpr="eqjoin", associative=True, optional=None, negated=False, alternative=False,
        interval=SAME_INTERVAL, timeless=False, ends_last=(True, True), store="instant", kept=None)
    left: object
    right: object
    pos: Optional[Pos] = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class SeqRightJoin(Binary):
    spec: ClassVar[Operator] = Operator(
        keyword="OPTIONALSEQ", sexpr="seqrightjoin", associative=False, optional="left", negated=False,
        alternative=False, interval=BEFORE, timeless=False, ends_last=(False, True), store="forever",
        kept="the optional part of OPTIONALSEQ")
    left: object  # optional, ends strictly before the mandatory part starts
    right: object  # mandatory
    cond: Optional[Expr] = None
    pos: Optional[Pos] = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class EqLeftJoin(Binary):
    spec: ClassVar[Operator] = Operator(
        keyword="EQUALSOPTIONAL", sexpr="eqleftjoin", associative=False, optional="right", negated=False,
        alternative=False, interval=SAME_INTERVAL, timeless=False, ends_last=(True, True), store="instant",
        kept=None)
    left: object  # mandatory
    right: object  # optional, with exactly the same interval
    cond: Optional[Expr] = None
    pos: Optional[Pos] = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class SeqAbsence(Binary):
    """NOTSEQ (this project): a solution of `left` [s1, e1] with no
    compatible solution of `right` satisfying `cond` (right's own FILTER)
    that starts after e1 and ends by e1 + deadline_ms. Its solutions bind
    left's variables only, over [s1, e1 + deadline_ms]: absence by a
    deadline, decided when event time passes the deadline."""

    spec: ClassVar[Operator] = Operator(
        keyword="NOTSEQ", sexpr="notseq", associative=False, optional=None, negated=True, alternative=False,
        interval=BEFORE, timeless=False, ends_last=(False, True), store="deadline", kept=None)
    left: object  # what occurred
    right: object  # what must not follow it within the deadline
    deadline_ms: int
    cond: Optional[Expr] = None
    pos: Optional[Pos] = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Minus(Binary):
    """SPARQL 1.1's MINUS (section 18.5) on a stream: a solution of `left`
    [s1, e1] for which no solution of `right` lies within its interval
    (s1 <= s2, e2 <= e1), is compatible with it, shares a variable bound
    in both, and satisfies `cond` on their merge. Its solutions bind
    left's variables only, over left's interval: decided at the end of the
    instant e1 (as OPTIONAL is). A background solution of `right` lies
    within every interval. At one instant it is SPARQL's MINUS."""

    spec: ClassVar[Operator] = Operator(
        keyword=None, sexpr="minus", associative=False, optional=None, negated=True, alternative=False,
        interval=(("<=", "s1", "s2"), ("<=", "e2", "e1")), timeless=True, ends_last=(True, True),
        store="forever", kept="the right side of MINUS")
    left: object  # what is kept
    right: object  # what removes it
    cond: Optional[Expr] = None
    pos: Optional[Pos] = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Exists(Binary):
    """FILTER EXISTS { P } (SPARQL 1.1, 17.4.1.4) on a stream: a solution
    of `left` [s1, e1] for which a solution of `right` (P) lies within its
    interval (s1 <= s2, e2 <= e1), is compatible with it and satisfies
    `cond` (P's own FILTER, which sees the solution's bindings, as SPARQL's
    substitution does) on their merge. Its solutions are left's, once
    each; decided at the end of the instant e1."""

    spec: ClassVar[Operator] = Operator(
        keyword=None, sexpr="exists", associative=False, optional=None, negated=True, alternative=False,
        interval=(("<=", "s1", "s2"), ("<=", "e2", "e1")), timeless=True, ends_last=(True, True),
        store="forever", kept="the group of EXISTS")
    left: object  # the solutions filtered
    right: object  # P
    cond: Optional[Expr] = None
    pos: Optional[Pos] = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class NotExists(Binary):
    """FILTER NOT EXISTS { P }: the solutions of `left` for which Exists
    finds no solution of `right`."""

    spec: ClassVar[Operator] = Operator(
        keyword=None, sexpr="notexists", associative=False, optional=None, negated=True, alternative=False,
        interval=(("<=", "s1", "s2"), ("<=", "e2", "e1")), timeless=True, ends_last=(True, True),
        store="forever", kept="the group of NOT EXISTS")
    left: object  # the solutions filtered
    right: object  # P
    cond: Optional[Expr] = None
    pos: Optional[Pos] = field(default=None, compare=False, repr=False)


# Allen's interval relations (J. F. Allen, "Maintaining knowledge about
# temporal intervals", CACM 1983; ETALIS's during, starts, finishes, meets,
# overlaps): `{A} DURING {B}` has the solutions of A and B, compatible,
# whose intervals [s1, e1] and [s2, e2] are so related; a solution spans
# both, [min(s1, s2), max(e1, e2)] (docs/language.md).


def _allen(keyword: str, interval: tuple, left_ends_last: bool) -> Operator:
    return Operator(
        keyword=keyword, sexpr=keyword.lower(), associative=False, optional=None, negated=False,
        alternative=False, interval=interval, timeless=False, ends_last=(left_ends_last, True),
        store="window", kept=f"both sides of {keyword}")


@dataclass(frozen=True)
class During(Binary):
    """A lies strictly within B: s2 < s1 and e1 < e2."""

    spec: ClassVar[Operator] = _allen("DURING", (("<", "s2", "s1"), ("<", "e1", "e2")), False)
    left: object
    right: object
    pos: Optional[Pos] = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Starts(Binary):
    """A starts B and ends first: s1 = s2 and e1 < e2."""

    spec: ClassVar[Operator] = _allen("STARTS", (("=", "s1", "s2"), ("<", "e1", "e2")), False)
    left: object
    right: object
    pos: Optional[Pos] = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Finishes(Binary):
    """A finishes B and starts after it: e1 = e2 and s2 < s1."""

    spec: ClassVar[Operator] = _allen("FINISHES", (("<", "s2", "s1"), ("=", "e1", "e2")), True)
    left: object
    right: object
    pos: Optional[Pos] = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Meets(Binary):
    """B starts where A ends: e1 = s2 (so A ends where the solution does
    when B is a point)."""

    spec: ClassVar[Operator] = _allen("MEETS", (("=", "e1", "s2"),), True)
    left: object
    right: object
    pos: Optional[Pos] = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Overlaps(Binary):
    """A starts first, B starts before A ends and ends after it:
    s1 < s2 < e1 < e2."""

    spec: ClassVar[Operator] = _allen("OVERLAPS", (("<", "s1", "s2"), ("<", "s2", "e1"), ("<", "e1", "e2")), False)
    left: object
    right: object
    pos: Optional[Pos] = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Filter:
    cond: Expr
    pattern: object
    pos: Optional[Pos] = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Extend:
    """BIND(expr AS ?var) (SPARQL 1.1, 18.2.2.6 and 18.5 Extend): each
    solution of `pattern` with `var` bound to the value of `expr`, or left
    unbound where `expr` is an error; the interval stays the solution's.
    `var` is not bound by `pattern` (translation checks it)."""

    pattern: object
    var: Var
    expr: Expr
    pos: Optional[Pos] = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Values:
    """Inline data (VALUES, SPARQL 1.1, 10.2): one solution per row, `rows`
    a tuple of tuples of terms (canonical N-Triples text) or None (UNDEF),
    in the order of `vars`. The rows are constants with no interval, like
    background data: joined with a pattern, a solution keeps the interval
    of the pattern's solution (docs/language.md, "Inline data")."""

    vars: tuple  # of Var
    rows: tuple
    pos: Optional[Pos] = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Service:
    """SERVICE <endpoint> { triples OPTIONAL { triples } ... FILTER(cond) }
    (SPARQL 1.1 Federated Query): the solutions of the basic graph pattern
    `triples`, left-joined in turn with each of the `optional` ones, at a
    remote endpoint (an absolute IRI, without <>), read from its local
    view (cep.service: pulled at the start, refreshed under a budget), and
    filtered by `filter`, which the engine applies to the view's solutions
    (not sent; its variables not of the pattern are hidden ones, unbound:
    the group's scope). Like inline data it matches no event: joined with
    a pattern, a solution keeps the interval of the pattern's solution.
    `vars`: the pattern's variables in name order (the columns of the
    view; a blank node is a hidden one). SILENT: an endpoint that fails
    gives the one empty solution (SPARQL 1.1 Federated Query, 4) while the
    view holds nothing."""

    endpoint: str
    silent: bool
    triples: tuple  # of Triple
    vars: tuple  # of Var
    pos: Optional[Pos] = field(default=None, compare=False, repr=False)
    optional: tuple = ()  # of tuples of Triple: OPTIONAL { ... } groups, in order
    filter: Optional[Expr] = None

    @property
    def certain(self) -> set:
        """The variables every solution binds: those of `triples`."""
        return {v for t in self.triples for v in slots_vars(t)}


@dataclass(frozen=True)
class Project:
    """A subquery (SELECT inside WHERE, SPARQL 1.1, 18.2.1): the solutions
    of `pattern` restricted to `vars`, once each when `distinct` (per
    instant: docs/language.md, "Subqueries"). Translation renames the
    subquery's other variables to hidden ones (`.sq0.x`), so the outer
    pattern cannot meet them (bottom-up evaluation).

    A subquery with its own aggregation or cut (`evaluated`) is evaluated
    at each instant over the solutions of `pattern` that end at it, as a
    query grouped without a window is: `grouping` (as Query.grouping) makes
    a row of each group, over [t, t], whose fields are `items` (its SELECT
    clause, read after the aggregates); `order`, `offset` and `limit` (as
    Query's) then order and cut the instant's rows."""

    pattern: object
    vars: tuple  # of Var
    distinct: bool = False
    pos: Optional[Pos] = field(default=None, compare=False, repr=False)
    grouping: Optional["Grouping"] = None
    items: tuple = ()  # of ProjectItem: a grouped subquery's SELECT clause
    order: tuple = ()  # of OrderKey
    offset: int = 0
    limit: Optional[int] = None
    # a group with a window of its own (Streaming SPARQL, `{ P WINDOW ELEMS
    # 10 }`): P's solutions over that window, every variable of P projected
    # (cep.binarize.split_windows); None for a subquery
    window: Optional["Window"] = None

    @property
    def evaluated(self) -> bool:
        """Whether the subquery is evaluated per instant (grouped, or cut
        by OFFSET or LIMIT; an ORDER BY alone changes no multiset)."""
        return self.grouping is not None or self.offset > 0 or self.limit is not None

    def as_query(self) -> "Query":
        """The subquery as a query of its own (its SELECT clause, grouping
        and modifiers), for the makers of rows that read one."""
        projection = self.items or tuple(ProjectItem(v) for v in self.vars)
        return Query(".subquery", "select", self.pattern, projection, self.distinct, grouping=self.grouping,
                     order=self.order, offset=self.offset, limit=self.limit)


def pattern_window(vars_, pattern, window) -> "Project":
    """The group `pattern` read over its own window (Project.window)."""
    return Project(pattern, tuple(sorted(vars_, key=lambda v: v.name)), window=window, pos=window.pos)


# the unary pattern operators: one operand, `pattern`
UNARY = (Extend, Project)


Union = Union_  # the paper's name; the class name avoids typing.Union
BINARY = (Join, Union_, LeftJoin, SeqJoin, EqJoin, SeqRightJoin, EqLeftJoin, SeqAbsence, Minus, Exists,
          NotExists, During, Starts, Finishes, Meets, Overlaps)
OPTIONAL_OPS = tuple(cls for cls in BINARY if cls.spec.optional)
PATTERN_OPS = (Triple, BGP, Unit, Filter, Values) + UNARY + BINARY
KEYWORDS = {cls.spec.keyword: cls for cls in BINARY if cls.spec.keyword}
SEXPR_NAMES = {cls.spec.sexpr: cls for cls in BINARY}


def combine(spec: Operator, left: set, right: set, certain: bool) -> set:
    """The variables of a solution of an operator, from its operands':
    those it may bind (certain False), or those it binds in every
    solution (certain True). The one rule for algebra trees and plans."""
    if spec.negated:
        return set(left)
    if not certain:
        return left | right
    if spec.alternative:
        return left & right
    mandatory = spec.mandatory
    return (left if mandatory[0] else set()) | (right if mandatory[1] else set())


# --------------------------------------------------------------- queries


@dataclass(frozen=True)
class ProjectItem:
    var: Var
    expr: Optional[Expr] = None  # (expr AS ?var); None for a plain variable


@dataclass(frozen=True)
class OrderKey:
    """One ORDER BY condition: an expression over the projected variables,
    ascending unless DESC."""
    expr: Expr
    descending: bool = False


@dataclass(frozen=True)
class Window:
    """A window over the run's stream (C-SPARQL's FROM STREAM <iri> [...]):
    time-based, RSP-QL's (t'-range, t'] at every t' that is a multiple of
    `step` (tumbling: step = range), or count-based, the last `count`
    elements, which `counts` says: "events" (timestamped graphs, RSP-QL's
    count window, Streaming SPARQL's WINDOW ELEMS n) or "triples"
    (C-SPARQL's [TRIPLES n]). `stream` is the stream's IRI (N-Triples
    text). `policy` is RSP-QL's report policy given in its brackets
    (REPORT ...): "close",
    "change", "nonempty" or "every" (every `period_ms`, which is then the
    query's every_ms); None when none is given (the window close).
    `t0_ms` is RSP-QL's t0 (START): the windows are (t0 + i*step, t0 +
    i*step + range], i >= 0; None: the closes are the multiples of the
    step, with no first window. A window of infinite width (RANGE
    UNBOUNDED) has `range_ms` None and a t0: its windows are (t0, t0 +
    i*step], i >= 1."""

    stream: str
    range_ms: Optional[int] = None
    step_ms: Optional[int] = None
    count: Optional[int] = None
    counts: str = "triples"
    policy: Optional[str] = None
    period_ms: Optional[int] = None
    t0_ms: Optional[int] = None
    pos: Optional[Pos] = field(default=None, compare=False, repr=False)

    @property
    def unbounded(self) -> bool:
        return self.count is None and self.range_ms is None

    @property
    def first_close_ms(self) -> int:
        """A time-based window's first close, t0 + range (t0 + step for an
        unbounded one); 0 without a t0 (the closes are the multiples of the
        step, or of the query's period)."""
        return self.t0_ms + (self.step_ms if self.unbounded else self.range_ms) if self.t0_ms is not None else 0


AGGREGATES = ("count", "sum", "avg", "min", "max", "sample", "group_concat")


@dataclass(frozen=True)
class Aggregate:
    """An aggregate of a window's solutions (SPARQL 1.1 section 18.5): `arg`
    is an expression, or None for COUNT(*); `separator` is GROUP_CONCAT's
    (a space unless given), None for the others."""

    func: str  # one of AGGREGATES
    arg: Optional[Expr] = None
    distinct: bool = False
    separator: Optional[str] = None

    def __post_init__(self):
        if self.func == "group_concat" and self.separator is None:
            object.__setattr__(self, "separator", " ")  # SPARQL's default


@dataclass(frozen=True)
class Grouping:
    """What a windowed query does with the solutions in a window, at each
    evaluation. SPARQL's GROUP BY form (`keys` given, possibly empty: one
    group): the solutions are grouped, `aggregates` bind variables per
    group, and a group is a row. C-SPARQL's AGGREGATE form (`keys` None):
    each solution is a row, extended by the `extensions`, each an
    aggregate over the solutions that share its own key variables. Then
    `having` (HAVING, or the AGGREGATE clauses' FILTERs) keeps rows."""

    keys: Optional[tuple] = None  # tuple of Var
    aggregates: tuple = ()  # ((Var, Aggregate), ...): the variables the aggregates bind
    extensions: tuple = ()  # C-SPARQL: ((Var, Aggregate, key Vars), ...)
    having: tuple = ()  # conditions (Expr)
    # GROUP BY (expr AS ?v) and GROUP BY expr: ((Var, Expr), ...), the keys
    # a solution's expression values bind (unbound where it is an error)
    computed: tuple = ()


REPORTS = ("rstream", "istream", "dstream")


@dataclass(frozen=True)
class Query:
    name: str
    # "select", "construct", "ask" (a SELECT of no variable, DISTINCT, whose
    # solutions of one evaluation make one answer) or "update" (template:
    # the triples to insert)
    form: str
    pattern: object
    projection: Optional[tuple] = None  # tuple of ProjectItem; None for SELECT *
    distinct: bool = False
    template: tuple = ()  # CONSTRUCT: tuple of Triple (blank nodes as "_:label")
    options: tuple = ()  # sorted (key, value) pairs: policy, binarize, ...
    pos: Optional[Pos] = field(default=None, compare=False, repr=False)
    warnings: tuple = field(default=(), compare=False, repr=False)  # texts for stderr
    deletions: tuple = ()  # update: tuple of Triple, the triples to delete
    # FROM: the absolute paths (str) of the background files the query names,
    # in order; the run's one background graph holds them (docs/language.md)
    ontologies: tuple = ()
    # a continuous query over a window (docs/language.md, "Windows"): its
    # window, how often it is evaluated (COMPUTED EVERY, ms; None: at each
    # window close), what it reports of each evaluation, and its grouping
    window: Optional[Window] = None
    # the streams the query reads (FROM [NAMED] STREAM), in order: pairs
    # (IRI as N-Triples text, named); a named stream is read only through
    # GRAPH. The window (one size) applies to them all. () without FROM STREAM
    streams: tuple = ()
    every_ms: Optional[int] = None
    report: str = "rstream"
    grouping: Optional[Grouping] = None
    # solution modifiers (ORDER BY, OFFSET, LIMIT), applied to the answers
    # of one evaluation (docs/language.md, "Solution modifiers"): order is a
    # tuple of OrderKey; limit None for none
    order: tuple = ()
    offset: int = 0
    limit: Optional[int] = None

    @property
    def modified(self) -> bool:
        """Whether a solution modifier orders or cuts the query's answers."""
        return bool(self.order) or self.offset > 0 or self.limit is not None

    @property
    def evaluated(self) -> bool:
        """Whether the query answers at evaluations (cep_window): those of
        its window, or, grouped without one, one per instant over the
        solutions that end at it (docs/language.md, "Windows and
        aggregates")."""
        return self.window is not None or self.grouping is not None

    @property
    def over_static_data(self) -> bool:
        """Whether the query is over static data as Streaming SPARQL writes
        one (its Listing 1.2): it names its background files (FROM <file>)
        and no stream, and answers as its solutions come (no window, no
        grouping, no update). The solutions of the background alone are
        then answered once, at the first instant of the stream
        (docs/language.md, "Queries over static data")."""
        return bool(self.ontologies) and not self.streams and not self.evaluated and self.form != "update"

    @property
    def windows(self) -> tuple:
        """Every window of the query: its own, then those of its groups
        (Project.window), in the order written."""
        own = (self.window,) if self.window is not None else ()
        return own + tuple(op.window for op in walk(self.pattern)
                           if isinstance(op, Project) and op.window is not None)

    @property
    def outputs(self) -> bool:
        """Whether the query's answers are output (an update's change the
        background instead)."""
        return self.form != "update"

    def triple_streams(self, triple):
        """The streams whose events `triple` (one of the pattern's, or a
        Unit, whose instants are those of the events) matches:
        a frozenset of IRIs, or None for every event (a query without FROM
        STREAM). An event without a stream belongs to every stream."""
        if triple.stream is not None:
            return frozenset((triple.stream,))
        if not self.streams:
            return None
        return frozenset(iri for iri, named in self.streams if not named)

    def option(self, key, default=None):
        return dict(self.options).get(key, default)

    @property
    def feeds_back(self) -> bool:
        """Whether the query's triples are added to the stream for every
        query to read (rule chaining): a CONSTRUCT's are, unless it says
        @feedback off (a DESCRIBE always does)."""
        return self.form == "construct" and self.option("feedback", "on") == "on"


# ------------------------------------------------------------- analysis


def slots_vars(triple: Triple):
    return [x for x in (triple.s, triple.p, triple.o) if isinstance(x, Var)]


def expr_vars(expr) -> set:
    if isinstance(expr, Var):
        return {expr}
    if isinstance(expr, Call):
        out = set()
        for a in expr.args:
            out |= expr_vars(a)
        return out
    return set()


def expr_uses(expr, names) -> bool:
    if isinstance(expr, Call):
        return expr.name in names or any(expr_uses(a, names) for a in expr.args)
    return False


def variables(op, memo=None) -> set:
    """Variables that may be bound by solutions of `op`; `memo` as for
    certain_variables."""
    return _variables(op, False, memo)


def certain_variables(op, memo=None) -> set:
    """Variables bound in every solution of `op`. `memo` (a dict, id of
    an operator -> its set) keeps the sets of the operators below, for a
    caller that asks at every level of a deep tree."""
    return _variables(op, True, memo)


def _variables(op, certain: bool, memo) -> set:
    if memo is not None and id(op) in memo:
        return memo[id(op)]
    if isinstance(op, Triple):
        out = set(slots_vars(op))
    elif isinstance(op, Unit):
        out = set()
    elif isinstance(op, BGP):
        out = set()
        for t in op.triples:
            out |= set(slots_vars(t))
    elif isinstance(op, Filter):
        out = _variables(op.pattern, certain, memo)
    elif isinstance(op, Extend):
        # an error leaves the variable unbound: certain only for a constant
        out = _variables(op.pattern, certain, memo) | (
            {op.var} if not certain or isinstance(op.expr, Const) else set())
    elif isinstance(op, Project) and op.grouping is not None:
        # a group's keys may be unbound and its aggregates errors
        out = set() if certain else set(op.vars)
    elif isinstance(op, Project):
        out = _variables(op.pattern, certain, memo) & set(op.vars)
    elif isinstance(op, Values):
        out = {v for i, v in enumerate(op.vars) if not certain or all(r[i] is not None for r in op.rows)}
    elif isinstance(op, Service):  # SILENT: the empty solution when the endpoint fails
        out = (set() if op.silent else op.certain) if certain else set(op.vars)
    else:
        out = combine(op.spec, _variables(op.left, certain, memo), _variables(op.right, certain, memo), certain)
    if memo is not None:
        memo[id(op)] = out
    return out


def is_table(op) -> bool:
    """Whether an algebra pattern matches no event: inline data (VALUES),
    BINDs and FILTERs over it, and joins and unions of such."""
    if isinstance(op, (Values, Service)):
        return True
    if isinstance(op, (Extend, Filter)):
        return is_table(op.pattern)
    if isinstance(op, (Join, Union_)):
        return is_table(op.left) and is_table(op.right)
    return False


def opens_with_optional(op) -> bool:
    """Whether op is a group that begins with OPTIONAL, { OPTIONAL { P } }:
    LeftJoin of the empty group."""
    return isinstance(op, LeftJoin) and isinstance(op.left, Unit)


def units(op):
    """The Unit operators (empty groups) of a pattern, left to right."""
    stack = [op]
    while stack:
        op = stack.pop()
        if isinstance(op, Unit):
            yield op
        stack += reversed(children(op))


def conjuncts(expr) -> list:
    if isinstance(expr, Call) and expr.name == "and":
        out = []
        for a in expr.args:
            out += conjuncts(a)
        return out
    return [expr]


def conjunction(exprs):
    exprs = list(exprs)
    if not exprs:
        return None
    out = exprs[0]
    for e in exprs[1:]:
        out = Call("and", out, e)
    return out


def walk(op):
    """`op` and every operator below it, depth first, left to right."""
    stack = [op]
    while stack:
        op = stack.pop()
        yield op
        stack += reversed(children(op))


def children(op):
    if isinstance(op, BGP):
        return list(op.triples)
    if isinstance(op, (Filter,) + UNARY):
        return [op.pattern]
    if isinstance(op, Binary):
        return [op.left, op.right]
    return []


def sort_fields(query) -> tuple:
    """(the name of the answer field each ORDER BY key sorts by, the hidden
    fields): a key that is a variable the answers hold sorts by its field;
    any other key (an expression, a variable that is not selected) by a
    hidden field `.order<i>`, the pairs (Var, Expr) the rules compute
    after the projection's. A hidden field is part of the rules' answer
    line only, for cep.runtime.modifiers and the reference evaluator to
    sort by; a SPARQL variable cannot start with '.', and no answer holds it."""
    shown = (None if query.projection is None else {item.var for item in query.projection})
    names, hidden = [], []
    for i, key in enumerate(query.order):
        if isinstance(key.expr, Var) and (key.expr in shown if shown is not None
                                          else key.expr in variables(query.pattern)):
            names.append(key.expr.name)
        else:
            var = Var(f".order{i}")
            names.append(var.name)
            hidden.append((var, key.expr))
    return tuple(names), tuple(hidden)


def template_fields(template) -> list:
    """What a CONSTRUCT answer is made of: the names of the template's
    variables, then its blank nodes (`_:label`), each once, in order."""
    names, labels = [], []
    for t in template:
        for x in (t.s, t.p, t.o):
            if isinstance(x, Var) and x.name not in names:
                names.append(x.name)
            elif isinstance(x, str) and x.startswith("_:") and x not in labels:
                labels.append(x)
    return names + labels


# The predicate of a DESCRIBE template's marker triple (R, DESCRIBED, R):
# R's description in the background takes its place in the answer
DESCRIBED = "<urn:cep:describe>"


def described(triples, description) -> tuple:
    """An answer's triples with each marker (R, DESCRIBED, R) replaced by
    `description(R)` (the triples of R's concise bounded description in
    the background); each triple once, in order."""
    out = []
    for t in triples:
        out += description(t[0]) if t[1] == DESCRIBED else [t]
    return tuple(dict.fromkeys(out))


def instantiate(template, env: dict, bnode=None) -> tuple:
    """A CONSTRUCT template under a solution (env: variable name -> term, or
    None when unbound): its triples, with bnode(label) the blank node that
    stands for the template's `_:label` in this solution. A triple with an
    unbound variable, a literal subject or a predicate that is not an IRI
    is left out (SPARQL 16.2); each triple once (the answer is a graph)."""
    out = []
    for t in template:
        triple = []
        for slot in (t.s, t.p, t.o):
            if isinstance(slot, Var):
                triple.append(env.get(slot.name))
            elif slot.startswith("_:"):
                triple.append(bnode(slot))
            else:
                triple.append(slot)
        s, p, o = triple
        if s is None or p is None or o is None or s.startswith('"') or not p.startswith("<"):
            continue
        out.append((s, p, o))
    return tuple(dict.fromkeys(out))
