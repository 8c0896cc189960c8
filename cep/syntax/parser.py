"""The EP-SPARQL parser: the text of a rule file -> its syntax tree.

    parse(text, filename) -> lark.Tree

The grammar is `epsparql.lark` next to this module (SPARQL 1.1 query syntax
extended as in the paper, section 3). The LALR(1) parser is built once per
process; building it takes most of a second, so the built tables are kept
between runs in the user's cache folder (cached_parser), under a name that
holds the hash of the grammar and of what built it. The tree is lark's: rule nodes carry `meta` positions and tokens
carry line and column (both 1-based); punctuation is left out, keywords and
operators are kept. Lark's exceptions are turned into cep.errors.QueryError
here and nowhere else (see cep.syntax.messages for the wording).
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
import tempfile
from bisect import bisect_right
from functools import lru_cache
from pathlib import Path

import lark
from lark import Lark, Token, Tree
from lark.exceptions import UnexpectedInput

from cep.algebra import query_limits
from cep.algebra.ops import Pos
from cep.errors import QueryError
from cep.resources import cache_dir
from cep.syntax import messages

GRAMMAR = Path(__file__).with_name("epsparql.lark")
_SURROGATE = re.compile("[\ud800-\udfff]")
# SPARQL 1.1 19.2: \uXXXX and \UXXXXXXXX stand for their character anywhere
# in the text, before parsing (a UTF-16 pair as in strings: one character)
_CODEPOINT = re.compile(r"\\u([Dd][89ABab][0-9A-Fa-f]{2})\\u([Dd][C-Fc-f][0-9A-Fa-f]{2})"
                        r"|\\u([0-9A-Fa-f]{4})|\\U([0-9A-Fa-f]{8})")


OPTIONS = {"parser": "lalr", "lexer": "contextual", "propagate_positions": True, "maybe_placeholders": False}


@lru_cache(maxsize=1)
def parser() -> Lark:
    return cached_parser(_cache_file())


def cached_parser(path: Path | None) -> Lark:
    """The parser of GRAMMAR, loaded from `path` when a parser saved there
    (by Lark.save) loads, else built and saved there for the next run (a
    folder that cannot be written: built each time). None: built."""
    if path is not None:
        try:
            with open(path, "rb") as handle:
                return Lark.load(handle)
        except Exception:  # noqa: BLE001 - none yet, or a damaged file: built (again) and saved
            pass
    built = Lark(GRAMMAR.read_text(encoding="utf-8"), **OPTIONS)
    if path is not None:
        _save(built, path)
    return built


def _save(built: Lark, path: Path) -> None:
    """Save the parser to `path` whole or not at all (another run may be
    reading it); a folder that cannot be written is left as it is."""
    temporary = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path.parent, prefix=path.name + ".", delete=False) as handle:
            temporary = handle.name
            built.save(handle)
        os.replace(temporary, path)
    except OSError:
        if temporary is not None:
            Path(temporary).unlink(missing_ok=True)


def _cache_file() -> Path | None:
    """The file of the saved parser in the user's cache folder
    (cep.resources.cache_dir), its name the hash of the grammar, the
    options and the versions of lark and Python; None without one."""
    folder = cache_dir()
    if folder is None:
        return None
    key = hashlib.sha256("\n".join([GRAMMAR.read_text(encoding="utf-8"), repr(sorted(OPTIONS.items())),
                                     lark.__version__, sys.version]).encode("utf-8")).hexdigest()
    return folder / f"epsparql-{key[:32]}.lark"


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
    decoded, original = _codepoint_escapes(text, filename)
    try:
        tree = parser().parse(decoded)
    except UnexpectedInput as exc:
        error = messages.syntax_error(exc, decoded, filename, parser())
        if original is not None:
            error = QueryError(error.message, _placed(error.pos, decoded, text, original))
        raise error from None
    if original is not None:
        _place_tree(tree, text, original)
    query_limits.check_nesting(tree, filename)
    return tree


def _codepoint_escapes(text: str, filename: str):
    """(the text with its \\u and \\U escapes replaced by their characters,
    a function from an offset in it to the offset in `text`, or None when
    there is no escape). An escape that is no character (half a surrogate
    pair, beyond U+10FFFF) is a QueryError at its place."""
    parts, starts, last = [], [], 0  # starts: (decoded offset, original start, end) of each escape
    length = 0
    for m in _CODEPOINT.finditer(text):
        high, low, four, eight = m.groups()
        if high is not None:
            code = 0x10000 + ((int(high, 16) - 0xD800) << 10) + int(low, 16) - 0xDC00
        else:
            code = int(four or eight, 16)
            if 0xD800 <= code <= 0xDFFF:
                raise QueryError(f"{m.group()} is half of a UTF-16 surrogate pair, not a character: write the "
                                 f"character itself, or its code point in eight hex digits, as in \\U0001F600",
                                 Pos(filename, *messages.line_col(text, m.start())))
            if code > 0x10FFFF:
                raise QueryError(f"{m.group()} is not a Unicode character: the largest is \\U0010FFFF",
                                 Pos(filename, *messages.line_col(text, m.start())))
        parts.append(text[last:m.start()])
        length += m.start() - last
        starts.append((length, m.start(), m.end()))
        parts.append(chr(code))
        length += 1
        last = m.end()
    if not starts:
        return text, None
    parts.append(text[last:])

    ats = [at for at, _, _ in starts]

    def original(offset: int) -> int:
        i = bisect_right(ats, offset) - 1
        if i < 0:
            return offset
        at, start, end = starts[i]
        return start if offset == at else end + (offset - at - 1)

    return "".join(parts), original


def _placed(pos: Pos, decoded: str, text: str, original) -> Pos:
    """A position in the decoded text as a position in the text written."""
    offset = _line_starts(decoded)[pos.line - 1] + pos.column - 1
    return Pos(pos.file, *_line_col(_line_starts(text), original(offset)))


def _place_tree(tree: Tree, text: str, original):
    """The positions of the tree's tokens and nodes moved to the text
    written (the tree is this parse's own)."""
    lines = _line_starts(text)
    for node in tree.iter_subtrees():
        meta = node.meta
        if not meta.empty:
            meta.line, meta.column = _line_col(lines, original(meta.start_pos))
        for child in node.children:
            if isinstance(child, Token) and child.start_pos is not None:
                child.line, child.column = _line_col(lines, original(child.start_pos))


def _line_starts(text: str) -> list:
    return [0] + [m.end() for m in re.finditer("\n", text)]


def _line_col(starts: list, offset: int) -> tuple:
    """(line, column), 1-based, of an offset, by the offsets where lines start."""
    line = bisect_right(starts, offset)
    return line, offset - starts[line - 1] + 1
