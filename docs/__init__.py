"""The documentation site's generators: the reference pages (`python -m docs.references`) and the
command outputs shown on the pages (`python -m docs.examples`). `python -m docs` runs both.
"""
