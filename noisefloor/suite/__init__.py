"""Suites: the YAML file and its JSONL cases read and checked, and the target a suite names built."""
