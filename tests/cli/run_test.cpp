// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// tdiag::cli::run's last word on what a command throws (cli/src/run.cpp): an allocation the
// command's readers did not refuse is one line naming the command, never "internal error".
#include <gtest/gtest.h>

#include <new>
#include <stdexcept>
#include <string>

#include "command.hpp"
#include "run.hpp"

namespace {

using tdiag::cli::command_context;

// `tdiag selftest oom` and `tdiag selftest broken`, registered in this test program only.
const tdiag::cli::command_registration selftest(1000, [](CLI::App& app, command_context&) {
  auto* family = tdiag::cli::family(app, "selftest", "test commands");
  family->add_subcommand("oom", "throws std::bad_alloc")->callback([] { throw std::bad_alloc(); });
  family->add_subcommand("broken", "throws std::logic_error")->callback([] {
    throw std::logic_error("a bug");
  });
});

std::string stderr_of(std::vector<std::string> args, int& rc) {
  args.insert(args.begin(), "tdiag");
  std::vector<char*> argv;
  for (auto& a : args)
    argv.push_back(a.data());
  testing::internal::CaptureStderr();
  rc = tdiag::cli::run(static_cast<int>(argv.size()), argv.data());
  return testing::internal::GetCapturedStderr();
}

TEST(CliRun, ARefusedAllocationIsOneLineNamingTheCommand) {
  int rc = 0;
  const auto err = stderr_of({"selftest", "oom"}, rc);
  EXPECT_EQ(rc, tdiag::cli::exit_usage);
  EXPECT_EQ(err.rfind("tdiag: `selftest oom`: out of memory: the allocator refused memory", 0), 0u)
      << err;
  EXPECT_EQ(err.find('\n'), err.size() - 1) << err;
  EXPECT_EQ(err.find("internal error"), std::string::npos) << err;
}

TEST(CliRun, AnyOtherExceptionIsAnInternalError) {
  int rc = 0;
  const auto err = stderr_of({"selftest", "broken"}, rc);
  EXPECT_EQ(rc, tdiag::cli::exit_usage);
  EXPECT_EQ(err, "tdiag: internal error: a bug\n");
}

} // namespace
