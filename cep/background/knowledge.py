"""The background knowledge of a run: ontology files read (load), closed
under the RDFS rules (rdfs), and handed to Prolog as facts.

    background = load_background(["ontologies/sensors.ttl"])
    Engine(queries, background=background)

A run has one background graph (the paper's single knowledge base): the
files given to it (`--ontology`) and those its queries name with FROM,
each once, in the order ontology_paths gives:

    background = load_background(ontology_paths(queries, given=["onto.ttl"]))

The rule compiler reads `schema` (stream triples are matched modulo it) and
`module` (the Prolog module whose t/3 facts are the closure, joined with
events in basic graph patterns); the engine loads `facts()` into that
module once per process. The module's name carries a hash of the files'
contents, so two runs over the same files share it and a changed file
never meets facts loaded from its older version.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from cep.background.load import read_ontology
from cep.background.rdfs import Schema


@dataclass(eq=False)
class Background:
    sources: tuple  # the files, as given
    triples: frozenset  # the RDFS closure: (s, p, o) canonical N-Triples text
    schema: Schema
    digest: str
    instances: frozenset = frozenset()  # the files' triples other than schema (see updates)
    _facts: bytes | None = field(default=None, repr=False)

    @property
    def module(self) -> str:
        return f"cep_bg_{self.digest}"

    def facts(self) -> bytes:
        """The closure as the text of an event batch (prolog/cep_fast.c),
        which cep_runtime:cep_load_background/2 asserts as t/3 facts."""
        if self._facts is None:
            self._facts = _facts_text(self.triples)
        return self._facts

    def instance_facts(self) -> bytes:
        """The files' instance triples (not the closure) in the same form,
        which cep_runtime:cep_load_instances/2 asserts as i/3 facts: the
        rule sets that update the background read them."""
        return _facts_text(self.instances)


def _facts_text(triples) -> bytes:
    """Triples as the text of an event batch (all at time 0). The columns
    are converted in one pass (a list per slot, or zip(*triples), takes
    twice as long on a million triples)."""
    from cep.runtime.batch import table_text

    if not triples:
        return b""
    whole = pa.array(list(triples), pa.list_(pa.string(), 3))
    s, p, o = (pc.list_element(whole, i) for i in range(3))
    zero = pa.repeat(pa.scalar(0, pa.int64()), len(s))
    return table_text(s, p, o, zero, zero).to_pybytes()


def ontology_paths(queries, given=()) -> list[Path]:
    """The files of a run's background graph: `given` (as given), then the
    files the queries name with FROM (Query.ontologies), in order; a file
    named twice, by whatever path, is kept the first time."""
    out, seen = [], set()
    for path in [*given, *(p for q in queries for p in q.ontologies)]:
        key = Path(path).resolve()
        if key not in seen:
            seen.add(key)
            out.append(Path(path))
    return out


def run_background(queries, ontology=None) -> Background | None:
    """The background of a run of `queries` (for the Python API, as
    ontology_paths is for the CLI): `ontology`, ontology files (a path or a
    list) or a Background already loaded, with the files the queries name
    with FROM. A Background given whole must hold those files already."""
    if ontology is not None and hasattr(ontology, "schema"):
        held = {Path(p).resolve() for p in ontology.sources}
        missing = [str(p) for p in ontology_paths(queries) if p.resolve() not in held]
        if missing:
            from cep.errors import UsageError

            raise UsageError(f"the rules name {', '.join(missing)} with FROM, and the background given "
                             f"does not hold it: load it with the other files (load_background)")
        return ontology
    return load_background(ontology_paths(queries, given_files(ontology)))


def given_files(ontology) -> list:
    """The paths of an argument of the Python API that takes a path or a
    list of them (or, for `ontology`, a Background: its files); None for none."""
    if ontology is None:
        return []
    if hasattr(ontology, "schema"):
        return list(ontology.sources)
    return [ontology] if isinstance(ontology, (str, Path)) else list(ontology)


def load_background(paths) -> Background | None:
    """The background knowledge of ontology files (None for no files).
    Raises OntologyError, naming the file and line, on a malformed file."""
    paths = [Path(p) for p in paths]
    if not paths:
        return None
    triples = []
    for path in paths:
        triples += read_ontology(path)  # names the file and line of what is wrong in it
    return background_of(triples, [str(p) for p in paths], files_digest(paths))


def files_digest(paths) -> str:
    """A name for the background of these files: a hash of their bytes."""
    digest = hashlib.sha256()
    for path in map(Path, paths):
        digest.update(path.read_bytes())
        digest.update(path.suffix.encode())
    return digest.hexdigest()[:16]


def background_of(triples, sources=(), digest: str | None = None) -> Background:
    """The background knowledge of triples (canonical N-Triples text);
    `digest` names it (default: a hash of the triples)."""
    if digest is None:
        digest = hashlib.sha256(repr(sorted(triples)).encode()).hexdigest()[:16]
    from cep.background.rdfs import SCHEMA_PREDICATES

    schema = Schema(triples)  # closes the graph under the RDFS rules
    instances = frozenset(t for t in triples if t[1] not in SCHEMA_PREDICATES)
    return Background(tuple(sources), schema.graph, schema, digest, instances)
