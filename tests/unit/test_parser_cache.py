"""The parser's tables kept between runs (cep.syntax.parser.cached_parser):
building them takes most of a second of every run of `cep`; a parser
loaded from the cache parses and reports errors (file, line, column, what
was expected) as the one it was saved from."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from cep.errors import QueryError
from cep.rules import parse_rules
from cep.syntax import parser as parser_module
from tests.unit.test_parse_errors import SYNTAX

ROOT = Path(__file__).resolve().parents[2]
QUERY = "PREFIX : <http://example.org/>\nREGISTER QUERY q AS SELECT ?x WHERE { ?x :p ?y } SEQ { ?x :q ?z }\n"


def test_a_run_loads_the_parser_the_run_before_it_saved(tmp_path):
    child = ("from cep.syntax.parser import parser, _cache_file; "
             "print(parser().source_path, _cache_file().parent == __import__('pathlib').Path(%r) / 'cep')"
             % str(tmp_path))
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    said = [subprocess.run([sys.executable, "-c", child], cwd=ROOT, env=env, capture_output=True, text=True,
                           check=True).stdout.split() for _ in range(2)]
    assert said == [["<string>", "True"], ["<deserialized>", "True"]]
    assert [p.name.startswith("epsparql-") for p in (tmp_path / "cep").iterdir()] == [True]


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    path = tmp_path_factory.mktemp("cache") / "epsparql.lark"
    parser_module.cached_parser(path)
    parser = parser_module.cached_parser(path)
    assert parser.source_path == "<deserialized>"
    return parser


@pytest.fixture
def loaded(saved, monkeypatch):
    """parse() with a parser loaded from the cache."""
    monkeypatch.setattr(parser_module, "parser", lambda: saved)
    return saved


def test_a_loaded_parser_gives_the_same_rules(loaded):
    built = parser_module.cached_parser(None)
    assert loaded.parse(QUERY) == built.parse(QUERY)
    (q,) = parse_rules(QUERY, "q.rq")
    assert q.name == "q"


@pytest.mark.parametrize("text, message", SYNTAX)
def test_a_loaded_parser_reports_syntax_errors_at_their_place(loaded, text, message):
    with pytest.raises(QueryError) as info:
        parse_rules(text, "rules/x.rq")
    assert str(info.value) == message


def test_a_damaged_cache_file_is_built_again_and_replaced(tmp_path):
    path = tmp_path / "epsparql.lark"
    path.write_bytes(b"not a parser")
    assert parser_module.cached_parser(path).source_path == "<string>"
    assert parser_module.cached_parser(path).source_path == "<deserialized>"


def test_a_cache_folder_that_cannot_be_made_leaves_the_parser_built(tmp_path):
    (tmp_path / "file").write_text("")
    path = tmp_path / "file" / "epsparql.lark"  # its folder would be a file
    assert parser_module.cached_parser(path).parse(QUERY).data == "start"
    assert not path.exists() and os.listdir(tmp_path) == ["file"]
