"""FILTER and SELECT expressions, evaluated naively (SPARQL 1.1 section 17,
plus the paper's interval functions of section 4.2).

`value(expr, mu, ts, te)` takes an expression (cep.algebra.ops), a binding
(dict var name -> canonical N-Triples term) and the solution's interval
(epoch ms) and returns a canonical N-Triples term, or raises ExprError where
SPARQL raises an error. `truth` gives True, False or None (error), `holds`
is what FILTER keeps: the effective boolean value is true.

Values inside are Python objects tagged with a kind:

    integer  int          (xsd:integer and the types derived from it)
    decimal  Fraction     (xsd:decimal)
    float    float        (xsd:float: a single-precision value)
    double   float        (xsd:double)
    boolean  bool
    string   str          (simple literals and xsd:string)
    lang     (str, tag)
    dateTime int          (epoch ms)
    duration (months, ms)
    iri, bnode, literal   (an IRI, a blank node, a literal of another or an
                           ill-typed datatype: only identity applies to them)

A call of a user Prolog predicate (`prolog:<name>`, cep/user_prolog.py) is
made through pyswip with the arguments in the documented Prolog form
(docs/language.md, "Prolog predicates in FILTER"), mapped here apart from
the compiler's mapping: the predicate is a black box to both. The user's
files are those of the evaluation under way (USER_PROLOG, set by
cep.reference.evaluate).
"""

from __future__ import annotations

import hashlib
import math
import random
import re
import struct
import uuid
from contextvars import ContextVar
from decimal import Decimal
from fractions import Fraction

from cep import terms
from cep.algebra import ops

XSD = terms.XSD
MONTH_MS = 2_629_746_000  # an average Gregorian month (365.2425 days / 12)

# xsd:integer and its derived types, with their value ranges
INTEGER_TYPES = {
    XSD + "integer": (None, None),
    XSD + "nonPositiveInteger": (None, 0),
    XSD + "negativeInteger": (None, -1),
    XSD + "nonNegativeInteger": (0, None),
    XSD + "positiveInteger": (1, None),
    XSD + "long": (-(2**63), 2**63 - 1),
    XSD + "int": (-(2**31), 2**31 - 1),
    XSD + "short": (-(2**15), 2**15 - 1),
    XSD + "byte": (-(2**7), 2**7 - 1),
    XSD + "unsignedLong": (0, 2**64 - 1),
    XSD + "unsignedInt": (0, 2**32 - 1),
    XSD + "unsignedShort": (0, 2**16 - 1),
    XSD + "unsignedByte": (0, 2**8 - 1),
}
XSD_FLOAT = XSD + "float"
DOUBLE_TYPES = {XSD + "double", XSD_FLOAT}
NUMERIC = ("integer", "decimal", "float", "double")  # in promotion order
COMPARABLE = NUMERIC + ("string", "boolean", "dateTime", "duration")

_INT_RE = re.compile(r"[+-]?\d+\Z")
_DEC_RE = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)\Z")
_DBL_RE = re.compile(r"[+-]?((\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?|INF)\Z|NaN\Z")


class ExprError(Exception):
    """A SPARQL expression error: FILTER drops the solution, (expr AS ?v)
    leaves ?v unbound, COALESCE tries the next argument."""


class Val:
    """A term with its value. `term` is the canonical N-Triples text."""

    __slots__ = ("kind", "v", "term")

    def __init__(self, kind, v, term):
        self.kind, self.v, self.term = kind, v, term

    def __repr__(self):
        return f"Val({self.kind}, {self.v!r})"


# ------------------------------------------------------------ terms <-> values


def parse(term: str) -> Val:
    """The value of a canonical N-Triples term."""
    parts = terms.split(term)
    if parts[0] == "iri":
        return Val("iri", parts[1], term)
    if parts[0] == "bnode":
        return Val("bnode", parts[1], term)
    _, lex, dt, lang = parts
    if lang:
        return Val("lang", (lex, lang), term)
    if dt == terms.XSD_STRING:
        return Val("string", lex, term)
    s = lex.strip()
    if dt in INTEGER_TYPES and _INT_RE.match(s):
        n = int(s)
        low, high = INTEGER_TYPES[dt]
        if (low is None or n >= low) and (high is None or n <= high):
            return Val("integer", n, term)
    elif dt == terms.XSD_DECIMAL and _DEC_RE.match(s):
        return Val("decimal", Fraction(Decimal(s)), term)
    elif dt in DOUBLE_TYPES and _DBL_RE.match(s):
        if dt == XSD_FLOAT:
            return Val("float", single(float(s)), term)
        return Val("double", float(s), term)
    elif dt == terms.XSD_BOOLEAN and s in ("true", "false", "1", "0"):
        return Val("boolean", s in ("true", "1"), term)
    elif dt == terms.XSD_DATETIME:
        try:
            return Val("dateTime", terms.parse_datetime_ms(s), term)
        except terms.TermError:
            pass
    elif dt == terms.XSD_DURATION:
        try:
            return Val("duration", terms.parse_duration(s), term)
        except terms.TermError:
            pass
    return Val("literal", (lex, dt), term)


def make(kind, v) -> Val:
    """A value computed by an expression, with its canonical term."""
    if kind == "integer":
        term = terms.literal(str(v), terms.XSD_INTEGER)
    elif kind == "decimal":
        term = terms.literal(terms.format_decimal(v), terms.XSD_DECIMAL)
    elif kind == "double":
        term = terms.literal(terms.format_double(v), terms.XSD_DOUBLE)
    elif kind == "float":
        term = terms.literal(format_single(v), XSD_FLOAT)
    elif kind == "boolean":
        term = terms.literal("true" if v else "false", terms.XSD_BOOLEAN)
    elif kind == "string":
        term = terms.literal(v)
    elif kind == "lang":
        term = terms.literal(v[0], lang=v[1])
    elif kind == "dateTime":
        term = terms.datetime_literal(v)
    elif kind == "duration":
        term = terms.literal(terms.format_duration(*v), terms.XSD_DURATION)
    elif kind == "iri":
        term = terms.iri(v)
    else:
        raise AssertionError(kind)
    return Val(kind, v, term)


_CANONICAL_KINDS = {terms.XSD_INTEGER: "integer", terms.XSD_DECIMAL: "decimal", terms.XSD_DOUBLE: "double",
                    XSD_FLOAT: "float", terms.XSD_BOOLEAN: "boolean"}


def canonical_value(x: Val) -> Val:
    """A number of xsd:integer, decimal, double or float, or a boolean, as
    the canonical term of its value ("01"^^xsd:integer as "1"); any other
    value as it is (cep_numeric_value/2 in prolog/cep_values_compare.pl)."""
    if x.kind in ("integer", "decimal", "double", "float", "boolean") \
            and _CANONICAL_KINDS.get(terms.split(x.term)[2]) == x.kind:
        return make(x.kind, x.v)
    return x


def single(x) -> float:
    """The xsd:float nearest a number (IEEE 754 single precision, round
    half to even; too large: an infinity)."""
    try:
        return struct.unpack("f", struct.pack("f", float(x)))[0]
    except OverflowError:  # beyond the largest single, after rounding
        return math.inf if x > 0 else -math.inf


def format_single(x: float) -> str:
    """The canonical xsd:float: the fewest digits that read back as the
    same single (of two candidates with that many digits, the nearer),
    written as format_double writes a double."""
    if x != x or x in (math.inf, -math.inf) or x == 0:
        return terms.format_double(x)
    v = Fraction(abs(x))
    exponent = len(str(int(v))) - 1 if v >= 1 else -len(str(int(1 / v)))
    while Fraction(10) ** exponent > v:
        exponent -= 1
    while Fraction(10) ** (exponent + 1) <= v:
        exponent += 1
    for places in range(1, 12):
        unit = Fraction(10) ** (exponent - places + 1)
        low = (v / unit).__floor__()
        fits = [(abs(c * unit - v), c) for c in (low, low + 1) if c > 0 and single(c * unit) == float(v)]
        if fits:
            digits = min(fits)[1]
            text = str(digits).rstrip("0") or "0"
            shift = len(str(digits)) - places  # a carry to one more digit
            return ("-" if x < 0 else "") + text[0] + "." + (text[1:] or "0") + "E" + str(exponent + shift)
    raise AssertionError(x)


def boolean(b: bool) -> Val:
    return make("boolean", bool(b))


def is_literal(x: Val) -> bool:
    return x.kind not in ("iri", "bnode")


def is_string_literal(x: Val) -> bool:
    """A string literal of SPARQL 17.4.3: simple, xsd:string or language-tagged."""
    return x.kind in ("string", "lang")


def whole_decimal(v: Fraction) -> Val:
    """The xsd:decimal CEIL, FLOOR, ROUND and SECONDS return: XSD 1.1's
    canonical form, no point when whole ("2", "13.815"; XPath's fn:ceiling
    ... fn:seconds-from-dateTime, SPARQL 1.1's tests ceil01 ... seconds);
    arithmetic and AVG keep "2.0" (agg-avg-02)."""
    if v.denominator == 1:
        return Val("decimal", v, terms.literal(str(v.numerator), terms.XSD_DECIMAL))
    return make("decimal", v)


def lexical(x: Val) -> str:
    return terms.split(x.term)[1]


# ---------------------------------------------------------- evaluation entry


def value(expr, mu: dict, ts: int, te: int) -> str:
    """The canonical term of `expr` under `mu` and the interval [ts, te]."""
    return _eval(expr, mu, ts, te).term


def truth(expr, mu: dict, ts: int, te: int):
    """True, False, or None for an error: the effective boolean value."""
    try:
        return ebv(_eval(expr, mu, ts, te))
    except ExprError:
        return None


def holds(expr, mu: dict, ts: int, te: int) -> bool:
    """FILTER: kept iff the effective boolean value is true (None = true)."""
    return expr is None or truth(expr, mu, ts, te) is True


def ebv(x: Val) -> bool:
    """Effective boolean value (SPARQL 17.2.2). An ill-typed boolean or
    numeric literal has EBV false, as 17.2.2 says."""
    if x.kind == "boolean":
        return x.v
    if x.kind in ("string", "lang"):
        return len(lexical(x)) > 0
    if x.kind in ("integer", "decimal"):
        return x.v != 0
    if x.kind in ("float", "double"):
        return not (x.v != x.v or x.v == 0)
    if x.kind == "literal":
        dt = x.v[1]
        if dt == terms.XSD_BOOLEAN or dt in INTEGER_TYPES or dt in DOUBLE_TYPES or dt == terms.XSD_DECIMAL:
            return False
    raise ExprError(f"no effective boolean value for {x.term}")


def _eval(e, mu, ts, te) -> Val:
    if isinstance(e, ops.Var):
        if e.name not in mu:
            raise ExprError(f"unbound variable ?{e.name}")
        return parse(mu[e.name])
    if isinstance(e, ops.Const):
        return parse(terms.canonical(e.term))
    if not isinstance(e, ops.Call):
        raise TypeError(f"not an expression: {e!r}")
    name, args = e.name, e.args
    if name in SPECIAL:
        return SPECIAL[name](args, mu, ts, te)
    if name == "timestamp":
        # a defined one was replaced by its value (patterns.with_timestamps)
        raise ExprError(f"timestamp({args[0]}): no stream triple bound {args[0]}")
    if name in ("getDURATION", "getSTARTTIME", "getENDTIME", "now") and ts is None:
        raise ExprError(f"{name}() of a background solution, which has no interval")
    if name == "getDURATION":
        return make("duration", (0, te - ts))
    if name == "getSTARTTIME":
        return make("dateTime", ts)
    if name in ("getENDTIME", "now"):  # NOW(): the end of the solution (docs/language.md)
        return make("dateTime", te)
    if name == "bnode" and args:
        return _bnode(_eval(args[0], mu, ts, te), mu, ts, te)
    vals = [_eval(a, mu, ts, te) for a in args]
    if name.startswith(ops.USER_PREFIX):
        return _user_call(name[len(ops.USER_PREFIX):], vals)
    if name.startswith(ops.CAST_PREFIX):
        target = name[len(ops.CAST_PREFIX):]
        if target.startswith("<") and target.endswith(">"):
            target = target[1:-1]
        if len(vals) != 1:
            raise ExprError("a cast takes one argument")
        return cast(target, vals[0])
    if name not in FUNCTIONS:
        raise ValueError(f"unknown function {name}")
    return FUNCTIONS[name](*vals)


# ---------------------------------------------- functional forms (17.4.1)


def _bound(args, mu, ts, te):
    (arg,) = args
    if not isinstance(arg, ops.Var):
        raise ExprError("BOUND takes a variable")
    return boolean(arg.name in mu)


def _or(args, mu, ts, te):
    values = [truth(a, mu, ts, te) for a in args]
    if True in values:
        return boolean(True)
    if None in values:
        raise ExprError("error in ||")
    return boolean(False)


def _and(args, mu, ts, te):
    values = [truth(a, mu, ts, te) for a in args]
    if False in values:
        return boolean(False)
    if None in values:
        raise ExprError("error in &&")
    return boolean(True)


def _not(args, mu, ts, te):
    (arg,) = args
    t = truth(arg, mu, ts, te)
    if t is None:
        raise ExprError("error in !")
    return boolean(not t)


def _if(args, mu, ts, te):
    cond, then, other = args
    t = truth(cond, mu, ts, te)
    if t is None:
        raise ExprError("error in IF condition")
    return _eval(then if t else other, mu, ts, te)


def _coalesce(args, mu, ts, te):
    for a in args:
        try:
            return _eval(a, mu, ts, te)
        except ExprError:
            continue
    raise ExprError("COALESCE: every argument is an error")


def _in(args, mu, ts, te, negate=False):
    """IN is a disjunction of = tests (17.4.1.9): true if one is true, else
    an error if one is an error, else false. NOT IN negates that."""
    x = _eval(args[0], mu, ts, te)
    error = False
    for a in args[1:]:
        try:
            if equal(x, _eval(a, mu, ts, te)):
                return boolean(not negate)
        except ExprError:
            error = True
    if error:
        raise ExprError("error in IN")
    return boolean(negate)


SPECIAL = {
    "bound": _bound,
    "or": _or,
    "and": _and,
    "not": _not,
    "if": _if,
    "coalesce": _coalesce,
    "in": _in,
    "notin": lambda args, mu, ts, te: _in(args, mu, ts, te, negate=True),
}


# ---------------------------------------------------------- comparisons


def _key(x: Val):
    if x.kind == "duration":
        return x.v[0] * MONTH_MS + x.v[1]
    return x.v


def _promote(a: Val, b: Val):
    """Both numeric values at their common type (integer < decimal < double)."""
    kind = NUMERIC[max(NUMERIC.index(a.kind), NUMERIC.index(b.kind))]
    if kind == "float":
        return kind, single(a.v), single(b.v)
    if kind == "double":
        try:
            return kind, float(a.v), float(b.v)
        except OverflowError:
            raise ExprError("number too large for xsd:double") from None
    return kind, a.v, b.v


def _comparable(a: Val, b: Val) -> bool:
    if a.kind in NUMERIC and b.kind in NUMERIC:
        return True
    return a.kind == b.kind and a.kind in COMPARABLE


def _ordered(a: Val, b: Val):
    if a.kind in NUMERIC:
        _, x, y = _promote(a, b)
        return x, y
    return _key(a), _key(b)


XSD_DATE = XSD + "date"
_DATE_RE = re.compile(r"(-?[0-9]{4,}-[0-9]{2}-[0-9]{2})(Z|[+-][0-9]{2}:[0-9]{2})?\Z")
_FOURTEEN_HOURS_MS = 14 * 3_600_000


def _date(x: Val):
    """An xsd:date as (the epoch ms its day starts, whether it has a zone),
    no zone read as UTC; None for anything else. A date stays a value of
    kind "literal": only the comparisons read it."""
    if x.kind != "literal" or x.v[1] != XSD_DATE:
        return None
    m = _DATE_RE.match(x.v[0].strip())
    if m is None:
        return None
    try:
        return terms.parse_datetime_ms(m.group(1) + "T00:00:00" + (m.group(2) or "")), m.group(2) is not None
    except terms.TermError:
        return None


def _date_keys(a: Val, b: Val):
    """The keys that order two xsd:dates, or None if either is not one.
    XML Schema's partial order (1.0 Part 2, 3.2.7.4): a date without a zone
    stands for any zone from -14:00 to +14:00, so against one with a zone
    it is ordered only when more than 14 hours lie between them; else the
    two are incomparable, an error for every operator."""
    x, y = _date(a), _date(b)
    if x is None or y is None:
        return None
    if x[1] != y[1] and abs(x[0] - y[0]) <= _FOURTEEN_HOURS_MS:
        raise ExprError(f"{a.term} and {b.term} are incomparable (one has a time zone)")
    return x[0], y[0]


def equal(a: Val, b: Val) -> bool:
    """The = operator: by value on comparable pairs, else RDFterm-equal:
    the same term is equal, two different literals are an error unless one
    of them has a language tag (only those are values of rdf:langString),
    anything else is not equal. A date and a dateTime are not equal: both datatypes
    are known, their values disjoint (W3C open-world date-2)."""
    if _comparable(a, b):
        x, y = _ordered(a, b)
        return x == y
    keys = _date_keys(a, b)
    if keys is not None:
        return keys[0] == keys[1]
    if (a.kind == "dateTime" and _date(b) is not None) or (b.kind == "dateTime" and _date(a) is not None):
        return False
    if a.term == b.term:
        return True
    if is_literal(a) and is_literal(b) and "lang" not in (a.kind, b.kind):
        raise ExprError(f"cannot compare {a.term} and {b.term}")
    return False


def _cmp(op):
    def f(a, b):
        if op == "=":
            return boolean(equal(a, b))
        if op == "!=":
            return boolean(not equal(a, b))
        if _comparable(a, b):
            x, y = _ordered(a, b)
        else:
            keys = _date_keys(a, b)
            if keys is None:
                raise ExprError(f"cannot order {a.term} and {b.term}")
            x, y = keys
        return boolean({"<": x < y, ">": x > y, "<=": x <= y, ">=": x >= y}[op])

    return f


# ----------------------------------------------------------- arithmetic

DIVISION_SCALE = 10**terms.DECIMAL_DIVISION_DIGITS


def round_half_away(q: Fraction, scale: int = DIVISION_SCALE) -> Fraction:
    n = abs(q) * scale
    r = math.floor(n + Fraction(1, 2))
    return Fraction(r if q >= 0 else -r, scale)


def _double_div(x: float, y: float) -> float:
    if y == 0:
        if x != x or x == 0:
            return math.nan
        return math.copysign(math.inf, x) * math.copysign(1.0, y)
    return x / y


def arith(op: str, a: Val, b: Val) -> Val:
    if a.kind in NUMERIC and b.kind in NUMERIC:
        kind, x, y = _promote(a, b)
        if op == "/":
            if kind == "float":
                return make("float", single(_double_div(x, y)))
            if kind == "double":
                return make("double", _double_div(x, y))
            if y == 0:
                raise ExprError("division by zero")
            return make("decimal", round_half_away(Fraction(x) / Fraction(y)))
        result = {"+": lambda: x + y, "-": lambda: x - y, "*": lambda: x * y}[op]()
        return make(kind, single(result) if kind == "float" else result)
    # dateTimes and durations
    ka, kb = a.kind, b.kind
    if op == "-" and ka == kb == "dateTime":
        return make("duration", (0, a.v - b.v))
    if op in "+-" and ka == kb == "duration":
        sign = 1 if op == "+" else -1
        return make("duration", (a.v[0] + sign * b.v[0], a.v[1] + sign * b.v[1]))
    if op in "+-" and ka == "dateTime" and kb == "duration" and b.v[0] == 0:
        return make("dateTime", a.v + (b.v[1] if op == "+" else -b.v[1]))
    if op == "+" and ka == "duration" and kb == "dateTime" and a.v[0] == 0:
        return make("dateTime", b.v + a.v[1])
    raise ExprError(f"cannot compute {a.term} {op} {b.term}")


def _unary(op):
    def f(a):
        if a.kind not in NUMERIC:
            raise ExprError(f"{op} of a non-number {a.term}")
        return make(a.kind, -a.v if op == "neg" else a.v)

    return f


def _numeric_fn(name):
    def f(a):
        if a.kind not in NUMERIC:
            raise ExprError(f"{name} of a non-number {a.term}")
        x = a.v
        if name == "abs":
            return make(a.kind, abs(x))
        if a.kind == "integer":
            return make("integer", x)
        if a.kind in ("float", "double") and (math.isnan(x) or math.isinf(x)):
            return make(a.kind, x)
        if name == "ceil":
            r = math.ceil(x)
        elif name == "floor":
            r = math.floor(x)
        else:  # fn:round: the nearest, halves towards positive infinity
            r = math.floor(x)
            if x - r >= Fraction(1, 2):
                r += 1
        if a.kind in ("float", "double"):
            return make(a.kind, math.copysign(float(r), x) if r == 0 else float(r))
        return whole_decimal(Fraction(r))

    return f


# ------------------------------------------------------------- term functions


def _str(a):
    if a.kind == "bnode":
        raise ExprError("STR of a blank node")
    if a.kind == "iri":
        return make("string", a.v)
    return make("string", lexical(a))


def _lang(a):
    if not is_literal(a):
        raise ExprError("LANG of a non-literal")
    return make("string", a.v[1] if a.kind == "lang" else "")


def _datatype(a):
    if not is_literal(a):
        raise ExprError("DATATYPE of a non-literal")
    return make("iri", terms.split(a.term)[2])


def _lang_matches(tag, rng):
    if tag.kind != "string" or rng.kind != "string":
        raise ExprError("langMatches takes simple literals")
    t, r = tag.v.lower(), rng.v.lower()
    if r == "*":
        return boolean(t != "")
    return boolean(t == r or t.startswith(r + "-"))


_REGEX_FLAGS = {"i": re.IGNORECASE, "s": re.DOTALL, "m": re.MULTILINE, "x": re.VERBOSE}


def _regex(text, pattern, flags=None):
    if not is_string_literal(text) or pattern.kind != "string":
        raise ExprError("REGEX takes a string literal and a simple literal pattern")
    bits = 0
    regex = pattern.v
    if flags is not None:
        if flags.kind != "string":
            raise ExprError("REGEX flags must be a simple literal")
        for ch in flags.v:
            if ch == "q":  # XPath 3.0: the pattern is a plain string
                regex = re.escape(pattern.v)
            elif ch in _REGEX_FLAGS:
                bits |= _REGEX_FLAGS[ch]
            else:
                raise ExprError(f"unknown REGEX flag {ch!r}")
    try:
        return boolean(re.search(regex, lexical(text), bits) is not None)
    except re.error as exc:
        raise ExprError(f"bad regular expression: {exc}") from None


def _string_arg(a, fn):
    if not is_string_literal(a):
        raise ExprError(f"{fn} takes a string literal, not {a.term}")
    return lexical(a)


def _like(a, text):
    """A result string with the language tag of argument `a` (17.4.3)."""
    if a.kind == "lang":
        return make("lang", (text, a.v[1]))
    return make("string", text)


def _compatible_args(a, b, fn):
    """Argument compatibility of 17.4.3.1.2; returns the two lexical forms."""
    x, y = _string_arg(a, fn), _string_arg(b, fn)
    if b.kind == "lang" and (a.kind != "lang" or a.v[1] != b.v[1]):
        raise ExprError(f"{fn}: incompatible arguments {a.term}, {b.term}")
    return x, y


def _string_test(fn, test):
    def f(a, b):
        x, y = _compatible_args(a, b, fn)
        return boolean(test(x, y))

    return f


def _concat(*args):
    texts = [_string_arg(a, "CONCAT") for a in args]
    langs = {a.v[1] if a.kind == "lang" else None for a in args}
    text = "".join(texts)
    if len(langs) == 1 and None not in langs:
        return make("lang", (text, langs.pop()))
    return make("string", text)


def _integer_arg(a, fn):
    if a.kind != "integer":
        raise ExprError(f"{fn} takes an xsd:integer, not {a.term}")
    return a.v


def _substr(source, start, length=None):
    """SUBSTR (17.4.3.3, fn:substring): the characters at positions p
    (from 1, by code point) with start <= p < start + length."""
    text = _string_arg(source, "SUBSTR")
    first = _integer_arg(start, "SUBSTR")
    end = None if length is None else first + _integer_arg(length, "SUBSTR")
    kept = [c for p, c in enumerate(text, 1) if p >= first and (end is None or p < end)]
    return _like(source, "".join(kept))


def _str_before_after(fn, after):
    def f(a, b):
        x, y = _compatible_args(a, b, fn)
        i = x.find(y)
        if i < 0:
            return make("string", "")  # no match: the empty simple literal (17.4.3.7-8)
        return _like(a, x[i + len(y):] if after else x[:i])

    return f


_UNRESERVED = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")


def _encode_for_uri(a):
    text = _string_arg(a, "ENCODE_FOR_URI")
    return make("string", "".join(c if c in _UNRESERVED else "".join(f"%{b:02X}" for b in c.encode("utf-8"))
                                  for c in text))


def _xpath_regex(pattern: str, flags: str):
    bits, regex = 0, pattern
    for ch in flags:
        if ch == "q":
            regex = re.escape(pattern)
        elif ch in _REGEX_FLAGS:
            bits |= _REGEX_FLAGS[ch]
        else:
            raise ExprError(f"unknown flag {ch!r}")
    try:
        return re.compile(regex, bits)
    except re.error as exc:
        raise ExprError(f"bad regular expression: {exc}") from None


def _replacement(text: str, groups: int) -> list:
    r"""The parts of fn:replace's replacement string: ("text", s) or
    ("group", n). After $ the first digit counts, and each next one while
    the number is at most `groups`; \$ and \\ are $ and \; any other $ or
    \ is an error."""
    parts, i = [], 0
    while i < len(text):
        c = text[i]
        if c == "\\":
            if i + 1 == len(text) or text[i + 1] not in "$\\":
                raise ExprError("REPLACE: a \\ in the replacement that escapes nothing")
            parts.append(("text", text[i + 1]))
            i += 2
        elif c == "$":
            if i + 1 == len(text) or not text[i + 1].isdigit():
                raise ExprError("REPLACE: a $ in the replacement without a group number")
            n, i = int(text[i + 1]), i + 2
            while i < len(text) and text[i].isdigit() and n * 10 + int(text[i]) <= groups:
                n, i = n * 10 + int(text[i]), i + 1
            parts.append(("group", n))
        else:
            parts.append(("text", c))
            i += 1
    return parts


def _replace(text, pattern, replacement, flags=None):
    """REPLACE (17.4.3.15, fn:replace); a pattern that matches the empty
    string is an error."""
    source = _string_arg(text, "REPLACE")
    for x in (pattern, replacement) + ((flags,) if flags is not None else ()):
        if x.kind != "string":
            raise ExprError("REPLACE takes simple literals for pattern, replacement and flags")
    regex = _xpath_regex(pattern.v, flags.v if flags is not None else "")
    if regex.search("") is not None:
        raise ExprError("REPLACE: the pattern matches the empty string")
    parts = _replacement(replacement.v, regex.groups)

    def substitute(m):
        return "".join(v if kind == "text" else (m.group(v) or "") if v <= regex.groups else ""
                       for kind, v in parts)

    return _like(text, regex.sub(substitute, source))


_LANGTAG = re.compile(r"[a-zA-Z]+(-[a-zA-Z0-9]+)*\Z")


def _strlang(a, tag):
    if a.kind != "string" or tag.kind != "string" or not _LANGTAG.match(tag.v):
        raise ExprError("STRLANG takes a simple literal and a language tag")
    return make("lang", (a.v, tag.v.lower()))


def _strdt(a, datatype):
    if a.kind != "string" or datatype.kind != "iri":
        raise ExprError("STRDT takes a simple literal and an IRI")
    return parse(terms.canonical(terms.literal(a.v, datatype.v)))


def _iri(a):
    if a.kind == "iri":
        return a
    if a.kind != "string" or not re.match(r"[A-Za-z][A-Za-z0-9+.-]*:", a.v) \
            or re.search(r'[\x00-\x20<>"{}|^`\\]', a.v):
        raise ExprError("IRI takes an IRI or a simple literal that is an absolute IRI (there is no base IRI)")
    return make("iri", a.v)


def _hash(algorithm):
    def f(a):
        if a.kind != "string":
            raise ExprError(f"{algorithm.upper()} takes a simple literal or xsd:string")
        return make("string", hashlib.new(algorithm, a.v.encode("utf-8")).hexdigest())

    return f


def _date_part(part):
    def f(a):
        if a.kind != "dateTime":
            raise ExprError(f"{part.upper()} takes an xsd:dateTime")
        zone = terms.datetime_zone(lexical(a))  # the fields are read as written, in their zone
        days, ms = divmod(a.v + (zone[1] * 60_000 if zone else 0), 86_400_000)
        y, mo, d = terms._civil_from_days(days)
        values = {"year": y, "month": mo, "day": d, "hours": ms // 3_600_000, "minutes": ms // 60_000 % 60}
        if part == "seconds":
            return whole_decimal(Fraction(ms % 60_000, 1000))
        if part == "timezone":
            if zone is None:
                raise ExprError("TIMEZONE of a dateTime without a time zone")
            return parse(terms.literal(terms.format_duration(0, zone[1] * 60_000), XSD + "dayTimeDuration"))
        if part == "tz":
            return make("string", zone[0] if zone else "")
        return make("integer", values[part])

    return f


# the solution a SELECT's expressions extend (cep.reference._project): the
# one BNODE(str) depends on, not the values its earlier items bound
SOLUTION = ContextVar("cep_reference_solution", default=None)


def _bnode(a, mu, ts, te):
    """BNODE(str): one node per string and solution."""
    if a.kind != "string":
        raise ExprError("BNODE takes a simple literal")
    solution = SOLUTION.get()
    key = repr((a.v, sorted((mu if solution is None else solution).items()), ts, te)).encode("utf-8")
    return Val("bnode", None, "_:b" + hashlib.sha1(key).hexdigest()[:24])


def _uuid4() -> str:
    return str(uuid.uuid4())


FUNCTIONS = {
    "=": _cmp("="), "!=": _cmp("!="), "<": _cmp("<"), ">": _cmp(">"),
    "<=": _cmp("<="), ">=": _cmp(">="),
    "+": lambda a, b: arith("+", a, b),
    "-": lambda a, b: arith("-", a, b),
    "*": lambda a, b: arith("*", a, b),
    "/": lambda a, b: arith("/", a, b),
    "neg": _unary("neg"), "pos": _unary("pos"),
    "str": _str, "lang": _lang, "datatype": _datatype,
    "isIRI": lambda a: boolean(a.kind == "iri"),
    "isBlank": lambda a: boolean(a.kind == "bnode"),
    "isLiteral": lambda a: boolean(is_literal(a)),
    "isNumeric": lambda a: boolean(a.kind in NUMERIC),
    "sameTerm": lambda a, b: boolean(a.term == b.term),
    "langMatches": _lang_matches,
    "regex": _regex,
    "strlen": lambda a: make("integer", len(_string_arg(a, "STRLEN"))),
    "ucase": lambda a: _like(a, _string_arg(a, "UCASE").upper()),
    "lcase": lambda a: _like(a, _string_arg(a, "LCASE").lower()),
    "contains": _string_test("CONTAINS", lambda x, y: y in x),
    "strstarts": _string_test("STRSTARTS", str.startswith),
    "strends": _string_test("STRENDS", str.endswith),
    "concat": _concat,
    "abs": _numeric_fn("abs"), "ceil": _numeric_fn("ceil"),
    "floor": _numeric_fn("floor"), "round": _numeric_fn("round"),
    "substr": _substr,
    "strbefore": _str_before_after("STRBEFORE", after=False),
    "strafter": _str_before_after("STRAFTER", after=True),
    "encode_for_uri": _encode_for_uri,
    "replace": _replace,
    "strlang": _strlang, "strdt": _strdt, "iri": _iri,
    "md5": _hash("md5"), "sha1": _hash("sha1"), "sha256": _hash("sha256"),
    "sha384": _hash("sha384"), "sha512": _hash("sha512"),
    "year": _date_part("year"), "month": _date_part("month"), "day": _date_part("day"),
    "hours": _date_part("hours"), "minutes": _date_part("minutes"), "seconds": _date_part("seconds"),
    "timezone": _date_part("timezone"), "tz": _date_part("tz"),
    "rand": lambda: make("double", random.random()),
    "uuid": lambda: make("iri", "urn:uuid:" + _uuid4()),
    "struuid": lambda: make("string", _uuid4()),
    "bnode": lambda: Val("bnode", None, "_:b" + uuid.uuid4().hex),
}


# ------------------------------------------------- user Prolog predicates

USER_PROLOG = ContextVar("cep_reference_user_prolog", default=None)  # a cep.user_prolog.UserProlog


def _user_call(name: str, vals) -> Val:
    """name/(n+1) of the user's files is a function whose value is its last
    argument after the first solution; else name/n is a test. An exception,
    a failed function or a result with no RDF form is an error."""
    from cep import prolog as pl
    from cep.runtime.session import session

    user = USER_PROLOG.get()
    kind = user.kind(name, len(vals)) if user is not None else None
    if kind is None:
        raise ValueError(f"unknown function {name}/{len(vals)}")
    args = [_prolog_arg(x) for x in vals]
    if kind == "function":
        goal = pl.write(pl.Struct(":", pl.Atom(user.module), pl.Struct(name, *args, pl.Var("R"))))
        text = (f"catch((once({goal}) -> (integer(R) -> K = integer, number_string(R, T) ; "
                "float(R) -> K = float, T = R ; string(R) -> K = string, T = R ; "
                "atom(R) -> K = atom, atom_string(R, T) ; K = other) ; K = failed), _, K = raised)")
    else:
        head = pl.Struct(name, *args) if args else pl.Atom(name)
        goal = pl.write(pl.Struct(":", pl.Atom(user.module), head))
        text = f"catch(({goal} -> K = true ; K = false), _, K = raised)"
    (answer,) = list(session().prolog.query(text, maxresult=1))
    k = answer["K"]
    if k in ("true", "false"):
        return boolean(k == "true")
    if k == "integer":
        return make("integer", int(answer["T"]))
    if k == "float":
        return make("double", answer["T"])
    if k == "string":
        return make("string", answer["T"].decode("utf-8"))
    if k == "atom":
        value = answer["T"].decode("utf-8")
        return boolean(value == "true") if value in ("true", "false") else make("iri", value)
    raise ExprError(f"the Prolog predicate {name} gave no value ({k})")


def _prolog_arg(x: Val):
    """The Prolog form of a value as a user predicate's argument."""
    from cep import prolog as pl

    if x.kind == "iri":
        return pl.Atom(x.v)
    if x.kind == "bnode":
        return pl.Struct("bnode", pl.Atom(x.v))
    if x.kind == "string":
        return pl.Str(x.v)
    if x.kind == "lang":
        return pl.Struct("lang", pl.Str(x.v[0]), pl.Atom(x.v[1]))
    if x.kind == "integer":
        return int(x.v)
    if x.kind == "boolean":
        return pl.Atom("true" if x.v else "false")
    if x.kind in ("decimal", "float", "double"):
        try:
            f = float(x.v)
        except OverflowError:
            raise ExprError(f"{x.term} is beyond the floats") from None
        return f
    datatype = {"dateTime": terms.XSD_DATETIME, "duration": terms.XSD_DURATION}.get(x.kind)
    if datatype is None:  # a literal of another datatype, or ill-typed
        datatype = x.v[1]
    return pl.Struct("lit", pl.Str(lexical(x)), pl.Atom(datatype))


# ------------------------------------------------------------- casts (17.5)


def cast(target: str, a: Val) -> Val:
    """XSD constructor functions, following the cast table of SPARQL 17.5."""
    if a.kind == "bnode":
        raise ExprError("cannot cast a blank node")
    if target == terms.XSD_STRING:
        return make("string", a.v if a.kind == "iri" else lexical(canonical_value(a)))
    if a.kind == "iri":
        raise ExprError(f"cannot cast an IRI to <{target}>")
    from_string = a.kind == "string"
    text = lexical(a).strip() if from_string else None
    if target in INTEGER_TYPES:
        if from_string:
            if not _INT_RE.match(text):
                raise ExprError(f"not an integer: {text!r}")
            n = int(text)
        elif a.kind in ("integer", "decimal"):
            n = math.trunc(a.v)
        elif a.kind in ("float", "double"):
            if math.isnan(a.v) or math.isinf(a.v):
                raise ExprError("cannot cast NaN or INF to an integer")
            n = math.trunc(a.v)
        elif a.kind == "boolean":
            n = int(a.v)
        else:
            raise ExprError(f"cannot cast {a.term} to <{target}>")
        low, high = INTEGER_TYPES[target]
        if (low is not None and n < low) or (high is not None and n > high):
            raise ExprError(f"{n} is out of the range of <{target}>")
        if target == terms.XSD_INTEGER:
            return make("integer", n)
        return Val("integer", n, terms.literal(str(n), target))
    if target == terms.XSD_DECIMAL:
        if from_string:
            if not _DEC_RE.match(text):
                raise ExprError(f"not a decimal: {text!r}")
            return make("decimal", Fraction(Decimal(text)))
        if a.kind in ("integer", "decimal"):
            return make("decimal", Fraction(a.v))
        if a.kind in ("float", "double"):
            if math.isnan(a.v) or math.isinf(a.v):
                raise ExprError("cannot cast NaN or INF to a decimal")
            return make("decimal", Fraction(Decimal(repr(a.v))))
        if a.kind == "boolean":
            return make("decimal", Fraction(int(a.v)))
        raise ExprError(f"cannot cast {a.term} to xsd:decimal")
    if target in DOUBLE_TYPES:
        kind = "float" if target == XSD_FLOAT else "double"
        if from_string:
            if not _DBL_RE.match(text):
                raise ExprError(f"not a double: {text!r}")
            return make(kind, single(float(text)) if kind == "float" else float(text))
        if a.kind in NUMERIC or a.kind == "boolean":
            try:
                f = float(a.v)
            except OverflowError:
                if kind == "double":
                    raise ExprError("number too large for xsd:double") from None
                f = math.copysign(math.inf, a.v)
            return make(kind, single(f) if kind == "float" else f)
        raise ExprError(f"cannot cast {a.term} to <{target}>")
    if target == terms.XSD_BOOLEAN:
        if from_string:
            if text not in ("true", "false", "1", "0"):
                raise ExprError(f"not a boolean: {text!r}")
            return make("boolean", text in ("true", "1"))
        if a.kind == "boolean":
            return make("boolean", a.v)
        if a.kind in NUMERIC:
            return make("boolean", not (a.v != a.v or a.v == 0))
        raise ExprError(f"cannot cast {a.term} to xsd:boolean")
    if target == terms.XSD_DATETIME:
        if from_string:
            try:
                return make("dateTime", terms.parse_datetime_ms(text))
            except terms.TermError:
                raise ExprError(f"not a dateTime: {text!r}") from None
        if a.kind == "dateTime":
            return a
        raise ExprError(f"cannot cast {a.term} to xsd:dateTime")
    if target == terms.XSD_DURATION:
        if from_string:
            try:
                return make("duration", terms.parse_duration(text))
            except terms.TermError:
                raise ExprError(f"not a duration: {text!r}") from None
        if a.kind == "duration":
            return a
        raise ExprError(f"cannot cast {a.term} to xsd:duration")
    raise ExprError(f"no cast to <{target}>")
