// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include "run.hpp"

#include <tensordiag/core/error.hpp>
#include <tensordiag/core/version.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include "command.hpp"

namespace tdiag::cli {
namespace {
struct entry {
  int order;
  command_installer installer;
};
std::vector<entry>& registry() {
  static std::vector<entry> entries;
  return entries;
}
} // namespace

command_registration::command_registration(int order, command_installer installer) {
  registry().push_back({order, std::move(installer)});
}

CLI::App* family(CLI::App& parent, const std::string& name, const std::string& description) {
  // CLI11 2.1 has no non-throwing lookup by name.
  for (auto* existing : parent.get_subcommands({})) {
    if (existing->get_name() == name)
      return existing;
  }
  auto* created = parent.add_subcommand(name, description);
  created->require_subcommand(1);
  return created;
}

void install_commands(CLI::App& app, command_context& context) {
  auto& entries = registry();
  std::stable_sort(entries.begin(), entries.end(),
                   [](const entry& a, const entry& b) { return a.order < b.order; });
  for (auto& e : entries)
    e.installer(app, context);
}

namespace {

// "trace analyze": the subcommands the user ran.
std::string command_line(const CLI::App& app) {
  std::string out;
  for (const auto* at = &app; !at->get_subcommands().empty();) {
    at = at->get_subcommands().front();
    out += (out.empty() ? "" : " ") + at->get_name();
  }
  return out;
}

} // namespace

int run(int argc, char** argv) {
  CLI::App app{"tdiag: debugging and diagnostics for GPU and distributed tensors", "tdiag"};
  app.set_version_flag("--version", fmt::format("tdiag {}", TDIAG_VERSION_STRING));
  app.require_subcommand(1);
  command_context context;
  install_commands(app, context);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    // CLI11 returns 0 for --help/--version; any real usage error is our exit 2.
    return code == 0 ? exit_clean : exit_usage;
  } catch (const tdiag::input_error& e) {
    fmt::print(stderr, "tdiag: {}\n", e.what());
    return exit_usage;
  } catch (const tdiag::error& e) {
    fmt::print(stderr, "tdiag: {}\n", e.what());
    return exit_usage;
  } catch (const std::bad_alloc&) {
    // A reader's refusal within the budget is its own budget line (an input_error, above); this
    // is the system refusing less than the budget allows, while reading or after.
    fmt::print(stderr,
               "tdiag: `{}`: out of memory: the allocator refused memory within the memory budget; "
               "free memory, lower TDIAG_MEMORY_LIMIT, or open part of the input (--device N, "
               "--window A:B where the command has them)\n",
               command_line(app));
    return exit_usage;
  } catch (const std::exception& e) {
    fmt::print(stderr, "tdiag: internal error: {}\n", e.what());
    return exit_usage;
  }
  return context.status;
}

} // namespace tdiag::cli
