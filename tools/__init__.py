"""The maintainers' measurements of the gate itself: not installed, never imported by the gate.

Where a command belongs (``tools/README.md``): ``fusegate`` has what a user of the gate runs on their change, their
runner or their service, and what writes something the gate reads (a calibration, a thread table); ``tools/`` has
what measures the gate itself (its rules, its speed at scale, its methods and settings, its verdicts across a
change to its code), whose output nothing in the gate reads.

    python -m tools COMMAND ...          # rules, store-bench, dashboard-bench, changepoints-bench, reevaluate, profile-time
    python -m tools.scenarios ...        # and the other modules with a ``main``: drift, duet_settings, bimodal, ...
"""
