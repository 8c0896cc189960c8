"""prolog/cep_values.pl: its N-Triples writer
(cep_nt/2) checked character for character against cep.terms.canonical.

The cross-check writes each term's Prolog encoding with
cep.terms.prolog_text (the text the runtime receives), lets SWI-Prolog read
it back and print cep_nt/2 of it, and compares every line with the
canonical text Python computes for the same N-Triples term. Its plunit
suite runs in test_prolog_plunit.py.
"""

from __future__ import annotations

import random
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from cep import terms

ROOT = Path(__file__).resolve().parents[2]
VALUES = ROOT / "prolog" / "cep_values.pl"
XSD = terms.XSD

pytestmark = pytest.mark.skipif(shutil.which("swipl") is None, reason="needs SWI-Prolog (swipl)")


def typed(lex: str, local: str) -> str:
    return terms.literal(lex, XSD + local)


def plain(text: str) -> str:
    return terms.literal(text)


# ------------------------------------------------------------ the terms

IRIS = [
    "<http://example.org/a>",
    "<urn:x:1>",
    "<http://example.org/caf\u00e9/\u6771\u4eac>",
    "<http://example.org/emoji/\U0001F600>",
    "<http://example.org/it's>",
    "<http://example.org/q?a=1&b=%20#frag>",
    r"<http://example.org/quote/\u0022x>",  # unescapes to a raw quote
    r"<http://example.org/back/\u005Cslash>",  # unescapes to a raw backslash
    r"<http://example.org/\U0001F600>",
]

BNODES = ["_:b1", "_:a.b-c", "_:_x", "_:0"]

STRINGS = [
    "",
    "abc",
    'say "hi"',
    "back\\slash",
    "new\nline",
    "cr\rlf\r\n",
    "tab\there",
    "bell\x07 nul\x00 esc\x1b del\x7f us\x1f",
    "caf\u00e9 \u6771\u4eac \U0001F600",
    "nel\x85 ls\u2028 ps\u2029",  # not line breaks for us, but for str.splitlines
    "'single' quotes",
    "\\u0041 stays as text",
    " leading and trailing ",
]

LANGS = [
    terms.literal("hello", lang="en"),
    terms.literal("hallo", lang="DE"),
    terms.literal("x", lang="en-GB"),
    terms.literal('quote " and \\', lang="fr"),
    terms.literal("", lang="en"),
    terms.literal("\u00e9t\u00e9\n", lang="fr-CA-x-Quebec1"),
]

INTEGERS = [
    "0", "-0", "+5", "007", "-12", " 42 ", "9223372036854775807", "-9223372036854775809",
    "123456789012345678901234567890123456789012345678901234567890",
    "abc", "1.5", "",  # invalid: kept as l/2 literals
]

DECIMALS = [
    "1.5", "1.50", "-0.125", "+.5", "1.", "0.0", "-0.0", "2", "-2", "0.1", "100.000",
    "123456789.123456789123456789", "-0.000000000000000000000000001",
    "1e5", "abc",  # invalid
]

DOUBLES = [
    "1.5", "1e20", "1.0E20", "1.5e-7", "0", "-0", "-0.0E0", "0.1", "1e22", "1e23", "123.0",
    "4.9e-324", "5e-324", "2.2250738585072014e-308", "2.225073858507201e-308",
    "1.7976931348623157e308", "9007199254740993", "123456789012345678", "1e16", "1e-5",
    "-1.25E+3", ".5", "5.", "1e-400",
    "1.5.5", "INFINITY", "-NaN",  # invalid
]

# Doubles that are not finite: Python writes them as `inf`, `-inf`, `nan`,
# which SWI-Prolog reads as *atoms* (see test_known_bug_nonfinite_double_text).
NONFINITE_DOUBLES = ["INF", "-INF", "+INF", "NaN", "1e400"]

BOOLEANS = ["true", "false", "1", "0", " true ", "TRUE", "yes"]

DATETIMES = [
    "2026-01-01T00:00:05Z",
    "2026-01-01T00:00:05.25Z",
    "2026-01-01T00:00:05.250Z",
    "2026-01-01T00:00:05.2509Z",
    "2026-01-01T00:00:05.001Z",
    "2026-01-01T00:00:05",
    "2026-01-01T02:00:05+02:00",
    "2025-12-31T23:30:00-01:45",
    "2026-01-01T24:00:00Z",
    "1970-01-01T00:00:00Z",
    "1969-12-31T23:59:59.999Z",
    "2000-02-29T12:00:00Z",
    "1900-03-01T00:00:00Z",
    "1000-01-01T00:00:00Z",
    "9999-12-31T23:59:59.999Z",
    "2001-02-29T00:00:00Z", "2026-13-01T00:00:00Z", "2026-01-01", "yesterday",  # invalid
]

# Years before 1000: Python's strftime("%Y") writes them without padding
# (see test_known_bug_datetime_years_before_1000).
EARLY_DATETIMES = ["0999-01-01T00:00:00Z", "0001-01-01T00:00:00Z"]

DURATIONS = [
    "P1Y2M3DT4H5M6.5S", "PT0S", "P0D", "-P1D", "PT36H", "P13M", "PT1.0001S", "-PT0.5S",
    "P1Y", "PT1M", "P1M", "PT90M", "PT3600S", "P0Y0M0DT0H0M0.000S", "-P1Y1MT1S",
    "P1YT", "PT", "P", "1D",  # invalid
]

OTHERS = [
    typed("x", "NOTATYPE"),
    terms.literal("x", "http://example.org/type"),
    terms.literal("a\nb\t\"c\"", "http://example.org/type"),
    typed("1", "int"),
    typed("0001", "int"),
    typed("1.5", "float"),
    typed("P1D", "dayTimeDuration"),
    typed("2026-01-01", "date"),
    typed("abc", "string"),
    typed("", "string"),
]


def random_terms(seed: int = 20260101) -> list[str]:
    rnd = random.Random(seed)
    pool = "abcXYZ09 _-.,;:!?\"'\\\n\r\t\x01\x7f\u00e9\u00df\u6771\u2028\U0001F600"
    out = []
    for _ in range(60):
        text = "".join(rnd.choice(pool) for _ in range(rnd.randint(0, 12)))
        out.append(plain(text))
        out.append(terms.literal(text, lang=rnd.choice(["en", "de-CH", "ZH-hant"])))
    for _ in range(60):
        out.append(typed(str(rnd.randint(-10**30, 10**30)), "integer"))
        digits = rnd.randint(0, 12)
        out.append(typed(f"{rnd.randint(-10**12, 10**12) / 10**digits:.{digits}f}", "decimal"))
    for _ in range(120):  # random finite bit patterns: all magnitudes, subnormals
        (x,) = struct.unpack("<d", struct.pack("<Q", rnd.getrandbits(64)))
        if x == x and abs(x) != float("inf"):
            out.append(typed(repr(x), "double"))
    for _ in range(40):
        out.append(typed(repr(rnd.uniform(-1e6, 1e6)), "double"))
    for _ in range(40):
        ms = rnd.randint(-30610224000000, 253402300799999)  # years 1000..9999
        out.append(typed(terms.format_datetime_ms(ms), "dateTime"))
    for _ in range(40):
        sign = rnd.choice([1, -1])
        months, ms = sign * rnd.randint(0, 400), sign * rnd.randint(0, 10**11)
        out.append(typed(terms.format_duration(months, ms), "duration"))
    return out


CROSS_CHECK_TERMS = (
    IRIS + BNODES + [plain(s) for s in STRINGS] + LANGS
    + [typed(v, "integer") for v in INTEGERS]
    + [typed(v, "decimal") for v in DECIMALS]
    + [typed(v, "double") for v in DOUBLES]
    + [typed(v, "boolean") for v in BOOLEANS]
    + [typed(v, "dateTime") for v in DATETIMES]
    + [typed(v, "duration") for v in DURATIONS]
    + OTHERS
    + random_terms()
)

# ------------------------------------------------------------ helpers

DRIVER = """
:- use_module({values}).
:- initialization(main, main).

main :-
    set_stream(user_output, encoding(utf8)),
    setup_call_cleanup(open({terms}, read, In, [encoding(utf8)]),
                       print_all(In),
                       close(In)).

print_all(In) :-
    read_term(In, T, []),
    (   T == end_of_file
    ->  true
    ;   cep_nt(T, S),
        format("~s~n", [S]),
        print_all(In)
    ).
"""


def prolog_nt(tmp_path: Path, nts: list[str]) -> list[str]:
    """cep_nt/2 of each term, after the round trip through prolog_text."""
    data = tmp_path / "terms.pl"
    data.write_text("".join(terms.prolog_text(nt) + ".\n" for nt in nts), encoding="utf-8")
    driver = tmp_path / "driver.pl"
    driver.write_text(
        DRIVER.format(values=_quote(str(VALUES.with_suffix(""))), terms=_quote(str(data))),
        encoding="utf-8",
    )
    proc = subprocess.run(["swipl", str(driver)], capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr.decode("utf-8", "replace")
    # split on LF only: canonical text may hold U+0085 or U+2028 raw, which
    # str.splitlines would also break at
    lines = proc.stdout.decode("utf-8").split("\n")
    assert lines[-1] == ""
    return lines[:-1]


def _quote(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


# ------------------------------------------------------------ tests


def test_cross_check_terms_cover_the_encoding():
    kinds = {type(terms.to_prolog(nt)).__name__ for nt in CROSS_CHECK_TERMS}
    functors = {p.functor for p in map(terms.to_prolog, CROSS_CHECK_TERMS) if hasattr(p, "functor")}
    assert {"Atom", "Str", "int", "float", "Struct"} <= kinds
    assert {"bn", "lang", "dec", "bool", "dt", "dur", "l"} <= functors
    assert len(CROSS_CHECK_TERMS) >= 300


def test_cep_nt_equals_python_canonical(tmp_path):
    got = prolog_nt(tmp_path, CROSS_CHECK_TERMS)
    assert len(got) == len(CROSS_CHECK_TERMS)
    mismatches = [
        (nt, terms.canonical(nt), line)
        for nt, line in zip(CROSS_CHECK_TERMS, got)
        if line != terms.canonical(nt)
    ]
    assert not mismatches, "\n".join(f"{nt!r}: python {py!r} prolog {pl!r}" for nt, py, pl in mismatches[:20])


FLOAT_DRIVER = """
:- use_module({values}).
:- initialization(main, main).

main :-
    setup_call_cleanup(open({terms}, read, In, [encoding(utf8)]),
                       print_all(In),
                       close(In)).

print_all(In) :-
    read_term(In, X, []),
    (   X == end_of_file
    ->  true
    ;   cep_fn(cast('http://www.w3.org/2001/XMLSchema#float'), [X], l(Lex, _)),
        format("~s~n", [Lex]),
        print_all(In)
    ).
"""


def float32_lexical(x: float) -> str:
    """Canonical xsd:float of a double: numpy rounds it to single precision
    and finds the shortest digits; laid out like terms.format_double."""
    import numpy as np
    from decimal import Decimal

    with np.errstate(over="ignore"):
        f = np.float32(x)
    if np.isnan(f):
        return "NaN"
    if np.isinf(f):
        return "INF" if f > 0 else "-INF"
    if f == 0:
        return "-0.0E0" if np.signbit(f) else "0.0E0"
    d = Decimal(np.format_float_scientific(abs(f), unique=True))
    digits = "".join(map(str, d.as_tuple().digits)).rstrip("0") or "0"
    sign = "-" if f < 0 else ""
    return sign + digits[0] + "." + (digits[1:] or "0") + "E" + str(d.adjusted())


def test_cast_to_float_matches_numpy(tmp_path):
    """cast(xsd:float) rounds to single precision and writes the shortest
    digits that read back as the same single (the algorithm is this
    module's own; numpy's Dragon4 is the reference)."""
    pytest.importorskip("numpy")
    rnd = random.Random(7)
    values = [0.1, 0.2, 0.3, 1.0 / 3, 16777217.0, 3.4028235e38, 3.4028236e38, 1e39, 1.4e-45,
              7e-46, 7.1e-46, 1e-46, 1.17549435e-38, 1.1754942e-38, 0.0, -0.0, -2.5, 2**-149, 2**-150]
    for _ in range(300):
        (x,) = struct.unpack("<d", struct.pack("<Q", rnd.getrandbits(64)))
        if x == x and abs(x) != float("inf"):
            values.append(x)
    for _ in range(300):  # mostly inside the single range
        values.append(rnd.uniform(-1, 1) * 10.0 ** rnd.randint(-45, 38))
    data = tmp_path / "doubles.pl"
    data.write_text("".join(terms.prolog_text(typed(repr(v), "double")) + ".\n" for v in values))
    driver = tmp_path / "driver.pl"
    driver.write_text(FLOAT_DRIVER.format(values=_quote(str(VALUES.with_suffix(""))), terms=_quote(str(data))))
    proc = subprocess.run(["swipl", str(driver)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    got = proc.stdout.split("\n")[:-1]
    expected = [float32_lexical(v) for v in values]
    wrong = [(v, e, g) for v, e, g in zip(values, expected, got) if e != g]
    assert len(got) == len(values)
    assert not wrong, wrong[:10]


# Regressions: bugs the cross-check found in cep/terms.py and cep/prolog.py.


def test_nonfinite_doubles_reach_prolog_as_floats(tmp_path):
    nts = [typed(v, "double") for v in NONFINITE_DOUBLES]
    assert prolog_nt(tmp_path, nts) == [terms.canonical(nt) for nt in nts]


def test_datetimes_before_year_1000_are_zero_padded(tmp_path):
    nts = [typed(v, "dateTime") for v in EARLY_DATETIMES]
    assert [terms.canonical(nt) for nt in nts] == [
        typed(v, "dateTime") for v in EARLY_DATETIMES
    ]
    assert prolog_nt(tmp_path, nts) == [terms.canonical(nt) for nt in nts]


def test_iri_canonical_is_idempotent():
    for nt in (r"<http://example.org/quote/\u0022x>", r"<http://example.org/back/\u005Cslash>"):
        once = terms.canonical(nt)
        assert terms.canonical(once) == once


def test_iri_brackets_is_not_the_empty_list(tmp_path):
    nts = ["<[]>"]
    assert prolog_nt(tmp_path, nts) == [terms.canonical(nt) for nt in nts]
