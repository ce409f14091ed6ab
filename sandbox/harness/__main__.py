"""The harness as the sandbox starts it: `python -I -B <this folder> [--serve]`.

Python runs a folder by its __main__.py, with the folder itself first on sys.path. The package is
imported by its name from the folder above, which then leaves the path again: the learner's code
sees the interpreter's own path, as a fresh `python -I` has it. Standard library only."""

import importlib
import os
import sys

here = sys.path.pop(0)
sys.path.insert(0, os.path.dirname(here))
supervisor = importlib.import_module(f"{os.path.basename(here)}.supervisor")
sys.path.pop(0)
supervisor.main()
