"""The pipeline on doit: sample, score, band and compare as tasks that recompute only what changed."""
