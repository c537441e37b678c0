import pytest

from adjudication import receivers
from annotation.signals import item_judged


@pytest.fixture(autouse=True)
def adjudication_receivers_connected():
    """Some tests of lower apps clear a signal's receivers; make sure ours listen again
    (connecting with the same dispatch_uid twice keeps one receiver)."""
    item_judged.connect(receivers.on_item_judged, dispatch_uid="adjudication.item_judged")
