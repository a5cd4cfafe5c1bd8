// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// How a command family plugs into `tdiag`: a file defines a function that adds its subcommands
// to the app, and a static `command_registration` object lists it. main() calls every listed
// function in `order`, so `tdiag --help` shows families in a stable order.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>

namespace tdiag::cli {

/// Exit statuses, the same for every command.
enum exit_status : int {
  exit_clean = 0,    ///< nothing at error severity
  exit_findings = 1, ///< findings at error severity
  exit_usage = 2,    ///< bad usage or unreadable input
};

/// Holds the status the chosen subcommand wants the process to exit with.
struct command_context {
  int status = exit_clean;
};

using command_installer = std::function<void(CLI::App& app, command_context& context)>;

struct command_registration {
  command_registration(int order, command_installer installer);
};

/// The subcommand `name` of `parent`, created with `description` if no family made it yet: two
/// files can both add commands under `tdiag trace` without knowing of each other.
CLI::App* family(CLI::App& parent, const std::string& name, const std::string& description);

/// Calls every registered installer on `app`, in order.
void install_commands(CLI::App& app, command_context& context);

/// A check for an option that takes a count or an index: "expected N >= 0, got -1" (not
/// CLI::NonNegativeNumber, whose message prints the largest double, all 309 digits).
inline CLI::Validator at_least_zero() {
  return {[](const std::string& text) {
            return text.starts_with('-') ? "expected N >= 0, got " + text : std::string();
          },
          "N >= 0"};
}

} // namespace tdiag::cli
