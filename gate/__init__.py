"""fusegate's gate: the command line today; results store, statistics, service and dashboard as they land."""
