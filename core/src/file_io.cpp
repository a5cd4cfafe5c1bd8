// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/codes.hpp>
#include <tensordiag/core/error.hpp>
#include <tensordiag/core/file_io.hpp>
#include <tensordiag/core/printable.hpp>
#include <tensordiag/core/report_io.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <optional>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>
#include <vector>

namespace tdiag {
namespace {

constexpr std::string_view stdio_name = "-";
constexpr std::uint64_t unlimited = ~std::uint64_t{0};

diagnostic file_diagnostic(std::string_view code, std::string title, std::string_view name,
                           std::string_view what) {
  diagnostic d;
  d.code = std::string(code);
  d.title = std::move(title);
  d.message = fmt::format("{}: {}", name, what);
  d.location.file = std::string(name);
  return d;
}

[[noreturn]] void throw_read_error(std::string_view name, std::string_view what) {
  throw input_error(file_diagnostic(codes::cannot_read, "cannot read file", name, what));
}

std::string bytes_text(std::uint64_t n) {
  constexpr const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (n < 1024)
    return fmt::format("{} B", n);
  double v = static_cast<double>(n);
  std::size_t u = 0;
  while (v >= 1024 && u + 1 < std::size(units)) {
    v /= 1024;
    ++u;
  }
  return fmt::format("{:.1f} {}", v, units[u]);
}

// "8G", "512M", "1048576": bytes; nullopt when malformed or overflowing.
std::optional<std::uint64_t> parse_size(std::string_view text) {
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end == text.data())
    return std::nullopt;
  std::string_view suffix(end, static_cast<std::size_t>(text.data() + text.size() - end));
  if (!suffix.empty() && (suffix.back() == 'B' || suffix.back() == 'b'))
    suffix.remove_suffix(1);
  if (!suffix.empty() && (suffix.back() == 'i'))
    suffix.remove_suffix(1);
  int shift = 0;
  if (suffix.size() == 1) {
    switch (suffix[0] | 0x20) {
    case 'k':
      shift = 10;
      break;
    case 'm':
      shift = 20;
      break;
    case 'g':
      shift = 30;
      break;
    case 't':
      shift = 40;
      break;
    default:
      return std::nullopt;
    }
  } else if (!suffix.empty()) {
    return std::nullopt;
  }
  if (shift != 0 && value > (unlimited >> shift))
    return std::nullopt;
  return value << shift;
}

// The first number in `path` (a /proc or cgroup file); nullopt for "max" or no file.
std::optional<std::uint64_t> read_number(const char* path, std::string_view key = {}) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    std::string_view v(line);
    if (!key.empty()) {
      if (v.substr(0, key.size()) != key)
        continue;
      v.remove_prefix(key.size());
    }
    while (!v.empty() && (v.front() == ' ' || v.front() == '\t'))
      v.remove_prefix(1);
    std::uint64_t n = 0;
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
    if (ec != std::errc{})
      return std::nullopt;
    return key == "MemAvailable:" ? n * 1024 : n; // /proc/meminfo counts kB
  }
  return std::nullopt;
}

std::uint64_t available_memory() noexcept {
  try {
    std::uint64_t avail = read_number("/proc/meminfo", "MemAvailable:").value_or(unlimited);
    const auto cap = [&](std::optional<std::uint64_t> limit, std::optional<std::uint64_t> used) {
      if (limit && *limit < (std::uint64_t{1} << 60))
        avail = std::min(avail, *limit - std::min(*limit, used.value_or(0)));
    };
    cap(read_number("/sys/fs/cgroup/memory.max"), read_number("/sys/fs/cgroup/memory.current"));
    cap(read_number("/sys/fs/cgroup/memory/memory.limit_in_bytes"),
        read_number("/sys/fs/cgroup/memory/memory.usage_in_bytes"));
    return avail;
  } catch (...) {
    // No /proc (a sandbox): no default bound beyond what the allocator refuses.
    return unlimited;
  }
}

} // namespace

std::uint64_t memory_budget() {
  if (const char* env = std::getenv("TDIAG_MEMORY_LIMIT"); env != nullptr && *env != '\0') {
    if (const auto v = parse_size(env))
      return *v;
    diagnostic d;
    d.code = codes::bad_memory_limit;
    d.title = "TDIAG_MEMORY_LIMIT is not a size";
    d.message = fmt::format("TDIAG_MEMORY_LIMIT={} is not a size", printable(env));
    d.hint = "give bytes, or a number with K, M, G or T (TDIAG_MEMORY_LIMIT=16G), or unset it "
             "for half the available memory";
    throw input_error(std::move(d));
  }
  const std::uint64_t avail = available_memory();
  return avail == unlimited ? unlimited : avail / 2;
}

namespace {

[[noreturn]] void throw_over_budget(std::string_view source, std::string_view what,
                                    std::string_view needed, std::uint64_t budget,
                                    std::string_view advice = {}) {
  const bool from_env = std::getenv("TDIAG_MEMORY_LIMIT") != nullptr;
  diagnostic d = file_diagnostic(
      codes::over_memory_budget, "input exceeds the memory budget", printable(source),
      fmt::format("{} needs {}; the memory budget is {} ({}){}{}", printable(what), needed,
                  bytes_text(budget), from_env ? "TDIAG_MEMORY_LIMIT" : "half the available memory",
                  advice.empty() ? "" : "; ", advice));
  d.add_field("budget_bytes", budget);
  d.hint = "raise the budget with TDIAG_MEMORY_LIMIT (e.g. TDIAG_MEMORY_LIMIT=16G) if the input "
           "is genuine";
  throw input_error(std::move(d));
}

} // namespace

void check_memory_budget(std::string_view source, std::string_view what, std::uint64_t needed,
                         std::string_view advice) {
  if (const std::uint64_t budget = memory_budget(); needed > budget)
    throw_over_budget(source, what, bytes_text(needed), budget, advice);
}

// --- input_file ------------------------------------------------------------------------------

input_file::input_file(const std::filesystem::path& path) {
  if (path == stdio_name) {
    name_ = "<stdin>";
    fd_ = STDIN_FILENO;
    owns_fd_ = false;
    struct stat st {};
    if (::fstat(fd_, &st) == 0 && S_ISREG(st.st_mode)) {
      seekable_ = true;
      size_ = static_cast<std::uint64_t>(st.st_size);
    }
    return;
  }
  name_ = printable(path.string());
  // O_NONBLOCK: opening a device or a FIFO must not wait before we know what it is.
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd_ < 0) {
    const int err = errno;
    if (err == ENOENT)
      throw_read_error(name_, "no such file");
    throw_read_error(name_, fmt::format("cannot open: {}", std::strerror(err)));
  }
  struct stat st {};
  if (::fstat(fd_, &st) != 0) {
    const int err = errno;
    ::close(fd_);
    fd_ = -1;
    throw_read_error(name_, fmt::format("cannot open: {}", std::strerror(err)));
  }
  const auto refuse = [&](std::string_view what) {
    ::close(fd_);
    fd_ = -1;
    throw_read_error(name_, what);
  };
  if (S_ISDIR(st.st_mode))
    refuse("is a directory, expected a file");
  if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))
    refuse("is a device, expected a file (use - to read standard input)");
  if (S_ISREG(st.st_mode)) {
    seekable_ = true;
    size_ = static_cast<std::uint64_t>(st.st_size);
  }
  // A FIFO by name waits for its writer, as cat does: opened without O_NONBLOCK. (Kept
  // non-blocking, a read before the writer comes is an end of file: the input would be empty
  // and a writer that comes later would wait forever for a reader.)
  if (S_ISFIFO(st.st_mode)) {
    const int blocking = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
    const int err = errno;
    ::close(fd_);
    fd_ = blocking;
    if (fd_ < 0)
      throw_read_error(name_, fmt::format("cannot open: {}", std::strerror(err)));
    return;
  }
  // A pipe is read as a blocking stream, like cat reads it.
  const int flags = ::fcntl(fd_, F_GETFL);
  if (flags >= 0)
    (void)::fcntl(fd_, F_SETFL, flags & ~O_NONBLOCK);
}

input_file::~input_file() {
  if (fd_ >= 0 && owns_fd_)
    ::close(fd_);
}

std::size_t input_file::read_at(std::uint64_t offset, std::span<std::byte> out) {
  std::size_t done = 0;
  while (done < out.size()) {
    const ssize_t n =
        ::pread(fd_, out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
    if (n == 0)
      break;
    if (n < 0) {
      if (errno == EINTR)
        continue;
      throw_read_error(name_, fmt::format("read failed: {}", std::strerror(errno)));
    }
    done += static_cast<std::size_t>(n);
  }
  return done;
}

std::string input_file::read_all(std::uint64_t limit) {
  limit = std::min(limit, memory_budget());
  std::string bytes;
  if (seekable_) {
    // One read of the known size; a file that grows meanwhile is read to its end below.
    if (size_ > limit)
      throw_over_budget(name_, fmt::format("a file of {} bytes", size_), bytes_text(size_), limit);
    bytes.resize(static_cast<std::size_t>(size_));
    bytes.resize(read_at(0, std::as_writable_bytes(std::span(bytes.data(), bytes.size()))));
  }
  // The rest (a stream: all of it) in blocks, joined at the end: a string grown as it is read
  // holds its old and new buffers at once on every growth, twice the input at the peak. The
  // blocks are mapped pages, each returned to the system once copied.
  constexpr std::size_t block = std::size_t{1} << 20;
  struct mapped_block {
    void* p = nullptr;
    std::size_t used = 0;
    mapped_block() = default;
    mapped_block(mapped_block&& o) noexcept : p(std::exchange(o.p, nullptr)), used(o.used) {}
    mapped_block& operator=(mapped_block&&) = delete;
    ~mapped_block() {
      if (p != nullptr)
        ::munmap(p, block);
    }
  };
  std::vector<mapped_block> blocks;
  std::uint64_t total = bytes.size();
  for (bool end = false; !end;) {
    if (total > limit)
      throw_over_budget(name_, "a stream", fmt::format("more than {}", bytes_text(limit)), limit);
    mapped_block& b = blocks.emplace_back();
    b.p = ::mmap(nullptr, block, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (b.p == MAP_FAILED) {
      b.p = nullptr;
      throw_over_budget(name_, "a stream", fmt::format("more than {}", bytes_text(total)), limit);
    }
    while (b.used < block) {
      auto* out = static_cast<char*>(b.p) + b.used;
      const ssize_t n = seekable_ ? ::pread(fd_, out, block - b.used, static_cast<off_t>(total))
                                  : ::read(fd_, out, block - b.used);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        throw_read_error(name_, fmt::format("read failed: {}", std::strerror(errno)));
      if (n == 0) {
        end = true;
        break;
      }
      b.used += static_cast<std::size_t>(n);
      total += static_cast<std::uint64_t>(n);
      if (total > limit)
        break;
    }
  }
  // Reserved, not resized: untouched pages cost nothing until each block is copied in.
  bytes.reserve(static_cast<std::size_t>(total));
  for (auto& b : blocks) {
    bytes.append(static_cast<const char*>(b.p), b.used);
    ::munmap(std::exchange(b.p, nullptr), block);
  }
  return bytes;
}

std::string read_input_file(const std::filesystem::path& path) {
  return input_file(path).read_all();
}

// --- output_file -----------------------------------------------------------------------------

output_file::output_file(const std::filesystem::path& target) : target_(target) {
  if (target.empty() || target == stdio_name) {
    to_stdout_ = true;
    name_ = "<stdout>";
    write_path_ = "/dev/stdout";
    return;
  }
  name_ = printable(target.string());
  // Follow symlinks: the user asked for the file the link names, not for a new regular file in
  // the link's place.
  // A dangling link is followed too: the write creates the file it names.
  std::filesystem::path resolved = target;
  std::error_code ec;
  for (int hops = 0; std::filesystem::is_symlink(std::filesystem::symlink_status(resolved, ec));
       ++hops) {
    if (hops == 40)
      fail("too many levels of symbolic links", ELOOP);
    const auto link = std::filesystem::read_symlink(resolved, ec);
    if (ec)
      fail("cannot read the symbolic link", ec.value());
    resolved = link.is_absolute() ? link : resolved.parent_path() / link;
  }
  struct stat st {};
  const bool exists = ::stat(resolved.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode))
    fail("is a directory", EISDIR);
  if (exists && !S_ISREG(st.st_mode)) {
    // A device, FIFO or socket: write to it as asked; it cannot be replaced atomically.
    write_path_ = resolved;
    return;
  }
  target_ = resolved;
  temporary_ = true;
  write_path_ = resolved;
  write_path_ += fmt::format(".tdiag-tmp{}", getpid());
  const int fd = ::open(write_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
                        exists ? (st.st_mode & 07777) : 0666);
  if (fd < 0)
    fail("cannot create", errno);
  if (exists)
    (void)::fchmod(fd, st.st_mode & 07777); // the umask must not narrow an existing file's mode
  stream_ = ::fdopen(fd, "wb");
  if (stream_ == nullptr) {
    const int err = errno;
    ::close(fd);
    fail("cannot create", err);
  }
}

output_file::~output_file() {
  if (stream_ != nullptr && !to_stdout_)
    std::fclose(stream_);
  if (temporary_ && !committed_) {
    std::error_code ignored; // nothing more to report: the write already failed or was dropped
    std::filesystem::remove(write_path_, ignored);
  }
}

void output_file::fail(std::string_view what, int err) {
  if (stream_ != nullptr && !to_stdout_)
    std::fclose(stream_);
  stream_ = nullptr;
  if (temporary_) {
    std::error_code ignored;
    std::filesystem::remove(write_path_, ignored);
    temporary_ = false;
  }
  throw error(file_diagnostic(codes::cannot_write, "cannot write file", name_,
                              fmt::format("{}: {}", what, std::strerror(err))));
}

std::FILE* output_file::stream() {
  if (stream_ != nullptr)
    return stream_;
  if (to_stdout_) {
    stream_ = stdout;
    return stream_;
  }
  stream_ = std::fopen(write_path_.c_str(), "wb");
  if (stream_ == nullptr)
    fail("cannot open", errno);
  return stream_;
}

void output_file::write(std::string_view text) {
  std::FILE* f = stream();
  if (!text.empty() && std::fwrite(text.data(), 1, text.size(), f) != text.size())
    fail("write failed", errno != 0 ? errno : EIO);
}

void output_file::commit() {
  if (stream_ != nullptr) {
    const bool bad = std::ferror(stream_) != 0;
    errno = 0;
    if (std::fflush(stream_) != 0 || bad)
      fail("write failed", errno != 0 ? errno : EIO);
    if (!to_stdout_) {
      if (temporary_ && ::fsync(fileno(stream_)) != 0 && errno != EINVAL)
        fail("write failed", errno);
      const int rc = std::fclose(stream_);
      stream_ = nullptr;
      if (rc != 0)
        fail("write failed", errno);
    }
  }
  if (temporary_ && std::rename(write_path_.c_str(), target_.c_str()) != 0)
    fail("cannot rename the temporary file", errno);
  committed_ = true;
}

void write_output(const std::filesystem::path& target, std::string_view text) {
  output_file out(target);
  out.write(text);
  out.commit();
}

// --- reports ---------------------------------------------------------------------------------

report read_report_file(const std::filesystem::path& path) {
  input_file in(path);
  return parse_report_json(in.read_all(), in.name());
}

void write_text_file(const std::filesystem::path& path, std::string_view text) {
  write_output(path, text);
}

} // namespace tdiag
