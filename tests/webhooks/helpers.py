"""What the webhook tests share: the receiver's check exactly as docs/webhooks.md prints it."""

import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "webhooks.md"


def documented_verify():
    """The `verify` function of the manual's Python snippet, run as a receiver would paste it."""
    (snippet,) = [
        block
        for block in re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
        if "def verify" in block
    ]
    namespace: dict = {}
    exec(compile(snippet, str(DOC), "exec"), namespace)  # noqa: S102 (the manual's own code)
    return namespace["verify"]
