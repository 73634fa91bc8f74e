"""The Python a task's check.sh and a track's batch.sh run inside the grader image: one module per job.

Installed root-owned and read-only in /usr/lib/python3/dist-packages/lab_grader (templates/images/
grader.Dockerfile.j2) and run as ``python3 -I -m lab_grader.<module> ARGS``: ``-I`` keeps the environment
(PYTHON*), the user's site folder and the current folder (the work tree) off ``sys.path``, so no module a
solution left behind can stand in for these or for the standard library's. Each module's ``main(argv)`` is
what the command line runs; tests import the modules from templates/ (tests/test_grader_scripts.py).
Standard library only: the image's python3 (Debian's) runs them.
"""
