"""Input and output formats: event files in, answers and rejects out.

    events, rejects = read_events(["ticks.trig", "more/"])   # an Arrow table, sorted by time
    writer = make_writer("jsonl", sys.stdout)
    writer.write(answers); writer.close()                    # an answer table (cep.events.ANSWERS)

See cep.io.readers (dispatch by extension), cep.io.trig (RSP-QL TriG),
cep.io.tables (JSON Lines, CSV, Parquet), cep.io.check (what every reader
takes: terms and times) and cep.io.writers.
"""

from cep.io.readers import FORMATS, format_of, input_files, read_events, read_file
from cep.io.tables import read_csv, read_jsonl, read_parquet
from cep.io.trig import read_trig
from cep.io.writers import (
    OUTPUT_FORMATS,
    CsvWriter,
    JsonlWriter,
    TrigWriter,
    answer_json,
    check_format,
    make_writer,
    reject_json,
    write_rejects,
)

__all__ = [
    "FORMATS", "OUTPUT_FORMATS", "CsvWriter", "JsonlWriter", "TrigWriter",
    "answer_json", "check_format", "format_of", "input_files", "make_writer",
    "read_csv", "read_events", "read_file", "read_jsonl", "read_parquet",
    "read_trig", "reject_json", "write_rejects",
]
