// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/error.hpp>
#include <tensordiag/core/file_io.hpp>
#include <tensordiag/core/report_io.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sample_report.hpp"

namespace fs = std::filesystem;

namespace {
class FileIo : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tdiag_file_io_" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override {
    fs::remove_all(dir_);
    unsetenv("TDIAG_MEMORY_LIMIT");
  }
  static std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
  }
  std::size_t entries() const {
    return static_cast<std::size_t>(
        std::distance(fs::directory_iterator(dir_), fs::directory_iterator()));
  }
  static std::string message_of(const auto& f) {
    try {
      f();
    } catch (const tdiag::error& e) {
      return std::string(e.report().diagnostics.at(0).code) + " " + e.what();
    }
    return "no exception";
  }
  fs::path dir_;
};
} // namespace

TEST_F(FileIo, WritesAndReadsAReport) {
  const auto r = tdiag::test::sample_report();
  const auto path = dir_ / "report.json";
  tdiag::write_text_file(path, tdiag::to_json(r));
  EXPECT_EQ(tdiag::to_json(tdiag::read_report_file(path)), tdiag::to_json(r));
  // Only the target is left: the temporary file was renamed.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);
}

TEST_F(FileIo, MissingFileIsAnInputErrorNamingThePath) {
  const auto path = dir_ / "absent.json";
  try {
    (void)tdiag::read_report_file(path);
    FAIL() << "no exception";
  } catch (const tdiag::input_error& e) {
    EXPECT_EQ(std::string(e.what()), path.string() + ": no such file");
    EXPECT_EQ(e.report().diagnostics.at(0).code, "TDIAG-CORE-004");
  }
  EXPECT_THROW((void)tdiag::read_report_file(dir_), tdiag::input_error);
}

TEST_F(FileIo, ParseErrorsNameTheFile) {
  const auto path = dir_ / "bad.json";
  tdiag::write_text_file(path, "{\"schema\":");
  try {
    (void)tdiag::read_report_file(path);
    FAIL() << "no exception";
  } catch (const tdiag::input_error& e) {
    EXPECT_EQ(std::string(e.what()),
              path.string() + ":1:11: the input ends inside an array or object")
        << e.what();
  }
}

TEST_F(FileIo, UnwritablePathThrowsError) {
  try {
    tdiag::write_text_file(dir_ / "no" / "such" / "dir.json", "x");
    FAIL() << "no exception";
  } catch (const tdiag::error& e) {
    EXPECT_EQ(e.report().diagnostics.at(0).code, "TDIAG-CORE-005");
    EXPECT_NE(std::string(e.what()).find("cannot create"), std::string::npos);
  }
}

TEST_F(FileIo, WritesThroughASymlinkToItsTarget) {
  const auto target = dir_ / "real.json";
  tdiag::write_output(target, "old");
  fs::create_symlink(target, dir_ / "link.json");
  tdiag::write_output(dir_ / "link.json", "new");
  EXPECT_TRUE(fs::is_symlink(dir_ / "link.json"));
  EXPECT_EQ(slurp(target), "new");
  EXPECT_EQ(entries(), 2u); // no temporary file left beside either
  // A dangling link: the file it names is created, the link stays a link.
  fs::create_symlink("later.json", dir_ / "dangling.json");
  tdiag::write_output(dir_ / "dangling.json", "made");
  EXPECT_TRUE(fs::is_symlink(dir_ / "dangling.json"));
  EXPECT_EQ(slurp(dir_ / "later.json"), "made");
}

TEST_F(FileIo, WritesToADeviceWithoutReplacingIt) {
  struct stat st {};
  if (::stat("/dev/full", &st) != 0 || !S_ISCHR(st.st_mode))
    GTEST_SKIP() << "/dev/full is not a character device on this machine";
  // /dev/full fails every write: an error naming it, and the device stays a device.
  const auto m = message_of([] { tdiag::write_output("/dev/full", std::string(1 << 16, 'x')); });
  EXPECT_EQ(m.rfind("TDIAG-CORE-005 /dev/full: write failed: No space left on device", 0), 0u) << m;
  ASSERT_EQ(::stat("/dev/full", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
}

TEST_F(FileIo, WritesToAFifo) {
  const auto fifo = dir_ / "out.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const pid_t child = fork();
  if (child == 0) {
    tdiag::write_output(fifo, "through the pipe");
    _exit(0);
  }
  EXPECT_EQ(slurp(fifo), "through the pipe");
  int status = 0;
  waitpid(child, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_FALSE(fs::is_regular_file(fifo));
}

// A FIFO named as input waits for its writer, as cat does: a writer that comes late is read
// whole (a non-blocking open read an empty input, and that writer then waited forever).
TEST_F(FileIo, ReadsAFifoWhoseWriterComesLate) {
  const auto fifo = dir_ / "in.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const pid_t child = fork();
  if (child == 0) {
    ::usleep(300 * 1000);
    const int fd = ::open(fifo.c_str(), O_WRONLY);
    // Over three of the reader's 1 MiB blocks, in uneven writes.
    std::string text;
    for (int i = 0; text.size() < (std::size_t{3} << 20) + 5; ++i)
      text += fmt::format("line {} written late\n", i);
    bool ok = fd >= 0;
    for (std::size_t at = 0; ok && at < text.size();) {
      const auto n = ::write(fd, text.data() + at, std::min<std::size_t>(70000, text.size() - at));
      ok = n > 0;
      at += static_cast<std::size_t>(std::max<ssize_t>(n, 0));
    }
    _exit(ok ? 0 : 1);
  }
  tdiag::input_file in(fifo);
  EXPECT_FALSE(in.seekable());
  const std::string got = in.read_all();
  std::string want;
  for (int i = 0; want.size() < (std::size_t{3} << 20) + 5; ++i)
    want += fmt::format("line {} written late\n", i);
  EXPECT_EQ(got.size(), want.size());
  EXPECT_TRUE(got == want);
  int status = 0;
  waitpid(child, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

TEST_F(FileIo, FailedWriteLeavesTheOldFileAndNoTemporary) {
  const auto path = dir_ / "report.json";
  tdiag::write_output(path, "old contents");
  // A file-size limit makes the write fail the way a full disk does (EFBIG instead of ENOSPC).
  std::signal(SIGXFSZ, SIG_IGN);
  rlimit saved{};
  getrlimit(RLIMIT_FSIZE, &saved);
  rlimit small = saved;
  small.rlim_cur = 4096;
  setrlimit(RLIMIT_FSIZE, &small);
  const auto m = message_of([&] { tdiag::write_output(path, std::string(1 << 20, 'x')); });
  setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, SIG_DFL);
  EXPECT_EQ(m.rfind("TDIAG-CORE-005 " + path.string() + ": write failed", 0), 0u) << m;
  EXPECT_EQ(slurp(path), "old contents");
  EXPECT_EQ(entries(), 1u);
}

TEST_F(FileIo, AbandonedOutputLeavesNoTemporary) {
  {
    tdiag::output_file out(dir_ / "never.json");
    out.write("half");
  }
  EXPECT_EQ(entries(), 0u);
}

TEST_F(FileIo, KeepsTheModeOfAReplacedFile) {
  const auto path = dir_ / "script.sh";
  tdiag::write_output(path, "old");
  fs::permissions(path, fs::perms::owner_all);
  tdiag::write_output(path, "new");
  EXPECT_EQ(fs::status(path).permissions() & fs::perms::all, fs::perms::owner_all);
}

TEST_F(FileIo, RefusesDevicesAndDirectoriesWithOneLine) {
  EXPECT_EQ(message_of([] { (void)tdiag::read_input_file("/dev/zero"); }),
            "TDIAG-CORE-004 /dev/zero: is a device, expected a file (use - to read standard "
            "input)");
  EXPECT_EQ(message_of([&] { (void)tdiag::read_input_file(dir_); }),
            "TDIAG-CORE-004 " + dir_.string() + ": is a directory, expected a file");
}

TEST_F(FileIo, ReadsAPipeAsAStream) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const std::string payload(200000, 'p'); // more than a pipe buffer and one read chunk
  const pid_t child = fork();
  if (child == 0) {
    close(fds[0]);
    for (std::size_t done = 0; done < payload.size();)
      done += static_cast<std::size_t>(write(fds[1], payload.data() + done, payload.size() - done));
    _exit(0);
  }
  close(fds[1]);
  tdiag::input_file in(fmt::format("/proc/self/fd/{}", fds[0]));
  EXPECT_FALSE(in.seekable());
  EXPECT_EQ(in.read_all(), payload);
  close(fds[0]);
  waitpid(child, nullptr, 0);
}

TEST_F(FileIo, EndlessStreamStopsAtTheBudget) {
  setenv("TDIAG_MEMORY_LIMIT", "1M", 1);
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t child = fork();
  if (child == 0) {
    close(fds[0]);
    const std::string block(1 << 16, 'y');
    while (write(fds[1], block.data(), block.size()) > 0) {
    }
    _exit(0);
  }
  close(fds[1]);
  const auto name = fmt::format("/proc/self/fd/{}", fds[0]);
  const auto m = message_of([&] { (void)tdiag::read_input_file(name); });
  close(fds[0]);
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  EXPECT_EQ(m, "TDIAG-CORE-006 " + name +
                   ": a stream needs more than 1.0 MiB; the memory budget is 1.0 MiB "
                   "(TDIAG_MEMORY_LIMIT)");
}

TEST_F(FileIo, LargeFileOverTheBudgetIsOneLine) {
  const auto path = dir_ / "big.bin";
  tdiag::write_output(path, std::string(3000, 'b'));
  setenv("TDIAG_MEMORY_LIMIT", "2048", 1);
  EXPECT_EQ(message_of([&] { (void)tdiag::read_input_file(path); }),
            "TDIAG-CORE-006 " + path.string() +
                ": a file of 3000 bytes needs 2.9 KiB; the memory budget is 2.0 KiB "
                "(TDIAG_MEMORY_LIMIT)");
  setenv("TDIAG_MEMORY_LIMIT", "4K", 1);
  EXPECT_EQ(tdiag::read_input_file(path).size(), 3000u);
}

TEST_F(FileIo, MemoryBudgetReadsTheEnvironment) {
  setenv("TDIAG_MEMORY_LIMIT", "8G", 1);
  EXPECT_EQ(tdiag::memory_budget(), std::uint64_t{8} << 30);
  setenv("TDIAG_MEMORY_LIMIT", "123", 1);
  EXPECT_EQ(tdiag::memory_budget(), 123u);
  setenv("TDIAG_MEMORY_LIMIT", "lots", 1); // malformed: said, not replaced by the default
  EXPECT_EQ(message_of([] { (void)tdiag::memory_budget(); }),
            "TDIAG-CORE-007 TDIAG_MEMORY_LIMIT=lots is not a size");
  EXPECT_THROW((void)tdiag::check_memory_budget("f", "x", 1), tdiag::input_error);
  unsetenv("TDIAG_MEMORY_LIMIT");
  const auto fallback = tdiag::memory_budget();
  EXPECT_GT(fallback, 123u);
  // Half of what is available now: other processes move it between two reads (seen at 0.003%
  // while the suite ran beside a build), so the same default within 10%.
  EXPECT_NEAR(static_cast<double>(tdiag::memory_budget()), static_cast<double>(fallback),
              0.1 * static_cast<double>(fallback));
  EXPECT_THROW(tdiag::check_memory_budget("f", "x", ~std::uint64_t{0}), tdiag::input_error);
  EXPECT_NO_THROW(tdiag::check_memory_budget("f", "x", 1));
}

TEST_F(FileIo, FileNamesAreEscapedInMessages) {
  const auto m = message_of([&] {
    (void)tdiag::read_input_file(dir_ / "a\nb\x1b"
                                        "c");
  });
  EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  EXPECT_EQ(m.find('\x1b'), std::string::npos) << m;
  EXPECT_NE(m.find("a\\x0ab\\x1bc: no such file"), std::string::npos) << m;
}
