"""The differential tier: streamshell against Apache Flink on the cases in cases/ (see docs/differential.md).

The `differential` package sits at the top of the repository, outside the installed `shell` package, so the
repository root goes on sys.path whichever way pytest was started.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
