"""--format table (cep.io.writers.TableWriter): answers as a table per
query for a person at a terminal."""

from __future__ import annotations

import io
from pathlib import Path

from cep import cli
from cep.events import Answer, answers_table
from cep.io.writers import TABLE_ROWS, TableWriter

ROOT = Path(__file__).resolve().parents[2]
EX = "http://example.org/"
INT = "http://www.w3.org/2001/XMLSchema#integer"


def table(answers) -> str:
    out = io.StringIO()
    writer = TableWriter(out)
    writer.write(answers_table(answers))
    writer.close()
    return out.getvalue()


def test_a_select_query_is_a_table_of_its_times_and_bindings():
    text = table([
        Answer("pairs", 0, 2000, (("k", f"<{EX}k1>"), ("x", f'"7"^^<{INT}>'), ("y", '"long text"'))),
        Answer("pairs", 1000, 3000, (("k", f"<{EX}k22>"), ("x", f'"10"^^<{INT}>'))),  # ?y unbound
    ])
    assert text == (
        "pairs: 2 answers\n"
        "start                 end                   k                         x   y\n"
        "--------------------  --------------------  ------------------------  --  -----------\n"
        f"1970-01-01T00:00:00Z  1970-01-01T00:00:02Z  <{EX}k1>   7   \"long text\"\n"
        f"1970-01-01T00:00:01Z  1970-01-01T00:00:03Z  <{EX}k22>  10\n"
        "\n")


def test_construct_answers_are_their_triples_and_long_values_are_cut():
    long = f"<{EX}{'x' * 80}>"
    text = table([Answer("alerts", 0, 0, triples=((f"<{EX}a>", f"<{EX}p>", long),))])
    lines = text.splitlines()
    assert lines[0] == "alerts: 1 answer"
    assert lines[1].split() == ["start", "end", "s", "p", "o"]
    assert lines[3].endswith(long[:47] + "…")


def test_each_query_has_its_table_and_a_long_run_prints_as_it_goes():
    out = io.StringIO()
    writer = TableWriter(out)
    writer.write(answers_table([Answer("a", i, i, (("x", f'"{i}"^^<{INT}>'),)) for i in range(TABLE_ROWS)]))
    assert out.getvalue().startswith(f"a: {TABLE_ROWS:,} answers\n")  # printed before the end of the run
    writer.write(answers_table([Answer("b", 0, 0, (("y", f"<{EX}y>"),)), Answer("a", 5, 5, (("x", '"s"'),))]))
    writer.close()
    assert out.getvalue().count("answers\n") == 1 and "\nb: 1 answer\n" in out.getvalue()
    assert "\na: 1 answer\n" in out.getvalue()


def test_cep_run_writes_a_table(capsys):
    code = cli.main(["run", str(ROOT / "rules" / "stock.rq"), "--events",
                     str(ROOT / "examples" / "stock" / "ticks.trig"), "--format", "table", "-q"])
    out = capsys.readouterr().out
    assert code == 0
    assert out.splitlines()[:2] == [
        "crash_recovery: 2 answers",
        "start                 end                   company                    price1  price2  price3"]
    assert out.splitlines()[3].split() == ["2026-01-05T10:00:00Z", "2026-01-25T10:00:00Z", f"<{EX}ACME>",
                                           "100", "65.80", "106"]
