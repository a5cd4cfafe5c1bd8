# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""Builds the sample op with torch.utils.cpp_extension against an installed tensordiag.

    python3 samples/torch_extension/build.py <prefix>     # prefix/include, prefix/lib

The prefix holds the public headers and the static libraries (tdiag_assertions, tdiag_core)
with fmt and simdjson (tdiag_core's JSON reader); nothing else of tensordiag is needed. Prints the module's path."""
import os
import sys

from torch.utils import cpp_extension

HERE = os.path.dirname(os.path.abspath(__file__))


def build(prefix: str, build_dir: str | None = None, verbose: bool = False):
    include = os.path.join(prefix, "include")
    lib = os.path.join(prefix, "lib")
    if not os.path.isfile(os.path.join(include, "tensordiag", "assertions", "assert.h")):
        raise SystemExit(f"{prefix}: no tensordiag headers under {include}")
    build_dir = build_dir or os.path.join(HERE, "build")
    os.makedirs(build_dir, exist_ok=True)
    # No -std flag: nvcc's and the extension's own defaults, as a user's extension would have.
    return cpp_extension.load(
        name="tdiag_torch_gather",
        sources=[os.path.join(HERE, "gather_rows_op.cpp"), os.path.join(HERE, "gather_rows.cu")],
        extra_include_paths=[include, HERE],
        extra_ldflags=[f"-L{lib}", f"-Wl,-rpath,{lib}", "-ltdiag_assertions", "-ltdiag_core",
                       "-lfmt", "-lsimdjson", "-ldl"],
        build_directory=build_dir,
        verbose=verbose,
    )


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    print(build(sys.argv[1], verbose=True).__file__)
