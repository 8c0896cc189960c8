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

from functools import lru_cache
from pathlib import Path

from lark import Lark, Tree
from lark.exceptions import UnexpectedInput

from cep.syntax import messages

GRAMMAR = Path(__file__).with_name("epsparql.lark")


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
    """The syntax tree of a rule file; raises QueryError on a syntax error."""
    try:
        return parser().parse(text)
    except UnexpectedInput as exc:
        raise messages.syntax_error(exc, text, filename, parser()) from None
