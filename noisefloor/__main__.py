"""`python -m noisefloor`: the same entry point as the console script.

Kept to one call so that both paths behave identically.
"""

from noisefloor.cli.main import console_main

raise SystemExit(console_main())
