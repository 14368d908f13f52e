"""The benchmarks, run as scripts (`python bench/NAME.py`), and what they share with the tests:
the loopback servers, the fault trials and the fake target, which the tests import from here."""
