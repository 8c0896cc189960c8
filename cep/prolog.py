"""A small model of Prolog terms and the one writer that turns them into text.

Everything the project hands to SWI-Prolog (compiled rules, event batches,
query constants) is built from these classes and written by `write`, so atoms
and strings are always quoted correctly: no query or event text can become
Prolog syntax of its own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Union

_PLAIN_ATOM = re.compile(r"[a-z][a-zA-Z0-9_]*\Z")
_SYMBOL_ATOMS = {"{}", "!", ";"}  # not "[]": SWI 7 reads that as the empty list
# standard operators written infix (always parenthesized, so priorities never matter)
_INFIX = {",", ";", "->", ":", "=", "==", "\\==", "<", ">", "=<", ">=", "=:=", "=\\=",
          "is", "-", "+", "*", "/", "@<", "@>", "/"}


@dataclass(frozen=True)
class Atom:
    name: str


@dataclass(frozen=True)
class Var:
    name: str  # a Prolog variable name: starts with an upper-case letter or _


@dataclass(frozen=True)
class Str:
    """A SWI-Prolog string object ("..." in SWI-7 syntax)."""

    text: str


@dataclass(frozen=True)
class Struct:
    functor: str
    args: tuple

    def __init__(self, functor: str, *args):
        object.__setattr__(self, "functor", functor)
        object.__setattr__(self, "args", tuple(args))


@dataclass(frozen=True)
class PList:
    items: tuple
    tail: object = None  # None for a proper list

    def __init__(self, items, tail=None):
        object.__setattr__(self, "items", tuple(items))
        object.__setattr__(self, "tail", tail)


@dataclass(frozen=True)
class Raw:
    """Text that is already Prolog syntax, made by this module (e.g. cached)."""

    text: str


Term = Union[Atom, Var, Str, Struct, PList, Raw, int, float, Fraction]


@dataclass(frozen=True)
class Clause:
    head: Term
    body: tuple = ()  # conjunction of goals; empty for a fact


@dataclass(frozen=True)
class Directive:
    goal: Term


def quote_atom(name: str) -> str:
    if _PLAIN_ATOM.match(name) or name in _SYMBOL_ATOMS:
        return name
    return "'" + _escape(name, "'") + "'"


def quote_string(text: str) -> str:
    return '"' + _escape(text, '"') + '"'


_NAMED_ESCAPES = {"\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r", "'": "\\'", '"': '\\"'}
# what a quoted atom or string writes escaped: ASCII text only (event
# batches cross as bytes), so also every character from DEL up
_TO_ESCAPE = {"'": re.compile(r"[\\'\x00-\x1f\x7f-\U0010ffff]"), '"': re.compile(r'[\\"\x00-\x1f\x7f-\U0010ffff]')}


def _escape_char(m) -> str:
    ch = m.group()
    if ord(ch) > 0xFFFF:  # SWI-Prolog 9.0 reads no \xD8000\ .. \xDFFFF\, but \U000D8000
        return "\\U%08X" % ord(ch)
    return _NAMED_ESCAPES.get(ch) or "\\x%x\\" % ord(ch)


def _escape(text: str, quote: str) -> str:
    pattern = _TO_ESCAPE[quote]
    if pattern.search(text) is None:  # the common case, and a long term costs one scan
        return text
    return pattern.sub(_escape_char, text)


def write(term: Term) -> str:
    """The Prolog text of a term, in canonical (operator-free) syntax."""
    if isinstance(term, bool):  # bool is an int subclass: refuse silently wrong output
        raise TypeError("booleans have no Prolog form; use Atom('true')")
    if isinstance(term, int):
        return str(term)
    if isinstance(term, float):
        return _write_float(term)
    if isinstance(term, Fraction):
        if term.denominator == 1:
            return str(term.numerator)
        return f"{term.numerator}r{term.denominator}"
    if isinstance(term, Atom):
        return quote_atom(term.name)
    if isinstance(term, Var):
        return term.name
    if isinstance(term, Str):
        return quote_string(term.text)
    if isinstance(term, Raw):
        return term.text
    if isinstance(term, Struct):
        if len(term.args) == 2 and term.functor in _INFIX:
            if term.functor in (",", ";"):
                return _write_chain(term)
            left, right = (write(a) for a in term.args)
            if term.functor == ":":
                return f"{left}:{right}"
            return f"({left} {term.functor} {right})"
        if not term.args:
            return quote_atom(term.functor) + "()"
        return quote_atom(term.functor) + "(" + ",".join(write(a) for a in term.args) + ")"
    if isinstance(term, PList):
        inner = ",".join(write(a) for a in term.items)
        if term.tail is None:
            return "[" + inner + "]"
        return "[" + inner + "|" + write(term.tail) + "]"
    raise TypeError(f"not a Prolog term: {term!r}")


def _write_chain(term: Struct) -> str:
    """(A, B, C) for (A, (B, C)), and (A ; B ; C) alike: both operators
    are right-associative, and a goal list as long as a query's expression
    is large nests this way (expression goals, IN, COALESCE): written in a
    loop, not a recursion as deep as the list is long."""
    op, parts = term.functor, []
    while isinstance(term, Struct) and term.functor == op and len(term.args) == 2:
        parts.append(write(term.args[0]))
        term = term.args[1]
    parts.append(write(term))
    return "(" + (", " if op == "," else " ; ").join(parts) + ")"


def _write_float(x: float) -> str:
    # SWI-Prolog 9 syntax for the special floats (plain `inf` is an atom)
    if x != x:
        return "1.5NaN"
    if x in (float("inf"), float("-inf")):
        return "1.0Inf" if x > 0 else "-1.0Inf"
    text = repr(x)
    if "e" in text and "." not in text.split("e")[0]:
        mant, exp = text.split("e")
        text = mant + ".0e" + exp
    return text


def indicator(name: str, arity: int) -> Struct:
    """The predicate indicator Name/Arity."""
    return Struct("/", Atom(name), arity)


def write_clause(clause: Clause | Directive) -> str:
    if isinstance(clause, Directive):
        return ":- " + write(clause.goal) + "."
    head = write(clause.head)
    if not clause.body:
        return head + "."
    goals = ",\n    ".join(write(g) for g in clause.body)
    return head + " :-\n    " + goals + "."


def write_program(items) -> str:
    return "\n".join(write_clause(c) for c in items) + "\n"
