"""The EP-SPARQL parser: the text of a rule file -> its syntax tree.

    parse(text, filename) -> lark.Tree

The grammar is `epsparql.lark` next to this module (SPARQL 1.1 query syntax
extended as in the paper, section 3). The LALR(1) parser is built once and
cached. The tree is lark's: rule nodes carry `meta` positions and tokens
carry line and column (both 1-based); punctuation is left out, keywords and
operators are kept. Lark's exceptions are turned into cep.errors.QueryError
here and nowhere else (see cep.syntax.messages for the wording).
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from lark import Lark, Tree
from lark.exceptions import UnexpectedInput

from cep.algebra import query_limits
from cep.algebra.ops import Pos
from cep.errors import QueryError
from cep.syntax import messages

GRAMMAR = Path(__file__).with_name("epsparql.lark")
_SURROGATE = re.compile("[\ud800-\udfff]")


@lru_cache(maxsize=1)
def parser() -> Lark:
    return Lark(
        GRAMMAR.read_text(encoding="utf-8"),
        parser="lalr",
        lexer="contextual",
        propagate_positions=True,
        maybe_placeholders=False,
    )


def parse(text: str, filename: str = "<string>") -> Tree:
    """The syntax tree of a rule file; raises QueryError on a syntax error,
    and on a file too large or nested too deeply (cep.algebra.query_limits).
    A byte order mark at the start is not part of the text."""
    text = text.removeprefix("\ufeff")
    query_limits.check_size(len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass")), filename)
    surrogate = _SURROGATE.search(text)
    if surrogate:  # only text given as a str can hold one: a file is UTF-8
        raise QueryError(f"U+{ord(surrogate.group()):04X} is a lone surrogate, not a character",
                         Pos(filename, *messages.line_col(text, surrogate.start())))
    try:
        tree = parser().parse(text)
    except UnexpectedInput as exc:
        raise messages.syntax_error(exc, text, filename, parser()) from None
    query_limits.check_nesting(tree, filename)
    return tree
