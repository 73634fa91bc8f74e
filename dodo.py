"""lab's doit entry point: `doit list` shows the commands; README.md explains them.

doit loads it with lab's task loader (rules/loader.py), which pyproject.toml's ``[tool.doit]`` selects.
"""
from rules.loader import check_loader
from rules.tasks import *  # noqa: F401,F403  (DOIT_CONFIG and the task_* creators)

check_loader()
