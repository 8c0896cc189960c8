"""bench/workloads.py's ensure(), which every bench script calls to write
a missing workload: two runs sharing one --out folder (bench/spark.py
runs side by side) may write the same workload at once, and neither may
read the other's half-written file or folder."""

import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def workloads():
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import workloads
    finally:
        sys.path.remove(str(ROOT / "bench"))
    return workloads


@pytest.mark.parametrize("files", [1, 3])
def test_a_workload_appears_whole_or_not_at_all(tmp_path, monkeypatch, workloads, files):
    final = (workloads.path_for(tmp_path, "w1", 2_000) if files == 1 else tmp_path / f"w1_2000_x{files}")
    written, write = [], pq.write_table

    def write_table(table, where, **kwargs):
        written.append(Path(where))
        assert not final.exists(), "the workload is in place before it is whole"
        write(table, where, **kwargs)

    monkeypatch.setattr(workloads.pq, "write_table", write_table)
    assert workloads.ensure(tmp_path, "w1", 2_000, files=files) == final
    assert len(written) == files and not any(w == final or final in w.parents for w in written)
    assert pq.read_table(final).num_rows == 2_000
    assert [p.name for p in tmp_path.iterdir()] == [final.name]  # nothing left beside it


def test_a_folder_written_meanwhile_by_another_run_is_taken(tmp_path, monkeypatch, workloads):
    """The other run renames its folder into place while this one makes
    the table: this run keeps the other's (the same workload) and ends
    without an error."""
    make = workloads.w1

    def other_run_first(n):
        table = make(n)
        folder = tmp_path / f"w1_{n}_x2"
        folder.mkdir()
        pq.write_table(table, folder / "part-000.parquet")
        return table

    other_run_first.__name__ = "w1"  # its files' name
    monkeypatch.setitem(workloads.WORKLOADS, "w1", (other_run_first, workloads.W1_QUERY))
    folder = workloads.ensure(tmp_path, "w1", 1_000, files=2)
    assert [p.name for p in folder.iterdir()] == ["part-000.parquet"]
    assert pq.read_table(folder).num_rows == 1_000
    assert [p.name for p in tmp_path.iterdir()] == [folder.name]
