"""The progress records and lines of cep.spark.progress, from Spark's own
StreamingQueryProgress (as its listener receives it; no session needed)."""

from __future__ import annotations

from pyspark.sql.streaming.listener import StreamingQueryProgress

from cep.spark.progress import progress_line, progress_record

PROGRESS = {
    "id": "9b77debc-98e2-4b5d-beaa-9373f0d7a552", "runId": "0a198048-85e2-42be-89be-34d7002bafa3", "name": "cep",
    "timestamp": "2026-11-25T11:37:17.944Z", "batchId": 3, "batchDuration": 2000, "numInputRows": 12_000,
    "inputRowsPerSecond": 4000.0, "processedRowsPerSecond": 6000.0,
    "durationMs": {"triggerExecution": 2000}, "eventTime": {"watermark": "2026-01-01T00:00:02.300Z"},
    "stateOperators": [{"operatorName": "applyInPandasWithState", "numRowsTotal": 8, "numRowsUpdated": 8,
                        "numRowsRemoved": 0, "allUpdatesTimeMs": 1, "allRemovalsTimeMs": 0, "commitTimeMs": 1,
                        "memoryUsedBytes": 2_000_000, "numRowsDroppedByWatermark": 2, "numShufflePartitions": 2,
                        "numStateStoreInstances": 2, "customMetrics": {}}],
    "sources": [], "sink": {"description": "memory", "numOutputRows": 5},
}


def test_a_micro_batch_as_a_record_and_a_line():
    progress = StreamingQueryProgress.fromJson({**PROGRESS, "observedMetrics": {
        "cep": {"answers": 5, "late": 1, "rejected": 0}}})
    record = progress_record(progress)
    assert record == {
        "time": "2026-11-25T11:37:17.944Z", "query": "cep", "run": "0a198048-85e2-42be-89be-34d7002bafa3",
        "batch": 3, "rows": 12_000, "input_rows_per_second": 4000.0, "processed_rows_per_second": 6000.0,
        "duration_ms": 2000, "watermark": "2026-01-01T00:00:02.300Z", "state_groups": 8,
        "state_bytes": 2_000_000, "answers": 5, "late": 1, "rejected": 0, "dropped_by_watermark": 2}
    assert progress_line(record) == (
        "batch 3: 12,000 rows in 2.0 s (6,000 rows/s); 5 answers, 1 late, 2 dropped as late by Spark; "
        "state 8 groups, 2.0 MB; watermark 2026-01-01T00:00:02.300Z")


def test_before_the_first_event_there_is_no_watermark():
    progress = StreamingQueryProgress.fromJson({**PROGRESS, "numInputRows": 1, "stateOperators": [],
                                                "eventTime": {"watermark": "1970-01-01T00:00:00.000Z"}})
    record = progress_record(progress)
    assert record["watermark"] is None and record["state_groups"] is None and record["answers"] is None
    assert progress_line(record) == "batch 3: 1 row in 2.0 s"
