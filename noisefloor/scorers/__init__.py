"""Scorers: the registry, the built-in scorers, the guarded calls into them and users' plugins.

Importing the package registers the built-in scorers.
"""
