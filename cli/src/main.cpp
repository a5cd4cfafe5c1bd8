// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The `tdiag` program: everything lives in the tdiag_cli library (run.hpp), which the Python
// package also links for `python -m tensordiag`.
#include "run.hpp"

int main(int argc, char** argv) {
  return tdiag::cli::run(argc, argv);
}
