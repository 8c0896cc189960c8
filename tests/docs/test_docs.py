"""The docs are true: every fenced block of README.md, docs/*.md and the
READMEs of the project's folders (examples/*/README.md, ...) is run here
as a reader would use it, or is marked as not run, with the reason, by an
HTML comment on the line before it:

    <!-- not run: starts a cluster; tests/spark/test_cluster.py runs it -->

A block that is neither fails the test, and so does an indented code
block (the test sees only fenced ones), so the docs cannot drift silently.

Each document is read in order, in a fresh work folder that holds the
checkout's `rules/`, `examples/`, `ontologies/` and `.venv/` (links: a
block must not write into them), with the virtual environment's `bin/`
first on PATH (`cep`, `python`):

- a block the sentence before it names as a file ("Save this as
  `deliveries.rq`:", "`events.trig`:") is written to that file;
- `sh`: the block runs in bash, stopping at the first failing command; its
  standard output is what the next output block shows;
- `json` (an output block): one record per line that starts at the left
  margin, continued by the indented lines after it (wrapped for reading);
  `...` inside a record stands for any text. Unmarked, the records are the
  whole output of the `sh` block before it, in any order. After
  `<!-- lines of: PATH -->`, each record is one of the lines of the file
  PATH of the work folder (an excerpt), or of the output of the `sh`
  block before it for `<!-- lines of: stdout -->`;
- after `<!-- excerpt of: PATH -->` (a block of any language): the block,
  with `...` for any text, is a part of the file PATH, comments (`#` to
  the end of a line) and the spacing aside;
- `python`: the blocks of one document run in order in one namespace, in
  the work folder;
- `sparql`: compiled as `cep compile` does, with the `.pl` files the
  document saved before it as `--prolog` files (a rule set that names an
  undefined Prolog predicate is refused), and an empty background graph
  when it updates one ("an empty file will do"). A block that declares no
  prefix for `:`, `xsd:`, `rdfs:` or `rdf:` gets the usual one (the
  reference leaves them out);
- `prolog`: a block whose first line is `% NAME.pl` is saved as NAME.pl and
  loaded in SWI-Prolog, which must load it without an error or a warning,
  and find every predicate its clauses call (list_undefined/0).
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = sorted({ROOT / "README.md", *ROOT.glob("docs/*.md"), *ROOT.glob("*/README.md"),
                    *ROOT.glob("*/*/README.md")} - set(ROOT.glob(".*/**/README.md")))
LINKED = ("rules", "examples", "ontologies")
FENCE = re.compile(r"^( *)(```+)\s*([\w-]*)\s*$")
MARKER = re.compile(r"^\s*<!--\s*(not run|lines of|excerpt of):\s*(.*?)\s*-->\s*$")
SAVED_AS = re.compile(r"`([\w./-]+\.\w+)`:\s*$")
PREFIXES = {":": "http://example.org/", "xsd:": "http://www.w3.org/2001/XMLSchema#",
            "rdfs:": "http://www.w3.org/2000/01/rdf-schema#",
            "rdf:": "http://www.w3.org/1999/02/22-rdf-syntax-ns#"}
TIMEOUT = 600  # a guard against a hang, far above any block's time


@dataclass
class Block:
    path: Path
    line: int           # of the opening fence, from 1
    lang: str
    text: str
    marker: tuple | None  # ("not run", reason), ("lines of", path) or ("excerpt of", path)
    saved_as: str | None  # the file the sentence before it names

    def __str__(self):
        return f"{_shown(self.path)}:{self.line} ({self.lang or 'no language'})"


def _shown(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def blocks(path: Path) -> list[Block]:
    """The fenced blocks of a Markdown file, with the marker and the file
    name before each. Raises AssertionError on an indented code block."""
    lines = path.read_text(encoding="utf-8").splitlines()
    found, i = [], 0
    while i < len(lines):
        fence = FENCE.match(lines[i])
        if not fence:
            _no_indented_code(path, lines, i)
            i += 1
            continue
        indent, ticks, lang = len(fence[1]), fence[2], fence[3]
        end = next((j for j in range(i + 1, len(lines)) if lines[j].strip() == ticks), None)
        assert end is not None, f"{path}:{i + 1}: a fence that is not closed"
        text = "\n".join(line[indent:] for line in lines[i + 1:end]) + "\n"
        before = [line for line in lines[:i] if line.strip()]
        marker = MARKER.match(before[-1]) if before else None
        saved = SAVED_AS.search(before[-1]) if before else None
        found.append(Block(path, i + 1, lang, text, marker and (marker[1], marker[2]), saved and saved[1]))
        i = end + 1
    return found


def _no_indented_code(path, lines, i):
    """An indented code block: a line four spaces deeper than the text
    (or list item) before the blank line above it."""
    line = lines[i]
    if not line.strip() or i == 0 or lines[i - 1].strip():
        return
    before = next((b for b in reversed(lines[:i]) if b.strip()), None)
    if before is None:
        return
    item = re.match(r"^( *)(?:[-*+]|\d+\.) +", before)
    context = len(item[0]) if item else len(before) - len(before.lstrip())
    if before.lstrip().startswith(("|", "<!--")):
        context = 0
    depth = len(line) - len(line.lstrip())
    assert depth < context + 4, (
        f"{_shown(path)}:{i + 1}: an indented code block: write it as a fenced block "
        "(```sh, ```json...) so that tests/docs/test_docs.py runs it or it says why not")


def _work_folder(tmp_path: Path) -> Path:
    for name in LINKED:
        (tmp_path / name).symlink_to(ROOT / name)
    (tmp_path / ".venv").symlink_to(Path(sys.prefix))
    return tmp_path


def _environment() -> dict:
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env.pop("PYTHONPATH", None)
    return env


def _records(text: str) -> list[str]:
    """An output block's records: a line at the left margin and the
    indented lines after it, joined."""
    records = []
    for line in text.splitlines():
        if not line.strip():
            continue
        if line[0].isspace() and records:
            records[-1] += " " + line.strip()
        else:
            records.append(line.strip())
    return records


def _squeeze(text: str) -> str:
    return re.sub(r"\s+", " ", text.strip())


def _matches(record: str, line: str) -> bool:
    pattern = ".*?".join(re.escape(part) for part in _squeeze(record).split("..."))
    return re.fullmatch(pattern, _squeeze(line)) is not None


def _compare(block: Block, output: str, whole: bool):
    lines = [line for line in output.splitlines() if line.strip()]
    records = _records(block.text)
    missing = [r for r in records if not any(_matches(r, line) for line in lines)]
    assert not missing, (f"{block}: the output has no line like\n  " + "\n  ".join(missing)
                         + "\nit has:\n  " + "\n  ".join(lines[:20]))
    if whole:
        assert len(records) == len(lines), (f"{block}: the block shows {len(records)} line(s), the "
                                            f"command printed {len(lines)}:\n  " + "\n  ".join(lines[:20]))


def _excerpt(block: Block, path: Path):
    def text(t):
        return _squeeze(re.sub(r"(^|\s)#[^\n]*", " ", t))

    pattern = ".*?".join(re.escape(part) for part in text(block.text).split("..."))
    assert re.search(pattern, text(path.read_text())), f"{block}: not a part of {path.name} as written"


def _with_prefixes(text: str) -> str:
    declared = {m.lower() for m in re.findall(r"(?i)PREFIX\s+([\w-]*:)", text)}
    return "".join(f"PREFIX {p} <{PREFIXES[p]}>\n" for p in PREFIXES if p not in declared) + text


def _compile(block: Block, work: Path):
    from cep import cli

    rules = work / f"block{block.line}.rq"
    rules.write_text(_with_prefixes(block.text))
    prolog = [arg for pl in sorted(work.glob("*.pl")) for arg in ("--prolog", str(pl))]
    background = []
    if re.search(r"\b(DELETE|INSERT)\b", block.text):  # an update needs a background graph, an empty one will do
        (work / "empty.ttl").write_text("")
        background = ["--ontology", str(work / "empty.ttl")]
    said = io.StringIO()
    with contextlib.redirect_stderr(said):  # in this process: a cep process per block is seconds
        code = cli.main(["compile", str(rules), "-o", str(work / "compiled.pl"), *prolog, *background])
    assert code == 0, f"{block}: cep compile refused it: {said.getvalue().strip()}"


def _load_prolog(block: Block, path: Path):
    done = subprocess.run(["swipl", "-q", "-g", f"consult('{path}'), list_undefined", "-t", "halt"],
                          capture_output=True, text=True, timeout=TIMEOUT)
    assert done.returncode == 0 and not done.stderr.strip(), f"{block}: SWI-Prolog says\n{done.stderr}"


def check_document(path: Path, work: Path):
    """Run the blocks of one document in order in `work`; fails with
    every block that is not as the document says."""
    namespace: dict = {"__name__": "__docs__"}
    state = {"output": None}  # the standard output of the last sh block
    failures = []
    for block in blocks(path):
        try:
            check_block(block, work, namespace, state)
        except AssertionError as exc:
            failures.append(str(exc))
    if failures:
        pytest.fail("\n\n".join(failures), pytrace=False)


def check_block(block: Block, work: Path, namespace: dict, state: dict):
    kind, detail = block.marker or (None, None)
    if kind == "not run":
        assert detail, f"{block}: '<!-- not run: -->' needs its reason"
        return
    if kind == "excerpt of":
        _excerpt(block, work / detail)
        return
    if block.saved_as:  # a file the reader saves (a rule file is compiled too)
        (work / block.saved_as).parent.mkdir(parents=True, exist_ok=True)
        (work / block.saved_as).write_text(block.text)
        if block.lang == "sparql":
            _compile(block, work)
        return
    if block.lang == "sh":
        done = subprocess.run(["bash", "-e", "-c", block.text], cwd=work, env=_environment(),
                              capture_output=True, text=True, timeout=TIMEOUT)
        assert done.returncode == 0, f"{block}: exit {done.returncode}\n{done.stderr[-3000:]}"
        state["output"] = done.stdout
    elif block.lang == "json":
        output = state["output"]
        if kind == "lines of":
            assert detail != "stdout" or output is not None, f"{block}: no sh block before it"
            _compare(block, output if detail == "stdout" else (work / detail).read_text(), whole=False)
        else:
            assert output is not None, f"{block}: an output block with no sh block before it"
            _compare(block, output, whole=True)
    elif block.lang == "python":
        old = Path.cwd()
        os.chdir(work)
        try:
            exec(compile(block.text, str(block), "exec"), namespace)
        except Exception as exc:  # the block's failure, reported with the others
            raise AssertionError(f"{block}: {type(exc).__name__}: {exc}") from exc
        finally:
            os.chdir(old)
    elif block.lang == "sparql":
        _compile(block, work)
    elif block.lang == "prolog" and re.match(r"%\s*([\w-]+\.pl)\s*$", block.text.splitlines()[0]):
        name = block.text.splitlines()[0].lstrip("% ").strip()
        (work / name).write_text(block.text)
        _load_prolog(block, work / name)
    else:
        raise AssertionError(
            f"{block}: a block the test does not run: run it (sh, json, python, sparql, a prolog "
            "file, or a file the text names) or mark it <!-- not run: REASON -->")


@pytest.mark.parametrize("path", DOCUMENTS, ids=[str(p.relative_to(ROOT)) for p in DOCUMENTS])
def test_the_blocks_of_the_document_run_as_written(path, tmp_path):
    check_document(path, _work_folder(tmp_path))


# The checks above must fail on docs that drift: each case is a small
# document that is wrong in one way.
TOUR = """Save this as `r.rq`:

```sparql
PREFIX : <http://example.org/>
SELECT ?x WHERE { ?x :p ?y }
```

`e.jsonl`:

```json
{"s": "<http://example.org/a>", "p": "<http://example.org/p>", "o": "<http://example.org/b>", "t": 0}
```
"""
RUN = """
```sh
cep run r.rq --events e.jsonl
```
"""


@pytest.mark.parametrize("document, says", [
    ("```turtle\n:a :p 1 .\n```\n", "a block the test does not run"),
    ("Run:\n\n    cep run r.rq\n", "an indented code block"),
    ("<!-- not run: -->\n```sh\nfalse\n```\n", "needs its reason"),
    ("```sh\nfalse\n```\n", "exit 1"),
    ("```sparql\nSELECT ?x WHERE { ?x :p }\n```\n", "cep compile refused it"),
    ("```prolog\n% g.pl\nf(X) :- g(X).\n```\n", "SWI-Prolog says"),
    ("<!-- excerpt of: rules/stock.rq -->\n```sparql\nSELECT ?company ?price9\n```\n", "not a part of stock.rq"),
    (TOUR + RUN + '\n```json\n{"query": "q", ...}\n```\n', "the output has no line like"),
    (TOUR + RUN + '\n```json\n{...}\n{...}\n```\n', "the block shows 2 line(s), the command printed 1"),
])
def test_a_document_that_drifts_fails(document, says, tmp_path):
    path = tmp_path / "doc.md"
    path.write_text(document)
    work = tmp_path / "work"
    work.mkdir()
    with pytest.raises((AssertionError, pytest.fail.Exception), match=re.escape(says)):
        check_document(path, _work_folder(work))


def test_a_document_as_it_runs_passes(tmp_path):
    path = tmp_path / "doc.md"
    path.write_text(TOUR + RUN + '\n```json\n{"query": "r", "bindings": {"x": {"type": "uri", "value": "http://example.org/a"}}, ...}\n```\n')
    work = tmp_path / "work"
    work.mkdir()
    check_document(path, _work_folder(work))


def test_the_help_example_answer_is_one_the_stock_run_gives(tmp_path):
    """`cep run --help` shows an answer of the stock example: the run
    gives it (with `...` for what the help leaves out)."""
    env, work = _environment(), _work_folder(tmp_path)
    shown = subprocess.run(["cep", "run", "--help"], env=env, capture_output=True, text=True,
                           timeout=TIMEOUT, check=True).stdout
    example = re.search(r'\{"query": .*?"end": "[^"]+"\}', _squeeze(shown))
    assert example, "cep run --help shows no example answer"
    run = subprocess.run(["cep", "run", "rules/stock.rq", "--events", "examples/stock/ticks.trig"], cwd=work,
                         env=env, capture_output=True, text=True, timeout=TIMEOUT, check=True).stdout
    assert any(_matches(example[0], line) for line in run.splitlines()), (example[0], run)
