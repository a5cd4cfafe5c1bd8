// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The whole `tdiag` command line as a function, so that programs other than `tdiag` (the Python
// package's `python -m tensordiag`) run the same subcommands.
#pragma once

namespace tdiag::cli {

/// Parses `argv` (argv[0] is the program name), runs the chosen subcommand and returns the exit
/// status (command.hpp's exit_status). Prints to standard output and standard error; never
/// throws. Not thread-safe: run one at a time.
int run(int argc, char** argv);

} // namespace tdiag::cli
