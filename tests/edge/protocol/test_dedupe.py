"""RecentIds: once per id, bounded."""

from edge.protocol.dedupe import RecentIds


def test_each_id_counts_once_and_memory_stays_bounded():
    ids = RecentIds(size=3)
    assert [ids.first_time(i) for i in ("a", "b", "a", "c")] == [True, True, False, True]
    assert ids.first_time("d") and len(ids) == 3        # "a", the oldest, is forgotten
    assert ids.first_time("a") and not ids.first_time("d")
