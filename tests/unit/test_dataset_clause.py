"""`FROM <file>` in a rule file (SPARQL's dataset clause): the files a query
names, how their IRIs become paths, the errors with their file:line:column,
the run's one background graph (ontology_paths), and `cep` run, explain and
compile loading what FROM names as if it were given with --ontology."""

import json
import os
from pathlib import Path

import pytest

from cep import cli
from cep.algebra import sexpr
from cep.background.knowledge import load_background, ontology_paths
from cep.errors import QueryError
from cep.rules import load_rules, parse_rules

EX = "http://example.org/"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
ONTOLOGY = f"""\
@prefix : <{EX}> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
:Buoy rdfs:subClassOf :Sensor .
"""
SENSORS = "SELECT ?x WHERE { ?x a :Sensor }\n"


@pytest.fixture
def tree(tmp_path):
    """tmp/rules/ for rule files, tmp/ontologies/ with a.ttl, b.nt and c.ttl,
    and tmp/x/y/, a current directory from which ../ontologies is no folder."""
    root = tmp_path.resolve()
    (root / "rules").mkdir()
    (root / "x" / "y").mkdir(parents=True)
    (root / "ontologies").mkdir()
    (root / "ontologies" / "a.ttl").write_text(ONTOLOGY)
    (root / "ontologies" / "b.nt").write_text("")
    (root / "ontologies" / "c.ttl").write_text("")
    return root


def _write(path, query):
    path.write_text(f"PREFIX : <{EX}>\n{query}\n")
    return path


def parse(text, filename, allow_from=None):
    """The queries of `text` as a rule file `filename`, whose FROM may read
    the files of ../ontologies beside its folder (unless told otherwise)."""
    if allow_from is None:
        allow_from = [Path(filename).parent.parent / "ontologies"]
    return parse_rules(f"PREFIX : <{EX}>\n" + text, str(filename), allow_from=allow_from)


def error(text, filename) -> str:
    with pytest.raises(QueryError) as info:
        parse(text, filename)
    return str(info.value)


# ----------------------------------------------------------------- parsing


def test_several_froms_by_relative_path_file_iri_and_prefixed_name(tree):
    onto = tree / "ontologies"
    (q,) = parse(f"PREFIX o: <{onto.as_uri()}/>\n"
                 f"SELECT ?x FROM <../ontologies/a.ttl> FROM <{(onto / 'b.nt').as_uri()}>\n"
                 f"  FROM o:c.ttl WHERE {{ ?x a :Sensor }}", tree / "rules" / "q.rq")
    assert q.ontologies == (str(onto / "a.ttl"), str(onto / "b.nt"), str(onto / "c.ttl"))


def test_every_query_form_takes_from(tree):
    rules = tree / "rules" / "q.rq"
    construct, update = parse("CONSTRUCT { ?x a :Thing } FROM <../ontologies/a.ttl> WHERE { ?x a :Sensor }\n"
                              "DELETE { ?x :at ?y } FROM <../ontologies/b.nt> WHERE { ?x :left ?y }", rules)
    assert construct.ontologies == (str(tree / "ontologies" / "a.ttl"),)
    assert update.ontologies == (str(tree / "ontologies" / "b.nt"),)
    (plain,) = parse(SENSORS, rules)
    assert plain.ontologies == ()
    assert parse("SELECT ?x WHERE { ?x from ?y }", rules)[0].ontologies == ()  # `from` stays a bare name


def test_a_relative_iri_is_a_path_from_the_rule_files_directory_not_the_current_one(tree, monkeypatch):
    monkeypatch.chdir(tree / "x" / "y")
    (q,) = load_rules(_write(tree / "rules" / "q.rq", "SELECT ?x FROM <../ontologies/a.ttl> WHERE { ?x a :S }"),
                      allow_from=[tree / "ontologies"])
    assert q.ontologies == (str(tree / "ontologies" / "a.ttl"),)
    # a rule file named relative to the current directory
    monkeypatch.chdir(tree)
    (q,) = parse("SELECT ?x FROM <../ontologies/a.ttl> WHERE { ?x a :S }", "rules/q.rq")
    assert q.ontologies == (str(tree / "ontologies" / "a.ttl"),)


def test_text_without_a_file_resolves_against_the_current_directory(tree, monkeypatch):
    monkeypatch.chdir(tree / "ontologies")
    (q,) = parse("SELECT ?x FROM <a.ttl> WHERE { ?x a :S }", "<string>")
    assert q.ontologies == (str(tree / "ontologies" / "a.ttl"),)


def test_a_file_base_and_percent_escapes(tree):
    (tree / "ontologies" / "my onto.ttl").write_text("")
    (q,) = parse(f"BASE <{(tree / 'ontologies').as_uri()}/>\n"
                 "SELECT ?x FROM <a.ttl> FROM <my%20onto.ttl> WHERE { ?x a :S }", tree / "rules" / "q.rq")
    assert q.ontologies == (str(tree / "ontologies" / "a.ttl"), str(tree / "ontologies" / "my onto.ttl"))


def test_explain_shows_the_files_as_file_iris(tree):
    (q,) = parse("SELECT ?x FROM <../ontologies/a.ttl> WHERE { ?x a :S }", tree / "rules" / "q.rq")
    assert sexpr.query(q).splitlines()[:2] == ["(select (?x)", f"  (from <{(tree / 'ontologies' / 'a.ttl').as_uri()}>)"]


# ------------------------------------------------------------------ errors


def test_from_named_is_not_supported(tree):
    rules = tree / "rules" / "q.rq"
    assert error("SELECT ?x\n  FROM NAMED <../ontologies/a.ttl> WHERE { ?x a :S }", rules) == (
        f"{rules}:3:3: FROM NAMED is not supported: a run has one background graph; name its files "
        "with FROM <file>")


@pytest.mark.parametrize("declarations, source, iri", [
    ("", "<http://example.org/onto.ttl>", "http://example.org/onto.ttl"),
    ("", "<urn:x:onto>", "urn:x:onto"),
    ("", ":onto.ttl", EX + "onto.ttl"),
    ("BASE <http://example.org/rules/>\n", "<../onto.ttl>", "http://example.org/onto.ttl"),
])
def test_only_local_files_can_be_background(tree, declarations, source, iri):
    rules = tree / "rules" / "q.rq"
    line = 2 + declarations.count("\n")
    assert error(f"{declarations}SELECT ?x FROM {source} WHERE {{ ?x a :S }}", rules) == (
        f"{rules}:{line}:11: only local files can be loaded as background knowledge, not <{iri}>: "
        "name a file by its path relative to the rule file, FROM <ontologies/roads.ttl>, or by a "
        "file: IRI, FROM <file:///data/roads.ttl>")


def test_a_missing_file_a_directory_and_an_unknown_type_are_errors_at_the_from(tree):
    rules = tree / "rules" / "q.rq"
    (tree / "ontologies" / "notes.txt").write_text("")
    assert error("SELECT ?x\nFROM <../ontologies/a.ttl>\nFROM <../ontologies/nope.ttl> WHERE { ?x a :S }",
                 rules) == f"{rules}:4:1: the background file {tree}/ontologies/nope.ttl does not exist"
    assert error("SELECT ?x FROM <../ontologies> WHERE { ?x a :S }", rules) == (
        f"{rules}:2:11: the background file {tree}/ontologies is a directory, not a regular file")
    assert error("SELECT ?x FROM <../ontologies/notes.txt> WHERE { ?x a :S }", rules).startswith(
        f"{rules}:2:11: unknown background file type .txt; background files end in .ttl")


def test_a_missing_file_stops_loading_the_rule_file(tree):
    rules = _write(tree / "rules" / "q.rq", "SELECT ?x FROM <onto.ttl> WHERE { ?x a :S }")
    with pytest.raises(QueryError, match=f"^{rules}:2:11: the background file {tree}/rules/onto.ttl"):
        load_rules([rules])


def test_a_from_in_a_subquery_is_an_error(tree):
    rules = tree / "rules" / "q.rq"
    assert error("CONSTRUCT { ?x a :T } { SELECT ?x FROM <../ontologies/a.ttl> { ?x a :S } }", rules) == (
        f"{rules}:2:35: FROM names the background of the whole query: write it after the CONSTRUCT "
        "template, before the subquery")


# ----------------------------------------------------- one background graph


def test_ontology_paths_is_the_given_files_then_froms_each_once(tree, monkeypatch):
    onto = tree / "ontologies"
    rules = tree / "rules" / "q.rq"
    queries = parse("SELECT ?x FROM <../ontologies/c.ttl> FROM <../ontologies/a.ttl> WHERE { ?x a :S }\n"
                    "SELECT ?x FROM <../ontologies/b.nt> FROM <../ontologies/c.ttl> WHERE { ?x a :S }", rules)
    assert ontology_paths(queries) == [onto / "c.ttl", onto / "a.ttl", onto / "b.nt"]
    monkeypatch.chdir(tree)
    # a given file is kept as given, and a FROM naming it by another path is left out
    assert ontology_paths(queries, ["ontologies/../ontologies/a.ttl"]) == [
        Path("ontologies/../ontologies/a.ttl"), onto / "c.ttl", onto / "b.nt"]
    assert ontology_paths(parse(SENSORS, rules)) == []
    background = load_background(ontology_paths(queries, ["ontologies/a.ttl"]))
    assert background.sources == ("ontologies/a.ttl", str(onto / "c.ttl"), str(onto / "b.nt"))
    assert (f"<{EX}Buoy>", "<http://www.w3.org/2000/01/rdf-schema#subClassOf>", f"<{EX}Sensor>") in background.triples


# --------------------------------------------------------------- the CLI


def _events(tree):
    path = tree / "events.jsonl"
    path.write_text("".join(json.dumps({"s": f"<{EX}{s}>", "p": f"<{RDF_TYPE}>", "o": f"<{EX}{c}>", "t": t}) + "\n"
                            for s, c, t in [("b1", "Buoy", 1000), ("s1", "Sensor", 2000), ("r1", "Rock", 3000)]))
    return path


def _run(argv, capsys):
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _answers(out):
    return sorted((a["bindings"]["x"]["value"], a["start"]) for a in map(json.loads, out.splitlines()))


def test_cep_run_loads_what_from_names_as_if_given_with_ontology(tree, capsys, monkeypatch):
    monkeypatch.chdir(tree / "x" / "y")  # FROM is relative to the rule file, not to here
    events = _events(tree)
    named = _write(tree / "rules" / "named.rq", "SELECT ?x FROM <../ontologies/a.ttl> WHERE { ?x a :Sensor }")
    plain = _write(tree / "rules" / "plain.rq", "SELECT ?x WHERE { ?x a :Sensor }")
    local = ["--events", events, "--engine", "local", "-q", "--allow-from", tree / "ontologies"]

    code, out, err = _run(["run", named, *local], capsys)
    assert code == 0, err
    with_from = _answers(out)
    code, out, err = _run(["run", plain, *local, "--ontology", tree / "ontologies" / "a.ttl"], capsys)
    assert code == 0, err
    assert with_from == _answers(out) == [(f"{EX}b1", "1970-01-01T00:00:01Z"), (f"{EX}s1", "1970-01-01T00:00:02Z")]
    code, out, err = _run(["run", plain, *local], capsys)
    assert code == 0, err
    assert _answers(out) == [(f"{EX}s1", "1970-01-01T00:00:02Z")]  # no background: the buoy is no sensor

    # one graph for the run: the FROM of one rule file is background of the other's query too
    code, out, err = _run(["run", named, plain, *local], capsys)
    assert code == 0, err
    assert sorted(json.loads(line)["query"] for line in out.splitlines()) == ["named", "named", "plain", "plain"]


def test_cep_explain_and_compile_load_what_from_names(tree, capsys):
    # (the queries read a stream: one that reads none is over static data,
    # and answers its background's solutions once, tests/unit/test_static_queries.py)
    stream = "FROM STREAM <http://example.org/s> [RANGE 1s TUMBLING]"
    named = _write(tree / "rules" / "named.rq",
                   f"REGISTER QUERY sensors AS SELECT ?x FROM <../ontologies/a.ttl> {stream} WHERE {{ ?x a :Sensor }}")
    plain = _write(tree / "rules" / "plain.rq", f"REGISTER QUERY sensors AS SELECT ?x {stream} WHERE {{ ?x a :Sensor }}")
    code, out, err = _run(["explain", named, "--allow-from", tree / "ontologies"], capsys)
    assert code == 0, err
    assert f"(from <{(tree / 'ontologies' / 'a.ttl').as_uri()}>)" in out
    outputs = {}
    for name, argv in {"from": [named, "--allow-from", tree / "ontologies"],
                       "ontology": [plain, "--ontology", tree / "ontologies" / "a.ttl"],
                       "none": [plain]}.items():
        code, outputs[name], err = _run(["compile", *argv], capsys)
        assert code == 0, err
    # the rules are compiled against the schema: a Buoy event is a Sensor event
    assert outputs["from"] == outputs["ontology"] != outputs["none"]


def test_a_malformed_ontology_named_by_from_stops_the_run_before_any_event(tree, capsys):
    bad = tree / "ontologies" / "bad.ttl"
    bad.write_text(f"@prefix : <{EX}> .\n:a :b :c .\n:d :e .\n")
    rules = _write(tree / "rules" / "q.rq", "SELECT ?x FROM <../ontologies/bad.ttl> WHERE { ?x a :Sensor }")
    code, out, err = _run(["run", rules, "--events", _events(tree), "--engine", "local",
                           "--allow-from", tree / "ontologies"], capsys)
    assert code == 2 and out == ""
    assert f"{bad}:3:" in err and "Turtle syntax error" in err
    assert "event" not in err  # stopped before reading any event


def test_a_missing_file_named_by_from_is_reported_at_the_from(tree, capsys):
    rules = _write(tree / "rules" / "q.rq", "SELECT ?x\nFROM <gone.ttl> WHERE { ?x a :Sensor }")
    code, out, err = _run(["run", rules, "--events", _events(tree), "--engine", "local"], capsys)
    assert (code, out) == (2, "")
    assert err == f"cep: error: {rules}:3:1: the background file {tree}/rules/gone.ttl does not exist\n"


def test_the_engine_loads_what_from_names_and_refuses_a_background_without_it(tree):
    from cep.engine import Engine
    from cep.errors import UsageError
    from cep.events import Event

    rules = _write(tree / "rules" / "s.rq", SENSORS.replace("WHERE", "FROM <../ontologies/a.ttl> WHERE"))
    queries = load_rules([rules], allow_from=tree / "ontologies")  # one folder, or a list of them
    buoy = [Event(f"<{EX}b1>", f"<{RDF_TYPE}>", f"<{EX}Buoy>", 1, 1)]
    engine = Engine(queries)
    assert [dict(a.bindings) for a in engine.push(buoy) + engine.flush()] == [{"x": f"<{EX}b1>"}]
    with pytest.raises(UsageError, match="a.ttl with FROM, and the background given does not hold it"):
        Engine(queries, background=load_background([tree / "ontologies" / "c.ttl"]))
    both = load_background([tree / "ontologies" / "c.ttl", tree / "ontologies" / "a.ttl"])
    engine = Engine(queries, background=both)
    assert len(engine.push(buoy) + engine.flush()) == 1


# ------------------------------------------------------- what FROM may read


@pytest.fixture
def outside(tree):
    """A file beside the tree that no rule file of it may name: N-Triples
    whose first line is not a triple (the N-Triples reader quotes it)."""
    secret = tree.parent / f"{tree.name}-secret" / "secret.nt"
    secret.parent.mkdir()
    secret.write_text("SECRET-TOKEN-1234 is no triple\n")
    return secret


def _refused(tree, ref, capsys, declaration="# no declaration", allow=()):
    """`cep explain` of a rule file of tree/rules whose query names `ref`
    with FROM: (exit status, stderr); the FROM is on line 4, column 3."""
    rules = tree / "rules" / "q.rq"
    rules.write_text(f"PREFIX : <{EX}>\n{declaration}\nSELECT ?x\n  FROM {ref} WHERE {{ ?x a :Sensor }}\n")
    code, out, err = _run(["explain", rules, *allow], capsys)
    assert (out == "") == (code != 0)
    return code, err


OUTSIDE = "is outside the folders FROM may read"


@pytest.mark.parametrize("ref", [
    "<../../{name}-secret/secret.nt>",                  # ../
    "<%2e%2e/%2E%2E/{name}-secret/secret.nt>",          # ../ percent-encoded
    "<..%2F..%2F{name}-secret%2Fsecret.nt>",            # / percent-encoded
    "<{root}-secret/secret.nt>",                        # a file: IRI
    "<file://localhost{path}-secret/secret.nt>",
    "s:secret.nt",                                      # a prefixed name
    "<link.nt>",                                        # a symbolic link in the folder, to outside
])
def test_from_refuses_a_file_outside_the_rule_files_folder_without_reading_it(tree, outside, capsys, ref):
    (tree / "rules" / "link.nt").symlink_to(outside)
    ref = ref.format(name=tree.name, root=tree.as_uri(), path=tree)
    code, err = _refused(tree, ref, capsys, declaration=f"PREFIX s: <{outside.parent.as_uri()}/>")
    rules = tree / "rules" / "q.rq"
    assert (code, err) == (2, f"cep: error: {rules}:4:3: the background file {outside} {OUTSIDE} "
                              f"({tree}/rules, the rule file's): name it with --ontology, or allow its folder "
                              "with --allow-from DIR (allow_from= in the Python API)\n")
    assert "SECRET" not in err


def test_a_missing_file_outside_is_refused_alike(tree, outside, capsys):
    code, err = _refused(tree, "</nonexistent/nothing.ttl>", capsys)
    assert code == 2 and f"the background file /nonexistent/nothing.ttl {OUTSIDE} ({tree}/rules," in err


def test_allow_from_and_ontology_let_from_read_outside(tree, outside, capsys):
    allow = ["--allow-from", outside.parent]
    code, err = _refused(tree, f"<{outside.as_uri()}>", capsys, allow=allow)
    # allowed, read, and its own file's error may show its text: the user allowed it
    assert (code, err) == (2, f"cep: error: {outside}:1:1: N-Triples syntax error: expected the subject, an "
                              "IRI <...> or a blank node _:label, but found 'SECRET-TOKEN-1234 is no triple'\n")
    outside.write_text(f"<{EX}Buoy> <http://www.w3.org/2000/01/rdf-schema#subClassOf> <{EX}Sensor> .\n")
    code, err = _refused(tree, f"<{outside.as_uri()}>", capsys, allow=allow)
    assert code == 0, err
    code, err = _refused(tree, f"<{outside.as_uri()}>", capsys, allow=["--ontology", outside])
    assert code == 0, err
    sibling = outside.parent / "other.nt"
    sibling.write_text("")
    code, err = _refused(tree, f"<{sibling.as_uri()}>", capsys, allow=["--ontology", outside])
    assert code == 2 and OUTSIDE in err  # an --ontology file opens no folder
    code, err = _refused(tree, f"<{sibling.as_uri()}>", capsys, allow=["--allow-from", tree / "nowhere"])
    assert (code, err) == (2, f"cep: error: --allow-from {tree / 'nowhere'}: not a folder\n")


def test_the_python_api_takes_allow_from(tree, outside, monkeypatch):
    ref = f"SELECT ?x FROM <{outside.as_uri()}> WHERE {{ ?x a :S }}"
    with pytest.raises(QueryError, match=f"^{tree}/rules/q.rq:2:11: the background file {outside} {OUTSIDE}"):
        parse(ref, tree / "rules" / "q.rq", allow_from=[])
    assert parse(ref, tree / "rules" / "q.rq", allow_from=[outside.parent])[0].ontologies == (str(outside),)
    # one folder as a str is that folder (not its characters, of which "/" would allow every file)
    assert parse(ref, tree / "rules" / "q.rq", allow_from=str(outside.parent))[0].ontologies == (str(outside),)
    with pytest.raises(QueryError, match=OUTSIDE):
        parse(ref, tree / "rules" / "q.rq", allow_from="/nonexistent")
    rules = _write(tree / "rules" / "q.rq", ref)
    with pytest.raises(QueryError, match=OUTSIDE):
        load_rules([rules])
    assert load_rules([rules], allow_from=[outside])[0].ontologies == (str(outside),)
    # text without a file: the current directory stands for its folder
    monkeypatch.chdir(tree / "ontologies")
    assert parse("SELECT ?x FROM <a.ttl> WHERE { ?x a :S }", "<string>", allow_from=[])[0].ontologies == (
        str(tree / "ontologies" / "a.ttl"),)
    with pytest.raises(QueryError, match=f"^<string>:2:11: the background file {tree}/rules/q.rq {OUTSIDE} "
                                         f"\\({tree}/ontologies, the rule file's\\)"):
        parse("SELECT ?x FROM <../rules/q.rq> WHERE { ?x a :S }", "<string>", allow_from=[])


def test_spark_detect_checks_what_from_reads_before_spark_is_asked_for_anything(tree, outside):
    from cep.spark import detect

    text = f"PREFIX : <{EX}>\nSELECT ?x FROM <{outside.as_uri()}> WHERE {{ ?x a :S }}"
    with pytest.raises(QueryError, match=f"^<rules>:2:11: the background file {outside} {OUTSIDE}"):
        detect(None, text)  # no events: refused before they are touched
    with pytest.raises(QueryError, match=OUTSIDE):
        detect(None, text, allow_from="/nonexistent")
    with pytest.raises(QueryError, match=OUTSIDE):
        detect(None, _write(tree / "rules" / "q.rq", f"SELECT ?x FROM <{outside.as_uri()}> WHERE {{ ?x a :S }}"))


@pytest.mark.parametrize("ref, message", [
    ("<a%00.ttl>", "the path of the background file holds the character U+0000 (a control character or a "
                   "lone surrogate), which FROM does not take"),
    ("<file:///tmp/x.ttl%00.ttl>", "the path of the background file holds the character U+0000"),
    ("<a%0a.ttl>", "the path of the background file holds the character U+000A"),
    ("<a%ff.ttl>", "the percent-escapes of the path a%ff.ttl are not UTF-8 text"),
    ("<" + "a" * 5000 + ".ttl>", "the background file {rules}/" + "a" * 5000 + ".ttl cannot be read: "
                                 "File name too long"),
    ("<loop/a.ttl>", "the path loop/a.ttl cannot be resolved: Symlink loop from"),
])
def test_odd_paths_are_errors_at_the_from(tree, capsys, ref, message):
    (tree / "rules" / "loop").symlink_to(tree / "rules" / "loop")
    code, err = _refused(tree, ref, capsys)
    assert code == 2
    assert err.startswith(f"cep: error: {tree}/rules/q.rq:4:3: " + message.format(rules=tree / "rules")), err


def test_from_dev_null_says_what_is_wrong(tree, capsys):
    code, err = _refused(tree, "</dev/null>", capsys)
    assert code == 2 and f"the background file /dev/null {OUTSIDE}" in err
    code, err = _refused(tree, "</dev/null>", capsys, allow=["--allow-from", "/dev"])
    assert (code, err) == (2, f"cep: error: {tree}/rules/q.rq:4:3: the background file /dev/null is a character "
                              "device, not a regular file\n")
    fifo = tree / "rules" / "pipe.ttl"
    os.mkfifo(fifo)
    code, err = _refused(tree, "<pipe.ttl>", capsys)
    assert (code, err) == (2, f"cep: error: {tree}/rules/q.rq:4:3: the background file {fifo} is a named pipe "
                              "(FIFO), not a regular file\n")
