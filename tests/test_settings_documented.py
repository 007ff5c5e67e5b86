"""Every setting is documented where an operator looks for it: a row of the README's configuration table, or of
docs/operations.md's tables (a `PREFIX_*` row in the README pointing there covers a family). A setting added to
app/common/settings.py without a row fails here."""

from __future__ import annotations

import re
from pathlib import Path

from app.common.settings import Settings

ROOT = Path(__file__).resolve().parents[1]


def _table_names(path: Path) -> set[str]:
    """The backticked upper-case names in the first cell of each table row."""
    names: set[str] = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("| `"):
            names.update(re.findall(r"`([A-Z][A-Z0-9_]*\*?)`", line.split("|")[1]))
    return names


def test_every_setting_has_a_row_in_the_readme_or_the_operations_guide() -> None:
    readme = _table_names(ROOT / "README.md")
    operations = _table_names(ROOT / "docs" / "operations.md")
    families = tuple(name[:-1] for name in readme if name.endswith("*"))
    names = [name.upper() for name in Settings.model_fields]
    missing = [name for name in names if name not in readme and not (name in operations and name.startswith(families))]
    assert missing == []
