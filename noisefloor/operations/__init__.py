"""The operations behind the commands that sample or rescore: run (and record), check, rescore,
and the resolution of stored runs for diff and compare. Comparing is `noisefloor.pipeline.comparison`.
"""
