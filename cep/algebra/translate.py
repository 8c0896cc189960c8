"""Translation of a rule file's syntax tree to the algebra, with the checks a
query must pass before it runs.

    translate(tree, filename) -> list[Query]

`tree` is what cep.syntax.parse returns. Graph patterns follow SPARQL 1.1
section 18.2.2 as extended by the paper (section 4.2):

    triples block            BGP(triples)
    {A} {B}  (juxtaposition) Join(A, B), left to right; {} is Join's identity
    {A} OPTIONAL {B}         LeftJoin(A, B', F) if B is Filter(F, B'), else LeftJoin(A, B)
    {A} UNION {B}            Union(A, B)
    {A} SEQ {B}              SeqJoin(A, B)
    {A} EQUALS {B}           EqJoin(A, B)
    {A} OPTIONALSEQ {B}      SeqRightJoin(A', B, F): the LEFT operand is optional
    {A} EQUALSOPTIONAL {B}   EqLeftJoin(A, B', F): the RIGHT operand is optional
    FILTER(F) / WITHIN d     the group's conditions, conjoined: Filter(F, group)

where the optional operand's own filter (if its group has one; not that of a
group nested in it, which sees only its own variables) becomes the
operator's condition. Operator chains are left-associative. WITHIN d is
FILTER(getDURATION() < d). Blank nodes in patterns become non-distinguished
variables `_:b0`, `_:b1`, ... (not SPARQL variable names, so no clash, and
SELECT * leaves them out). Constants are canonical N-Triples text.

`FROM <file>` (SPARQL's dataset clause) names a background file: a file:
IRI, or a relative IRI with no BASE in force, which is a path from the rule
file's directory; the file must lie under that directory or be allowed by
`allow_from` (cep.background.load.from_file), and exist. Query.ontologies
holds the absolute paths; cep.background.knowledge.ontology_paths makes the
run's one background graph of them.

Positions (file, line, column): a Triple's is where it starts (its subject,
or the predicate after `;`, or the object after `,`); an operator's is its
keyword (OPTIONAL, SEQ, ..., the first FILTER or WITHIN of the group), a
Join's is where its right operand starts; a BGP's is its first triple's; a
Query's is its first keyword.
"""

from __future__ import annotations

import contextlib
import dataclasses
import re
from pathlib import Path

from lark import Token, Tree

from cep import prolog as pl
from cep import terms
from cep.algebra import ops, query_limits
from cep.algebra.ops import Call, Const, Pos, ProjectItem, Var
from cep.background.load import from_file
from cep.errors import OntologyError, QueryError
from cep.service.options import policy_fields

XSD = terms.XSD
# RDF collections `( ... )` (Query.collection)
RDF_FIRST, RDF_REST, RDF_NIL = (terms.iri(terms.RDF + name) for name in ("first", "rest", "nil"))
# the datatypes whose values the engine computes with (cep.terms.to_prolog)
COMPUTED_TYPES = {terms.XSD_INTEGER, terms.XSD_DECIMAL, terms.XSD_DOUBLE, terms.XSD_BOOLEAN,
                  terms.XSD_DATETIME, terms.XSD_DURATION}

# xsd constructor functions (SPARQL 17.5) the engine implements
_CAST_ORDER = [XSD + name for name in ("integer", "decimal", "double", "float", "string",
                                       "boolean", "dateTime", "duration")]
CASTS = set(_CAST_ORDER)

# built-in function name (lower case, as SPARQL keywords are case-insensitive)
# -> (name in ops.FUNCTIONS, least and most number of arguments; None: any)
BUILTINS = {
    "bound": ("bound", 1, 1),
    "str": ("str", 1, 1),
    "lang": ("lang", 1, 1),
    "datatype": ("datatype", 1, 1),
    "isiri": ("isIRI", 1, 1),
    "isuri": ("isIRI", 1, 1),
    "isblank": ("isBlank", 1, 1),
    "isliteral": ("isLiteral", 1, 1),
    "isnumeric": ("isNumeric", 1, 1),
    "sameterm": ("sameTerm", 2, 2),
    "langmatches": ("langMatches", 2, 2),
    "regex": ("regex", 2, 3),
    "if": ("if", 3, 3),
    "coalesce": ("coalesce", 0, None),
    "strlen": ("strlen", 1, 1),
    "ucase": ("ucase", 1, 1),
    "lcase": ("lcase", 1, 1),
    "contains": ("contains", 2, 2),
    "strstarts": ("strstarts", 2, 2),
    "strends": ("strends", 2, 2),
    "concat": ("concat", 0, None),
    "abs": ("abs", 1, 1),
    "ceil": ("ceil", 1, 1),
    "floor": ("floor", 1, 1),
    "round": ("round", 1, 1),
    "substr": ("substr", 2, 3),
    "strbefore": ("strbefore", 2, 2),
    "strafter": ("strafter", 2, 2),
    "encode_for_uri": ("encode_for_uri", 1, 1),
    "replace": ("replace", 3, 4),
    "strlang": ("strlang", 2, 2),
    "strdt": ("strdt", 2, 2),
    "iri": ("iri", 1, 1),
    "uri": ("iri", 1, 1),
    "md5": ("md5", 1, 1),
    "sha1": ("sha1", 1, 1),
    "sha256": ("sha256", 1, 1),
    "sha384": ("sha384", 1, 1),
    "sha512": ("sha512", 1, 1),
    "year": ("year", 1, 1),
    "month": ("month", 1, 1),
    "day": ("day", 1, 1),
    "hours": ("hours", 1, 1),
    "minutes": ("minutes", 1, 1),
    "seconds": ("seconds", 1, 1),
    "timezone": ("timezone", 1, 1),
    "tz": ("tz", 1, 1),
    "rand": ("rand", 0, 0),
    "uuid": ("uuid", 0, 0),
    "struuid": ("struuid", 0, 0),
    "bnode": ("bnode", 0, 1),
    "now": ("now", 0, 0),
    "getduration": ("getDURATION", 0, 0),
    "getstarttime": ("getSTARTTIME", 0, 0),
    "getendtime": ("getENDTIME", 0, 0),
    "timestamp": ("timestamp", 1, 2),  # C-SPARQL's timestamp(?v [, <stream>]) (timestamp_args)
}

OPERATORS = {
    "OR": "or", "AND": "and", "EQ": "=", "NE": "!=", "LT": "<", "GT": ">", "LE": "<=",
    "GE": ">=", "PLUS": "+", "MINUS": "-", "STAR": "*", "SLASH": "/",
}
UNARY = {"BANG": "not", "MINUS": "neg", "PLUS": "pos"}

CHAIN_OPS = ops.KEYWORDS  # keyword between two groups -> operator class
REJECTED_OPS = {
    "SEQOPTIONAL": (
        "SEQOPTIONAL is not an EP-SPARQL operator: a mandatory pattern followed by an "
        "optional one breaks timewise monotonicity (an answer given when the mandatory "
        "part is seen would be wrong once the optional part arrives later; paper, "
        "section 4.2). Write the optional part first: {optional} OPTIONALSEQ {mandatory}"
    ),
    "OPTIONALEQUALS": (
        "OPTIONALEQUALS is not an EP-SPARQL operator: the optional part of a simultaneous "
        "match goes on the right. Write {mandatory} EQUALSOPTIONAL {optional}"
    ),
}

ANNOTATIONS = {
    "policy": ("unrestricted", "recent", "chronological"),
    "binarize": ("left", "right"),
    "feedback": ("on", "off"),  # a CONSTRUCT's triples fed back into the stream (rule chaining) or not
    "service": None,  # the query's SERVICE policy, key=value,... (cep.service.options.policy_fields)
}

FROM_NAMED = ("FROM NAMED is not supported: a run has one background graph; name its files "
              "with FROM <file>")
FROM_IN_SUBQUERY = ("FROM names the background of the whole query: write it after the "
                    "CONSTRUCT template, before the subquery")
def _exists_tests(node) -> list:
    """The conditions of a FILTER's expression joined by && (in order), as
    (negated, the group of [NOT] EXISTS { ... }) or (None, the condition's
    node); [] when none is an EXISTS (the FILTER is an expression)."""
    if isinstance(node, Tree) and node.data == "binary" and node.children[1].type == "AND":
        parts = _exists_tests(node.children[0]) or [(None, node.children[0])]
        parts += _exists_tests(node.children[2]) or [(None, node.children[2])]
        return parts if any(n is not None for n, _ in parts) else []
    if isinstance(node, Tree) and node.data == "exists":
        negated = isinstance(node.children[0], Token) and node.children[0].type == "NOT"
        return [(negated, node.children[-1])]
    if (isinstance(node, Tree) and node.data == "unary" and node.children[0].type == "BANG"
            and isinstance(node.children[1], Tree) and node.children[1].data == "exists"):
        (negated, group), = _exists_tests(node.children[1])
        return [(not negated, group)]
    return []


def unsupported(name: str) -> str:
    return f"{name} is not supported in EP-SPARQL rules (docs/language.md lists what is)"


LOCAL_ONLY = ("only local files can be loaded as background knowledge, not <{iri}>: name a file "
              "by its path relative to the rule file, FROM <ontologies/roads.ttl>, or by a "
              "file: IRI, FROM <file:///data/roads.ttl>")


@query_limits.deep
def translate(tree: Tree, filename: str = "<string>", allow_from=()) -> list:
    """The queries of a parsed rule file, in file order. `allow_from`: the
    folders (and files) beyond the rule file's folder that FROM may read."""
    return _File(filename, allow_from).translate(tree)


# ------------------------------------------------------------------ IRIs

_IRI_PARTS = re.compile(r"(?:([^:/?#]+):)?(?://([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?\Z", re.S)
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")


def resolve_iri(base: str, ref: str) -> str:
    """RFC 3986 section 5.2: `ref` resolved against the absolute IRI `base`."""
    scheme, authority, path, query, fragment = _IRI_PARTS.match(ref).groups()
    b_scheme, b_authority, b_path, b_query, _ = _IRI_PARTS.match(base).groups()
    if scheme is None:
        scheme = b_scheme
        if authority is None:
            authority = b_authority
            if path == "":
                path = b_path
                if query is None:
                    query = b_query
            else:
                if not path.startswith("/"):
                    if b_authority is not None and b_path == "":
                        path = "/" + path
                    else:
                        path = b_path[: b_path.rfind("/") + 1] + path
                path = _remove_dot_segments(path)
        else:
            path = _remove_dot_segments(path)
    else:
        path = _remove_dot_segments(path)
    out = scheme + ":"
    if authority is not None:
        out += "//" + authority
    out += path
    if query is not None:
        out += "?" + query
    if fragment is not None:
        out += "#" + fragment
    return out


def _remove_dot_segments(path: str) -> str:
    out = []
    while path:
        if path.startswith("../"):
            path = path[3:]
        elif path.startswith("./"):
            path = path[2:]
        elif path.startswith("/./"):
            path = path[2:]
        elif path == "/.":
            path = "/"
        elif path.startswith("/../") or path == "/..":
            path = "/" + path[4:] if path.startswith("/../") else "/"
            if out:
                out.pop()
        elif path in (".", ".."):
            path = ""
        else:
            cut = path.find("/", 1)
            cut = len(path) if cut < 0 else cut
            out.append(path[:cut])
            path = path[cut:]
    return "".join(out)


# --------------------------------------------------------------- strings

_ESCAPES = {"t": "\t", "b": "\b", "n": "\n", "r": "\r", "f": "\f", '"': '"', "'": "'", "\\": "\\"}
# [160] ECHAR; \u and \U escapes are replaced before parsing (cep.syntax.parser)
_ESCAPE_RE = re.compile(r"\\([\s\S])")
_LOCAL_ESCAPE_RE = re.compile(r"\\([_~.\-!$&'()*+,;=/?#@%])")


def _string_value(token: Token, filename: str) -> str:
    text = str(token)
    quote = 3 if text[:3] in ('"""', "'''") else 1
    body = text[quote:-quote]

    def repl(m):
        code = m.group(1)
        if code in _ESCAPES:
            return _ESCAPES[code]
        raise QueryError(f"unknown escape \\{code} in a string (write \\\\ for a backslash)",
                         _pos_within(token, quote + m.start(), filename))

    return _ESCAPE_RE.sub(repl, body)


def _pos_within(token: Token, offset: int, filename: str) -> Pos:
    """The position of the character at `offset` in a token's text."""
    before = str(token)[:offset]
    newlines = before.count("\n")
    if not newlines:
        return Pos(filename, token.line, token.column + offset)
    return Pos(filename, token.line + newlines, offset - before.rfind("\n"))


def _number(lexical: str) -> str:
    if "e" in lexical or "E" in lexical:
        datatype = terms.XSD_DOUBLE
    elif "." in lexical:
        datatype = terms.XSD_DECIMAL
    else:
        datatype = terms.XSD_INTEGER
    return terms.canonical(terms.literal(lexical, datatype))


# ------------------------------------------------------------- positions


def _pos(node, filename: str) -> Pos:
    if isinstance(node, Token):
        return Pos(filename, node.line, node.column)
    if not node.meta.empty:
        return Pos(filename, node.meta.line, node.meta.column)
    for child in node.children:  # pragma: no cover - every rule node has positions
        return _pos(child, filename)
    return Pos(filename, 1, 1)


def _var_list(names) -> str:
    names = [f"?{n}" for n in names]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


# ------------------------------------------------------------- the file


class _File:
    """Walks the units of a file: declarations stay in force for the later
    queries, annotations attach to the next query."""

    def __init__(self, filename: str, allow_from=()):
        self.filename = filename
        self.allow_from = tuple(allow_from)
        self.base = None
        self.prefixes = {}

    def pos(self, node) -> Pos:
        return _pos(node, self.filename)

    @property
    def directory(self) -> Path:
        """Where a relative FROM path starts: the rule file's directory, or
        the current one for text not read from a file ("<string>")."""
        if self.filename.startswith("<") and self.filename.endswith(">"):
            return Path.cwd()
        return Path(self.filename).parent

    @property
    def document_iri(self) -> str:
        """The base IRI of a file without BASE (SPARQL 1.1 4.1.1.1, RFC 3986
        5.1.3): the rule file's file: IRI, or the current directory's for
        text not read from a file."""
        if self.filename.startswith("<") and self.filename.endswith(">"):
            return Path.cwd().as_uri() + "/"
        return Path(self.filename).resolve().as_uri()

    def iri(self, token: Token) -> str:
        """The absolute IRI of an IRIREF token, resolved against BASE, or
        against the rule file's IRI before any BASE."""
        return self.resolve(str(token)[1:-1])

    def resolve(self, ref: str) -> str:
        """An IRI reference made absolute against BASE, or against the rule
        file's IRI before any BASE."""
        if _SCHEME.match(ref):
            return ref
        return resolve_iri(self.document_iri if self.base is None else self.base, ref)

    def translate(self, tree: Tree) -> list:
        queries, annotations = [], []
        for unit in tree.children:
            if unit.data == "base_decl":
                self.base = self.iri(unit.children[1])
            elif unit.data == "prefix_decl":
                _, name, iri = unit.children
                if not str(name).endswith(":") or ":" in str(name)[:-1]:
                    raise QueryError(f"PREFIX takes a name with one ':', at its end, such as ex:, not {name}",
                                     self.pos(name))
                self.prefixes[str(name)[:-1]] = self.iri(iri)
            elif unit.data == "annotation":
                annotations.append(unit.children[0])
            else:
                options = self.options(annotations)
                annotations = []
                queries.append(_Query(self, len(queries) + 1).translate(unit, options))
        if annotations:
            first = annotations[0]
            raise QueryError(f"{_annotation_words(first)[0]} is not followed by a query",
                             self.pos(first))
        if not queries:
            raise QueryError("the file holds no query", Pos(self.filename, 1, 1))
        return self.name(queries)

    def options(self, annotations) -> tuple:
        options = {}
        for token in annotations:
            words = _annotation_words(token)
            key = words[0][1:]
            if key not in ANNOTATIONS:
                known = ", ".join("@" + k for k in list(ANNOTATIONS)[:-1]) + " and @" + list(ANNOTATIONS)[-1]
                raise QueryError(f"unknown annotation {words[0]}: the annotations are {known}",
                                 self.pos(token))
            if key in options:
                raise QueryError(f"@{key} is given twice for the same query", self.pos(token))
            if ANNOTATIONS[key] is None:  # @service: a policy text, spaces after its commas allowed
                if len(words) < 2:
                    raise QueryError(f"@{key} takes key=value,... (view, proposer, ranker, gamma, rho, "
                                     f"timeout, seed)", self.pos(token))
                try:
                    policy_fields(" ".join(words[1:]), "@service")
                except ValueError as e:
                    raise QueryError(str(e), self.pos(token)) from None
                options[key] = "".join(words[1:])
                continue
            allowed = ", ".join(ANNOTATIONS[key][:-1]) + " or " + ANNOTATIONS[key][-1]
            if len(words) != 2:
                raise QueryError(f"@{key} takes one value: {allowed}", self.pos(token))
            if words[1] not in ANNOTATIONS[key]:
                raise QueryError(f"@{key} {words[1]}: the value must be {allowed}", self.pos(token))
            options[key] = words[1]
        return tuple(sorted(options.items()))

    def name(self, queries: list) -> list:
        """Unnamed queries are named after the file: `stem`, or `stem#N` for
        the N-th query when the file holds several."""
        stem = Path(self.filename).stem
        out, seen = [], {}
        for i, q in enumerate(queries, 1):
            if q.name is None:
                q = dataclasses.replace(q, name=stem if len(queries) == 1 else f"{stem}#{i}")
            if q.name in seen:
                raise QueryError(f"a query named {q.name} is already defined at {seen[q.name]}", q.pos)
            seen[q.name] = q.pos
            out.append(q)
        return out


def _has_service(op) -> bool:
    return isinstance(op, ops.Service) or any(_has_service(c) for c in ops.children(op))


def _annotation_words(token: Token) -> list:
    return str(token).split("#", 1)[0].split()


# ------------------------------------------------------------ one query


class _Query:
    def __init__(self, file: _File, index: int):
        self.file = file
        self.index = index
        self.warnings = []
        self.blank_vars = {}  # blank node label -> (variable, triples block it belongs to)
        self.template_labels = set()  # blank node labels written in the template
        self.fresh = 0
        self.block = 0
        self.aggregates = None  # while the SELECT clause and HAVING are read: [(Var, Aggregate)]
        self.streams = ()  # the query's FROM [NAMED] STREAM: ((iri, named), ...)
        self.graph = None  # inside GRAPH <iri> { ... }: the stream's IRI
        self.windowed = False  # the query has a window (FROM STREAM ... [...])
        self.where_spec = None  # the Streaming SPARQL window at the end of the WHERE group, if any
        self.stream_windows = {}  # the window of each stream the query reads (FROM [NAMED] STREAM)
        self.windows_named = {}  # RSP-QL's FROM NAMED WINDOW: window IRI -> its Window (on its stream)
        self.query_window = None
        self.in_group_window = False  # inside a group with a window of its own (or the WHERE's)
        self.condition_nodes = {}  # id of a conjunct of a FILTER (or WITHIN) -> its syntax node
        self.unknown_function = None  # the QueryError of the first call of an unknown IRI
        self.marks = None  # while a FILTER's expression is read: its [NOT] EXISTS (see marked)

    # ---- helpers

    def pos(self, node) -> Pos:
        return self.file.pos(node)

    def error(self, message: str, node) -> QueryError:
        return QueryError(message, self.pos(node))

    def warn(self, message: str, node):
        """A warning at a syntax node (or a Pos)."""
        self.warnings.append(f"{node if isinstance(node, Pos) else self.pos(node)}: {message}")

    def fresh_blank(self) -> str:
        name = f"_:b{self.fresh}"
        self.fresh += 1
        return name

    # ---- the query

    def translate(self, tree: Tree, options: tuple) -> ops.Query:
        query = self.query(tree, options)
        if "service" in dict(options) and not _has_service(query.pattern):
            raise self.error("@service sets the policy of the query's SERVICE patterns: the query has none", tree)
        if self.unknown_function is not None:
            # raised after every other check: the W3C runner's syntax mode
            # tells this refusal (SPARQL 17.6) from a syntax error
            raise self.unknown_function
        return query

    def query(self, tree: Tree, options: tuple) -> ops.Query:
        register = None
        body = tree.children[-1]
        if len(tree.children) == 2:
            register = tree.children[0]
        name = None
        if register is not None:
            kind, name_token = register.children[1], register.children[2]
            name = str(name_token)
            if (kind.type == "UPDATE") != (body.data == "update_query"):
                raise self.error("REGISTER UPDATE registers a DELETE/INSERT rule, and only that",
                                 register)
            if kind.type == "QUERY" and body.data not in ("select_query", "ask_query", "describe_query"):
                raise self.error("REGISTER QUERY registers a SELECT query; register a "
                                 "CONSTRUCT query with REGISTER STREAM", register)
            if kind.type == "STREAM" and body.data not in ("construct_query", "construct_where"):
                raise self.error("REGISTER STREAM registers a CONSTRUCT query; register a "
                                 "SELECT query with REGISTER QUERY", register)
        pos = self.pos(tree)
        froms = _children(body, "from_clause")
        ontologies = self.dataset([c for c in froms if not _is_stream(c)])
        window, self.streams = self.window([c for c in froms if _is_stream(c)])
        window, self.streams = self.named_windows(_children(body, "from_window"), window, self.streams)
        window = self.where_window(body, window)
        self.windowed, self.query_window = window is not None, window
        computed = _children(register, "computed") if register is not None else []
        every = self.every(computed[0], window) if computed else None
        every = self.report_period(window, every, computed)
        if body.data == "update_query":
            if window is not None:
                raise self.error("an update reads the stream as it comes: it takes no window", window_clause(froms))
            return self.update(body, tree, name, options, pos, ontologies)
        windowed = dict(window=window, every_ms=every, streams=self.streams)
        if "feedback" in dict(options) and body.data not in ("construct_query", "construct_where"):
            raise self.error("@feedback says whether a CONSTRUCT's triples are fed back into the stream: "
                             "it applies to a CONSTRUCT only", tree)
        if body.data == "describe_query":
            return self.describe(body, tree, name, options, pos, ontologies, windowed)
        if body.data == "ask_query":
            return self.ask(body, tree, name, options, pos, ontologies, windowed)
        if body.data == "select_query":
            clause, where = body.children[0], _children(body, "where_clause")[0]
            windowed["report"] = self.report(clause, window)
            pattern = self.with_values(self.where(where, tree), body)
            distinct, projection, grouping = self.selection(body, clause, pattern, window)
            shown = {p.var for p in projection or ()}
            if grouping is not None and grouping.keys is not None:  # a group's row holds its keys
                readable = shown | set(grouping.keys)
            else:
                readable = ops.variables(pattern) | shown
            modifiers = {"grouping": grouping, **self.modifiers(body, readable, grouping)}
            query = ops.Query(name, "select", pattern, projection, distinct, options=options,
                              pos=pos, warnings=tuple(self.warnings), ontologies=ontologies,
                              **windowed, **modifiers)
            if query.report != "rstream" and ops.sort_fields(query)[1]:
                # the rows IStream and DStream compare would hold the hidden keys
                raise self.error(unsupported(f"ORDER BY an expression in an {query.report.upper()} query")
                                 + ": order by a selected variable, computed in the SELECT clause "
                                   "with (expression AS ?v)", _children(body, "order_clause")[0])
            return query
        windowed["report"] = self.report(body, window)
        where = _children(body, "where_clause")[0]
        sub = _sub_select(where)
        cut = [c for c in sub.children if isinstance(c, Tree)
               and c.data in ("order_clause", "limit_offset")] if sub is not None else []
        if cut and window is not None:  # its grouping is the window's, its cut would be per instant
            raise self.error(unsupported(f"{_modifier_name(cut[0])} in the subquery of a CONSTRUCT over a "
                                         f"window"), cut[0])
        if cut:  # without a window, a subquery cut per instant as any other (Subqueries)
            sub = None
        if sub is not None:
            froms = _children(sub, "from_clause")
            if froms:
                raise self.error(FROM_IN_SUBQUERY, froms[0])
            clause, sub_where = _children(sub, "select_clause")[0], _children(sub, "where_clause")[0]
            if any(isinstance(c, Token) and c.type in REPORTS for c in clause.children):
                raise self.error("RSTREAM, ISTREAM and DSTREAM belong to the outer CONSTRUCT", clause)
            pattern = self.with_values(self.where(sub_where, tree), sub)
            # grouping in the subquery aggregates over the CONSTRUCT's window
            distinct, projection, grouping = self.selection(sub, clause, pattern, window)
        else:
            pattern = self.with_values(self.where(where, tree), body)
            distinct, projection, grouping = False, None, None
        if body.data == "construct_where":
            template = self.short_template(where)
        else:
            template = self.template(_children(body, "template")[0])
        visible = ops.variables(pattern) | {p.var for p in projection or ()}
        warned = set()
        for t in template:
            for v in ops.slots_vars(t):
                if v not in visible and v not in warned:
                    warned.add(v)
                    self.warnings.append(
                        f"{t.pos}: ?{v.name} in the CONSTRUCT template is never bound by the "
                        f"pattern: the triples that use it are never produced")
        order = _children(body, "order_clause")
        if order:  # a CONSTRUCT's answers are a graph: only LIMIT and OFFSET cut it
            raise self.error(unsupported("ORDER BY in a CONSTRUCT query"), order[0])
        modifiers = self.modifiers(body)
        return ops.Query(name, "construct", pattern, projection, distinct, template, options,
                         pos=pos, warnings=tuple(self.warnings), ontologies=ontologies,
                         grouping=grouping, **windowed, **modifiers)

    def ask(self, body: Tree, tree: Tree, name, options, pos, ontologies, windowed) -> ops.Query:
        """ASK: whether an evaluation has a solution; a query without
        variables to project, one answer per evaluation (docs/language.md)."""
        modifiers = [c for c in body.children if isinstance(c, Tree) and c.data in ("order_clause", "limit_offset")]
        if modifiers:  # ASK answers once per evaluation: nothing to order or cut
            raise self.error(unsupported(f"{_modifier_name(modifiers[0])} in an ASK query"), modifiers[0])
        pattern = self.with_values(self.where(_children(body, "where_clause")[0], tree), body)
        return ops.Query(name, "ask", pattern, (), True, options=options, pos=pos,
                         warnings=tuple(self.warnings), ontologies=ontologies, **windowed)

    def describe(self, body: Tree, tree: Tree, name, options, pos, ontologies, windowed) -> ops.Query:
        """DESCRIBE R... [WHERE { P }] (SPARQL 16.4): a CONSTRUCT whose
        template is, for each resource R described (a variable, or an IRI;
        * is every variable of P), the triple patterns of P that have R as
        subject (the events of the solution about R) and the marker triple
        (R, ops.DESCRIBED, R), which the answer stage replaces with R's
        concise bounded description in the background (ops.described).
        Its triples are output only, never fed back into the stream
        (@feedback off): a description is what a query reports, not an
        event. Without WHERE, P is the empty group: a description at each
        instant of the stream."""
        order = _children(body, "order_clause")
        if order:  # its answers are a graph, as a CONSTRUCT's
            raise self.error(unsupported("ORDER BY in a DESCRIBE query"), order[0])
        where = _children(body, "where_clause")
        pattern = (self.with_values(self.where(where[0], tree), body) if where
                   else ops.Unit(self.graph, pos=self.pos(body)))
        visible = {v for v in ops.variables(pattern) if not v.name.startswith(("_:", "."))}
        items = [c for c in body.children if isinstance(c, Token) and c.type in ("VAR", "IRIREF", "PNAME", "STAR")]
        if items[0].type == "STAR":
            resources = sorted(visible, key=lambda v: v.name)
            if not resources:
                raise self.error("DESCRIBE * describes the variables of the pattern, and it has none", items[0])
        else:
            resources = [Var(str(c)[1:]) if c.type == "VAR" else terms.iri(self.iri(c)) for c in items]
            for c, r in zip(items, resources):
                if isinstance(r, Var) and r not in visible:
                    self.warn(f"DESCRIBE ?{r.name}: the pattern never binds it, so it is never described", c)
        resources = list(dict.fromkeys(resources))
        # a blank node of P is a hidden variable _:bN, which a template would read as a label
        hidden = {v: Var(f".described.{v.name[2:]}") for v in ops.variables(pattern) if v.name.startswith("_:")}
        pattern = _renamed(pattern, hidden)
        template = tuple(ops.Triple(t.s, t.p, t.o, pos=t.pos) for t in _solution_triples(pattern)
                         if t.s in resources and not isinstance(t.p, ops.Path))
        template = tuple(dict.fromkeys(template)) + tuple(ops.Triple(r, ops.DESCRIBED, r) for r in resources)
        options = tuple(sorted(dict(options, feedback="off").items()))
        return ops.Query(name, "construct", pattern, None, False, template, options, pos=pos,
                         warnings=tuple(self.warnings), ontologies=ontologies, **windowed, **self.modifiers(body))

    def short_template(self, where: Tree) -> tuple:
        """CONSTRUCT WHERE { triples }: the template is the pattern, which
        must be a basic graph pattern (SPARQL 1.1, 16.2.4)."""
        elements = [c for c in where.children if isinstance(c, Tree)]
        groups = elements[0].children if len(elements) == 1 else ()
        body = groups[0].children if len(groups) == 1 and groups[0].data == "group" else None
        if body is None or any(c.data != "triples_block" for c in body):
            raise self.error("CONSTRUCT WHERE { ... } takes only triple patterns (a basic graph "
                             "pattern, which is also the template); write CONSTRUCT { template } "
                             "WHERE { pattern }", where)
        return tuple(t for block in body for t in self.template_triples(block))

    def template_triples(self, block: Tree) -> list:
        out = []
        for t in block.children:
            out += self.triples(t, template=True)
        return out

    # ---- solution modifiers

    def modifiers(self, body: Tree, readable=frozenset(), grouping=None) -> dict:
        """ORDER BY, OFFSET and LIMIT as Query fields. ORDER BY's keys are
        expressions over what the projection reads (`readable`: the
        pattern's variables and the projected ones; for a grouped query,
        `grouped`: its keys, aggregates and projected variables); a key
        other than a selected variable is computed by the rules as a
        hidden field (ops.sort_fields). An aggregate in ORDER BY of a
        grouped query is one more of its group's (the grouping returned as
        "grouping")."""
        out = {}
        grouped = grouping is not None and grouping.keys is not None
        # aggregates stand in ORDER BY of a grouped query only (SPARQL makes an
        # aggregate in ORDER BY group an ungrouped query: refused)
        self.aggregates = list(grouping.aggregates) if grouped else None
        for clause in _children(body, "order_clause"):
            keys = []
            for cond in _children(clause, "order_condition"):
                first = cond.children[0]
                descending = isinstance(first, Token) and first.type == "DESC"
                expr = self.expr(cond.children[-1])
                if ops.expr_uses(expr, {"timestamp"}):
                    raise self.error("timestamp() reads the events of one solution: select it with "
                                     "(timestamp(?v) AS ?t) and order by ?t", cond)
                if grouped:
                    self.refuse_timestamp([a.arg for _, a in self.aggregates if a.arg is not None], cond)
                    self.check_grouped(expr, readable | {v for v, _ in self.aggregates}, cond)
                else:
                    for v in _vars_in_order(expr):
                        if v not in readable:
                            self.warn(f"ORDER BY reads {v}, which the pattern never binds: it is "
                                      f"unbound in every answer", cond)
                keys.append(ops.OrderKey(expr, descending))
            out["order"] = tuple(keys)
        if grouped and len(self.aggregates) > len(grouping.aggregates):
            out["grouping"] = dataclasses.replace(grouping, aggregates=tuple(self.aggregates))
        for clause in _children(body, "limit_offset"):
            for part in clause.children:
                keyword, number = part.children
                if not re.fullmatch(r"\d+", str(number)):
                    raise self.error(f"{keyword} takes a whole number, not {number}", number)
                out["limit" if part.data == "limit_clause" else "offset"] = int(str(number))
        return out

    def selection(self, body: Tree, clause: Tree, pattern, window):
        """(distinct, projection, grouping) of a SELECT query or subquery:
        its SELECT clause, then its grouping (GROUP BY, HAVING, aggregates,
        or C-SPARQL's AGGREGATE clauses)."""
        self.aggregates = []  # an aggregate may stand in the SELECT clause and in HAVING
        # C-SPARQL's AGGREGATE clauses bind variables the SELECT clause may name
        extended = {Var(str(c.children[1])[1:]) for c in _children(body, "aggregate_clause")}
        # and GROUP BY (expr AS ?v) binds ?v
        extended |= {Var(str(t)[1:]) for group in _children(body, "group_clause")
                     for node in _children(group, "group_expr")
                     for t in node.children[1:] if isinstance(t, Token) and t.type == "VAR"}
        distinct, projection = self.select_clause(clause, pattern, extended)
        grouping, projection = self.grouping(body, pattern, projection, window)
        return distinct, projection, grouping

    # ---- windows (C-SPARQL FROM STREAM, RSP-QL window functions)

    def window(self, clauses):
        """(the query's window, the streams it reads): (None, ()) without
        FROM STREAM. Every FROM [NAMED] STREAM names a stream and its
        window. The patterns outside GRAPH read the FROM STREAM streams
        together, so their windows have one size, the query's; a named
        stream's window may differ: it is the window of the GRAPH groups
        that read it (graph_pattern; docs/language.md)."""
        if not clauses:
            return None, ()
        window, streams, seen = None, [], set()
        for clause in clauses:
            named = any(isinstance(c, Token) and c.type == "NAMED" for c in clause.children)
            iri = terms.iri(self.iri(clause.children[-2]))
            if iri in seen:
                raise self.error(f"the query reads the stream {iri} twice", clause)
            seen.add(iri)
            this = self.window_spec(clause, iri)
            self.stream_windows[iri] = this
            if not named and window is not None and _size(this) != _size(window):
                raise self.error(f"the streams the patterns outside GRAPH read have one window: the "
                                 f"window on {iri} differs from the one on {window.stream}; read one of "
                                 f"them with FROM NAMED STREAM and GRAPH, or give the groups that read "
                                 f"it a window of their own ({{ ... WINDOW ... }})", clause)
            if not named and window is None:
                window = this
            streams.append((iri, named))
        if window is None:  # named streams only: the first one's
            window = self.stream_windows[streams[0][0]]
        return window, tuple(streams)

    def named_windows(self, clauses, window, streams):
        """RSP-QL's FROM NAMED WINDOW <w> ON [STREAM] <s> [window]: a window
        over stream s, named w, which WINDOW <w> { ... } reads (several may
        be over one stream). The stream is read through its windows only,
        as a FROM NAMED STREAM is through GRAPH. (the query's window, its
        streams), the first named window being the query's when no FROM
        STREAM gives one."""
        for clause in clauses:
            name_token, stream_token = [c for c in clause.children if isinstance(c, Token)
                                        and c.type in ("IRIREF", "PNAME")]
            name, iri = terms.iri(self.iri(name_token)), terms.iri(self.iri(stream_token))
            if name in self.windows_named:
                raise self.error(f"the query names the window {name} twice", name_token)
            self.windows_named[name] = self.window_spec(clause, iri)
            if iri not in {s for s, _ in streams}:
                streams += ((iri, True),)
        if window is None and self.windows_named:
            window = next(iter(self.windows_named.values()))
        return window, streams

    def where_window(self, body: Tree, window):
        """The query's window: a Streaming SPARQL window at the end of the
        WHERE group, over every pattern of the query, is more special than
        the streams' (section 2), and replaces theirs."""
        spec = _where_window(body)
        if spec is None:
            return window
        self.where_spec = spec
        if window is None:
            raise self.error("a window applies to the streams the query reads, and it reads none: add "
                             "FROM STREAM <iri> WINDOW ... before WHERE", spec)
        own = self.streaming_window(spec, window.stream, self.pos(spec))
        # its report policy and START, or else the stream's, are the query's; both given, they agree
        for fields, clause, what in ((("policy", "period_ms"), "report_policy", "report policy"),
                                     (("t0_ms",), "window_start", "START")):
            mine, theirs = (tuple(getattr(w, f) for f in fields) for w in (own, window))
            if mine[0] is None:
                own = dataclasses.replace(own, **dict(zip(fields, theirs)))
            elif theirs[0] is not None and mine != theirs:
                raise self.error(f"the WHERE group's window replaces the window on {window.stream}, whose "
                                 f"{what} differs from its own: give the {what} on one of them",
                                 _children(spec, clause)[0])
        return own

    def window_spec(self, clause, iri):
        spec = clause.children[-1]
        if spec.data == "streaming_window":
            return self.streaming_window(spec, iri, self.pos(clause))
        words = [c for c in spec.children if isinstance(c, Token)]
        pos = self.pos(clause)
        options = self.window_options(spec, words[0].type == "TRIPLES")
        policy, period, t0 = options["policy"], options["period_ms"], options["t0_ms"]
        if words[0].type == "TRIPLES":
            count = int(str(words[1]))
            if count < 1:
                raise self.error("a count-based window holds at least one event: [TRIPLES 1]", words[1])
            return ops.Window(iri, count=count, policy=policy, pos=pos)
        if words[1].type == "UNBOUNDED":  # RSP-QL's l = infinity: everything from t0 on
            if words[2].type == "TUMBLING":
                raise self.error("a window of infinite width does not tumble: give it a STEP", words[2])
            if t0 is None:
                raise self.error("RANGE UNBOUNDED holds everything from the window's start t0 to each "
                                 "evaluation: give START \"...\"^^xsd:dateTime", words[1])
            return ops.Window(iri, step_ms=self.span(words[3]), policy=policy, period_ms=period, t0_ms=t0,
                              pos=pos)
        range_ms = self.span(words[1])
        step_ms = range_ms if words[2].type == "TUMBLING" else self.span(words[3])
        return ops.Window(iri, range_ms=range_ms, step_ms=step_ms, policy=policy, period_ms=period, t0_ms=t0,
                          pos=pos)

    def window_options(self, spec: Tree, counted: bool) -> dict:
        """RSP-QL's START, REPORT and TICK of a window, in a C-SPARQL
        window's brackets or after a Streaming SPARQL window (the same
        clauses, in the same order): the fields of ops.Window they set. A
        count window is evaluated at each instant and holds the last events
        whenever they came: REPORT EVERY and START are refused on it."""
        policy = self.policy(spec)
        t0 = self.window_start(spec)
        self.check_tick(spec, counted)
        period = None
        if policy == "every":
            period = self.report_every(_children(spec, "report_policy")[0])
        if counted and policy == "every":
            raise self.error("REPORT EVERY reports a time-based window periodically; a count window "
                             "is evaluated at every instant of the stream: use a time-based window "
                             "([RANGE ... STEP ...], WINDOW RANGE ... SLIDE ...)",
                             _children(spec, "report_policy")[0])
        if counted and t0 is not None:
            raise self.error("START gives the time a sequence of time-based windows starts at; a "
                             "count window holds the last events, whenever they came",
                             _children(spec, "window_start")[0])
        return {"policy": policy, "period_ms": period, "t0_ms": t0}

    def report_every(self, report: Tree) -> int:
        """REPORT EVERY's period in ms: a C-SPARQL time span (15m), or after a
        Streaming SPARQL window a value and unit as its RANGE's (15 MINUTE;
        milliseconds without a unit)."""
        last = report.children[-1]
        if isinstance(last, Token) and last.type == "TIME_SPAN":
            return self.span(last)
        value, unit = (report.children[-2], _STREAMING_UNIT_MS[str(last.children[0]).upper()]) \
            if isinstance(last, Tree) else (last, 1)
        ms = self.window_integer(value) * unit
        if ms <= 0:
            raise self.error(f"REPORT EVERY's period must be positive, not {value}", value)
        query_limits.check_duration(ms, str(value), self.pos(value))
        return ms

    def check_tick(self, spec: Tree, counted: bool):
        """RSP-QL's tick in a window's brackets (TICK TIME | TUPLE | BATCH),
        which only states the one this engine has (docs/language.md,
        "Tick"): a time-based window's closes are time-driven (they come
        as event time passes them, with or without an event); a count
        window is evaluated at each instant, the batch of the events of
        one timestamp. Any other is refused, with why."""
        found = _children(spec, "window_tick")
        if not found:
            return
        token = found[0].children[0]
        kind = token.type.removeprefix("TICK_").lower()
        if kind == "tuple":
            raise self.error("TICK TUPLE would evaluate a window between two events of one instant, which "
                             "have no order: the engine processes a stream by instants (TICK BATCH for a count "
                             "window, TICK TIME for a time-based one)", token)
        if counted and kind == "time":
            raise self.error("a count window's content changes only when events come: it is evaluated at "
                             "each instant (TICK BATCH), not as time passes", token)
        if not counted and kind == "batch":
            raise self.error("a time-based window closes as event time passes its close, with or without an "
                             "event there (TICK TIME); evaluating it only at the instants of events is not "
                             "supported", token)

    def window_start(self, spec: Tree):
        """RSP-QL's t0 in a window's brackets (START "...Z"^^xsd:dateTime, or
        a simple literal of that form), in ms; None when not given."""
        found = _children(spec, "window_start")
        if not found:
            return None
        node = found[0].children[0]
        text = self.literal(node)
        parts = terms.split(text)
        if parts[0] == "literal" and parts[3] is None and parts[2] in (None, terms.XSD + "string",
                                                                       terms.XSD + "dateTime"):
            with contextlib.suppress(terms.TermError):
                return terms.parse_datetime_ms(parts[1])
        raise self.error(f"START takes the time the windows start at, an xsd:dateTime such as "
                         f"\"2026-03-02T10:00:00Z\"^^xsd:dateTime, not {text}", node)

    # ---- report policies (RSP-QL; docs/language.md, "Report policies")

    @staticmethod
    def policy(spec: Tree):
        """The report policy in a window's brackets: close, change,
        nonempty or every (REPORT EVERY p), None when none is given."""
        found = _children(spec, "report_policy")
        if not found:
            return None
        kind = found[0].children[0].type
        return {"CLOSE": "close", "CHANGE": "change", "EMPTY": "nonempty", "EVERY": "every"}[kind]

    def report_period(self, window, every, computed):
        """COMPUTED EVERY p, or the window's REPORT EVERY p (the same
        periodic evaluation, RSP-QL's periodic policy); they may not
        disagree, nor may COMPUTED EVERY and REPORT ON CLOSE. A report
        policy belongs to the window the query is evaluated by: every
        other window that gives one, a named one too, must give the same."""
        others = [(f"window on {w.stream}", w) for w in self.stream_windows.values()]
        others += [(f"named window {name}", w) for name, w in self.windows_named.items()]
        for what, w in others:
            if w.policy is not None and window is not None and \
                    (w.policy, w.period_ms) != (window.policy, window.period_ms):
                raise QueryError(f"the query is evaluated when its window on {window.stream} is: the "
                                 f"report policy of the {what} differs from it; give the "
                                 f"report policy on the query's window only", w.pos)
        if window is None or window.policy is None:
            return every
        if window.policy == "every":
            period = window.period_ms
            if every is not None and every != period:
                raise self.error("COMPUTED EVERY and the window's REPORT EVERY give two periods: "
                                 "keep one", computed[0])
            return period
        if window.policy == "close" and every is not None:
            raise self.error("COMPUTED EVERY evaluates the query periodically, its window's REPORT ON "
                             "CLOSE at each window close: keep one", computed[0])
        return every

    def streaming_window(self, spec: Tree, iri, pos) -> ops.Window:
        """Streaming SPARQL's Window (Bolles et al., section 2) as the
        engine's: `RANGE v [unit] SLIDE [v [unit]]` is [RANGE v STEP slide]
        (the slide defaults to 1 of the range's unit), `RANGE v FIXED` is
        [RANGE v TUMBLING], `ELEMS n` the last n events (timestamped
        graphs, not triples), `RANGE UNBOUNDED SLIDE v [unit]` RSP-QL's
        window of infinite width [RANGE UNBOUNDED STEP slide], which needs
        a START. A value without a unit counts milliseconds."""
        kind = spec.children[1]
        # (value, its unit in ms, the value's token) for RANGE, then SLIDE's if given
        values = []
        for i, c in enumerate(spec.children):
            if isinstance(c, Token) and c.type == "NUMBER":
                after = spec.children[i + 1] if i + 1 < len(spec.children) else None
                unit = _STREAMING_UNIT_MS[str(after.children[0]).upper()] \
                    if isinstance(after, Tree) and after.data == "time_unit" else 1
                values.append((self.window_integer(c), unit, c))
        options = self.window_options(spec, kind.type == "ELEMS")
        if kind.type == "ELEMS":
            count, _, token = values[0]
            if count < 1:
                raise self.error("a count-based window holds at least one event: WINDOW ELEMS 1", token)
            return ops.Window(iri, count=count, counts="events", policy=options["policy"], pos=pos)
        spans = []
        for value, unit, token in values:
            if value <= 0:
                raise self.error(f"a window's RANGE and SLIDE must be positive, not {token}", token)
            query_limits.check_duration(value * unit, str(token), self.pos(token))
            spans.append(value * unit)
        if spec.children[2].type == "UNBOUNDED":  # RSP-QL's l = infinity: everything from t0 on
            if options["t0_ms"] is None:
                raise self.error("RANGE UNBOUNDED holds everything from the window's start t0 to each "
                                 "evaluation: give START \"...\"^^xsd:dateTime", spec.children[2])
            return ops.Window(iri, step_ms=spans[0], pos=pos, **options)
        range_ms = spans[0]
        if any(isinstance(c, Token) and c.type == "FIXED" for c in spec.children):
            step_ms = range_ms
        elif len(spans) == 1:  # SLIDE without a value: 1 of the range's unit
            step_ms = values[0][1]
        else:
            step_ms = spans[1]
        return ops.Window(iri, range_ms=range_ms, step_ms=step_ms, pos=pos, **options)

    def window_integer(self, token: Token) -> int:
        """A window's size: Streaming SPARQL's INTEGER ([0-9]+)."""
        if not re.fullmatch(r"\d+", str(token)):
            raise self.error(f"a window's size is a whole number, not {token}", token)
        return int(str(token))

    def graph_pattern(self, tree: Tree):
        """GRAPH <stream> { ... }: the group's triple patterns match the
        events of that stream only (C-SPARQL)."""
        keyword, name, group = tree.children
        if name.type == "VAR":
            raise self.error(f"GRAPH {name} is not supported: name the stream, as in "
                             f"GRAPH <http://example.org/stream> {{ ... }}", name)
        iri = terms.iri(self.iri(name))
        if not self.streams:
            raise self.error(f"GRAPH {iri} names a stream, and the query reads none: add "
                             f"FROM [NAMED] STREAM {iri} [window]", keyword)
        if iri not in {s for s, _ in self.streams}:
            raise self.error(f"GRAPH {iri}: the query does not read that stream; its streams are "
                             f"{', '.join(s for s, _ in self.streams)} (FROM [NAMED] STREAM)", name)
        if iri not in self.stream_windows:
            raise self.error(f"GRAPH {iri}: the query reads that stream through its named windows: "
                             f"WINDOW <window> {{ ... }}", name)
        return self.over_window(group, iri, self.stream_windows[iri])

    def over_window(self, group: Tree, iri, own: ops.Window, bind=None):
        """The group's pattern over the events of stream `iri` read over
        window `own` (GRAPH, WINDOW); `bind`: (variable, term) bound in each
        of its solutions (WINDOW ?w)."""
        outer, self.graph = self.graph, iri
        try:
            pattern = self.group(group)
        finally:
            self.graph = outer
        if pattern is not None and bind is not None:
            pattern = ops.Extend(pattern, bind[0], ops.Const(bind[1]), pos=self.pos(group))
        if pattern is None or self.in_group_window or _size(own) == _size(self.query_window):
            return pattern
        # Streaming SPARQL (algorithm 1): a pattern reads its stream's window unless a group has one
        return ops.pattern_window(ops.variables(pattern), pattern, own)

    def window_graph(self, tree: Tree):
        """RSP-QL's WINDOW <w> { ... }: the group read over the named window
        w (FROM NAMED WINDOW); WINDOW ?w { ... }: over each named window,
        with ?w bound to its name (a union of the windows' solutions)."""
        keyword, name, group = tree.children
        if not self.windows_named:
            raise self.error(f"WINDOW {name} names a window, and the query names none: add "
                             f"FROM NAMED WINDOW <window> ON <stream> [RANGE ... STEP ...]", keyword)
        if name.type != "VAR":
            iri = terms.iri(self.iri(name))
            if iri not in self.windows_named:
                raise self.error(f"WINDOW {iri}: the query names no such window; its windows are "
                                 f"{', '.join(self.windows_named)} (FROM NAMED WINDOW)", name)
            own = self.windows_named[iri]
            return self.over_window(group, own.stream, own)
        var = Var(str(name)[1:])
        # windows of other sizes than the query's are groups with windows of their own: the union of
        # such groups is evaluated when any of their windows is (docs/language.md, "Named windows")
        pattern = None
        for iri, own in self.windows_named.items():
            part = self.over_window(group, own.stream, own, (var, iri))
            if part is not None:
                pattern = part if pattern is None else ops.Union(pattern, part, pos=self.pos(keyword))
        return pattern

    def span(self, token: Token) -> int:
        """A C-SPARQL time span (10m, 500ms, 1h) or an ISO 8601 duration
        (PT10M) -> positive milliseconds."""
        text = str(token)
        m = _SPAN.fullmatch(text)
        if m:
            ms = int(m.group(1)) * _UNIT_MS[m.group(2).lower()]
        else:
            try:
                months, ms = terms.parse_duration(text.upper())
            except terms.TermError:
                months, ms = 0, 0
            if months:
                raise self.error(f"a window's time span has a fixed length: {text} counts months or "
                                 f"years; write days (P30D)", token)
        if ms <= 0:
            raise self.error(f"a time span must be positive, not {text}", token)
        query_limits.check_duration(ms, text, self.pos(token))
        return ms

    def every(self, computed: Tree, window) -> int:
        token = computed.children[-1]
        if window is None or window.count is not None:
            raise self.error("COMPUTED EVERY sets how often a query over a time-based window is "
                             "evaluated: add FROM STREAM <iri> [RANGE ... STEP ...]", computed)
        return self.span(token)

    def report(self, clause: Tree, window) -> str:
        """RSTREAM (the default), ISTREAM or DSTREAM: what is reported of
        each evaluation of a windowed query (RSP-QL)."""
        for c in clause.children:
            if isinstance(c, Token) and c.type in REPORTS:
                if window is None:
                    raise self.error(f"{c.type} reports the evaluations of a query over a window: "
                                     f"add FROM STREAM <iri> [RANGE ...]", c)
                return c.type.lower()
        return "rstream"

    # ---- aggregation (SPARQL 1.1 section 11, C-SPARQL's AGGREGATE)

    def aggregate(self, tree: Tree):
        """An aggregate call in SELECT or HAVING -> the variable that stands
        for its value (SPARQL 18.2.4.1: aggregates are computed per group,
        and the expressions around them read their values)."""
        if self.aggregates is None:
            raise self.error("an aggregate stands only in the SELECT clause or HAVING of a "
                             "query", tree)
        separator = None
        if tree.data == "group_concat":  # GROUP_CONCAT([DISTINCT] expr [; SEPARATOR = "text"])
            func, rest = "group_concat", tree.children[1:]
            strings = [c for c in rest if isinstance(c, Token) and c.type == "STRING"]
            separator = _string_value(strings[0], self.file.filename) if strings else None
            rest = [c for c in rest if not (isinstance(c, Token) and c.type in ("SEPARATOR", "STRING"))]
        else:
            func, rest = str(tree.children[0].children[0]).lower(), tree.children[1:]
        distinct = any(isinstance(c, Token) and c.type == "DISTINCT" for c in rest)
        arg = rest[-1]
        if isinstance(arg, Token) and arg.type == "STAR":
            if func != "count":
                raise self.error(f"{func.upper()}(*) is not an aggregate: only COUNT takes *", arg)
            arg_expr = None
        else:
            saved, self.aggregates = self.aggregates, None  # no aggregate inside an aggregate
            try:
                arg_expr = self.expr(arg)
            finally:
                self.aggregates = saved
        agg = ops.Aggregate(func, arg_expr, distinct, separator)
        for var, known in self.aggregates:
            if known == agg:
                return var
        var = Var(f".agg{len(self.aggregates)}")
        self.aggregates.append((var, agg))
        return var

    def grouping(self, body: Tree, pattern, projection, window):
        """(Grouping or None, projection) of a SELECT query: GROUP BY,
        HAVING and aggregates in the SELECT clause (SPARQL's form), or
        C-SPARQL's AGGREGATE clauses."""
        group = _children(body, "group_clause")
        having = _children(body, "having_clause")
        clauses = _children(body, "aggregate_clause")
        if clauses:
            if group or having or self.aggregates:
                raise self.error("C-SPARQL's AGGREGATE clauses and SPARQL's GROUP BY, HAVING and "
                                 "aggregates in SELECT are two forms: use one", clauses[0])
            grouping = self.extensions(clauses, pattern, projection, window)
            self.refuse_timestamp([i.expr for i in projection or () if i.expr is not None]
                                  + list(grouping.having), clauses[0])
            return grouping, projection
        if not (group or having or self.aggregates):
            return None, projection
        # without a window, a grouped query groups the solutions of one instant
        # (cep.compile.windows, instant)
        if projection is None:
            raise self.error("SELECT * cannot be grouped: name the grouped variables and "
                             "aggregates to select", body.children[0])
        bound = ops.variables(pattern)
        keys, computed = [], []
        for node in group[0].children[2:] if group else ():
            if isinstance(node, Tree):  # (expression [AS ?v]): the key is the expression's value
                var, expr = self.group_expr(node, bound, len(computed))
                if isinstance(expr, Var) and var is None:
                    node, var = node.children[0], expr
                else:
                    computed.append((var, expr))
                    keys.append(var)
                    continue
            else:
                var = Var(str(node)[1:])
            if var not in bound:
                raise self.error(f"{var} is grouped by but the pattern never binds it", node)
            if var not in keys:
                keys.append(var)
        conditions = []  # (condition, its HAVING clause)
        for clause in having:
            for e in clause.children[1:]:
                conditions.append((self.expr(e), clause))
        self.refuse_timestamp([i.expr for i in projection if i.expr is not None] + [e for e, _ in conditions]
                              + [a.arg for _, a in self.aggregates if a.arg is not None], body.children[0])
        allowed = set(keys) | {v for v, _ in self.aggregates}
        for item in projection:
            if item.expr is None and item.var not in allowed:
                raise self.error(f"{item.var} is selected but neither grouped by nor aggregated: "
                                 f"add it to GROUP BY, or select an aggregate of it such as "
                                 f"(SAMPLE({item.var}) AS ?x)", body.children[0])
            if item.expr is not None:
                self.check_grouped(item.expr, allowed, body.children[0])
            allowed.add(item.var)
        for e, clause in conditions:
            self.check_grouped(e, allowed, clause)
        return ops.Grouping(tuple(keys), tuple(self.aggregates), (), tuple(e for e, _ in conditions),
                            tuple(computed)), projection

    def group_expr(self, node: Tree, bound, number: int):
        """GROUP BY (expression [AS ?v]) -> (?v, or None for a plain
        variable in parentheses, or a hidden variable, the expression)."""
        saved, self.aggregates = self.aggregates, None  # no aggregate in GROUP BY
        try:
            expr = self.expr(node.children[0])
        finally:
            self.aggregates = saved
        if ops.expr_uses(expr, ops.TIME_FUNCTIONS | {"timestamp"}):
            raise self.error("GROUP BY groups by the values of a solution's variables: the time "
                             "functions (getDURATION(), timestamp(), ...) stand in FILTER and SELECT",
                             node)
        named = [c for c in node.children[1:] if isinstance(c, Token) and c.type == "VAR"]
        if not named:
            return (None, expr) if isinstance(expr, Var) else (Var(f".key{number}"), expr)
        var = Var(str(named[0])[1:])
        if var in bound:
            raise self.error(f"GROUP BY binds {var}, which the pattern already binds: choose a "
                             f"new name", named[0])
        return var, expr

    def refuse_timestamp(self, exprs, node):
        if any(ops.expr_uses(e, {"timestamp"}) for e in exprs):
            raise self.error("timestamp() reads the events of one solution: it stands in the SELECT "
                             "expressions of a query over a window without grouping, not with "
                             "aggregates", node)

    def check_grouped(self, expr, allowed, node):
        stray = [v for v in _vars_in_order(expr) if v not in allowed]
        if stray:
            raise self.error(f"{_var_list([v.name for v in stray])} is used outside an aggregate but "
                             f"not grouped by: group by it or aggregate it", node)

    def extensions(self, clauses, pattern, projection, window):
        """C-SPARQL's AGGREGATE { (?v, FUNC[(?x)], {?g...}) [FILTER] }:
        each solution is extended with the aggregate of its group."""
        if window is None:
            raise self.error("AGGREGATE needs a window over the stream: add FROM STREAM <iri> "
                             "[RANGE 1h STEP 5m] (or [TRIPLES n])", clauses[0])
        bound = ops.variables(pattern)
        out, conditions, new = [], [], set()
        for clause in clauses:
            var_token, func_tree = clause.children[1:3]
            var = Var(str(var_token)[1:])
            if var in bound or var in new:
                raise self.error(f"AGGREGATE binds {var}, which is already bound: choose a new name",
                                 var_token)
            func = str(func_tree.children[0]).lower()
            if func == "sample":
                raise self.error("C-SPARQL's AGGREGATE takes COUNT, SUM, AVG, MIN or MAX", func_tree)
            args = _children(clause, "agg_arg")
            arg = Var(str(args[0].children[0])[1:]) if args else None
            if arg is None and func != "count":
                raise self.error(f"{func.upper()} in AGGREGATE takes the variable to aggregate: "
                                 f"({var}, {func.upper()}(?x), {{?group}})", func_tree)
            keys = tuple(dict.fromkeys(Var(str(t)[1:]) for t in _children(clause, "agg_keys")[0].children))
            for v in ([arg] if arg is not None else []) + list(keys):
                if v not in bound:
                    raise self.error(f"{v} in AGGREGATE is never bound by the pattern", clause)
            conditions += [self.filter(f) for f in _children(clause, "filter")]
            out.append((var, ops.Aggregate(func, arg), keys))
            new.add(var)
        return ops.Grouping(None, (), tuple(out), tuple(conditions))

    def dataset(self, clauses) -> tuple:
        """The background files named by FROM (SPARQL [13] DatasetClause),
        as absolute paths in order. A file must be one FROM may read, and
        exist, when the rules are loaded, so that a wrong name stops the
        run before any event."""
        out = []
        for clause in clauses:
            if clause.children[1].type == "NAMED":
                raise self.error(FROM_NAMED, clause)
            path = self.local_path(clause.children[-1], clause)
            try:
                out.append(str(from_file(path, self.file.directory, self.file.allow_from)))
            except OntologyError as exc:
                raise self.error(exc.message, clause) from None
        return tuple(out)

    def local_path(self, token: Token, clause: Tree) -> str:
        """The path, percent-encoded, of the file a FROM IRI names: a file:
        IRI, or a relative IRI when no BASE is in force, read as a path from
        the rule file's directory."""
        ref = str(token)[1:-1]
        if token.type == "IRIREF" and self.file.base is None and not _SCHEME.match(ref):
            return ref
        iri = self.iri(token)  # BASE and prefixes, as for every IRI
        scheme, authority, path, _, _ = _IRI_PARTS.match(iri).groups()
        if scheme.lower() != "file" or authority not in (None, "", "localhost"):
            raise self.error(LOCAL_ONLY.format(iri=iri), clause)
        return path

    def update(self, body: Tree, tree: Tree, name, options, pos, ontologies) -> ops.Query:
        """DELETE { ... } INSERT { ... } WHERE ...: a rule whose solutions
        change the background graph's instance triples. Its templates
        have no blank nodes (SPARQL forbids them in DELETE; an inserted
        one would be a new node per solution that no later update could
        delete) and name no RDFS schema predicate (the schema is fixed for
        a run: the rules are compiled against it)."""
        from cep.background.rdfs import SCHEMA_PREDICATES

        pattern = self.where(body.children[-1], tree)
        self.template_labels = set()
        parts = {"delete_clause": (), "insert_clause": ()}
        for clause in _children(body, "delete_clause") + _children(body, "insert_clause"):
            keyword = clause.children[0]
            triples = []
            for child in clause.children[1:]:
                triples += self.triples(child, template=True)
            for t in triples:
                for slot in (t.s, t.o):
                    if isinstance(slot, str) and slot.startswith("_:"):
                        raise self.error(f"a blank node cannot be in the {keyword.upper()} template of "
                                         f"an update: use a variable or an IRI", clause)
                if t.p in SCHEMA_PREDICATES:
                    raise self.error(f"an update cannot change the schema ({t.p}): the rules are "
                                     f"compiled against it; updates change instance triples", clause)
            parts[clause.data] = tuple(triples)
        if not parts["delete_clause"] and not parts["insert_clause"]:
            raise self.error("the update has no triple to delete or insert", body)
        return ops.Query(name, "update", pattern, None, False, parts["insert_clause"], options,
                         pos=pos, warnings=tuple(self.warnings), deletions=parts["delete_clause"],
                         ontologies=ontologies)

    def where(self, where: Tree, query_tree: Tree):
        elements = [c for c in where.children if not isinstance(c, Token)]
        pattern = self.elements(elements)
        if pattern is None:  # WHERE {}: one empty solution per instant (ops.Unit)
            pattern = ops.Unit(pos=self.pos(where))
        pattern = self.anchored(pattern)
        query_limits.check_depth(pattern)  # before any stage recurses over it
        self.warn_unbound_conditions(pattern)
        return pattern

    def warn_unbound_conditions(self, pattern):
        """A warning for each FILTER that reads a variable its pattern never
        binds (an unbound variable is an error: the FILTER is then false, or
        BOUND is). A FILTER filters its group; in an optional group it is
        the condition of the optional operator, and sees both operands."""
        scopes = {}  # id of an operator -> the variables its solutions may bind
        stack = [pattern]
        while stack:
            op = stack.pop()
            stack += [c for c in ops.children(op) if not isinstance(c, ops.Triple)]
            if isinstance(op, ops.Filter):
                scope, cond = ops.variables(op.pattern, scopes), op.cond
            elif getattr(op, "cond", None) is not None:
                scope, cond = ops.variables(op.left, scopes) | ops.variables(op.right, scopes), op.cond
            else:
                continue
            for c in ops.conjuncts(cond):
                self.warn_unbound(c, scope, self.condition_nodes.get(id(c), op.pos))

    def warn_unbound(self, cond, scope, node):
        # a hidden variable (Query.join's) stands for one that is unbound
        unbound = [v.name for v in _vars_in_order(cond) if v not in scope and not v.name.startswith("_:")]
        if unbound:
            self.warn(f"{_var_list(unbound)} in the FILTER {'is' if len(unbound) == 1 else 'are'} never "
                      f"bound by the pattern it filters: a FILTER sees the variables of its own group only "
                      f"(in an optional group, also those of the pattern it extends)", node)

    # ---- SELECT clause

    def select_clause(self, clause: Tree, pattern, extended=frozenset()):
        items = [c for c in clause.children if isinstance(c, Tree)]
        distinct = any(isinstance(c, Token) and c.type == "DISTINCT" for c in clause.children)
        if not items:  # SELECT *
            return distinct, None
        bound = ops.variables(pattern) | extended
        defined, seen, out = set(), set(), []
        for item in items:
            var_token = item.children[-1]
            var = Var(str(var_token)[1:])
            if var in seen:
                raise self.error(f"{var} is projected twice", var_token)
            if len(item.children) == 1:
                if var not in bound and var not in defined:  # SPARQL allows it: unbound in every answer
                    self.warn(f"{var} is projected but the pattern never binds it: it is unbound in "
                              f"every answer", var_token)
                out.append(ProjectItem(var))
            else:
                if var in bound:
                    raise self.error(f"(... AS {var}) names a variable that the pattern binds; "
                                     f"choose a new name", var_token)
                expr = self.expr(item.children[0])
                unbound = [v.name for v in _vars_in_order(expr)
                           if v not in bound | defined and not _is_aggregate(v)]
                if unbound:
                    self.warn(f"{_var_list(unbound)} in the expression for {var} "
                              f"{'is' if len(unbound) == 1 else 'are'} never bound by the "
                              f"pattern", item)
                defined.add(var)
                out.append(ProjectItem(var, expr))
            seen.add(var)
        return distinct, tuple(out)

    # ---- graph patterns

    def elements(self, elements):
        """A group's elements (SPARQL 18.2.2.6) -> operator, or None when the
        group is empty (the identity of Join)."""
        return _filtered(*self.unfiltered(elements))

    def unfiltered(self, elements) -> tuple:
        """A group's elements -> (its pattern or None, the conjunction of its
        own FILTERs and WITHINs or None, the position of the first). Only
        the group's own: a nested group's FILTER is inside the pattern, and
        sees only that group's variables (SPARQL 18.2.2.6). A group with
        FILTER [NOT] EXISTS gives its pattern filtered and tested, and no
        condition; so does one whose FILTER has [NOT] EXISTS inside its
        expression (`FILTER(?a = 1 || NOT EXISTS { ... })`, see marked)."""
        pattern, conditions, filter_node, tests, marked = None, [], None, [], []
        # the variables of the patterns so far, for each BIND: kept, or a
        # group of n BINDs took n^2 steps (3,000: minutes); `seen` keeps the
        # patterns alive, so that no id of the memo is another's
        memo, seen = {}, []
        for el in _basic_graph_patterns(elements):
            kind = el.data
            found = _exists_tests(el.children[1]) if kind == "filter" else None
            if found:  # FILTER [NOT] EXISTS { P }, alone or among conditions joined by &&
                tests += [(el, negated, group) for negated, group in found if negated is not None]
                rest, marks = self.marking(lambda: [self.expr(c) for negated, c in found if negated is None])
                if rest:
                    cond = ops.conjunction(rest)
                    (marked.append((cond, marks)) if marks else conditions.append(cond))
                    self.condition_nodes.update((id(c), el) for c in ops.conjuncts(cond))
                filter_node = filter_node or el
            elif kind in ("filter", "within"):
                cond, marks = self.marking(lambda: self.filter(el)) if kind == "filter" else (self.within(el), [])
                (marked.append((cond, marks)) if marks else conditions.append(cond))
                self.condition_nodes.update((id(c), el) for c in ops.conjuncts(cond))
                filter_node = filter_node or el
            elif kind == "bind":
                seen.append(pattern)
                pattern = self.bind(el, pattern, memo)
            elif kind == "minus":  # SPARQL 18.2.2.6: P := Minus(P, the group); its FILTER stays inside it
                keyword, group = el.children
                part = self.group(group)
                if part is None:
                    continue  # MINUS {} removes nothing
                if pattern is None:
                    raise self.error("MINUS needs a pattern before it in its group to remove solutions from",
                                     keyword)
                pattern = ops.Minus(pattern, part, pos=self.pos(keyword))
            elif kind == "optional":
                keyword, group = el.children
                part, cond, _ = self.group_parts(group)
                if part is None:
                    continue  # OPTIONAL {} leaves the group as it is
                if pattern is None:  # { OPTIONAL { P } } is LeftJoin({}, P)
                    pattern = ops.Unit(self.graph, pos=self.pos(keyword))
                pattern = ops.LeftJoin(pattern, part, cond, pos=self.pos(keyword))
            else:
                if kind == "graph":
                    part = self.graph_pattern(el)
                elif kind == "window_graph":
                    part = self.window_graph(el)
                elif kind == "service":
                    part = self.service(el)
                elif kind == "values":
                    part = self.values(el)
                else:
                    part = self.triples_block(el) if kind == "triples_block" else self.chain(el)
                if part is None:
                    continue
                pattern = part if pattern is None else self.join(pattern, part, self.pos(el))
        if (conditions or tests or marked) and pattern is None:  # { FILTER(F) } filters the empty group's solution
            pattern = ops.Unit(self.graph, pos=self.pos(filter_node))
        if not tests and not marked:
            if not conditions:
                return pattern, None, None
            return pattern, ops.conjunction(conditions), self.pos(filter_node)
        if conditions:
            pattern = ops.Filter(ops.conjunction(conditions), pattern, pos=self.pos(filter_node))
        for el, negated, group in tests:
            # (17.4.1.4) P with the solution's bindings: P's solutions compatible with it, P's own
            # FILTER read on their merge; over the events within the solution's interval
            part, cond, _ = self.group_parts(group)
            if part is None:  # EXISTS {} holds for every solution, NOT EXISTS {} for none
                if negated:
                    raise self.error("FILTER NOT EXISTS { } removes every solution: the query can never "
                                     "answer", el)
                continue
            pattern = (ops.NotExists if negated else ops.Exists)(pattern, part, cond, pos=self.pos(el))
        for cond, marks in marked:
            for node, negated, group, var in marks:
                pattern = self.marked(pattern, node, negated, group, var)
            pattern = ops.Filter(cond, pattern, pos=self.pos(filter_node))
        return pattern, None, None

    def marking(self, build):
        """(build(), the [NOT] EXISTS that build() read inside an expression,
        as (node, negated, group, hidden variable)): the expression reads
        each one's outcome from its variable (see marked)."""
        outer, self.marks = self.marks, []
        try:
            return build(), self.marks
        finally:
            self.marks = outer

    def marked(self, pattern, node, negated: bool, group, var: Var):
        """`pattern`'s solutions with `var` bound to the outcome of [NOT]
        EXISTS { group } on each (SPARQL 17.4.1.4): the solutions that
        EXISTS keeps with true, those NOT EXISTS keeps with false (negated:
        the other way round). The test is the operators' own, a lookup over
        the data the group sees (the events within the solution's interval
        and the background), so an expression such as `?a = 1 || NOT
        EXISTS { ... }` reads it as a value."""
        def outcome(b):
            return Const(terms.literal("true" if b else "false", terms.XSD_BOOLEAN))
        pos = self.pos(node)
        part, cond, _ = self.group_parts(group)
        if part is None:  # EXISTS {} holds for every solution
            return ops.Extend(pattern, var, outcome(not negated), pos=pos)
        found = ops.Extend(ops.Exists(pattern, part, cond, pos=pos), var, outcome(not negated), pos=pos)
        missing = ops.Extend(ops.NotExists(pattern, part, cond, pos=pos), var, outcome(negated), pos=pos)
        return ops.Union_(found, missing, pos=pos)

    def anchored(self, pattern):
        """Inline data alone (VALUES, a BIND with no pattern before it: a
        table, ops.is_table) joined with the empty group, so that its rows
        are solutions at each instant at which events arrive, as the empty
        group's one solution is (SPARQL: Join({}, table) is the table)."""
        if not ops.is_table(pattern):
            return pattern
        if isinstance(pattern, (ops.Extend, ops.Filter)):  # evaluated at the instant: NOW() is its time
            return dataclasses.replace(pattern, pattern=self.anchored(pattern.pattern))
        return ops.Join(ops.Unit(self.graph, pos=pattern.pos), pattern, pos=pattern.pos)

    def join(self, left, right, pos: Pos):
        """Join(left, right), where a group that is only FILTERs, { FILTER(F) },
        is Filter(F, {}): joined with a pattern P it keeps P's solutions,
        with their intervals, if F holds on the empty solution, and none
        otherwise (SPARQL's join({}, P) = P, filtered), rather than pair
        each of P's with the solution of every instant. So the variables
        of F are fresh hidden ones, unbound as they are in F's group."""
        for group, other in ((right, left), (left, right)):
            if isinstance(group, ops.Filter) and isinstance(group.pattern, ops.Unit):
                for c in ops.conjuncts(group.cond):
                    self.warn_unbound(c, set(), self.condition_nodes.get(id(c), group.pos))
                return ops.Filter(self.unbound(group.cond), other, pos=group.pos)
        for table, other in ((left, right), (right, left)):
            # a BIND or FILTER of inline data that reads the time (NOW(), getENDTIME()...) is
            # made after the join, where a solution has an interval: the same solutions, as the
            # variables it binds or reads are not the other side's (W3C functions now01:
            # { BIND(NOW() AS ?n) FILTER(...) } joined with a pattern)
            if (isinstance(table, (ops.Extend, ops.Filter)) and ops.is_table(table) and _reads_time(table)
                    and not _table_vars(table) & ops.variables(other)):
                inner = self.join(table.pattern, other, pos) if table is left else self.join(other, table.pattern, pos)
                return dataclasses.replace(table, pattern=inner)
        return ops.Join(left, right, pos=pos)

    def unbound(self, expr, keep=frozenset()):
        """`expr` with each variable (but those in `keep`) a fresh hidden
        one, bound by no pattern."""
        if isinstance(expr, Var):
            return expr if expr in keep else Var(self.fresh_blank())
        if isinstance(expr, Call):
            return Call(expr.name, *[self.unbound(a, keep) for a in expr.args], pos=expr.pos)
        return expr

    def group(self, tree: Tree):
        return _group_filtered(*self.group_parts(tree))

    def group_parts(self, tree: Tree) -> tuple:
        """A group -> (pattern, own condition, its position): see unfiltered."""
        if tree.data == "sub_select_group":
            return self.subquery(tree.children[0]), None, None
        elements = [c for c in tree.children if isinstance(c, Tree)]
        spec = elements.pop() if elements and elements[-1].data == "streaming_window" else None
        outer = self.in_group_window
        self.in_group_window = outer or spec is not None
        try:
            pattern, cond, pos = self.unfiltered(elements)
        finally:
            self.in_group_window = outer
        if spec is None or spec is self.where_spec:  # the WHERE group's window is the query's
            return pattern, cond, pos
        # Streaming SPARQL: a group's window is more special than the stream's, for its patterns
        if not self.streams:
            raise self.error("a window applies to the streams the query reads, and it reads none: add "
                             "FROM STREAM <iri> WINDOW ... before WHERE", spec)
        # { WINDOW ... }, { BIND(e AS ?v) WINDOW ... }: the empty group over that window, with the inline data
        pattern = ops.Unit(self.graph, pos=self.pos(tree)) if pattern is None else self.anchored(pattern)
        window = self.streaming_window(spec, self.graph or self.streams[0][0], self.pos(spec))
        # (its START, RSP-QL's t0, is its own: where its windows start, not when the query is evaluated)
        for found in _children(spec, "report_policy"):
            raise self.error("a report policy belongs to the query's window (the query is evaluated when "
                             "that window is): give it after FROM STREAM ... WINDOW ... or on the WHERE "
                             "group's window, not on a group's own window", found)
        return ops.pattern_window(ops.variables(pattern), pattern, window), cond, pos

    # ---- BIND, VALUES and subqueries (SPARQL 1.1, 18.2.2.6, 10.2, 18.2.1)

    def bind(self, tree: Tree, pattern, memo=None):
        """BIND(expr AS ?v) after the group's elements so far (`pattern`,
        None for none: then it extends the one empty solution, a table);
        `memo` as for ops.variables."""
        _, expr_node, _, var_token = tree.children
        var = Var(str(var_token)[1:])
        if pattern is not None and var in ops.variables(pattern, memo):
            raise self.error(f"BIND(... AS {var}) names a variable already bound before it in its group: "
                             f"choose a new name (SPARQL 1.1, 18.2.1)", var_token)
        expr = self.expr(expr_node)
        base = pattern if pattern is not None else ops.Values((), ((),), pos=self.pos(tree))
        return ops.Extend(base, var, expr, pos=self.pos(tree))

    def values(self, tree: Tree) -> ops.Values:
        """VALUES ?x { ... } or VALUES (?x ?y) { (...) ... }: the rows, UNDEF as None."""
        second = tree.children[1]
        if isinstance(second, Token):  # one variable: each value is a row
            names, rows = [second], [[c] for c in tree.children[2:]]
        else:
            names = second.children
            rows = [row.children for row in _children(tree, "values_row")]
        variables = tuple(Var(str(t)[1:]) for t in names)
        if len(set(variables)) != len(variables):
            raise self.error("VALUES lists a variable twice", second)
        out = []
        for row in rows:
            if len(row) != len(variables):
                node = row[0] if row else tree
                raise self.error(f"a row of VALUES has {len(row)} value{'s' if len(row) != 1 else ''} for "
                                 f"{len(variables)} variable{'s' if len(variables) != 1 else ''}", node)
            out.append(tuple(None if isinstance(c, Token) and c.type == "UNDEF" else self.term(c, False)
                             for c in row))
        return ops.Values(variables, tuple(out), pos=self.pos(tree))

    def service(self, tree: Tree) -> ops.Service:
        """SERVICE [SILENT] <endpoint> { triples OPTIONAL { triples } ...
        FILTER(...) } (SPARQL 1.1 Federated Query): a group sent to the
        endpoint, whose solutions the engine reads from a local view
        (docs/language.md, "SERVICE"). Its triple patterns (IRIs, literals,
        variables, blank nodes) and OPTIONAL groups of triple patterns are
        sent (what one query per join key can refresh); its FILTER is
        applied to the view's solutions, over the group's variables only
        (the others are unbound there: SPARQL evaluates the group on its
        own). Anything else is refused by name."""
        tokens = [c for c in tree.children if isinstance(c, Token)]
        silent = any(t.type == "SILENT" for t in tokens)
        where, group = tokens[-1], tree.children[-1]
        if where.type == "VAR":
            raise self.error(f"SERVICE {where}: an endpoint named by a variable is not supported (the query "
                             f"text alone says which hosts the engine calls): name it, SERVICE <http://...>",
                             where)
        endpoint = self.iri(where)
        if not re.match(r"https?://", endpoint):
            raise self.error(f"SERVICE <{endpoint}>: an endpoint is an http: or https: IRI", where)
        saved, self.graph = self.graph, None
        try:
            pattern, cond, _ = self.group_parts(group)
        finally:
            self.graph = saved
        optional = []
        while isinstance(pattern, ops.LeftJoin) and isinstance(pattern.right, ops.BGP) and pattern.cond is None:
            optional.insert(0, pattern.right.triples)
            pattern = pattern.left
        if not isinstance(pattern, ops.BGP) or any(
                isinstance(x, ops.Path) for t in pattern.triples + sum(optional, ()) for x in (t.s, t.p, t.o)):
            raise self.error("SERVICE { ... } takes triple patterns of IRIs, literals, variables and blank nodes, "
                             "then OPTIONAL groups of such triple patterns, and FILTERs (its view is refreshed one "
                             "join key at a time); property paths, nested groups, UNION, MINUS, BIND, VALUES, "
                             "EXISTS, a FILTER inside its OPTIONAL and triples after an OPTIONAL are not "
                             "supported inside it", group)
        def local(t):
            return dataclasses.replace(t, stream=None)
        triples = tuple(local(t) for t in pattern.triples)
        optional = tuple(tuple(local(t) for t in part) for part in optional)
        own = {v for t in triples + sum(optional, ()) for v in ops.slots_vars(t)}
        variables = tuple(sorted(own, key=lambda v: v.name))
        if cond is not None:  # outside the group's variables a FILTER inside it reads unbound ones
            for c in ops.conjuncts(cond):
                self.warn_unbound(c, own, self.condition_nodes.get(id(c), group))
            cond = self.unbound(cond, keep=own)
        return ops.Service(endpoint, silent, triples, variables, pos=self.pos(tree), optional=optional, filter=cond)

    def with_values(self, pattern, body: Tree):
        """The pattern of a query (or subquery) joined with its trailing
        VALUES, if it has one."""
        for tree in _children(body, "values"):
            pattern = ops.Join(pattern, self.values(tree), pos=self.pos(tree))
        return pattern

    def subquery(self, sub: Tree) -> ops.Project:
        """A SELECT inside WHERE: its pattern, its projection's expressions
        as BINDs, then the projection; its other variables are renamed to
        hidden ones, which nothing outside can name (bottom-up evaluation).
        With GROUP BY, HAVING or aggregates, its SELECT clause is read per
        group instead; ORDER BY, OFFSET and LIMIT order and cut its rows
        (ops.Project.evaluated: per instant, docs/language.md, "Subqueries")."""
        froms = _children(sub, "from_clause")
        if froms:
            raise self.error("FROM names the background of the whole query: write it in the outer query, "
                             "before its WHERE", froms[0])
        clause, where = _children(sub, "select_clause")[0], _children(sub, "where_clause")[0]
        if any(isinstance(c, Token) and c.type in REPORTS for c in clause.children):
            raise self.error("RSTREAM, ISTREAM and DSTREAM belong to the outer query", clause)
        for node in _children(sub, "aggregate_clause"):
            raise self.error(unsupported("AGGREGATE in a subquery inside a pattern"), node)
        pattern = self.with_values(self.where(where, sub), sub)
        saved = self.aggregates
        try:
            distinct, projection, grouping = self.selection(sub, clause, pattern, None)
            if grouping is not None:
                readable = {p.var for p in projection} | set(grouping.keys)
            else:
                readable = ops.variables(pattern) | {p.var for p in projection or ()}
            modifiers = self.modifiers(sub, readable, grouping)
        finally:
            self.aggregates = saved
        grouping = modifiers.pop("grouping", grouping)
        items = ()
        if grouping is not None:
            items, projected = projection, tuple(item.var for item in projection)
        elif projection is None:  # SELECT *: the variables a query can name
            projected = tuple(v for v in sorted(ops.variables(pattern), key=lambda v: v.name)
                              if not v.name.startswith(("_:", ".")))
        else:
            for item in projection:
                if item.expr is not None:
                    pattern = ops.Extend(pattern, item.var, item.expr, pos=self.pos(clause))
            projected = tuple(item.var for item in projection)
        if not (modifiers.get("offset") or modifiers.get("limit") is not None):
            modifiers.pop("order", None)  # an ORDER BY alone changes no set of solutions
        project = ops.Project(pattern, projected, distinct, pos=self.pos(sub), grouping=grouping, items=items,
                              **modifiers)
        hidden = {v: Var(f".sq{self.fresh}.{v.name}") for v in _all_vars(project) if v not in projected}
        self.fresh += 1
        return _renamed(project, hidden)

    def chain(self, tree: Tree):
        items = tree.children
        left = self.group_parts(items[0])
        for i in range(1, len(items), 2):
            keyword, right_tree = items[i], items[i + 1]
            if isinstance(keyword, Tree):  # NOTSEQ "duration": the keyword and its deadline
                deadline = self.deadline(keyword)
                keyword = keyword.children[0]
            if keyword.type in REJECTED_OPS:
                raise self.error(REJECTED_OPS[keyword.type], keyword)
            right = self.group_parts(right_tree)
            if CHAIN_OPS.get(keyword.type) is ops.Union_:  # SPARQL's: {} UNION {P} is Union({}, P)
                if left[0] is None:
                    left = (ops.Unit(self.graph, pos=self.pos(items[0])), None, None)
                if right[0] is None:
                    right = (ops.Unit(self.graph, pos=self.pos(right_tree)), None, None)
                # in a window, a union of inline data is inline data, joined where it is used (RSP-QL:
                # the empty group is one solution over the window's content, not one per instant)
                if not (self.windowed and all(ops.is_table(_filtered(*x)) for x in (left, right))):
                    left, right = ((self.anchored(p), c, at) for p, c, at in (left, right))
            if left[0] is None or right[0] is None:
                empty = items[0] if left[0] is None else right_tree
                raise self.error(f"an empty group cannot be an operand of {keyword.type}", empty)
            op, pos = CHAIN_OPS[keyword.type], self.pos(keyword)
            fields = {"left": _group_filtered(*left), "right": _group_filtered(*right), "pos": pos}
            if op.spec.negated:
                fields["deadline_ms"] = deadline
            side = op.spec.conditioned  # that operand's own FILTER is the operator's condition
            if side is not None:
                fields[side], fields["cond"], _ = left if side == "left" else right
            left = (op(**fields), None, None)
        return _group_filtered(*left)

    def triples_block(self, tree: Tree):
        """A BGP; with property paths of alternatives, joined with their
        unions (SPARQL 18.2.2.4). Its tree holds the triples blocks of a
        group that only FILTERs separate (_basic_graph_patterns)."""
        self.block += 1
        triples = []
        for child in tree.children:
            triples += self.triples(child, template=False)
        return self.bgp(triples)

    def bgp(self, items: list):
        """Triple patterns and the unions of path alternatives -> the BGP of
        the triples joined with the unions, in order."""
        triples = tuple(x for x in items if isinstance(x, ops.Triple))
        out = ops.BGP(triples, pos=triples[0].pos) if triples else None
        for x in items:
            if not isinstance(x, ops.Triple):
                out = x if out is None else ops.Join(out, x, pos=x.pos)
        return out

    def path_patterns(self, s, path, o, pos: Pos) -> list:
        """The patterns of `s path o` by SPARQL's translation of property
        paths (18.2.2.4): ^p swaps the ends, p/q is two triples joined by a
        fresh variable, p|q a union, and a closure (p+ p* p?) stays a path
        triple, which walks the events of each instant, with background
        knowledge with the background graph (docs/language.md, "Property
        paths"); the
        other forms match events like any triple pattern."""
        if isinstance(path, ops.Path) and path.op == "!":
            return [self.negated_property_set(s, path, o, pos)]
        if not isinstance(path, ops.Path) or path.op in ops.PATH_CLOSURES:
            return [ops.Triple(s, path, o, pos=pos, stream=self.graph)]
        if path.op == "^":
            return self.path_patterns(o, path.args[0], s, pos)
        if path.op == "/":
            out, left = [], s
            for i, step in enumerate(path.args):
                right = o if i == len(path.args) - 1 else Var(self.fresh_blank())
                out += self.path_patterns(left, step, right, pos)
                left = right
            return out
        union = None
        for alternative in path.args:
            branch = self.bgp(self.path_patterns(s, alternative, o, pos))
            union = branch if union is None else ops.Union_(union, branch, pos=pos)
        return [union]

    def negated_property_set(self, s, path, o, pos: Pos):
        """`s !(p1|...|^q1|...) o` (SPARQL 18.2.2.4, NPS): a triple whose
        predicate, a fresh variable, is none of the p's, or the reverse
        triple's none of the q's; with both kinds, the union of the two.
        So it matches events and background triples like any triple."""
        forward = [a for a in path.args if not isinstance(a, ops.Path)]
        inverse = [a.args[0] for a in path.args if isinstance(a, ops.Path)]
        sides = ([(s, o, forward)] if forward or not inverse else []) + ([(o, s, inverse)] if inverse else [])
        union = None
        for a, b, excluded in sides:
            predicate = Var(self.fresh_blank())
            part = ops.BGP((ops.Triple(a, predicate, b, pos=pos, stream=self.graph),), pos=pos)
            if excluded:
                cond = ops.conjunction([Call("!=", predicate, Const(iri), pos=pos) for iri in excluded])
                part = ops.Filter(cond, part, pos=pos)
            union = part if union is None else ops.Union_(union, part, pos=pos)
        return union

    def path(self, node):
        """A verb that is a property path -> ops.Path (an IRI stays one)."""
        if isinstance(node, Token):
            return terms.RDF_TYPE if node.type == "A" else terms.iri(self.iri(node))
        parts = [c for c in node.children if not (isinstance(c, Token) and c.type in ("PIPE", "SLASH", "NIL"))]
        if node.data == "path_negated":
            return ops.Path("!", tuple(self.path(c) for c in parts[1:]))
        if node.data in ("path_inv", "path_one_inv"):
            return ops.Path("^", (self.path(parts[1]),))
        if node.data == "path_mod":
            inner = self.path(parts[0])
            if _negates(inner):
                raise self.error(unsupported(f"a negated property set under {parts[1]}"), node)
            return ops.Path(str(parts[1]), (inner,))
        return ops.Path("|" if node.data == "path_alt" else "/", tuple(self.path(c) for c in parts))

    def template(self, tree: Tree) -> tuple:
        labels = {str(t) for t in tree.scan_values(lambda v: isinstance(v, Token)
                                                   and v.type == "BLANK_NODE_LABEL")}
        self.template_labels = labels
        triples = []
        for child in tree.children:
            triples += self.triples(child, template=True)
        if not triples:  # SPARQL allows it: the query answers nothing
            self.warn("the CONSTRUCT template has no triple: the query never answers", tree)
        return tuple(triples)

    def triples(self, tree: Tree, template: bool) -> list:
        """The triples of a TriplesSameSubject ([75])."""
        out = []
        first = tree.children[0]
        subject = self.graph_node(first, template, out)
        if len(tree.children) > 1:
            self.property_list(subject, tree.children[1], template, out, self.pos(first))
        return out

    def property_list(self, subject, tree: Tree, template: bool, out: list, first_pos: Pos):
        children = tree.children
        for i in range(0, len(children), 2):
            verb, objects = children[i], children[i + 1]
            if isinstance(verb, Tree):
                if template:
                    raise self.error("a property path cannot be in a CONSTRUCT template", verb)
                predicate = self.path(verb)
            elif verb.type == "A":
                predicate = terms.RDF_TYPE
            else:
                predicate = self.term(verb, template)
            for j, obj in enumerate(objects.children):
                inner = []
                value = self.graph_node(obj, template, inner)
                if j > 0:
                    pos = self.pos(obj)
                elif i > 0:
                    pos = self.pos(verb)
                else:
                    pos = first_pos
                out += self.path_patterns(subject, predicate, value, pos)
                out += inner

    def graph_node(self, node, template: bool, out: list):
        """A subject or object ([104] GraphNode): a term, or a blank node
        property list or a collection, whose triples go to `out`."""
        if isinstance(node, Tree) and node.data == "bnode_props":
            return self.bnode_props(node, template, out)
        if isinstance(node, Tree) and node.data == "collection":
            return self.collection(node, template, out)
        return self.term(node, template)

    def collection(self, tree: Tree, template: bool, out: list):
        """`( x1 ... xn )`: a fresh blank node b1 heading the RDF list
        b1 rdf:first x1; rdf:rest b2 ... bn rdf:rest rdf:nil (SPARQL
        18.2.2.4, RDF collections)."""
        pos = self.pos(tree)
        nodes = [self.blank(None, template) for _ in tree.children]
        for i, element in enumerate(tree.children):
            inner = []
            value = self.graph_node(element, template, inner)
            rest = nodes[i + 1] if i + 1 < len(nodes) else RDF_NIL
            out.append(ops.Triple(nodes[i], RDF_FIRST, value, pos=pos, stream=self.graph))
            out.append(ops.Triple(nodes[i], RDF_REST, rest, pos=pos, stream=self.graph))
            out += inner
        return nodes[0]

    def bnode_props(self, tree: Tree, template: bool, out: list):
        node = self.blank(None, template)
        self.property_list(node, tree.children[0], template, out, self.pos(tree))
        return node

    def blank(self, token, template: bool):
        """A blank node: in a pattern a non-distinguished variable, in a
        template a blank node label (a fresh one for [])."""
        if template:
            if token is not None:
                return str(token)
            while True:
                label = self.fresh_blank()
                if label not in self.template_labels:
                    return label
        if token is None:
            return Var(self.fresh_blank())
        label = str(token)
        if label in self.blank_vars:
            var, block = self.blank_vars[label]
            if block != self.block:
                raise self.error(f"blank node {label} is used in two different basic graph "
                                 f"patterns; use a variable instead", token)
            return var
        var = Var(self.fresh_blank())
        self.blank_vars[label] = (var, self.block)
        return var

    def term(self, node, template: bool):
        """A variable, or the canonical N-Triples text of a constant."""
        if isinstance(node, Tree):
            return self.literal(node)
        kind = node.type
        if kind == "VAR":
            return Var(str(node)[1:])
        if kind in ("IRIREF", "PNAME", "BARE_NAME"):
            return terms.iri(self.iri(node))
        if kind == "BLANK_NODE_LABEL":
            return self.blank(node, template)
        if kind == "ANON":
            return self.blank(None, template)
        if kind == "NIL":
            return RDF_NIL
        raise AssertionError(f"unexpected term token {node!r}")  # pragma: no cover

    def iri(self, token: Token) -> str:
        kind, text = token.type, str(token)
        if kind == "IRIREF":
            return self.file.iri(token)
        if kind == "BARE_NAME":
            if "" not in self.file.prefixes:
                raise self.error(f"unknown prefix ':' for the bare name {text} (a bare name "
                                 f"stands for :{text}; declare it with PREFIX : <...>)", token)
            return self.file.prefixes[""] + text
        prefix, local = text.split(":", 1)
        if prefix not in self.file.prefixes:
            raise self.error(f"unknown prefix '{prefix}:' in {text} (declare it with "
                             f"PREFIX {prefix}: <...>)", token)
        return self.file.prefixes[prefix] + _LOCAL_ESCAPE_RE.sub(r"\1", local)

    def literal(self, tree: Tree) -> str:
        first = tree.children[0]
        if first.type in ("NUMBER", "SIGNED_NUMBER"):
            return _number(str(first))
        if first.type in ("TRUE", "FALSE"):
            return terms.canonical(terms.literal(str(first).lower(), terms.XSD_BOOLEAN))
        lexical = _string_value(first, self.file.filename)
        if len(tree.children) == 1:
            return terms.literal(lexical)
        second = tree.children[1]
        if second.type == "LANGTAG":
            return terms.literal(lexical, lang=str(second)[1:])
        return terms.canonical(terms.literal(lexical, self.iri(second)))

    # ---- FILTER and WITHIN

    def filter(self, tree: Tree):
        return self.expr(tree.children[1])

    def within(self, tree: Tree):
        string = tree.children[1]
        lexical = self.duration(tree, "WITHIN", "\"PT30M\"", fixed=False)[0]
        limit = Const(terms.canonical(terms.literal(lexical, terms.XSD_DURATION)))
        return Call("<", Call("getDURATION"), limit, pos=self.pos(string))  # binarize checks its length

    def deadline(self, tree: Tree) -> int:
        """NOTSEQ's duration, in ms: without months or years, which have no
        fixed length (a deadline is an instant)."""
        return self.duration(tree, "NOTSEQ", "\"PT10M\"", fixed=True)[1]

    def duration(self, tree: Tree, keyword: str, example: str, fixed: bool) -> tuple:
        """(lexical form, ms) of the positive xsd:duration after WITHIN or
        NOTSEQ (`KEYWORD "lexical"[^^xsd:duration]`); `fixed`: months and
        years, which have no fixed length, are refused."""
        string = tree.children[1]
        lexical = _string_value(string, self.file.filename)
        if len(tree.children) == 3:
            datatype = self.iri(tree.children[2])
            if datatype != terms.XSD_DURATION:
                raise self.error(f"{keyword} takes an xsd:duration, not a literal of type <{datatype}>",
                                 tree.children[2])
        try:
            months, millis = terms.parse_duration(lexical)
        except terms.TermError:
            raise self.error(f"{keyword} needs a duration such as {example} or \"P1D\", "
                             f"not \"{lexical}\"", string) from None
        if fixed and months:
            raise self.error(f"{keyword} needs a duration of fixed length: \"{lexical}\" has months or "
                             f"years (write days instead, such as \"P30D\")", string)
        if months < 0 or millis < 0 or (months, millis) == (0, 0):
            raise self.error(f"{keyword} needs a positive duration, not \"{lexical}\"", string)
        if fixed:
            query_limits.check_duration(millis, f'"{lexical}"', self.pos(string))
        return lexical, millis

    # ---- expressions (SPARQL 17, paper section 3)

    def expr(self, node):
        if isinstance(node, Token):
            if node.type == "VAR":
                return Var(str(node)[1:])
            return Const(terms.iri(self.iri(node)))  # IRIREF or PNAME
        kind = node.data
        if kind == "literal":
            const = Const(self.literal(node))
            self.check_computable(const, node)
            return const
        if kind == "binary":
            left, op, right = node.children
            return Call(OPERATORS[op.type], self.expr(left), self.expr(right), pos=self.pos(node))
        if kind == "unary":
            op, arg = node.children
            if op.type in ("MINUS", "PLUS") and isinstance(arg, Tree) and arg.data == "literal" \
                    and arg.children[0].type == "NUMBER":
                # a signed number is a literal, as in SPARQL's INTEGER_NEGATIVE etc.
                sign = "-" if op.type == "MINUS" else ""
                return Const(_number(sign + str(arg.children[0])))
            return Call(UNARY[op.type], self.expr(arg), pos=self.pos(node))
        if kind == "in_expr":
            left, args = node.children[0], node.children[-1]
            negated = any(isinstance(c, Token) and c.type == "NOT" for c in node.children)
            return Call("notin" if negated else "in", self.expr(left),
                        *[self.expr(a) for a in args.children])
        if kind == "call":
            return self.call(node)
        if kind in ("aggregate", "group_concat"):
            return self.aggregate(node)
        if kind == "exists":
            negated = isinstance(node.children[0], Token) and node.children[0].type == "NOT"
            if self.marks is not None:  # in a FILTER: read from a hidden variable (marked)
                var = Var(self.fresh_blank())
                self.marks.append((node, negated, node.children[-1], var))
                return var
            name = "NOT EXISTS" if negated else "EXISTS"
            raise self.error(unsupported(f"{name} inside an expression") + f": write FILTER {name} {{ ... }} "
                             f"on its own, or as one of the conditions joined by && of a FILTER", node)
        raise AssertionError(f"unexpected expression node {node.data}")  # pragma: no cover

    def constant_iri(self, const: Const):
        """IRI("...") of a simple literal: the IRI resolved against the base
        IRI of the query (SPARQL 17.4.2.8), as an IRI written <...> is;
        None where the text is no IRI reference (the call is then an
        error, as IRI of a text with no base to resolve it against is)."""
        parts = terms.split(const.term)
        if parts[0] != "literal":
            return None
        _, text, datatype, lang = parts
        if datatype != terms.XSD_STRING or lang or re.search(r'[\x00-\x20<>"{}|^`\\]', text):
            return None
        return Const(terms.iri(self.file.resolve(text)))

    def check_computable(self, const: Const, node):
        """A warning for a constant of a type the engine computes with
        (numbers, booleans, xsd:dateTime, xsd:duration) that is no value of
        it (cep.terms.to_prolog keeps it as an opaque literal)."""
        _, lexical, datatype, _ = terms.split(const.term)
        value = terms.to_prolog(const.term)
        if datatype in COMPUTED_TYPES and isinstance(value, pl.Struct) and value.functor == "l":
            self.warn(f"\"{lexical}\" is not a valid xsd:{datatype[len(XSD):]}: comparing or computing with it "
                      f"is an error (a FILTER is then false)", node)

    def timestamp_args(self, name: Token, args: list, args_tree: Tree):
        """C-SPARQL's timestamp(?v [, <stream>]): the stream, when given, is
        one the query reads (FROM [NAMED] STREAM), as GRAPH's is."""
        if args and not isinstance(args[0], Var):
            raise self.error(f"{name} takes a variable", args_tree.children[0])
        if len(args) != 2:
            return
        stream, where = args[1], args_tree.children[1]
        if not (isinstance(stream, Const) and terms.split(stream.term)[0] == "iri"):
            raise self.error(f"{name}'s second argument names a stream: an IRI, as in "
                             f"{name}({args[0]}, <http://example.org/stream>)", where)
        if not self.streams:
            raise self.error(f"{name}({args[0]}, {stream.term}) names a stream, and the query reads none: add "
                             f"FROM [NAMED] STREAM {stream.term} [window]", where)
        if stream.term not in {s for s, _ in self.streams}:
            raise self.error(f"{name}({args[0]}, {stream.term}): the query does not read that stream; its "
                             f"streams are {', '.join(s for s, _ in self.streams)} (FROM [NAMED] STREAM)", where)

    def call(self, tree: Tree):
        name, args_tree = tree.children
        args = [self.expr(a) for a in args_tree.children]
        if name.type == "BARE_NAME":
            entry = BUILTINS.get(str(name).lower())
            if entry is None:
                # perhaps a predicate of the user's --prolog files: the
                # compiler checks it against them (cep/user_prolog.py)
                return Call(ops.USER_PREFIX + str(name), *args, pos=self.pos(name))
            function, least, most = entry
            if function == "timestamp":
                self.timestamp_args(name, args, args_tree)
            if len(args) < least or (most is not None and len(args) > most):
                raise self.error(f"{name} takes {_arity(least, most)}, not {len(args)}", name)
            if function == "bound" and not isinstance(args[0], Var):
                raise self.error(f"{name} takes a variable", args_tree.children[0])
            if function == "iri" and isinstance(args[0], Const):
                return self.constant_iri(args[0]) or Call(function, *args, pos=self.pos(name))
            return Call(function, *args, pos=self.pos(name))
        iri = self.iri(name)
        if iri not in CASTS:
            message = f"unknown function {name}" if name.type == "PNAME" else f"unknown function <{iri}>"
            if iri.startswith(XSD):
                casts = ", ".join("xsd:" + c[len(XSD):] for c in sorted(CASTS, key=_CAST_ORDER.index))
                message += f"; the casts are {casts}"
            self.unknown_function = self.unknown_function or self.error(message, name)
            return Call(iri, *args, pos=self.pos(name))  # never compiled: translate raises
        if len(args) != 1:
            raise self.error(f"the cast {name} takes 1 argument, not {len(args)}", name)
        return Call(ops.CAST_PREFIX + iri, args[0])


def _reads_time(table) -> bool:
    """Whether a chain of BINDs and FILTERs over inline data reads the time."""
    while isinstance(table, (ops.Extend, ops.Filter)):
        if ops.expr_uses(table.expr if isinstance(table, ops.Extend) else table.cond, ops.TIME_FUNCTIONS):
            return True
        table = table.pattern
    return False


def _table_vars(table) -> set:
    """The variables a chain of BINDs and FILTERs binds or reads."""
    out = set()
    while isinstance(table, (ops.Extend, ops.Filter)):
        if isinstance(table, ops.Extend):
            out |= {table.var} | ops.expr_vars(table.expr)
        else:
            out |= ops.expr_vars(table.cond)
        table = table.pattern
    return out


def _solution_triples(op) -> list:
    """The triple patterns whose matches make up a solution of `op`: not
    those of the part of MINUS, [NOT] EXISTS or NOTSEQ that only tests."""
    if isinstance(op, ops.Triple):
        return [op]
    if isinstance(op, ops.Binary) and op.spec.negated:
        return _solution_triples(op.left)
    return [t for c in ops.children(op) for t in _solution_triples(c)]


def _all_vars(node) -> set:
    """Every variable an algebra tree (or expression) names."""
    if isinstance(node, Var):
        return {node}
    if isinstance(node, Call):
        return set().union(*(_all_vars(a) for a in node.args))
    if isinstance(node, tuple):
        return set().union(*(_all_vars(x) for x in node))
    if dataclasses.is_dataclass(node):
        return set().union(*(_all_vars(getattr(node, f.name)) for f in dataclasses.fields(node)
                             if f.init and f.name != "pos"))
    return set()


def _renamed(node, names: dict):
    """An algebra tree (or expression) with its variables renamed."""
    if isinstance(node, Var):
        return names.get(node, node)
    if isinstance(node, Call):
        return Call(node.name, *(_renamed(a, names) for a in node.args), pos=node.pos)
    if isinstance(node, tuple):
        return tuple(_renamed(x, names) for x in node)
    if dataclasses.is_dataclass(node):
        return dataclasses.replace(node, **{f.name: _renamed(getattr(node, f.name), names)
                                            for f in dataclasses.fields(node) if f.init and f.name != "pos"})
    return node


def _negates(path) -> bool:
    """Whether a property path holds a negated property set."""
    return isinstance(path, ops.Path) and (path.op == "!" or any(_negates(a) for a in path.args))


def _basic_graph_patterns(elements) -> list:
    """A group's elements with its triples blocks that only FILTERs (or
    WITHINs) separate made one: a FILTER does not end a basic graph
    pattern (SPARQL 1.1 19.6 [54]; a blank node label may then stand on
    both sides of it). The syntax tree is left as it is."""
    out, block = [], None  # block: the index in out of the open triples block
    for el in elements:
        if el.data == "triples_block" and block is not None:
            first = out[block]
            out[block] = Tree("triples_block", first.children + el.children, meta=first.meta)
        elif el.data == "triples_block":
            block = len(out)
            out.append(el)
        else:
            out.append(el)
            if el.data not in ("filter", "within"):
                block = None
    return out


def _filtered(pattern, cond, pos: Pos):
    """A group's pattern under its own condition (Query.unfiltered)."""
    return pattern if cond is None else ops.Filter(cond, pattern, pos=pos)


def _group_filtered(pattern, cond, pos: Pos):
    """A group's pattern under its own condition; with a window of its own
    (Query.group_parts), inside that window: the FILTER reads the group's
    solutions there (RSP-QL: over the window's content at the evaluation
    time), so that one reading the time (NOW(), getDURATION() ...) reads
    theirs, not those the groups' windows are joined into."""
    if isinstance(pattern, ops.Project) and pattern.window is not None and cond is not None:
        return dataclasses.replace(pattern, pattern=_filtered(pattern.pattern, cond, pos))
    return _filtered(pattern, cond, pos)


def _arity(least: int, most) -> str:
    if most is None:
        return f"at least {least} argument{'s' if least != 1 else ''}"
    if least == most:
        return f"{least} argument{'s' if least != 1 else ''}"
    return f"{least} or {most} arguments" if most == least + 1 else f"{least} to {most} arguments"


def _vars_in_order(expr) -> list:
    out = []
    if isinstance(expr, Var):
        return [expr]
    if isinstance(expr, Call):
        for a in expr.args:
            for v in _vars_in_order(a):
                if v not in out:
                    out.append(v)
    return out


_SPAN = re.compile(r"(\d+)(ms|s|m|h|d)", re.I)
_UNIT_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}
# Streaming SPARQL's Timeunit (section 2)
_STREAMING_UNIT_MS = {"MS": 1, "S": 1000, "MINUTE": 60_000, "HOUR": 3_600_000, "DAY": 86_400_000,
                      "WEEK": 7 * 86_400_000}
REPORTS = ("RSTREAM", "ISTREAM", "DSTREAM")


def _modifier_name(node: Tree) -> str:
    if node.data == "order_clause":
        return "ORDER BY"
    return " and ".join(str(part.children[0]).upper() for part in node.children)


def _is_stream(clause: Tree) -> bool:
    return any(isinstance(c, Token) and c.type == "STREAM" for c in clause.children)


def _is_aggregate(var: Var) -> bool:
    return var.name.startswith(".agg")


def _size(w: ops.Window) -> tuple:
    """What tells two windows apart (RSP-QL's t0 included: windows that
    start elsewhere hold other content)."""
    return w.range_ms, w.step_ms, w.count, w.counts, w.t0_ms


def _where_window(body: Tree):
    """The streaming_window at the end of a query's WHERE group, if its
    WHERE is one group that has one."""
    wheres = _children(body, "where_clause")
    elements = [c for c in wheres[0].children if isinstance(c, Tree)] if wheres else []
    if len(elements) != 1 or elements[0].data != "chain" or len(elements[0].children) != 1:
        return None
    group = elements[0].children[0]
    if not isinstance(group, Tree) or group.data != "group" or not group.children:
        return None
    last = group.children[-1]
    return last if isinstance(last, Tree) and last.data == "streaming_window" else None


def window_clause(froms):
    return next(c for c in froms if _is_stream(c))


def _children(tree: Tree, data: str) -> list:
    return [c for c in tree.children if isinstance(c, Tree) and c.data == data]


def _sub_select(where: Tree):
    """The sub-select if the WHERE clause is exactly `{ SELECT ... }`."""
    elements = [c for c in where.children if not isinstance(c, Token)]
    if len(elements) == 1 and elements[0].data == "chain" and len(elements[0].children) == 1:
        group = elements[0].children[0]
        if group.data == "sub_select_group":
            return group.children[0]
    return None
