"""Binarization: BGP chains, re-association, filter placement, window
pushing and computation sharing (cep/binarize.py)."""

import pytest

from cep.algebra import ops
from cep.binarize import Leaf, Step, binarize, window_bound
from cep.compile import describe_plan

EX = "http://example.org/"
XSD = "http://www.w3.org/2001/XMLSchema#"
k, x, y, z = (ops.Var(n) for n in "kxyz")


def iri(n):
    return f"<{EX}{n}>"


def t(s, p, o):
    return ops.Triple(s, iri(p) if isinstance(p, str) else p, o)


def dur(lex):
    return ops.Const(f'"{lex}"^^<{XSD}duration>')


def within(lex, pattern):
    return ops.Filter(ops.Call("<", ops.Call("getDURATION"), dur(lex)), pattern)


def select(pattern, name="q", **options):
    return ops.Query(name, "select", pattern, options=tuple(sorted(options.items())))


def steps(plan):
    return [n for n in plan.nodes if isinstance(n, Step)]


def test_bgp_becomes_left_deep_joins_without_cross_products():
    # the second pattern shares nothing with the first: it goes last
    bgp = ops.BGP((t(k, "a", x), t(z, "c", y), t(k, "b", z)))
    plan = binarize([select(bgp)])
    text = describe_plan(plan)
    assert [n.triple.p for n in plan.nodes if isinstance(n, Leaf)] == [iri("a"), iri("b"), iri("c")]
    first, second = steps(plan)
    assert first.op is ops.Join and first.key == (k,)
    assert second.op is ops.Join and second.key == (z,)
    assert "query q <- e4" in text


def test_right_binarization_couples_from_the_right():
    a, b, c = ops.BGP((t(k, "a", x),)), ops.BGP((t(k, "b", y),)), ops.BGP((t(k, "c", z),))
    pattern = ops.SeqJoin(ops.SeqJoin(a, b), c)
    left = binarize([select(pattern)])
    right = binarize([select(pattern, binarize="right")])
    l1, l2 = steps(left)
    r1, r2 = steps(right)
    # left: (a ; b) ; c   right: a ; (b ; c)
    assert (left.node(l1.left).triple.p, left.node(l1.right).triple.p) == (iri("a"), iri("b"))
    assert left.node(l2.right).triple.p == iri("c")
    assert (right.node(r1.left).triple.p, right.node(r1.right).triple.p) == (iri("b"), iri("c"))
    assert right.node(r2.left).triple.p == iri("a") and r2.right == r1.id


def test_filter_goes_to_the_first_step_that_binds_its_variables():
    cond = ops.Call("<", x, ops.Const(f'"5"^^<{XSD}integer>'))
    pattern = ops.Filter(cond, ops.SeqJoin(ops.BGP((t(k, "a", x),)), ops.BGP((t(k, "b", y),))))
    plan = binarize([select(pattern)])
    leaf_a = next(n for n in plan.nodes if isinstance(n, Leaf) and n.triple.p == iri("a"))
    assert leaf_a.filters == (cond,)
    assert steps(plan)[0].filters == ()


def test_filter_on_both_sides_stays_at_the_step_that_joins_them():
    cond = ops.Call("<", y, x)
    pattern = ops.Filter(cond, ops.SeqJoin(ops.BGP((t(k, "a", x),)), ops.BGP((t(k, "b", y),))))
    (step,) = steps(binarize([select(pattern)]))
    assert step.filters == (cond,)


def test_interval_functions_stay_where_the_query_put_them():
    early = ops.Call("<", ops.Call("getSTARTTIME"), ops.Const(f'"2026-01-01T00:00:00Z"^^<{XSD}dateTime>'))
    pattern = ops.Filter(early, ops.SeqJoin(ops.BGP((t(k, "a", x),)), ops.BGP((t(k, "b", y),))))
    plan = binarize([select(pattern)])
    assert steps(plan)[0].filters == (early,)
    assert all(n.filters == () for n in plan.nodes if isinstance(n, Leaf))


def test_window_is_pushed_into_mandatory_steps_only():
    # (a ; b) OPTIONALSEQ-with c mandatory: the optional part keeps no window
    inner = ops.SeqRightJoin(ops.BGP((t(k, "opt", z),)), ops.SeqJoin(
        ops.BGP((t(k, "a", x),)), ops.BGP((t(k, "b", y),))))
    plan = binarize([select(within("PT1H", inner))])
    by_p = {n.triple.p: n for n in plan.nodes if isinstance(n, Leaf)}
    assert by_p[iri("a")].window == 3_600_000 - 1
    assert by_p[iri("b")].window == 3_600_000 - 1
    assert by_p[iri("opt")].window is None
    seq, seqright = steps(plan)
    assert seq.window == 3_600_000 - 1 and seqright.window == 3_600_000 - 1


@pytest.mark.parametrize(
    "cond, bound",
    [
        (ops.Call("<", ops.Call("getDURATION"), dur("PT1S")), 999),
        (ops.Call("<=", ops.Call("getDURATION"), dur("PT1S")), 1000),
        (ops.Call(">", dur("PT1S"), ops.Call("getDURATION")), 999),
        (ops.Call(">=", dur("P1D"), ops.Call("getDURATION")), 86_400_000),
        (ops.Call(">", ops.Call("getDURATION"), dur("PT1S")), None),
        (ops.Call("<", ops.Call("getDURATION"), ops.Const(f'"5"^^<{XSD}integer>')), None),
    ],
)
def test_window_bound_of_a_conjunct(cond, bound):
    assert window_bound(cond) == bound


def test_identical_steps_across_queries_are_shared():
    seq = ops.SeqJoin(ops.BGP((t(k, "a", x),)), ops.BGP((t(k, "b", y),)))
    q1 = select(ops.SeqJoin(seq, ops.BGP((t(k, "c", z),))), name="q1")
    q2 = select(ops.EqJoin(seq, ops.BGP((t(k, "d", z),))), name="q2")
    plan = binarize([q1, q2])
    seqs = [n for n in steps(plan) if n.op is ops.SeqJoin]
    assert len([n for n in seqs if n.left < 2 and n.right < 2]) == 1  # a;b built once
    assert len([n for n in plan.nodes if isinstance(n, Leaf)]) == 4
    assert len(plan.consumers(seqs[0].id)) == 2


def test_different_windows_are_not_shared():
    seq = ops.SeqJoin(ops.BGP((t(k, "a", x),)), ops.BGP((t(k, "b", y),)))
    plan = binarize([select(within("PT1H", seq), name="q1"), select(within("PT2H", seq), name="q2")])
    assert len(steps(plan)) == 2


def test_union_passes_filters_and_windows_into_both_branches():
    early = ops.Call("<", ops.Call("getSTARTTIME"), ops.Const(f'"2026-01-01T00:00:00Z"^^<{XSD}dateTime>'))
    cond = ops.Call("and", early, ops.Call("<", ops.Call("getDURATION"), dur("PT1S")))
    pattern = ops.Filter(cond, ops.Union_(
        ops.SeqJoin(ops.BGP((t(k, "a", x),)), ops.BGP((t(k, "b", y),))),
        ops.SeqJoin(ops.BGP((t(k, "c", x),)), ops.BGP((t(k, "d", y),)))))
    plan = binarize([select(pattern)])
    seqs = [n for n in steps(plan) if n.op is ops.SeqJoin]
    union = next(n for n in steps(plan) if n.op is ops.Union_)
    # the interval filter is evaluated on each branch's own interval; the
    # duration bound became the window check and is not evaluated again
    assert all(s.filters == (early,) and s.window == 999 for s in seqs)
    assert union.filters == () and union.key == ()


@pytest.mark.parametrize("make", [
    lambda opt, mand: ops.SeqRightJoin(opt, mand),
    lambda opt, mand: ops.LeftJoin(mand, opt),
    lambda opt, mand: ops.EqLeftJoin(mand, opt),
    lambda opt, mand: ops.SeqAbsence(mand, opt, 5),
], ids=["optionalseq", "optional", "equalsoptional", "notseq"])
def test_a_filter_without_variables_goes_to_the_mandatory_operand_only(make):
    """A conjunct every operand binds (it has no variables) filters the
    mandatory operand: on the optional (or negated) one it would change
    which solutions stand alone."""
    const = ops.Call("=", ops.Const(f'"2"^^<{XSD}integer>'), ops.Const(f'"3"^^<{XSD}integer>'))
    opt, mand = t(k, "opt", z), t(k, "m", x)
    plan = binarize([select(ops.Filter(const, make(opt, mand)))])
    leaves = {n.triple: n for n in plan.nodes if isinstance(n, Leaf)}
    assert leaves[mand].filters == (const,) and leaves[opt].filters == ()
