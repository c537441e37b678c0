"""SharedFields: a serializer's fields built once per thread must behave as fresh ones would."""

import threading

from annotation.apis.grading import GradeSubmitInput
from annotation.apis.items import ItemOutput


def test_one_validation_leaves_nothing_for_the_next():
    bad = GradeSubmitInput(data={"score": 5, "spans": [{"start": 4, "end": 2, "category": ""}]})
    assert not bad.is_valid()
    assert set(bad.errors["spans"][0]) == {"category"}

    good = GradeSubmitInput(
        data={"score": "6", "spans": [{"start": 0, "end": 3, "category": "gap"}]}
    )
    assert good.is_valid(), good.errors
    assert good.validated_data["spans"] == [
        {"start": 0, "end": 3, "category": "gap", "quote": "", "note": ""}
    ]
    # the first serializer's errors are still its own, not the second's
    assert "spans" in bad.errors and not good.errors
    assert good.fields is bad.fields


def test_each_thread_has_its_own_fields():
    here = ItemOutput().fields
    there = []
    thread = threading.Thread(target=lambda: there.append(ItemOutput().fields))
    thread.start()
    thread.join()
    assert there[0] is not here
    assert list(there[0]) == list(here)
    assert there[0]["proof_text"].parent is not here["proof_text"].parent
