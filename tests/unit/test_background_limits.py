"""Hostile background files (issue 17, item 12): a gzip bomb, XML entity
bombs, a FIFO or a device, text past the size limit (CEP_MAX_BACKGROUND_SIZE),
and inputs on which the readers would take unbounded time. Each stops with
exit 2 and a message naming the file, the limit and how to raise it. The
bombs are built here; the runs that could hang or exhaust memory without the
limits run in a subprocess whose timeout is a guard, not a speed claim."""

from __future__ import annotations

import gzip
import os
import re
import subprocess
import sys
import zlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cep import cli
from cep.background.knowledge import load_background
from cep.background.load import read_ontology
from cep.errors import OntologyError, UsageError

EX = "http://example.org/"
GUARD = 300  # seconds: far beyond a bounded run, short of a hung one
RULES = f"PREFIX : <{EX}>\nSELECT ?x WHERE {{ ?x a :Sensor }}\n"
RDF_HEAD = ('<?xml version="1.0"?>\n'
            '<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:ex="http://example.org/">\n')


def _cep(tmp_path, *argv, env=None):
    """`cep explain` of a small rule file with `argv`, run by cep.cli.main in
    a subprocess: (exit status, stderr)."""
    rules = tmp_path / "q.rq"
    rules.write_text(RULES)
    code = "import sys; from cep.cli import main; sys.exit(main(sys.argv[1:]))"
    done = subprocess.run([sys.executable, "-c", code, "explain", str(rules), *map(str, argv)],
                          capture_output=True, text=True, timeout=GUARD, cwd=tmp_path,
                          env={**os.environ, **(env or {})})
    return done.returncode, done.stderr


def _bomb(path, megabytes: int):
    """A gzip file of `megabytes` MiB of zeros, a chunk at a time (a few
    hundred KB on disk)."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    zeros = bytes(2**20)
    with open(path, "wb") as out:
        for _ in range(megabytes):
            out.write(packer.compress(zeros))
        out.write(packer.flush())
    return path


# ------------------------------------------------------------ decompressed size


def test_a_gzip_bomb_stops_at_the_default_limit(tmp_path):
    bomb = _bomb(tmp_path / "bomb.ttl.gz", 300)
    assert bomb.stat().st_size < 400_000
    code, err = _cep(tmp_path, "--ontology", bomb, env={"CEP_MAX_BACKGROUND_SIZE": ""})
    assert code == 2, err
    assert err == (f"cep: error: {bomb}: its text once decompressed is larger than the limit of 256 MiB on "
                   "a background file; raise it with the environment variable CEP_MAX_BACKGROUND_SIZE "
                   "(for example CEP_MAX_BACKGROUND_SIZE=512M)\n")


def test_the_limit_is_set_by_the_environment(tmp_path, monkeypatch):
    bomb = _bomb(tmp_path / "bomb.nt.gz", 3)
    monkeypatch.setenv("CEP_MAX_BACKGROUND_SIZE", "2M")
    with pytest.raises(OntologyError, match=r"bomb\.nt\.gz: its text once decompressed is larger than the "
                                            r"limit of 2 MiB .*CEP_MAX_BACKGROUND_SIZE=4M\)$"):
        load_background([bomb])
    monkeypatch.setenv("CEP_MAX_BACKGROUND_SIZE", "4m")  # raised: the zeros are read, and are no N-Triples
    with pytest.raises(OntologyError, match=r"bomb\.nt\.gz:1:1: N-Triples syntax error"):
        read_ontology(bomb)
    plain = tmp_path / "small.nt"
    plain.write_text(f"<{EX}a> <{EX}b> <{EX}c> .\n" * 3)
    monkeypatch.setenv("CEP_MAX_BACKGROUND_SIZE", "100")  # bytes
    with pytest.raises(OntologyError) as caught:
        read_ontology(plain)
    assert str(caught.value) == (
        f"{plain}: the file is larger than the limit of 100 bytes on a background file; raise it with the "
        "environment variable CEP_MAX_BACKGROUND_SIZE (for example CEP_MAX_BACKGROUND_SIZE=200)")
    monkeypatch.setenv("CEP_MAX_BACKGROUND_SIZE", "1K")
    assert len(read_ontology(plain)) == 1


@pytest.mark.parametrize("value", ["lots", "-5", "0", "1.5G", "12Q"])
def test_a_malformed_limit_is_a_usage_error(tmp_path, monkeypatch, value):
    plain = tmp_path / "a.nt"
    plain.write_text("")
    monkeypatch.setenv("CEP_MAX_BACKGROUND_SIZE", value)
    with pytest.raises(UsageError, match=f"^CEP_MAX_BACKGROUND_SIZE='{value}': expected a size in bytes"):
        read_ontology(plain)


def test_a_gz_name_on_a_plain_file(tmp_path):
    fake = tmp_path / "fake.ttl.gz"
    fake.write_text(f"<{EX}a> <{EX}b> <{EX}c> .\n")
    with pytest.raises(OntologyError) as caught:
        read_ontology(fake)
    assert str(caught.value) == f"{fake}: not a gzip file (its name ends in .gz)"


# ---------------------------------------------------- what is not a regular file


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path):
    fifo = tmp_path / "pipe.ttl"
    os.mkfifo(fifo)
    code, err = _cep(tmp_path, "--ontology", fifo)
    assert (code, err) == (2, f"cep: error: {fifo}: is a named pipe (FIFO), not a regular file\n")


def test_a_device_and_a_directory_are_no_background_files(tmp_path):
    folder = tmp_path / "folder.ttl"
    folder.mkdir()
    with pytest.raises(OntologyError) as caught:
        read_ontology(folder)
    assert str(caught.value) == f"{folder}: is a directory, not a regular file"
    device = tmp_path / "null.nt"
    device.symlink_to("/dev/null")
    with pytest.raises(OntologyError) as caught:
        read_ontology(device)
    assert str(caught.value) == f"{device}: is a character device, not a regular file"


# ------------------------------------------------------------- XML entities


def _laughs(levels: int = 9) -> str:
    """The "billion laughs": each entity ten of the one before."""
    entities = ['<!ENTITY l0 "lol">'] + [f'<!ENTITY l{i} "{f"&l{i - 1};" * 10}">' for i in range(1, levels + 1)]
    return ('<?xml version="1.0"?>\n<!DOCTYPE rdf:RDF [\n' + "\n".join(entities) + "\n]>\n" + RDF_HEAD[22:]
            + f'<rdf:Description rdf:about="{EX}x"><ex:p>&l{levels};</ex:p></rdf:Description>\n</rdf:RDF>\n')


def test_billion_laughs_is_refused_where_the_nested_entity_is_declared(tmp_path):
    bomb = tmp_path / "laughs.rdf"
    bomb.write_text(_laughs())
    assert bomb.stat().st_size < 1200
    code, err = _cep(tmp_path, "--ontology", bomb)
    assert code == 2, err
    assert err.startswith(f"cep: error: {bomb}:4:") and err.endswith(
        ": RDF/XML error: the entity l1 is defined with another entity or an escaped '&' (entities within "
        "entities are how XML bombs grow); write its text where it is used, or define it as plain text\n")


@pytest.mark.parametrize("declaration, what", [
    ('<!ENTITY ext SYSTEM "file:///etc/hostname">', "an external entity (SYSTEM or PUBLIC)"),
    ('<!ENTITY % par "x">', "a parameter entity (%name;)"),
    ('<!ENTITY amp2 "a&#38;b">', "defined with another entity or an escaped '&'"),
])
def test_external_parameter_and_smuggled_entities_are_refused(tmp_path, declaration, what):
    path = tmp_path / "e.rdf"
    path.write_text(f'<?xml version="1.0"?>\n<!DOCTYPE rdf:RDF [\n{declaration}\n]>\n{RDF_HEAD[22:]}</rdf:RDF>\n')
    where = f"^{path}:3:[0-9]+: RDF/XML error: the entity [a-z0-9]+ is "
    with pytest.raises(OntologyError, match=where + re.escape(what)):
        read_ontology(path)


def test_plain_entities_as_ontology_editors_write_them_still_work(tmp_path):
    path = tmp_path / "onto.owl"
    path.write_text(f'<?xml version="1.0"?>\n<!DOCTYPE rdf:RDF [\n<!ENTITY ex "{EX}">\n'
                    '<!ENTITY rdfs "http://www.w3.org/2000/01/rdf-schema#">\n]>\n' + RDF_HEAD[22:]
                    + '<rdf:Description rdf:about="&ex;Buoy"><rdfs:subClassOf xmlns:rdfs="&rdfs;" '
                      'rdf:resource="&ex;Sensor"/><ex:note>a &ex; b</ex:note></rdf:Description>\n</rdf:RDF>\n')
    assert sorted(read_ontology(path)) == [
        (f"<{EX}Buoy>", f"<{EX}note>", f'"a {EX} b"'),
        (f"<{EX}Buoy>", "<http://www.w3.org/2000/01/rdf-schema#subClassOf>", f"<{EX}Sensor>")]


def test_flat_entities_count_against_the_limit_once_expanded(tmp_path, monkeypatch):
    """One entity of 1,000 characters used 3,000 times: 9 KB of file, 3 MB
    of text."""
    path = tmp_path / "wide.rdf"
    path.write_text(f'<?xml version="1.0"?>\n<!DOCTYPE rdf:RDF [\n<!ENTITY k "{"k" * 1000}">\n]>\n'
                    + RDF_HEAD[22:] + f'<rdf:Description rdf:about="{EX}x">\n<ex:p>'
                    + "&k;" * 3000 + "</ex:p></rdf:Description>\n</rdf:RDF>\n")
    monkeypatch.setenv("CEP_MAX_BACKGROUND_SIZE", "2M")
    with pytest.raises(OntologyError) as caught:
        read_ontology(path)
    assert str(caught.value).startswith(f"{path}:7:")  # where the text run ends
    assert caught.value.message == (
        "its text with the XML entities expanded is larger than the limit of 2 MiB on a background file; "
        "raise it with the environment variable CEP_MAX_BACKGROUND_SIZE (for example CEP_MAX_BACKGROUND_SIZE=4M)")
    monkeypatch.setenv("CEP_MAX_BACKGROUND_SIZE", "4M")
    ((_, _, text),) = read_ontology(path)
    assert len(text) == 3_000_002


def test_a_literal_of_many_lines_in_rdfxml_is_read_in_bounded_time(tmp_path):
    """rdflib's RDF/XML reader adds a literal's pieces one by one: fed a
    line at a time, a 4 MB literal of two million lines took many minutes."""
    path = tmp_path / "long.rdf"
    path.write_text(RDF_HEAD + f'<rdf:Description rdf:about="{EX}x"><ex:p>' + "a\n" * 2_000_000
                    + "</ex:p></rdf:Description>\n</rdf:RDF>\n")
    code = ("import sys; from cep.background.load import read_ontology; "
            "((s, p, o),) = read_ontology(sys.argv[1]); print(len(o))")
    done = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=GUARD)
    assert (done.returncode, done.stdout) == (0, f"{2 + 3 * 2_000_000}\n"), done.stderr  # "a\n" is written a\\n


# ------------------------------------------------------- Turtle nesting


@pytest.mark.parametrize("open_, close", [("[ :p ", " ]"), ("( ", " )")])
def test_turtle_nested_too_deeply_is_an_error_not_a_traceback(tmp_path, capsys, open_, close):
    path = tmp_path / "deep.ttl"
    path.write_text(f"@prefix : <{EX}> .\n:a :p " + open_ * 10_000 + ":b" + close * 10_000 + " .\n")
    code = cli.main(["explain", str(_rules(tmp_path)), "--ontology", str(path)])
    err = capsys.readouterr().err
    assert (code, err) == (2, f"cep: error: {path}: Turtle error: blank nodes or collections nested too deeply "
                              "for the reader (at most a few thousand levels)\n")


def _rules(tmp_path):
    rules = tmp_path / "q.rq"
    rules.write_text(RULES)
    return rules


def test_a_gzipped_turtle_file_within_the_limit_still_reads(tmp_path):
    path = tmp_path / "ok.ttl.gz"
    path.write_bytes(gzip.compress(f"@prefix : <{EX}> .\n:a :b :c .\n".encode()))
    assert read_ontology(path) == [(f"<{EX}a>", f"<{EX}b>", f"<{EX}c>")]


# ------------------------------------------------------- Turtle literals


@pytest.mark.parametrize("name, text", [
    ("long.ttl", f"@prefix : <{EX}> .\n:a :p \"\"\"" + "x\n" * 2_000_000 + "\"\"\" .\n"),
    ("long.trig", f"@prefix : <{EX}> .\n:g {{ :a :p '" + "\\n" * 2_000_000 + "' }\n"),
])
def test_a_turtle_literal_rdflib_would_read_for_minutes_is_refused(tmp_path, name, text):
    """rdflib's Turtle reader takes time that grows with a literal's line
    breaks (or escapes, or quotes) times its length: these 4 MB files ran
    for many minutes."""
    path = tmp_path / name
    path.write_text(text)
    code, err = _cep(tmp_path, "--ontology", path)
    assert code == 2, err
    assert err.startswith(f"cep: error: {path}:2: T") and err.endswith(
        " line breaks, quotes or backslashes: the reader's time grows with their number times the length of the "
        "literal, and the file's literals are past its bound; write such text in shorter literals, or the file "
        "as N-Triples\n")


def test_ordinary_literals_of_many_kinds_read_as_before(tmp_path):
    """Quotes inside IRIs, comments and local names, strings ending in
    quotes, and a literal of a thousand lines are no trouble."""
    path = tmp_path / "ok.ttl"
    path.write_text(f"@prefix : <{EX}> .  # it's \"quoted\"\n"
                    f":a :p <{EX}it's> ; :q \"\"\"two \"\"quotes\"\" then one\"\"\"\" ; :r '''x''''' ;\n"
                    f"   :s :it\\'s ; :t \"\"\"" + "line\n" * 1000 + "\"\"\" .\n")
    got = {p: o for _, p, o in read_ontology(path)}
    assert got[f"<{EX}p>"] == f"<{EX}it's>"
    assert got[f"<{EX}q>"] == '"two \\"\\"quotes\\"\\" then one\\""'
    assert got[f"<{EX}r>"] == "\"x''\""
    assert got[f"<{EX}s>"] == f"<{EX}it's>"
    assert got[f"<{EX}t>"] == '"' + "line\\n" * 1000 + '"'


@pytest.mark.parametrize("name, text, failure", [
    ("cut.ttl", ':a :p """never ends', "AssertionError: Quote expected in string at ^ in "),  # at the end of the file
    ("type.ttl", ':a :p "1"^^.x:y .\n', "IndexError: list index out of range"),
    ("var.trig", ':g { :a :p :b }\n:a :p? 1 .\n', "AttributeError: 'NoneType' object has no attribute"),
])
def test_malformed_turtle_that_trips_rdflib_is_an_error_not_a_traceback(tmp_path, capsys, name, text, failure):
    path = tmp_path / name
    path.write_text(f"@prefix : <{EX}> .\n" + text)
    code = cli.main(["explain", str(_rules(tmp_path)), "--ontology", str(path)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith(f"cep: error: {path}: T") and f" syntax error: the reader stopped on malformed input " \
                                                       f"({failure}" in err


# ------------------------------------------------------------ XML literals


def test_an_xml_literal_rdflib_would_read_for_hours_is_refused(tmp_path):
    """rdflib parses an XML literal's value again at each element added to
    it: 800 elements took 4 s, these 100,000 (800 KB) would take hours."""
    path = tmp_path / "big.rdf"
    path.write_text(RDF_HEAD + f'<rdf:Description rdf:about="{EX}x"><ex:p rdf:parseType="Literal">'
                    + "<a>b</a>" * 100_000 + "</ex:p></rdf:Description>\n</rdf:RDF>\n")
    code, err = _cep(tmp_path, "--ontology", path)
    assert code == 2, err
    assert err.startswith(f"cep: error: {path}:3:") and err.endswith(
        ': RDF/XML error: XML literals (rdf:parseType="Literal") too large for the reader, whose work grows with '
        "the square of a literal's elements: write such text as a plain string literal, or in smaller literals\n")


def test_ordinary_xml_literals_read_as_before(tmp_path):
    path = tmp_path / "doc.rdf"
    path.write_text(RDF_HEAD + "".join(
        f'<rdf:Description rdf:about="{EX}x{i}"><ex:p rdf:parseType="Literal">some <b>bold</b> text</ex:p>'
        '<ex:q rdf:parseType="Resource"><ex:r>plain</ex:r></ex:q></rdf:Description>\n' for i in range(200))
        + "</rdf:RDF>\n")
    triples = read_ontology(path)
    assert len(triples) == 600
    assert (f"<{EX}x7>", f"<{EX}p>", '"some <b>bold</b> text"^^<http://www.w3.org/1999/02/22-rdf-syntax-ns#'
                                      'XMLLiteral>') in triples


def test_a_local_name_of_escapes_is_bounded_alike(tmp_path):
    path = tmp_path / "name.ttl"
    path.write_text(f"@prefix : <{EX}> .\n:a :p :x" + "\\#" * 2_000_000 + " .\n")
    code, err = _cep(tmp_path, "--ontology", path)
    assert code == 2, err
    assert err.startswith(f"cep: error: {path}:2: Turtle error: a name of 4,000,000 characters with 2,000,000 line "
                          "breaks, quotes or backslashes")


# ------------------------------------------------------------------ fuzzing

_SAMPLES = None


def _samples():
    """Valid files of every background format (those of test_background_load)."""
    global _SAMPLES
    if _SAMPLES is None:
        from tests.unit.test_background_load import OBO_SAMPLE, SAMPLES

        _SAMPLES = sorted({**SAMPLES, "sample.obo": OBO_SAMPLE}.items())
    return _SAMPLES


_ODD_BYTES = b'<>"\'\\:#@^_.;,[](){}\n\r\t %&!?=/'


@st.composite
def _mangled(draw):
    """A sample file of some format, changed in a few places: bytes and runs
    of the characters that matter to the syntaxes put in, spans taken out or
    copied elsewhere; gzipped or not."""
    name, text = draw(st.sampled_from(_samples()))
    data = bytearray(text.encode())
    for _ in range(draw(st.integers(1, 6))):
        at = draw(st.integers(0, len(data)))
        kind = draw(st.sampled_from(["insert", "delete", "copy", "byte"]))
        if kind == "insert":
            byte = draw(st.sampled_from(list(_ODD_BYTES)) | st.integers(0, 255))
            data[at:at] = bytes([byte]) * draw(st.sampled_from([1, 1, 2, 3, 40]))
        elif kind == "delete":
            del data[at:at + draw(st.integers(1, 20))]
        elif kind == "copy" and data:
            start = draw(st.integers(0, len(data) - 1))
            data[at:at] = data[start:start + draw(st.integers(1, 40))]
        elif at < len(data):
            data[at] = draw(st.integers(0, 255))
    return name + (".gz" if draw(st.booleans()) else ""), bytes(data)


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(_mangled())
def test_a_mangled_background_file_is_read_or_refused_with_a_message(tmp_path, case):
    """Every format, changed at random: its triples or an OntologyError,
    never another exception (rdflib's Turtle reader raised IndexError,
    AttributeError and AssertionError on such files). A hang would stop
    the test run: no example takes more than a fraction of a second."""
    name, data = case
    path = tmp_path / name
    path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    try:
        triples = read_ontology(path)
    except OntologyError as exc:
        assert str(exc).startswith(str(path)), exc
    else:
        assert all(len(t) == 3 and all(isinstance(x, str) for x in t) for t in triples)
