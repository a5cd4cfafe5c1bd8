# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""``python -m tensordiag ARGS``: the ``tdiag`` command line (same subcommands and output)."""

import sys

from . import main

if __name__ == "__main__":
    sys.exit(main())
