"""Regenerate everything generated in the site: the reference pages, then the example outputs."""

from __future__ import annotations

from docs import examples, references

if __name__ == "__main__":
    references.main()
    examples.main()
