"""What every clause builder of the compiler uses: the runtime's modules,
the atoms true and fail, a clause's variables, and the goals that key,
window and filter a solution."""

from __future__ import annotations

import re
from contextlib import contextmanager

from cep import prolog as pl
from cep.algebra import ops
from cep.compile.expr import ExprCompiler, Scope, ite


RUNTIME = "cep_runtime"


VALUES = "cep_values"


FAST = "cep_fast"  # the C library's predicates, with their Prolog versions


PATHS = "cep_paths"


WINDOW = "cep_window"


LIVE = "$live"  # the background graph of a rule set with updates: the rules' own t/3 (updates.py)


A, T, F = pl.Atom, pl.Atom("true"), pl.Atom("fail")


def func_term(agg: ops.Aggregate):
    """f(Name, Distinct) as prolog/cep_window.pl reads it; GROUP_CONCAT's
    name carries its separator, f(group_concat(Separator), Distinct)."""
    name = A(agg.func) if agg.separator is None else pl.Struct(agg.func, pl.Str(agg.separator))
    return pl.Struct("f", name, A("true" if agg.distinct else "false"))


class Vars:
    """Prolog variable names for one clause, and the scope (Scope) its
    expressions are compiled in."""

    def __init__(self, scope: Scope, prefix: str = ""):
        """`prefix`: for a second set of names in one clause (a table's,
        evaluated apart from the solution it joins)."""
        self.names = {}
        self.count = 0
        self.scope = scope
        self.prefix = prefix

    def of(self, var: ops.Var) -> pl.Var:
        if var not in self.names:
            self.names[var] = pl.Var(f"{self.prefix}X{len(self.names)}")
        return self.names[var]

    def fresh(self) -> pl.Var:
        self.count += 1
        return pl.Var(f"_{self.prefix}G{self.count}")

    @contextmanager
    def apart(self, variables):
        """Inside the block, `variables` have fresh names: a part evaluated
        on its own, as SPARQL does (a value the enclosing pattern gives
        one of them must not steer it). Yields their names outside the
        block, which they have again after it."""
        outer = {v: self.of(v) for v in variables}
        self.names.update({v: self.fresh() for v in variables})
        try:
            yield outer
        finally:
            self.names.update(outer)

    def expressions(self, start, end, only=None) -> ExprCompiler:
        """The compiler of the clause's expressions, the time functions
        reading the interval [start, end]; `only`: the variables they see
        (the others are unbound), else every variable of the clause."""
        env = dict(self.names) if only is None else {v: self.of(v) for v in only}
        return ExprCompiler(env, start, end, self.fresh, self.scope)


def tuple_term(vs: Vars, variables) -> pl.Term:
    if not variables:
        return A("v")
    return pl.Struct("v", *[vs.of(v) for v in variables])


def key_goal(vs: Vars, key, h: pl.Var):
    """The index key of a store: the join variable's value where it is an
    atom (an IRI: indexed as it is), else a hash of the join values. Keys
    only pick candidates; unifying the stored values decides the match."""
    if not key:
        return pl.Struct("=", h, 0)
    if len(key) == 1:
        k = vs.of(key[0])
        return ite(pl.Struct("atom", k), pl.Struct("=", h, k), pl.Struct("term_hash", k, h))
    return pl.Struct("term_hash", pl.Struct("k", *[vs.of(v) for v in key]), h)


def ok_goal(node, vs: Vars, ts: pl.Var, te: pl.Var, filters=None):
    """Window and filters of a node (or the filters given), on the solution
    (vars in vs, ts, te)."""
    goals = []
    if node.window is not None:
        goals.append(pl.Struct("=<", pl.Struct("-", te, ts), node.window))
    ec = vs.expressions(ts, te)
    for f in node.filters if filters is None else filters:
        goals.append(ec.filter_goal(f))
    return goals


def resource(term):
    """An IRI (an atom) or a blank node (bn(Label)): not a literal."""
    return pl.Struct(";", pl.Struct("atom", term), pl.Struct("=", term, pl.Struct("bn", pl.Var("_"))))


def settled_tests(clause):
    """The clause with var(X) as true and nonvar(X) as fail where X does not
    occur before the test (the head first, then the body left to right): no
    goal can have bound it. An expression may read a variable of its scope
    that the clause never binds (a FILTER's BOUND(?x) of a variable only
    MINUS's right side has; a grouping key the pattern does not bind), and
    SWI-Prolog warns on standard error of a test whose outcome is known
    ("Test is always false: nonvar(X4)") when it loads the rules.
    SWI-Prolog's optimising compiler drops the code a settled test makes
    dead (the rest of a conjunction after fail, the then branch of
    (fail -> A ; B), the else branch of (true -> A ; B)): a variable that
    occurs only there is unbound after it, so the dead code is dropped
    here too, and its variables are not taken for seen."""
    if not isinstance(clause, pl.Clause) or not any(_is_test(t) for g in clause.body for t in _subterms(g)):
        return clause  # (most clauses have no test: the walks below cost as much as writing them)
    seen = _raw_names(clause)  # a Raw text's: never taken for unbound
    _walk(clause.head, seen)
    body = []
    for g in clause.body:
        body.append(_settle(g, seen))
        if body[-1] == F:  # the goals after it never run
            break
    return pl.Clause(clause.head, tuple(body))


_RAW_VARS = re.compile(r"(?<![\w'\"])[A-Z_][A-Za-z0-9_]*")


def _subterms(term):
    """Every subterm of a term (a clause's head and body goals), with an
    explicit stack: a goal nests as deep as its query's operators."""
    stack = [term]
    while stack:
        t = stack.pop()
        yield t
        if isinstance(t, pl.Clause):
            stack.append(t.head)
            stack.extend(t.body)
        elif isinstance(t, pl.Struct):
            stack.extend(t.args)
        elif isinstance(t, pl.PList):
            stack.append(t.tail)
            stack.extend(t.items)


def _is_test(t) -> bool:
    """Whether t is var(X) or nonvar(X) of a variable X."""
    return isinstance(t, pl.Struct) and t.functor in ("var", "nonvar") and len(t.args) == 1 \
        and isinstance(t.args[0], pl.Var)


def _raw_names(term) -> set:
    """The variable names in the Raw texts of a term."""
    return {name for t in _subterms(term) if isinstance(t, pl.Raw) for name in _RAW_VARS.findall(t.text)}


def _walk(term, seen: set):
    """Add the variables of a term to `seen`."""
    seen.update(t.name for t in _subterms(term) if isinstance(t, pl.Var))


def _settle(term, seen: set):
    """The term with its tests of variables not seen before settled, in
    textual order; adds its variables to `seen`. With an explicit stack
    (a chain of 2,000 || nests its goal 2,000 deep): recursion through C
    calls overflows the C stack before Python's recursion limit is
    reached."""
    done = []
    frames = []  # [struct, next argument, arguments settled so far]

    def enter(t):
        if not isinstance(t, pl.Struct):
            _walk(t, seen)
            (frames[-1][2] if frames else done).append(t)
        elif _is_test(t) and (t.args[0].name == "_" or t.args[0].name not in seen):
            (frames[-1][2] if frames else done).append(T if t.functor == "var" else F)
        else:
            frames.append([t, 0, []])

    enter(term)
    while frames:
        frame = frames[-1]
        t, i, args = frame
        dead = _dead_rest(t, args) if i == 1 else None
        if dead is not None:  # the second argument never runs: neither walked nor kept
            frames.pop()
            (frames[-1][2] if frames else done).append(dead)
            continue
        if i < len(t.args):
            frame[1] = i + 1
            enter(t.args[i])
            continue
        frames.pop()
        same = all(a is b for a, b in zip(args, t.args))
        (frames[-1][2] if frames else done).append(t if same else pl.Struct(t.functor, *args))
    return done[0]


def _dead_rest(t, settled):
    """What a control construct comes to when its first argument, settled,
    makes its second dead: (fail, A) and (fail -> A) are fail, and
    (true -> A ; B) is (true -> A); else None."""
    if len(t.args) != 2:
        return None
    first = settled[0]
    if t.functor in (",", "->") and first == F:
        return F
    if t.functor == ";" and isinstance(first, pl.Struct) and first.functor == "->" and first.args[0] == T:
        return first
    return None
