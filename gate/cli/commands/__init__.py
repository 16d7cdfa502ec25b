"""One module per ``fusegate`` command: ``NAME``, ``HELP``, ``arguments(parser)``, ``run(args) -> exit code``."""
