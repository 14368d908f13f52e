"""The model every step shares: records on disk, verdicts, the report and its parts, token usage.

It sits at the bottom of the package: it imports settings, errors and statistics, nothing above.
"""
