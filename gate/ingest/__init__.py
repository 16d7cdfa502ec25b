"""asv results and fusegate sidecar records in; validated runs out."""
