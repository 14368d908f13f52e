"""The store: runs, samples, baselines and labels as files under one root, and reading them back.

Also the deep baseline's pool of stored repeats, code fingerprints and the public tool's store.
"""
