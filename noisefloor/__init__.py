"""noisefloor: a regression gate for programs that don't give the same answer twice.

The public API is the list below; everything else is private to its module.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
