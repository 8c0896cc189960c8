"""Answer terms and times as text, column-wise: the kernels of the writers.

Takes Arrow string arrays of canonical N-Triples terms (cep.terms) and
int64 arrays of epoch milliseconds; gives string arrays of their text in
an output format, column-wise: a term's kind is told by its first and
last characters, and its text made with substring kernels of
pyarrow.compute. A term they do not cover (an IRI or a literal with an
escape or a character the output writes otherwise, a year past 9999) is
converted in Python, once per distinct value. Null stays null.

A text that goes into a longer one (a line of JSON Lines) can be had as
its pieces (json_term_pieces, time_pieces: str constants and arrays, to
be joined by concat with the other pieces of the line): the bytes of a
term are then copied once, into the line, not first into a text of
their own.

    json_terms(col)   W3C SPARQL 1.1 Query Results JSON objects (as cep.terms.to_json,
                      written as json.dumps writes them); json_term_pieces(col)
    xml_terms(col)    SPARQL Query Results XML elements (<uri>, <literal>, <bnode>; a
                      control character XML 1.0 cannot hold becomes U+FFFD)
    csv_terms(col)    SPARQL 1.1 CSV values (IRIs and literals' lexical forms bare)
    times(col)        ISO 8601 UTC text (cep.terms.format_datetime_ms); time_pieces(col)
    json_strings(col) JSON string literals
"""

from __future__ import annotations

import json
import re
from xml.sax.saxutils import escape as xml_escape

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from cep import terms
from cep.events import one_array, repeating

# A term's kind by its first and last bytes; each kind's text is made
# with substring kernels (no regular expression with captures: those cost
# ten times more), for the terms a DFA-only expression vouches for.
def _kinds(column) -> dict:
    """Masks (numpy) of IRIs, blank nodes, typed, language-tagged and plain
    literals, read from the first and last bytes of each string."""
    offsets = np.frombuffer(column.buffers()[1], dtype=np.int32)[column.offset:column.offset + len(column) + 1]
    data = np.frombuffer(column.buffers()[2] or b"\0", dtype=np.uint8)
    size = np.diff(offsets)
    present = size > 0
    if column.null_count:
        present &= np.asarray(pc.is_valid(column).to_numpy(zero_copy_only=False), dtype=bool)
    first = np.where(present, data[np.minimum(offsets[:-1], len(data) - 1)], 0)
    second = np.where(size > 1, data[np.minimum(offsets[:-1] + 1, len(data) - 1)], 0)
    last = np.where(present, data[np.maximum(offsets[1:] - 1, 0)], 0)
    literal = first == ord('"')
    typed, plain = literal & (last == ord(">")), literal & (last == ord('"'))
    return {"iri": first == ord("<"), "bnode": (first == ord("_")) & (second == ord(":")), "typed": typed,
            "lang": literal & ~typed & ~plain, "plain": plain}


def _valid(chars: str) -> dict:
    """DFA expressions of the terms whose text needs no escape in the
    output: lexical forms and IRIs without a backslash, a quote or the
    `chars` the output escapes."""
    c = r'[^"\\\x00-\x1f' + chars + "]*"
    return {"iri": f"^<{c}>$", "bnode": r"^_:[A-Za-z0-9_.\-]+$", "typed": f'^"{c}"\\^\\^<{c}>$',
            "lang": f'^"{c}"@[a-z0-9\\-]+$', "plain": f'^"{c}"$'}


def _plain_bytes(part, kind: str, escaped: bytes | None) -> bool:
    """Whether every term of `part` (non-null, all of `kind`, as _kinds
    tells) is one _valid's expression for its kind vouches for, told from
    the column's bytes at once, without a match per term: they hold no
    backslash, control character or `escaped` byte (None: the output
    escapes a byte of the terms' syntax, so this cannot tell), and the
    quotes of each term are those of its form: an IRI none; a plain
    literal its two; a typed one its first and the one before ^^<. False
    leaves it to the expression."""
    if escaped is None or kind not in ("iri", "plain", "typed") or part.null_count or not len(part):
        return False
    offsets = np.frombuffer(part.buffers()[1], dtype=np.int32)[part.offset:part.offset + len(part) + 1]
    data = np.frombuffer(part.buffers()[2], dtype=np.uint8)[offsets[0]:offsets[-1]]
    starts, ends = offsets[:-1] - offsets[0], offsets[1:] - offsets[0]
    if (data < 0x20).any() or (data == ord("\\")).any() or any((data == b).any() for b in escaped):
        return False
    quotes = np.flatnonzero(data == ord('"'))
    if kind == "iri":
        return not len(quotes) and bool((data[ends - 1] == ord(">")).all())
    if len(quotes) != 2 * len(part) or not (quotes[0::2] == starts).all():
        return False  # (each term's first byte is a quote: so each holds two, its first and one more)
    second = quotes[1::2]
    if kind == "plain":
        return bool((second == ends - 1).all())
    return bool((second + 4 < ends).all() and (data[second + 1] == ord("^")).all()
                and (data[second + 2] == ord("^")).all() and (data[second + 3] == ord("<")).all()
                and (data[ends - 1] == ord(">")).all())


def _slice(column, start, stop=None):
    """The bytes of each string from `start` to `stop` (counted as in
    Python; from the end when negative). The callers cut off ASCII
    delimiters of the terms' syntax (_kinds tells them by those bytes), so
    what is left is UTF-8 as it was: cut by bytes, without the decoding of
    a cut by characters."""
    stop = 2**31 - 1 if stop is None else stop  # (no stop: Arrow 26 sizes the result wrongly and fails)
    return pc.binary_slice(column.view(pa.binary()), start, stop).view(pa.string())


def _split(column, separator):
    """The two parts of each value around the first `separator`."""
    parts = pc.split_pattern(column, separator, max_splits=1)
    return pc.list_element(parts, 0), pc.list_element(parts, 1)


def concat(*parts) -> pa.Array:
    """Element-wise concatenation of string arrays and str constants (each
    run of constants one: a kernel's cost grows with its arguments); one
    array alone is itself."""
    merged = []
    for p in parts:
        if isinstance(p, str) and merged and isinstance(merged[-1], str):
            merged[-1] += p
        else:
            merged.append(p)
    if len(merged) == 1 and not isinstance(merged[0], str):
        return merged[0]
    return pc.binary_join_element_wise(*(pa.scalar(p) if isinstance(p, str) else p for p in merged), "")


def _converted(column, valid: dict, build: dict, fallback, exclude=None, escaped: bytes | None = None,
               pieces: bool = False):
    """Each term of the column made by build[kind] (the pieces of its text)
    when valid[kind] vouches for it; the others (and those `exclude`
    marks) through `fallback`, in Python, once per distinct value. A
    column that repeats its terms (an IRI in every answer) is made once
    per distinct term. The parts made are put in place with one `take`.
    `escaped`: the bytes the output escapes besides the quote, the
    backslash and the controls (_plain_bytes). `pieces`: the text as a
    list of pieces (concat), which is the pieces build[kind] made when
    every term is of that kind and made so."""
    column = _strings(column)
    encoded = repeating(column)
    if encoded is not None:
        made = _converted(encoded.dictionary, valid, build, fallback,
                          None if exclude is None else _xsd_strings(encoded.dictionary), escaped).take(encoded.indices)
        return [made] if pieces else made
    n = len(column)
    parts, made = [], 0  # the texts made, and how many
    source = np.full(n, -1, dtype=np.int64)  # per row, its text's place in the parts (-1: null)
    slow = np.zeros(n, dtype=bool)
    excluded = None if exclude is None else np.asarray(pc.fill_null(exclude, False).to_numpy(zero_copy_only=False),
                                                       dtype=bool)
    for kind, mask in _kinds(column).items():
        if excluded is not None:
            slow |= mask & excluded
            mask &= ~excluded
        at = np.flatnonzero(mask)
        if not len(at):
            continue
        part = column if len(at) == n else column.take(pa.array(at))  # (a column of one kind: as it is)
        text = build[kind](part)
        if not _plain_bytes(part, kind, escaped):
            slow[at] = ~np.asarray(pc.match_substring_regex(part, valid[kind]).to_numpy(zero_copy_only=False),
                                   dtype=bool)
        if pieces and len(at) == n and not slow.any() and not column.null_count:
            return text  # every term of one kind, made by its kernels: its pieces
        parts.append(concat(*text))
        source[at] = np.arange(made, made + len(at))
        made += len(at)
    slow |= (source < 0) & np.asarray(pc.is_valid(column).to_numpy(zero_copy_only=False), dtype=bool)
    if slow.any():
        at = np.flatnonzero(slow)
        unique, where = np.unique(np.asarray(column.take(pa.array(at)).to_pylist(), dtype=object), return_inverse=True)
        parts.append(pa.array([fallback(v) for v in unique], pa.string()))
        source[at] = made + where.reshape(-1)
    if not parts:
        text = pa.nulls(n, pa.string())
    elif made == n and len(parts) == 1:  # every term of one kind, made by its kernels: in place already
        text = parts[0]
    else:
        text = pa.concat_arrays(parts).take(pa.array(source, mask=source < 0))
    return [text] if pieces else text


def _strings(column) -> pa.Array:
    column = one_array(column)
    return column if column.type == pa.string() else column.cast(pa.string())


def _xsd_strings(column):
    return pc.ends_with(_strings(column), f"^^<{terms.XSD_STRING}>")


_JSON_VALID = _valid("")


def _json_typed(t):
    """JSON objects of typed literals; a column of one datatype (the usual
    one: a variable of numbers) by its lexical forms, cut before the
    datatype they all end with, without a search in each."""
    first = t[0].as_py()
    datatype = first[first.rfind('"^^<'):]  # (a term the check refuses is made again by the fallback)
    if datatype.startswith('"^^<') and pc.all(pc.ends_with(t, datatype)).as_py():
        return ['{"type": "literal", "value": "', _slice(t, 1, -len(datatype.encode("utf-8"))),
                '", "datatype": "' + datatype[4:-1] + '"}']
    return ['{"type": "literal", "value": ',
            pc.replace_substring(_slice(t, 0, -1), '"^^<', '", "datatype": "', max_replacements=1), '"}']


# (each kind's text as its pieces: see _converted)
_JSON_BUILD = {
    "iri": lambda t: ['{"type": "uri", "value": "', _slice(t, 1, -1), '"}'],
    "bnode": lambda t: ['{"type": "bnode", "value": "', _slice(t, 2), '"}'],
    "typed": _json_typed,
    "lang": lambda t: ['{"type": "literal", "value": ',
                       pc.replace_substring(t, '"@', '", "xml:lang": "', max_replacements=1), '"}'],
    "plain": lambda t: ['{"type": "literal", "value": ', t, "}"],
}


def json_terms(column) -> pa.Array:
    return concat(*json_term_pieces(column))


def json_term_pieces(column) -> list:
    """json_terms of the column as pieces to concat (see the module docstring)."""
    return _converted(column, _JSON_VALID, _JSON_BUILD,
                      lambda t: json.dumps(terms.to_json(t), ensure_ascii=False), exclude=_xsd_strings(column),
                      escaped=b"", pieces=True)


def json_strings(column) -> pa.Array:
    """JSON string literals of a column of few distinct values (query and variable names)."""
    return _each_distinct(column, lambda v: json.dumps(v, ensure_ascii=False))


def _each_distinct(column, function) -> pa.Array:
    column = _strings(column)
    unique = pc.unique(column)
    made = pa.array([None if v is None else function(v) for v in unique.to_pylist()], pa.string())
    return made.take(pc.index_in(column, unique))


def _xml_parts(t, separator, attribute):
    lexical, rest = _split(t, separator)
    value = _slice(rest, 0, -1) if separator == '"^^<' else rest
    return [f'<literal {attribute}="', value, '">', _slice(lexical, 1), "</literal>"]


_XML_VALID = _valid("&<>")
_XML_BUILD = {
    "iri": lambda t: ["<uri>", _slice(t, 1, -1), "</uri>"],
    "bnode": lambda t: ["<bnode>", _slice(t, 2), "</bnode>"],
    "typed": lambda t: _xml_parts(t, '"^^<', "datatype"),
    "lang": lambda t: _xml_parts(t, '"@', "xml:lang"),
    "plain": lambda t: ["<literal>", _slice(t, 1, -1), "</literal>"],
}
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _xml_term(nt: str) -> str:
    """The XML element of a term; a character XML 1.0 cannot hold (a
    control other than tab, LF and CR) is written as U+FFFD."""
    value = terms.to_json(nt)
    # (a CR written as it is would be read back as LF)
    text = xml_escape(_NOT_XML.sub("\ufffd", value["value"]), {'"': "&quot;", "\r": "&#13;"})
    if value["type"] == "uri":
        return f"<uri>{text}</uri>"
    if value["type"] == "bnode":
        return f"<bnode>{text}</bnode>"
    if "xml:lang" in value:
        return f'<literal xml:lang="{value["xml:lang"]}">{text}</literal>'
    if "datatype" in value:
        return f'<literal datatype="{xml_escape(value["datatype"], {chr(34): "&quot;"})}">{text}</literal>'
    return f"<literal>{text}</literal>"


def xml_terms(column) -> pa.Array:
    return _converted(column, _XML_VALID, _XML_BUILD, _xml_term, exclude=_xsd_strings(column))


_CSV_VALID = _valid(",\\r\\n")
_CSV_BUILD = {
    "iri": lambda t: [_slice(t, 1, -1)],
    "bnode": lambda t: [t],
    "typed": lambda t: [_slice(_split(t, '"^^<')[0], 1)],
    "lang": lambda t: [_slice(_split(t, '"@')[0], 1)],
    "plain": lambda t: [_slice(t, 1, -1)],
}


def _csv_term(nt: str) -> str:
    value = terms.to_json(nt)
    text = "_:" + value["value"] if value["type"] == "bnode" else value["value"]
    if any(c in text for c in '",\r\n'):
        return '"' + text.replace('"', '""') + '"'
    return text


def csv_terms(column) -> pa.Array:
    return _converted(column, _CSV_VALID, _CSV_BUILD, _csv_term, escaped=b",")


_MILLIS = pa.array([""] + [(".%03d" % ms).rstrip("0") for ms in range(1, 1000)], pa.string())
_YEAR_1, _YEAR_9999 = -62_135_596_800_000, 253_402_300_799_999  # the years strftime writes as 4 digits


def _distinct(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """np.unique(values, return_inverse=True), without its sort where the
    values never go down (times of answers, mostly)."""
    step = np.diff(values)
    if len(values) and (step >= 0).all():
        new = np.concatenate(([True], step > 0))
        return values[new], np.cumsum(new) - 1
    return np.unique(values, return_inverse=True)


def times(column) -> pa.Array:
    """ISO 8601 UTC text of epoch milliseconds, as cep.terms.format_datetime_ms
    (each distinct second formatted once: answers come in time order)."""
    column = one_array(column)
    text = concat(*_time_pieces(column))
    if column.null_count:
        text = pc.if_else(pc.is_null(column), pa.scalar(None, pa.string()), text)
    return text


def time_pieces(column) -> list:
    """times of the column as pieces to concat (see the module docstring)."""
    column = one_array(column)
    return _time_pieces(column) if not column.null_count else [times(column)]


def _time_pieces(column) -> list:
    """The pieces of times' text, null taken as 0."""
    ms = np.asarray(pc.fill_null(column, 0).to_numpy(zero_copy_only=False), dtype=np.int64)
    seconds, at = _distinct(np.floor_divide(ms, 1000))
    inside = (seconds >= _YEAR_1 // 1000) & (seconds <= _YEAR_9999 // 1000)
    text = pc.strftime(pa.array(np.where(inside, seconds, 0), pa.int64()).cast(pa.timestamp("s", tz="UTC")),
                       format="%Y-%m-%dT%H:%M:%S")
    if not inside.all():
        outside = np.nonzero(~inside)[0]
        text = pc.replace_with_mask(text, pa.array(~inside), pa.array(
            [terms.format_datetime_ms(int(seconds[i]) * 1000)[:-1] for i in outside], pa.string()))
    return [text.take(pa.array(at.reshape(-1))), _MILLIS.take(pa.array(np.mod(ms, 1000))), "Z"]
