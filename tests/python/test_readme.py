# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""The README's five-line example runs and prints what its comment says."""

import re
import subprocess
import sys

from conftest import SOURCE_DIR


def test_readme_example(tmp_path):
    readme = (SOURCE_DIR / "README.md").read_text()
    assert re.search(r"^python3 -m pip install .*\./python$", readme, re.M)
    example = re.search(r"```python\n(.*?)```", readme, re.S).group(1)
    assert len(example.strip().splitlines()) == 5
    expected = example.strip().splitlines()[-1].split("# ", 1)[1]
    (tmp_path / "example.py").write_text(example)
    result = subprocess.run([sys.executable, "example.py"], cwd=tmp_path, capture_output=True,
                            text=True, check=True)
    assert result.stdout.strip() == expected
