"""lab's doit entry point: `doit list` shows the commands; README.md explains them."""
from rules.tasks import *  # noqa: F401,F403  (DOIT_CONFIG and the task_* creators)
