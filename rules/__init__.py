"""lab: an evaluation lab for coding agents.

The package is split by concern; see README.md for the commands and evals/README.md for the file formats.
Only ``rules.sandbox`` imports ``docker``, only ``rules.upstream`` imports ``git`` and only ``rules.tasks`` (the
task creators) and ``rules.loader`` (doit's loader and reporter) import ``doit``.
"""
