"""What the Spark engine reads, decided before Spark starts
(cep.spark.sources.sources, cep run's checks): gzipped files, a TCP
socket, and clear refusals of what it cannot read."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from cep import cli
from cep.errors import UsageError
from cep.spark import sources

ROOT = Path(__file__).resolve().parents[2]
STOCK_RULES = ROOT / "rules" / "stock.rq"


def test_gzipped_files_are_read_in_their_format_alone_and_in_folders(tmp_path):
    (tmp_path / "a.nq.gz").write_bytes(gzip.compress(b""))
    (tmp_path / "b.JSONL.GZ").write_bytes(gzip.compress(b""))
    (tmp_path / "c.parquet.gz").write_bytes(b"")  # Spark's Parquet reader cannot read it: not an event file here
    [alone] = sources.sources([tmp_path / "a.nq.gz"], follow=False)
    assert (alone.fmt, alone.folder) == ("nq", False)
    folder = sources.sources([tmp_path], follow=False)
    assert [s.fmt for s in folder] == ["nq", "jsonl"]
    assert [p.name for p in folder[0].files()] == ["a.nq.gz"]
    assert folder[0].root.endswith("/*.{[nN][qQ],[nN][qQ].[gG][zZ]}")


def test_a_gzipped_parquet_file_is_refused_with_the_reason(tmp_path):
    (tmp_path / "e.parquet.gz").write_bytes(b"")
    with pytest.raises(UsageError, match="a gzipped Parquet file: Spark's Parquet reader takes Parquet as it is"):
        sources.sources([tmp_path / "e.parquet.gz"], follow=False)


def test_a_socket_is_a_source_of_json_lines_read_with_follow():
    [sock] = sources.sources(["http://ex.org/s=tcp://localhost:9999"], follow=True)
    assert (sock.path, sock.fmt, sock.stream) == ("tcp://localhost:9999", "jsonl", "<http://ex.org/s>")
    with pytest.raises(UsageError, match="a socket is a stream that does not end: read it with --follow"):
        sources.sources(["tcp://localhost:9999"], follow=False)
    with pytest.raises(UsageError, match="expected tcp://HOST:PORT"):
        sources.sources(["tcp://localhost"], follow=True)


@pytest.mark.parametrize("options, message", [
    (["--events", "tcp://localhost:9999", "--engine", "local"],
     "--events tcp://localhost:9999: a TCP socket is read by the spark engine (--engine spark)"),
    (["--events", "-", "--events-format", "nq", "--engine", "spark"],
     "--events - and --events-format: Spark's sources read files (by their extension), folders and sockets, "
     "not the standard input of this process: run it here (--engine local), or serve it on a socket"),
])
def test_inputs_an_engine_cannot_read_are_refused_with_the_reason(capsys, options, message):
    code = cli.main(["run", str(STOCK_RULES), *options])
    err = capsys.readouterr().err
    assert code == cli.EXIT_ERROR and err.startswith("cep: error: " + message), err


def test_a_socket_chooses_the_spark_engine():
    args = cli.build_parser().parse_args(["run", str(STOCK_RULES), "--events", "tcp://localhost:9999", "--follow"])
    assert cli._engine(args) == ("spark", "a TCP socket")
