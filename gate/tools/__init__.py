"""Measurement tools for the gate itself (store and dashboard at scale, change-point methods, asv's rule against
the gate's). The command line runs them; the service never imports them (tests/test_layers.py)."""
