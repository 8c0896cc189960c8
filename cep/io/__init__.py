"""Input and output formats: event files in, answers and rejects out.

    rejects = []
    for events in time_ordered(event_batches(inputs(["ticks.nq.gz"]), rejects, 50_000), 50_000):
        ...                                                  # events tables, in the engine's order
    writer = make_writer("jsonl", sys.stdout)
    writer.write(answers); writer.close()                    # an answer table (cep.events.ANSWERS)

See cep.io.readers (inputs, formats by extension, gzip, standard input),
cep.io.trig (RSP-QL TriG), cep.io.nquads (N-Quads, N-Triples),
cep.io.tables (JSON Lines, CSV, Parquet), cep.io.check (what every reader
takes: terms and times), cep.io.order (time order in bounded memory),
cep.io.follow (inputs read as they grow: --follow) and cep.io.writers.
"""

from cep.io.order import time_ordered
from cep.io.readers import (
    FORMATS, Input, event_batches, file_batches, format_of, in_time_order, input_files, inputs, read_events, read_file,
)
from cep.io.writers import (
    OUTPUT_FORMATS,
    CsvWriter,
    JsonlWriter,
    PerQueryWriter,
    RdfWriter,
    SparqlResultsWriter,
    answer_json,
    check_format,
    make_writer,
    output_format,
    reject_json,
    write_rejects,
)


def _whole_file(fmt):
    def read(path, rejects: list, data: bytes | None = None):
        return read_file(path, rejects, data, fmt)

    read.__name__ = read.__qualname__ = f"read_{fmt}"
    read.__doc__ = f"The events table of one {fmt} file, whole (read_file); rejects are appended."
    return read


read_trig, read_nquads, read_ntriples, read_jsonl, read_csv, read_parquet = (
    _whole_file(fmt) for fmt in ("trig", "nq", "nt", "jsonl", "csv", "parquet"))

__all__ = [
    "FORMATS", "OUTPUT_FORMATS", "CsvWriter", "Input", "JsonlWriter", "PerQueryWriter", "RdfWriter",
    "SparqlResultsWriter", "output_format",
    "answer_json", "check_format", "event_batches", "file_batches", "format_of", "in_time_order", "input_files",
    "inputs",
    "make_writer", "read_csv", "read_events", "read_file", "read_jsonl", "read_nquads", "read_ntriples",
    "read_parquet", "read_trig", "reject_json", "time_ordered", "write_rejects",
]
