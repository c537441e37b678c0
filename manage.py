#!/usr/bin/env python
import gc
import os
import sys

if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)
    # The command is done and its objects end with the process: frozen, they are left out of
    # the interpreter's last collections at exit, which walked every object of a loaded Django
    # and pyarrow (0.1 s of an export or an import; files and connections are closed already).
    gc.freeze()
