"""The text of an event batch (cep/runtime/batch.py) is the same bytes
whether C writes it (cep/runtime/batch_text.c) or Arrow's kernels do
(where the C library cannot be built), on inputs made to trip either:
terms of every shape and none, non-ASCII text and escapes, huge literals,
sliced, chunked and dictionary-encoded columns, empty batches; and a batch
that could not be read back as it was meant is refused by both. The same
library tells the terms of a column already canonical for the checks of
cep/io/tables.py: only terms those checks take as they are."""

import contextlib
import random
import shutil

import pyarrow as pa
import pytest

from cep.errors import EngineError
from cep.runtime import batch, native
from cep.terms import TermError

EX = "http://example.org/"
XSD = "http://www.w3.org/2001/XMLSchema#"

pytestmark = pytest.mark.skipif(native.batch_text() is None, reason="the C batch writer cannot be built here")


def typed(lexical: str, datatype: str) -> str:
    return f'"{lexical}"^^<{XSD}{datatype}>'


DECIMALS = ["1.50", "-0.0", "+3", ".5", "5.", "-.5", "007.50", "0", "-0", "+0.000", "100.00", "0.008",
            "123456789012345678", "-999999999999999999", "0.999999999999999999", "-0.000000000000000005",
            "1.000000000000000000000", "0000000000000000000000001.5", "1234567890123456789",
            "0.0000000000000000001", "999999999999999999.5", "1" * 60 + "." + "5" * 60,
            "1e2", ".", "-", "+", "", "1.2.3", "--1", " 1.5", "\u0661.\u0665"]
INTEGERS = ["0", "-0", "01", "-01", "5", "-5", "+5", "-", "", "9" * 400, "-" + "9" * 400, "1 ", "\u0665"]
HOSTILE = [
    f"<{EX}a>", "<>", f"<{EX}caf\u00e9>", f"<{EX}x\\u0020y>", f"<{EX}\x7f>", "<" + EX + "x" * 200_000 + ">",
    '"5"', '""', '"', '"a\\"b"', '"a\\\\b"', '"a\\nb"', '"caf\u00e9"', '"\U0001F600"', '"a\tb"', '"\x01"',
    '"it\'s"', '"chat"@fr', '"chat"@fr-BE', '"x' + "y" * 300_000 + '"', '"' + "\u00e9" * 50_000 + '"',
    "_:b1", typed("true", "boolean"), typed("1.5E3", "double"), typed("2026-01-01T00:00:00Z", "dateTime"),
    *(typed(i, "integer") for i in INTEGERS), *(typed(d, "decimal") for d in DECIMALS),
    f'"x"^^<{XSD}string>', f'"1"^^<{EX}t>',
]
# terms the slow path refuses (malformed N-Triples), as both writers leave them to it
REFUSED = [f"<{EX}a b>", f"<{EX}a{{b}}>", f"<{EX}a|b>", f"<{EX}a^b>", f"<{EX}a`b>", f"<{EX}a\"b>", f"<{EX}a", "<",
           '"a\nb"', f'"1"^^<{XSD}integer']


@contextlib.contextmanager
def arrow_only():
    """batch.py as where the C writer cannot be built."""
    lib = native.batch_text
    native.batch_text = lambda: None
    try:
        yield
    finally:
        native.batch_text = lib


def both(function, *args):
    """`function(*args)` by the C writer, then by Arrow's kernels."""
    made = function(*args)
    with arrow_only():
        return made, function(*args)


def texts(function, *args):
    c, arrow = both(function, *args)
    return (c.to_pybytes(), arrow.to_pybytes()) if isinstance(c, pa.Buffer) else (c.to_pylist(), arrow.to_pylist())


def test_each_term_gets_the_same_field_from_c_and_from_arrow():
    c, arrow = texts(batch.column_text, pa.array(HOSTILE))
    assert c == arrow
    assert c[0] == f"I{EX}a" and c[1] == "I" and c[2].startswith("P'")  # verbatim, empty, escaped
    assert c[HOSTILE.index('"5"')] == 'P"5"' and c[HOSTILE.index('"a\tb"')] == 'P"a\\tb"'
    for term in REFUSED:
        with pytest.raises(TermError, match="malformed"):
            batch.column_text(pa.array([term]))
        with arrow_only(), pytest.raises(TermError, match="malformed"):
            batch.column_text(pa.array([term]))


def test_random_mixtures_of_terms_read_alike_in_c_and_in_arrow():
    rng = random.Random(38)
    small = [t for t in HOSTILE if len(t) < 1000]
    for _ in range(150):
        pool = rng.sample(small, rng.randint(1, 6))
        column = [rng.choice(pool) for _ in range(rng.randint(1, 300))]  # (past 64: Arrow's dictionary path)
        c, arrow = texts(batch.column_text, pa.array(column))
        assert c == arrow, column
    for _ in range(20):  # decimals and integers made at random, around the int64 limits
        column = []
        for _ in range(200):
            digits = "".join(rng.choice("0123456789") for _ in range(rng.randint(0, 22)))
            point = rng.randint(0, len(digits))
            lexical = rng.choice(["", "-", "+"]) + digits[:point] + rng.choice([".", ""]) + digits[point:]
            column.append(typed(lexical, rng.choice(["decimal", "integer"])))
        c, arrow = texts(batch.column_text, pa.array(column))
        assert c == arrow == [batch.field(t) if f is None else f for t, f in zip(column, c)]


def _columns(rng, n):
    pool = [t for t in HOSTILE if len(t) < 1000 and "\x01" not in t]
    s = [rng.choice(pool) for _ in range(n)]
    p = [rng.choice([f"<{EX}a>", f"<{EX}b>", f"<{EX}caf\u00e9>"]) for _ in range(n)]
    o = [rng.choice(pool) for _ in range(n)]
    start = sorted(rng.randint(-2**62, 2**62) for _ in range(n))
    end = [t + rng.choice([0, 0, 1, 10**12]) for t in start]
    return s, p, o, start, end


def test_batches_are_the_same_bytes_from_c_and_from_arrow():
    rng = random.Random(23)
    s, p, o, start, end = _columns(rng, 500)
    columns = [pa.array(s), pa.array(p), pa.array(o), pa.array(start, pa.int64()), pa.array(end, pa.int64())]
    c, arrow = texts(batch.table_text, *columns)
    assert c == arrow and c.count(b"\n") == 500 and c.isascii()
    assert [len(line.split(b"\t")) for line in c.splitlines()] == [5] * 500
    # sliced (the arrays' offsets), chunked, dictionary-encoded
    sliced = [column.slice(37, 300) for column in columns]
    assert texts(batch.table_text, *sliced)[0] == texts(batch.table_text, *sliced)[1]
    assert texts(batch.table_text, *sliced)[0] == b"".join(c.splitlines(keepends=True)[37:337])
    chunked = [pa.chunked_array([column.slice(0, 7), column.slice(7, 0), column.slice(7)]) for column in columns]
    assert texts(batch.table_text, *chunked) == (c, c)
    encoded = [column.dictionary_encode() if column.type == pa.string() else column for column in columns]
    assert texts(batch.table_text, *encoded) == (c, c)
    large = [column.cast(pa.large_string()) if column.type == pa.string() else column for column in columns]
    assert texts(batch.table_text, *large) == (c, c)
    # with the predicates of some events wrapped (a stream, the update rules alone, a copy)
    stream = pa.array([rng.choice([None, f"<{EX}g>"]) for _ in range(500)], pa.string())
    updates = pa.array([rng.choice([None, False, True]) for _ in range(500)], pa.bool_())
    copy = pa.array([rng.choice([0, 0, 2]) for _ in range(500)], pa.int64())
    wrapped = texts(batch.table_text, *columns, updates, stream, copy)
    assert wrapped[0] == wrapped[1] and b"'$updates_only'(" in wrapped[0] and b"'$copy'(2," in wrapped[0]


def test_huge_and_empty_batches_are_the_same_bytes_from_c_and_from_arrow():
    huge = ["<" + EX + "x" * 200_000 + ">", '"' + "y" * 300_000 + '"', typed("9" * 100_000, "integer")]
    columns = [pa.array(huge), pa.array([f"<{EX}a>"] * 3), pa.array(huge[::-1]), pa.array([1, 2, 3], pa.int64()),
               pa.array([1, 2, 3], pa.int64())]
    c, arrow = texts(batch.table_text, *columns)
    assert c == arrow and len(c) > 1_200_000
    empty = [pa.array([], pa.string())] * 3 + [pa.array([], pa.int64())] * 2
    assert texts(batch.table_text, *empty) == (b"", b"")
    assert texts(batch.table_text, *(column.slice(3) for column in columns)) == (b"", b"")


@pytest.mark.parametrize("size", [3, 200])  # (200: a column Arrow's path dictionary-encodes)
def test_a_null_term_or_time_is_refused_by_both(size):
    """A null term made no line at all in a column of repeating terms
    (the event silently lost) and an error from the slow path in another."""
    s = pa.array([f"<{EX}k>"] * (size - 1) + [None], pa.string())
    o = pa.array([typed("1", "integer")] * size)
    times = pa.array(range(size), pa.int64())
    for writer in (contextlib.nullcontext, arrow_only):
        with writer(), pytest.raises(EngineError, match="null"):
            batch.table_text(s, o, o, times, times)
        with writer(), pytest.raises(EngineError, match="null"):
            batch.table_text(o, o, o, pa.array([None] + list(range(1, size)), pa.int64()), times)


def test_a_plain_string_with_a_control_character_keeps_its_line_whole():
    """A raw tab inside a plain string (a term given as it is, with
    checked=True: N-Triples allows it, the canonical form escapes it) was
    written as it is: the line split in two."""
    o = pa.array(['"a\tb"', '"c\x01d"'])
    times = pa.array([1, 2], pa.int64())
    for text in texts(batch.table_text, pa.array([f"<{EX}k>"] * 2), pa.array([f"<{EX}p>"] * 2), o, times, times):
        assert [line.split(b"\t")[2] for line in text.splitlines()] == [b'P"a\\tb"', b'P"c\\x1\\d"']


@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a C compiler")
def test_a_writer_built_from_another_version_of_its_source_is_not_current(tmp_path):
    source = tmp_path / "batch_text.c"
    shutil.copy(native.BATCH_TEXT, source)
    assert native.build(tmp_path / "batch_text.so", source)
    assert native.current(tmp_path / "batch_text.so", source)
    with open(source, "a") as changed:
        changed.write("/* changed since */\n")
    assert not native.current(tmp_path / "batch_text.so", source)


CHECKED = [f"<{EX}a>", "<a:b>", "<a+.-1:>", "<1a:b>", "<:b>", "<a>", "<a:b c>", "<a:b>c>", "<a:\u00e9>", "<a:b\x7f>",
           "_:a", "_:a.b-c_", "_:.a", "_:-a", "_:", "_:a b", "_:\u00e9", '"x"', '""', '"a\x7fb"', '"a\\"b"',
           '"\u00e9"', '"a"@en', '"a"b"', *(typed(i, "integer") for i in INTEGERS + ["10", "-10", "007"]),
           *(typed(d, "decimal") for d in DECIMALS + ["0.0", "-0.0", "1.0", "-1.0", "1.10", "-0.5", "0.50", "10.01"]),
           typed("2026-01-01T00:00:00Z", "dateTime"), "<a:" + "b" * 997 + ">", "<a:" + "b" * 996 + ">"]


def test_terms_told_canonical_in_c_are_those_the_checks_take_as_they_are():
    """cep/io/tables.py takes a column whose terms C tells canonical as it
    is: each is one its regular expressions take (FAST_TERM: canonical,
    checked), and the common shapes are told so."""
    import re

    from cep.io import check, tables

    told = {slot: [t for t in CHECKED + HOSTILE + REFUSED if tables._all_canonical(pa.array([t]), slot)]
            for slot in "spo"}
    for slot, taken in told.items():
        for term in taken:
            assert re.fullmatch(tables.FAST_TERM[slot], term) and len(term.encode()) <= tables.FAST_LENGTH, term
            assert check.term(term, slot) == term
    assert set(told["s"]) == {f"<{EX}a>", "<a:b>", "<a+.-1:>", "<a:b\x7f>", f"<{EX}\x7f>", "<a:" + "b" * 996 + ">",
                              "_:a", "_:a.b-c_", "_:b1"}
    assert set(told["p"]) == set(told["s"]) - {"_:a", "_:a.b-c_", "_:b1"}
    literals = {typed(i, "integer") for i in ("0", "5", "-5", "10", "-10", "9" * 400, "-" + "9" * 400)}
    literals |= {typed(d, "decimal") for d in ("0.008", "0.999999999999999999", "-0.000000000000000005", "0.0",
                                               "0.0000000000000000001", "999999999999999999.5", "1.0", "-1.0",
                                               "-0.5", "10.01", "1" * 60 + "." + "5" * 60)}
    assert set(told["o"]) - set(told["s"]) == literals | {'"x"', '""', '"5"', '"it\'s"'}
    # a column is taken as it is only when every term is told canonical, else checked as before
    column = pa.array([f"<{EX}a>"] * 2000 + ['"a"@en'])
    assert tables._all_canonical(column.slice(0, 2000), "s") and not tables._all_canonical(column, "o")
    with arrow_only():
        assert not tables._all_canonical(column.slice(0, 2000), "s")


def test_checked_rows_are_the_same_with_and_without_c():
    from cep.io.tables import checked_rows

    rng = random.Random(41)
    pool = [t for t in CHECKED + HOSTILE + REFUSED if len(t) < 2000]
    for size in (1, 50, 3000):
        for mix in (pool, pool[:3], [f"<{EX}a>", typed("1", "integer")]):
            table = pa.table({"s": [rng.choice(mix) for _ in range(size)], "p": [rng.choice(mix) for _ in range(size)],
                              "o": [rng.choice(mix) for _ in range(size)], "start": pa.array([1] * size, pa.int64()),
                              "end": pa.array([1] * size, pa.int64())})
            made = checked_rows(table)
            with arrow_only():
                assert checked_rows(table) == made
