"""The projection of a query's solutions to its answer lines
('$project'/5): the fields of a SELECT, or of a CONSTRUCT template with
its blank nodes named by the rule, the values and the interval."""

from __future__ import annotations

from dataclasses import dataclass

from cep import prolog as pl
from cep.algebra import ops
from cep.compile.clauses import RUNTIME, F, T, Vars, tuple_term
from cep.compile.expr import conj, ite, q


@dataclass(frozen=True)
class QueryLayout:
    """How a query's answer lines map back to names: the fields, in order,
    then the hidden fields ORDER BY sorts by (ops.sort_fields), which
    only cep.runtime.modifiers reads: an answer is made of `fields`."""

    index: int
    name: str
    form: str
    fields: tuple  # variable names of the fields
    hidden: tuple = ()  # names of the hidden fields after them

    @property
    def width(self) -> int:
        return len(self.fields) + len(self.hidden)


def answer_width(layouts) -> int:
    """The number of fields of every answer line: the most any query has."""
    return max((layout.width for layout in layouts), default=0)


def padded(project, width):
    """A '$project' clause with its fields padded with unbound variables to
    `width`, so every answer line has as many fields."""
    *args, fields = project.head.args
    padding = tuple(pl.Var(f"_W{i}") for i in range(width - len(fields.items)))
    return pl.Clause(pl.Struct(project.head.functor, *args, pl.PList(fields.items + padding)), project.body)


def sort_goals(ec, query, fields) -> tuple:
    """(goals, names): the hidden fields of ORDER BY (ops.sort_fields)
    appended to `fields`, each unbound where its expression is an error."""
    goals, names = [], []
    for var, expr in ops.sort_fields(query)[1]:
        g, value = ec.value(expr)
        r = pl.Var(f"O{len(names)}")
        goals.append(ite(conj(g), pl.Struct("=", r, value), T))
        fields.append(r)
        names.append(var.name)
    return goals, tuple(names)


def projection(plan, index, out, scope):
    """('$project' clause, layout) of an output; `scope` (Scope): its expressions'."""
    query = out.query
    root_vars = plan.output_vars(out)
    if query.grouping is not None:  # its rows are made by '$wrow' (cep/compile/windows.py)
        names = tuple(ops.template_fields(query.template) if query.form == "construct"
                      else (item.var.name for item in query.projection))
        hidden = tuple(var.name for var, _ in ops.sort_fields(query)[1])
        head = pl.Struct("$project", index, pl.Var("_"), pl.Var("_"), pl.Var("_"), pl.PList([]))
        return pl.Clause(head, (F,)), QueryLayout(index, query.name, query.form, names, hidden)
    vs = Vars(scope)
    ts, te = pl.Var("Ts"), pl.Var("Te")
    v = tuple_term(vs, root_vars)
    goals, fields, names = [], [], []
    ec = vs.expressions(ts, te)
    if query.projection is None:
        for var in root_vars:
            if not var.name.startswith("_:"):
                names.append(var.name)
                fields.append(vs.of(var))
    else:
        for item in query.projection:
            names.append(item.var.name)
            if item.expr is None:
                fields.append(vs.of(item.var) if item.var in root_vars else pl.Var(f"_N{len(fields)}"))
            else:
                g, value = ec.value(item.expr)
                r = pl.Var(f"P{len(fields)}")
                goals.append(ite(conj(g), pl.Struct("=", r, value), T))
                fields.append(r)
                ec.env[item.var] = r
    sorting, hidden = sort_goals(ec, query, fields)
    goals += sorting
    if query.form == "update":  # no answers: its solutions change the background ($update)
        names, fields = [], []
    if query.form == "construct":
        # the template's variables, after the sub-select's projection if
        # any; then its blank nodes, named by the rule, the values and the
        # interval (the same derivation always names the same node)
        template_fields = ops.template_fields(query.template)
        values = sum(not name.startswith("_:") for name in template_fields)  # the variables come first
        by_name = dict(zip(names, fields))
        fields2 = []
        for name in template_fields:
            var = ops.Var(name)
            if name in by_name:
                fields2.append(by_name[name])
            elif name.startswith("_:"):
                label = pl.Var(f"B{len(fields2)}")
                key = pl.Struct("k", pl.Str(query.name), pl.Str(name), pl.PList(fields2[:values]), ts, te)
                goals.append(q(RUNTIME, "cep_skolem", key, label))
                fields2.append(label)
            elif var in root_vars:
                fields2.append(vs.of(var))
            else:
                fields2.append(pl.Var(f"_T{len(fields2)}"))
        names, fields = template_fields, fields2
    head = pl.Struct("$project", index, v, ts, te, pl.PList(fields))
    layout = QueryLayout(index, query.name, query.form, tuple(names), hidden)
    return pl.Clause(head, tuple(goals) or (T,)), layout
