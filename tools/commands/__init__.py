"""One module per ``python -m tools`` command, as ``gate/cli/commands/``: ``NAME``, ``HELP``, ``arguments(parser)``,
``run(args) -> exit code``."""
