"""FILTER and SELECT expressions -> Prolog goals (SPARQL 1.1 section 17).

An expression compiles to a list of goals that bind a result variable to an
encoded value (cep.terms) and *fail* where SPARQL raises an error; `&&`,
`||`, `!`, IF, COALESCE and BOUND are compiled so that SPARQL's error rules
hold. The goals call only prolog/cep_values.pl, prolog/cep_runtime.pl and
prolog/cep_user.pl, and the predicates of the user's --prolog files that the
compiler resolved (cep/user_prolog.py), with names fixed at compile time:
nothing from a query is ever called as a goal.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from cep import prolog as pl
from cep import terms
from cep.algebra import ops
from cep.errors import QueryError
from cep.runtime.session import session

VALUES = "cep_values"
RUNTIME = "cep_runtime"
USER = "cep_user"
ARITH = {"+": "cep_add", "-": "cep_sub", "*": "cep_mul", "/": "cep_div"}
COMPARE = {"=", "!=", "<", ">", "<=", ">="}
FN_CALLS = {
    "str", "lang", "datatype", "isIRI", "isBlank", "isLiteral", "isNumeric",
    "sameTerm", "langMatches", "regex", "strlen", "ucase", "lcase", "contains",
    "strstarts", "strends", "concat", "abs", "ceil", "floor", "round",
    "substr", "strbefore", "strafter", "encode_for_uri", "replace", "strlang",
    "strdt", "iri", "md5", "sha1", "sha256", "sha384", "sha512", "year",
    "month", "day", "hours", "minutes", "seconds", "timezone", "tz", "rand",
    "uuid", "struuid", "bnode",
}


@dataclass(frozen=True)
class Scope:
    """What the expressions of a clause are compiled against: `user`, the
    UserProlog (cep/user_prolog.py) whose predicates they may call (None:
    no --prolog files), and `queries`, the indexes of the queries they
    belong to (those a plan node is part of): a REGEX that PCRE gives up
    on reports them (cep_values:cep_regex/4), so the run's warning names
    the queries."""

    user: object = None
    queries: tuple = ()

    def of(self, queries) -> "Scope":
        return replace(self, queries=tuple(queries))


def conj(goals):
    goals = list(goals)
    if not goals:
        return pl.Atom("true")
    out = goals[-1]
    for g in reversed(goals[:-1]):
        out = pl.Struct(",", g, out)
    return out


def ite(cond, then, other):
    return pl.Struct(";", pl.Struct("->", cond, then), other)


def q(module, name, *args):
    return pl.Struct(":", pl.Atom(module), pl.Struct(name, *args))


# the functions that run a regular expression: PCRE may give up on a text
# (cep_values:cep_regex/4), and their pattern is checked when constant
REGEX_CALLS = {"regex": 3, "replace": 4}  # name: the arity with flags, the last argument


def check_regex(e) -> None:
    """A REGEX or REPLACE whose pattern and flags are constants is an error
    on every text when the runtime cannot run them: a QueryError here
    instead, as the runtime decides (prolog/cep_values.pl: PCRE, XPath's
    flags)."""
    with_flags = REGEX_CALLS[e.name]
    pattern, flags = e.args[1], e.args[-1] if len(e.args) == with_flags else ops.Const('""')
    if not (isinstance(pattern, ops.Const) and isinstance(flags, ops.Const)):
        return
    fn = e.name.upper()
    texts = [terms.to_prolog(c.term) for c in (pattern, flags)]
    for what, c, text in zip(("pattern", "flags"), (pattern, flags), texts):
        if not isinstance(text, pl.Str):
            raise QueryError(f"the {what} of {fn} must be a simple string, not {c.term}: this {fn} is an error on "
                             f"every text", e.pos)
    pattern, flags = (t.text for t in texts)
    problem = session().regex_problem(pattern, flags)
    if problem == "flags":
        raise QueryError(f"the {fn} flags \"{flags}\" are not all s, m, i, x or q: this {fn} is an error "
                         f"on every text", e.pos)
    if problem:
        raise QueryError(f"the {fn} pattern \"{pattern}\" is not a valid regular expression ({problem}): this {fn} "
                         f"is an error on every text", e.pos)


def _chain(e) -> list:
    """The operands of a chain of one operator, nested on either side, in order."""
    out, stack = [], [e]
    while stack:
        x = stack.pop()
        if isinstance(x, ops.Call) and x.name == e.name:
            stack += reversed(x.args)
        else:
            out.append(x)
    return out


class ExprCompiler:
    """Compiles expressions of one clause. `env` maps algebra variables to
    Prolog variables; `start`/`end` are the Prolog variables of the interval
    the time functions read; `scope` (Scope) what the expressions may call."""

    def __init__(self, env: dict, start: pl.Var, end: pl.Var, fresh, scope: Scope):
        self.env = env
        self.start = start
        self.end = end
        self.fresh = fresh  # () -> new pl.Var
        self.scope = scope
        # the solution's variables: BNODE(str)'s node depends on them, not
        # on what the SELECT's expressions bind to env later
        self.solution = tuple(sorted(env, key=lambda x: x.name))

    def filter_goal(self, expr) -> pl.Term:
        """A goal that succeeds iff the expression's effective boolean value is true."""
        if isinstance(expr, ops.Call) and expr.name in COMPARE:
            # a comparison: its result must be true, no boolean to build
            ga, va = self.value(expr.args[0])
            gb, vb = self.value(expr.args[1])
            return conj(ga + gb + [q(VALUES, "cep_compare", pl.Atom(expr.name), va, vb, pl.Atom("true"))])
        goals, value = self.value(expr)
        return conj(goals + [q(VALUES, "cep_ebv", value, pl.Atom("true"))])

    def truth(self, expr):
        """Goals binding a variable to true, false or error (never failing)."""
        goals, value = self.value(expr)
        b = self.fresh()
        attempt = conj(goals + [q(VALUES, "cep_ebv", value, b)])
        return [ite(attempt, pl.Atom("true"), pl.Struct("=", b, pl.Atom("error")))], b

    def value(self, e):
        if isinstance(e, ops.Var):
            if e not in self.env:
                return [pl.Atom("fail")], self.fresh()
            v = self.env[e]
            return [pl.Struct("nonvar", v)], v
        if isinstance(e, ops.Const):
            return [], terms.to_prolog(e.term)
        if not isinstance(e, ops.Call):
            raise TypeError(f"not an expression: {e!r}")
        name, args = e.name, e.args
        r = self.fresh()
        if name in ("and", "or"):
            # a chain a || b || c (left-nested as parsed) is one n-ary
            # operator, SPARQL's && and || being associative: the truth
            # values of its operands side by side, as SWI-Prolog cannot
            # compile if-then-else nested thousands deep
            goals, truths = [], []
            for operand in _chain(e):
                g, b = self.truth(operand)
                goals += g
                truths.append(b)
            truths, b = pl.PList(truths), self.fresh()
            if name == "or":  # true if one is true, else an error if one is, else false
                goals.append(q(RUNTIME, "cep_in", truths, b))
            else:  # false if one is false, else an error if one is, else true
                goals.append(ite(pl.Struct("memberchk", pl.Atom("false"), truths), pl.Struct("=", b, pl.Atom("false")),
                                 conj([pl.Struct("\\+", pl.Struct("memberchk", pl.Atom("error"), truths)),
                                       pl.Struct("=", b, pl.Atom("true"))])))
            return goals + [pl.Struct("=", r, pl.Struct("bool", b))], r
        if name == "not":
            ga, ba = self.truth(args[0])
            b = self.fresh()
            return ga + [q(RUNTIME, "cep_not", ba, b), pl.Struct("=", r, pl.Struct("bool", b))], r
        if name == "bound":
            arg = args[0]
            if not isinstance(arg, ops.Var):
                raise QueryError("BOUND takes a variable")
            if arg not in self.env:
                return [pl.Struct("=", r, pl.Struct("bool", pl.Atom("false")))], r
            v = self.env[arg]
            return [
                ite(
                    pl.Struct("nonvar", v),
                    pl.Struct("=", r, pl.Struct("bool", pl.Atom("true"))),
                    pl.Struct("=", r, pl.Struct("bool", pl.Atom("false"))),
                )
            ], r
        if name == "if":
            gc, bc = self.truth(args[0])
            g1, v1 = self.value(args[1])
            g2, v2 = self.value(args[2])
            return gc + [
                ite(
                    pl.Struct("==", bc, pl.Atom("true")),
                    conj(g1 + [pl.Struct("=", r, v1)]),
                    conj([pl.Struct("==", bc, pl.Atom("false"))] + g2 + [pl.Struct("=", r, v2)]),
                )
            ], r
        if name == "coalesce":
            return self.first_value(args, r), r
        if name in ("in", "notin"):
            # SPARQL 17.4.1.9: the || of the = tests (true if one is true,
            # else an error if one is an error, else false); NOT IN its !.
            goals, va = self.value(args[0])
            tests = []
            for arg in args[1:]:
                g, v = self.value(arg)
                b, c = self.fresh(), self.fresh()
                test = conj(g + [q(VALUES, "cep_compare", pl.Atom("="), va, v, c)])
                goals.append(ite(test, pl.Struct("=", b, c), pl.Struct("=", b, pl.Atom("error"))))
                tests.append(b)
            b = self.fresh()
            goals.append(q(RUNTIME, f"cep_{name}", pl.PList(tests), b))
            return goals + [pl.Struct("=", r, pl.Struct("bool", b))], r
        if name in COMPARE:
            ga, va = self.value(args[0])
            gb, vb = self.value(args[1])
            b = self.fresh()
            return ga + gb + [
                q(VALUES, "cep_compare", pl.Atom(name), va, vb, b),
                pl.Struct("=", r, pl.Struct("bool", b)),
            ], r
        if name in ARITH:
            ga, va = self.value(args[0])
            gb, vb = self.value(args[1])
            return ga + gb + [q(VALUES, ARITH[name], va, vb, r)], r
        if name in ("neg", "pos"):
            ga, va = self.value(args[0])
            return ga + [q(VALUES, f"cep_{name}", va, r)], r
        if name == "getDURATION":
            return [q(VALUES, "cep_time_duration", self.start, self.end, r)], r
        if name == "getSTARTTIME":
            return [q(VALUES, "cep_time_point", self.start, r)], r
        if name == "bnode" and args:
            # the same node for the same string in one solution: the
            # solution (its values, unbound ones too, and interval) is hashed
            g, v = self.value(args[0])
            values = [self.env[x] for x in self.solution]
            solution = pl.Struct("solution", self.start, self.end, pl.PList(values))
            return g + [q(VALUES, "cep_bnode", v, solution, r)], r
        if name in ("getENDTIME", "now"):
            return [q(VALUES, "cep_time_point", self.end, r)], r
        if name == "timestamp":
            # timestamp(?v, Ends...) as cep.algebra.timestamps rewrote it:
            # the latest end bound in this solution, an error if none is
            ends = [self.env[x] for x in args[1:] if x in self.env]
            if not ends:
                return [pl.Atom("fail")], r
            return [q(VALUES, "cep_timestamp", pl.PList(ends), r)], r
        if name in REGEX_CALLS:
            check_regex(e)
        if name in FN_CALLS or name.startswith(ops.CAST_PREFIX):
            goals, values = [], []
            for arg in args:
                g, v = self.value(arg)
                goals += g
                values.append(v)
            if name in REGEX_CALLS:  # an error where PCRE gives up, noted for a warning
                return goals + [q(VALUES, "cep_regex", pl.PList(list(self.scope.queries)), pl.Atom(name),
                                  pl.PList(values), r)], r
            fn = (
                pl.Struct("cast", pl.Atom(name[len(ops.CAST_PREFIX):]))
                if name.startswith(ops.CAST_PREFIX)
                else pl.Atom(name)
            )
            return goals + [q(VALUES, "cep_fn", fn, pl.PList(values), r)], r
        if name.startswith(ops.USER_PREFIX):
            return self.user_call(e)
        raise QueryError(f"unknown function {name}")

    def first_value(self, args, r):
        """Goals binding r to the value of the first of `args` that has one
        (COALESCE): each alternative's outcome, ok(V) or none, then the
        first ok. Flat, as SWI-Prolog takes time that grows much faster than
        the number of alternatives to compile them nested in one another."""
        goals, outcomes = [], []
        for arg in args:
            g, v = self.value(arg)
            t = self.fresh()
            goals.append(ite(conj(g + [pl.Struct("=", t, pl.Struct("ok", v))]), pl.Atom("true"),
                             pl.Struct("=", t, pl.Atom("none"))))
            outcomes.append(t)
        return goals + [pl.Struct("memberchk", pl.Struct("ok", r), pl.PList(outcomes))]

    def user_call(self, e):
        """A user predicate, Module:name(A1, ..., An[, R]) with the name and
        module fixed here: a function's value is R converted back, a
        test's is whether the goal succeeds (once); an exception, a failed
        function or a result with no RDF form is an error."""
        user = self.scope.user
        name, n = e.name[len(ops.USER_PREFIX):], len(e.args)
        kind = user.kind(name, n) if user is not None else None
        if kind is None:
            raise QueryError(f"unknown function {name}/{n}: no --prolog file defines {name}/{n} or {name}/{n + 1}",
                             e.pos)
        goals, values = [], []
        for arg in e.args:
            g, v = self.value(arg)
            goals += g
            values.append(v)
        xs = [self.fresh() for _ in e.args]
        r, caught = self.fresh(), self.fresh()
        module = pl.Atom(user.module)
        goals.append(q(USER, "cep_user_args", pl.PList(values), pl.PList(xs)))
        arity = n + 1 if kind == "function" else n
        goals.append(q(USER, "cep_user_ready", module, pl.Atom(name), arity))
        recover = q(USER, "cep_user_caught", caught, pl.Struct(":", module, pl.indicator(name, arity)))
        if kind == "function":
            out = self.fresh()
            call = pl.Struct(":", module, pl.Struct(name, *xs, out))
            return goals + [pl.Struct("catch", pl.Struct("once", call), caught, recover),
                            q(USER, "cep_user_result", out, r)], r
        call = pl.Struct(":", module, pl.Struct(name, *xs) if xs else pl.Atom(name))
        b = self.fresh()
        test = ite(call, pl.Struct("=", b, pl.Atom("true")), pl.Struct("=", b, pl.Atom("false")))
        return goals + [pl.Struct("catch", test, caught, recover),
                        pl.Struct("=", r, pl.Struct("bool", b))], r
