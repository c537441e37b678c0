"""The Python client (clients/python, its own package) is imported from the tree: its folder is
put on sys.path here, so the tests run the client as it is in this commit, with no install."""

import sys
from pathlib import Path

CLIENT = Path(__file__).resolve().parents[2] / "clients" / "python"
if str(CLIENT) not in sys.path:
    sys.path.insert(0, str(CLIENT))
