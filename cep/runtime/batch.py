"""Event batches as the text the runtime decodes (prolog/cep_fast.c): one
event a line, `S TAB P TAB O TAB Start TAB End`, ordered by End, where a term
is `I<iri>` (an IRI, taken verbatim as an atom), `i<digits>` (an integer) or
`P<Prolog text>` (any other term, written by the project's one quoting
writer, cep.prolog). No event data is ever read as Prolog code: IRIs are
not parsed at all, and other terms are written with correct quoting.

Columns of a table are converted with vectorized Arrow string kernels for
the common shapes (IRIs, integers), term by term (cached) for the rest.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from cep import terms

_INT_LITERAL = r'^"(-?[0-9]{1,18})"\^\^<http://www\.w3\.org/2001/XMLSchema#integer>$'
_IRI = r"^<([^<>\"{}|^`\\\x00-\x20]*)>$"


def field(nt: str) -> str:
    """The batch field of one canonical N-Triples term."""
    if nt.startswith("<") and "\t" not in nt and "\n" not in nt:
        return "I" + nt[1:-1]
    return "P" + terms.prolog_text(nt)


def column_text(column: pa.ChunkedArray | pa.Array) -> pa.Array:
    """Prolog text of a column of canonical N-Triples terms."""
    column = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    if isinstance(column.type, pa.DictionaryType):
        # convert each distinct term once
        return pc.take(column_text(column.dictionary), column.indices)
    iri = pc.match_substring_regex(column, _IRI)
    integer = pc.match_substring_regex(column, _INT_LITERAL)
    out = pc.if_else(iri, pc.replace_substring_regex(column, _IRI, r"I\1"), None)
    out = pc.if_else(integer, pc.replace_substring_regex(column, _INT_LITERAL, r"i\1"), out)
    missing = pc.is_null(out)
    if pc.any(missing).as_py():
        rest = pc.filter(column, missing).to_pylist()
        index = pc.indices_nonzero(missing).to_pylist()
        values = out.to_pylist()
        for i, nt in zip(index, rest):
            values[i] = field(nt)
        out = pa.array(values, pa.string())
    return out


def table_text(s, p, o, start, end) -> str:
    """Batch text of columns already ordered by end time."""
    start = pc.cast(start, pa.string())
    end = pc.cast(end, pa.string())
    lines = pc.binary_join_element_wise(column_text(s), column_text(p), column_text(o), start, end, "\t")
    if isinstance(lines, pa.ChunkedArray):
        lines = lines.combine_chunks()
    whole = pa.LargeListArray.from_arrays(pa.array([0, len(lines)], pa.int64()), lines.cast(pa.large_string()))
    return pc.binary_join(whole, pa.scalar("\n", pa.large_string()))[0].as_py()
