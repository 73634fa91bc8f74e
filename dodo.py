"""lab's doit entry point: `doit list` shows the commands; README.md explains them.

doit loads it with lab's task loader (rules/loader.py), which pyproject.toml's ``[tool.doit]`` selects.
"""
import faulthandler

from rules.loader import check_loader
from rules.tasks import *  # noqa: F401,F403  (DOIT_CONFIG and the task_* creators)

# An interpreter crash (SIGSEGV, seen rarely here in Python 3.11 with doit's worker threads, cause unknown) then
# leaves every thread's Python stack on stderr instead of only a -11 exit.
faulthandler.enable(all_threads=True)
check_loader()
