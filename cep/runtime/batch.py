"""Event batches as the text the runtime reads (prolog/cep_fast.c): one
event a line, `S TAB P TAB O TAB Start TAB End`, ordered by End, where a term
is `I<iri>` (an IRI, taken verbatim as an atom), `i<digits>` (an integer) or
`P<Prolog text>` (any other term, written by the project's one quoting
writer, cep.prolog). No event data is ever read as Prolog code: IRIs are
not parsed at all, and other terms are written with correct quoting.

The text is ASCII (IRIs with other characters take the P form, whose
writer escapes them), so it crosses into Prolog as bytes with no
conversion. IRIs, integers, plain strings and decimals, the common shapes,
are written by C (cep/runtime/batch_text.c) reading the Arrow arrays'
buffers, term after term, and the lines likewise; where that library
cannot be built, by Arrow kernels that make the same bytes without
copying terms one by one or running regular expressions on every row (a
column with few distinct terms converted once per distinct term, the
shapes recognised by prefix and suffix, a decimal's value reduced to
lowest terms in int64 arithmetic, column-wise). Other terms take the
slow path, once each, in Python (cep.terms.prolog_text).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from cep import terms
from cep.errors import EngineError
from cep.events import INTEGER_SUFFIX, integer_literals, one_array, repeating
from cep.runtime import native

_DEC_SUFFIX = '"^^<http://www.w3.org/2001/XMLSchema#decimal>'
_DEC_DIGITS = 18  # significant and fractional digits of a decimal kept in int64 arithmetic
# characters that keep an IRI off the verbatim I form: those N-Triples
# escapes (so the term's text is not its IRI), and the batch's separators
_NOT_VERBATIM = r'[\x00-\x20<>"{}|^`\\]'


def field(nt: str) -> str:
    """The batch field of one canonical N-Triples term (the slow path)."""
    return "P" + terms.prolog_text(nt)


def column_text(column: pa.ChunkedArray | pa.Array) -> pa.Array:
    """Batch fields of a column of canonical N-Triples terms."""
    column = one_array(column)
    if column.null_count:  # (an Arrow kernel would make its line null: the event lost)
        raise EngineError("an event batch has no null terms")
    if isinstance(column.type, pa.DictionaryType):
        return pc.take(column_text(column.dictionary), column.indices)
    if column.type != pa.string():  # (large_string, string_view: the int32 offsets of the lines)
        column = column.cast(pa.string())
    lib = native.batch_text()
    if lib is not None:
        made = _native_fields(lib, column)
        if made is not None:
            return _slow_filled(column, made)
    # (the C writer takes a term in less time than a dictionary takes to
    # look it up; Arrow's kernels, many passes over the column, do not)
    encoded = repeating(column, 4)
    if encoded is not None:
        return pc.take(column_text(encoded.dictionary), encoded.indices)
    return _slow_filled(column, _fields(column))


def _native_fields(lib, column: pa.Array) -> pa.Array | None:
    """The fields of a column by batch_text.c, null for each term it
    leaves to the slow path; None when they would not fit in an Arrow
    string array."""
    n = len(column)
    validity, offsets, data = column.buffers()
    if not n or data is None:  # (no bytes at all: no data buffer)
        return _fields(column)
    ends = np.frombuffer(offsets, np.int32)  # (a slice's offsets start at its offset)
    bound = int(ends[column.offset + n]) - int(ends[column.offset]) + n * lib.cep_field_extra()
    if bound > 2**31 - 1:
        return None
    out_offsets, out_data = pa.allocate_buffer(4 * (n + 1)), pa.allocate_buffer(bound)
    out_valid = pa.py_buffer(bytearray((n + 7) // 8))
    nulls = lib.cep_term_fields(n, offsets.address, data.address, validity and validity.address, column.offset,
                                out_offsets.address, out_data.address, out_valid.address)
    if nulls < 0:
        return None
    return pa.Array.from_buffers(pa.string(), n, [out_valid if nulls else None, out_offsets, out_data],
                                 null_count=nulls)


def _fields(column: pa.Array) -> pa.Array:
    """The fields of a column's terms by their shape: an IRI, a canonical
    integer, a plain ASCII string, a decimal (null: the slow path), as
    batch_text.c writes them. The
    shapes are told apart by their first character, and a shape no term
    of the column starts like costs nothing more (a column of numbers
    never runs the IRIs' checks)."""
    shapes = []  # (mask, fields) of each shape some term of the column has
    bracket = pc.starts_with(column, "<")
    if pc.any(bracket).as_py():
        # IRIs: <...> in ASCII, with nothing inside that N-Triples escapes
        inner = pc.utf8_slice_codeunits(column, 1, -1)
        iri = pc.and_(pc.and_(bracket, pc.ends_with(column, ">")),
                      pc.and_(pc.string_is_ascii(column), pc.invert(pc.match_substring_regex(inner, _NOT_VERBATIM))))
        shapes.append((iri, pc.binary_join_element_wise("I", inner, "")))
    quote = pc.starts_with(column, '"')
    if pc.any(quote).as_py():
        if pc.any(pc.and_(quote, pc.ends_with(column, INTEGER_SUFFIX))).as_py():
            integer, body = integer_literals(column)  # in canonical form (another is lv/3)
            shapes.append((integer, pc.binary_join_element_wise("i", body, "")))
        quoted = pc.and_(quote, pc.ends_with(column, '"'))
        if pc.any(quoted).as_py():
            # plain strings "...": in ASCII with no escape, N-Triples and Prolog
            # write them alike (labels and comments of ontologies); none with a
            # control character (a tab or newline would split the batch's line)
            plain = pc.and_(quoted, pc.and_(pc.string_is_ascii(column),
                                            pc.invert(pc.match_substring_regex(column, r"[\\\x00-\x1f]"))))
            shapes.append((plain, pc.binary_join_element_wise("P", column, "")))
    if shapes and pc.all(shapes[0][0]).as_py():  # one shape: every term
        out = shapes[0][1]
    else:  # the decimals, then each shape over them
        out = _decimals(column) if pc.any(quote).as_py() else pa.nulls(len(column), pa.string())
        for mask, fields in reversed(shapes):
            out = pc.if_else(mask, fields, out)
    return out


def _slow_filled(column: pa.Array, fields: pa.Array) -> pa.Array:
    """The fields with each null (a term of no shape taken by _fields
    or batch_text.c) made by the slow path."""
    if not fields.null_count:
        return fields
    missing = pc.is_null(fields)
    return pc.replace_with_mask(fields, missing, pa.array([field(nt) for nt in pc.filter(column, missing).to_pylist()],
                                                          pa.string()))


def _decimals(column: pa.Array) -> pa.Array:
    """The fields of the xsd:decimal literals of a column whose lexical form
    is [+-]?digits[.digits] (either side of the point may be empty, not
    both) with at most 18 significant and 18 fractional digits; null for
    every other term. The text is the slow path's: dec(N) or dec(NrD) for
    the canonical form (-?digits.digits, no leading zero but a lone one, no
    trailing zero but a lone one, not -0.0), lv("Lexical",'xsd:decimal',
    dec(...)) for another form (another term of the value), with N/D the
    value in lowest terms: 10^k's factors 2 and 5 are divided out of the
    digits' integer as far as they go."""
    candidate = pc.fill_null(pc.and_(pc.starts_with(column, '"'), pc.ends_with(column, _DEC_SUFFIX)), False)
    if not pc.any(candidate).as_py():
        return pa.nulls(len(column), pa.string())
    lex = pc.utf8_slice_codeunits(column, 1, -len(_DEC_SUFFIX))
    negative = pc.starts_with(lex, "-")
    unsigned = pc.if_else(pc.or_(negative, pc.starts_with(lex, "+")), pc.utf8_slice_codeunits(lex, 1), lex)
    # a point appended, so that every term splits in two at its first point
    parts = pc.split_pattern(pc.binary_join_element_wise(unsigned, ".", ""), ".", max_splits=1)
    whole = pc.list_element(parts, 0)
    written = pc.utf8_slice_codeunits(pc.list_element(parts, 1), 0, -1)  # the fraction as written

    def digits_or_empty(text):
        return pc.or_(pc.ascii_is_decimal(text), pc.equal(text, ""))

    frac = pc.utf8_rtrim(written, "0")
    places = pc.utf8_length(frac)
    significant = pc.utf8_ltrim(pc.binary_join_element_wise(whole, frac, ""), "0")
    ok = pc.and_(candidate, pc.and_(pc.and_(digits_or_empty(whole), digits_or_empty(written)),
                                    pc.not_equal(pc.binary_join_element_wise(whole, written, ""), "")))
    ok = pc.and_(ok, pc.and_(pc.less_equal(pc.utf8_length(significant), _DEC_DIGITS),
                             pc.less_equal(places, _DEC_DIGITS)))
    ok = pc.fill_null(ok, False)
    if not pc.any(ok).as_py():
        return pa.nulls(len(column), pa.string())
    canonical = pc.and_(pc.and_(pc.invert(pc.starts_with(lex, "+")),
                                pc.and_(pc.not_equal(whole, ""), pc.not_equal(written, ""))),
                        pc.and_(pc.or_(pc.invert(pc.starts_with(whole, "0")), pc.equal(whole, "0")),
                                pc.or_(pc.invert(pc.ends_with(written, "0")), pc.equal(written, "0"))))
    canonical = pc.and_(canonical, pc.invert(pc.and_(negative, pc.equal(significant, ""))))  # not -0.0
    num = pc.cast(pc.if_else(pc.and_(ok, pc.not_equal(significant, "")), significant, "0"), pa.int64())
    twos = fives = pc.if_else(pc.equal(num, 0), 0, pc.cast(places, pa.int64()))
    for _ in range(_DEC_DIGITS):
        even = pc.and_(pc.greater(twos, 0), pc.equal(pc.bit_wise_and(num, 1), 0))
        fifth = pc.divide(num, 5)
        by_five = pc.and_(pc.and_(pc.greater(fives, 0), pc.equal(pc.multiply(fifth, 5), num)), pc.invert(even))
        if not pc.any(pc.or_(even, by_five)).as_py():
            break
        num = pc.if_else(even, pc.shift_right(num, 1), pc.if_else(by_five, fifth, num))
        twos = pc.subtract(twos, pc.cast(even, pa.int64()))
        fives = pc.subtract(fives, pc.cast(by_five, pa.int64()))
    den = pc.multiply(pc.power(2, twos), pc.power(5, fives))
    sign = pc.if_else(pc.and_(negative, pc.not_equal(num, 0)), "-", "")
    value = pc.binary_join_element_wise(sign, pc.cast(num, pa.string()), "")
    value = pc.if_else(pc.equal(den, 1), value,
                       pc.binary_join_element_wise(value, "r", pc.cast(den, pa.string()), ""))
    value = pc.binary_join_element_wise("dec(", value, ")", "")
    # the lexical form holds digits, a sign and a point only: it needs no quoting
    other = pc.binary_join_element_wise('lv("', lex, f'",\'{terms.XSD_DECIMAL}\',', value, ")", "")
    return pc.if_else(ok, pc.binary_join_element_wise("P", pc.if_else(canonical, value, other), ""), None)


UPDATES_ONLY = "$updates_only"  # the wrapper the compiled rules take apart (cep.compile.program)
STREAM_EVENT = "$in"  # '$in'(Stream, P): an event of a stream (cep.compile.leaves)
COPY = "$copy"  # '$copy'(K, P): the K-th copy of a repeated event (cep.algebra.copies)


def table_text(s, p, o, start, end, updates_only=None, stream=None, copy=None) -> pa.Buffer:
    """The batch of columns already ordered by end time, as ASCII bytes.
    `updates_only`: a boolean column, true for the events that must
    trigger the update rules alone. Their predicate is written wrapped, as
    '$updates_only'(P), which the compiled rules take apart; no event's own
    predicate (an IRI, an atom) has that form. `stream`: a column of the
    events' stream IRIs (null: none), for a rule set whose patterns read
    some streams only: the predicate of an event of a stream is written
    '$in'(Stream, P), inside '$updates_only'(...) if both. `copy`: a
    column of the events' copy indexes (cep.algebra.copies), for a rule
    set that tells the copies of a repeated event apart: the predicate of
    the K-th copy (K >= 1; never an event for the update rules alone) is
    written '$copy'(K, P), outside '$in'(...)."""
    predicates = column_text(p)
    wrap = {}  # row -> the Prolog text of its wrapped predicate
    if stream is not None and pc.any(pc.is_valid(stream)).as_py():
        marked = pc.is_valid(stream)
        for i, g, nt in zip(pc.indices_nonzero(marked).to_pylist(), pc.filter(stream, marked).to_pylist(),
                            pc.filter(p, marked).to_pylist()):
            wrap[i] = f"'{STREAM_EVENT}'({terms.prolog_text(g)},{terms.prolog_text(nt)})"
    if updates_only is not None and pc.any(updates_only).as_py():
        marked = pc.fill_null(updates_only, False)
        for i, nt in zip(pc.indices_nonzero(marked).to_pylist(), pc.filter(p, marked).to_pylist()):
            wrap[i] = f"'{UPDATES_ONLY}'({wrap.get(i) or terms.prolog_text(nt)})"
    if copy is not None and pc.any(pc.greater(copy, 0)).as_py():
        marked = pc.greater(copy, 0)
        for i, k, nt in zip(pc.indices_nonzero(marked).to_pylist(), pc.filter(copy, marked).to_pylist(),
                            pc.filter(p, marked).to_pylist()):
            wrap[i] = f"'{COPY}'({k},{wrap.get(i) or terms.prolog_text(nt)})"
    if wrap:
        mask = np.zeros(len(predicates), dtype=bool)
        mask[list(wrap)] = True
        predicates = pc.replace_with_mask(predicates, pa.array(mask),
                                          pa.array(["P" + wrap[i] for i in sorted(wrap)], pa.string()))
    fields = [column_text(s), predicates, column_text(o)]
    start, end = one_array(start), one_array(end)
    if start.null_count or end.null_count:
        raise EngineError("an event batch has no null times")
    lib = native.batch_text()
    if not len(start):
        return pa.py_buffer(b"")
    if lib is not None and start.type == end.type == pa.int64():
        return _native_lines(lib, fields, start, end)
    return _lines(fields, start, end)


def _native_lines(lib, fields: list[pa.Array], start: pa.Array, end: pa.Array) -> pa.Buffer:
    """The lines of a batch (its fields and times) by batch_text.c."""
    n = len(start)
    args, size = [], n * lib.cep_line_extra()
    for column in fields:
        _, offsets, data = column.buffers()
        ends = np.frombuffer(offsets, np.int32)  # (a slice's offsets start at its offset)
        size += int(ends[column.offset + n]) - int(ends[column.offset])
        args += [offsets.address, data.address, column.offset]
    out = pa.allocate_buffer(size)
    written = lib.cep_batch_lines(n, *args, start.buffers()[1].address + 8 * start.offset,
                                  end.buffers()[1].address + 8 * end.offset, out.address)
    if written < 0:  # the writers make sure of it
        raise EngineError("an event batch must be ASCII")
    return out.slice(0, written)


def _lines(fields: list[pa.Array], start: pa.Array, end: pa.Array) -> pa.Buffer:
    """The lines of a batch (its fields and times) by Arrow's kernels."""
    same = start.equals(end)  # (an event at an instant, the usual one: its time made text once)
    start = pc.cast(start, pa.string())
    # each line ends with its newline, so the lines' data is the batch's text as it is
    end = pc.binary_join_element_wise(start if same else pc.cast(end, pa.string()), "\n", "")
    lines = pc.binary_join_element_wise(*fields, start, end, "\t")
    if isinstance(lines, pa.ChunkedArray):
        lines = lines.combine_chunks()
    if not pc.all(pc.string_is_ascii(lines)).as_py():  # the writers make sure of it
        raise EngineError("an event batch must be ASCII")
    offsets = lines.buffers()[1]
    first, last = (int(x) for x in np.frombuffer(offsets, np.int32)[[lines.offset, lines.offset + len(lines)]])
    return lines.buffers()[2].slice(first, last - first)
