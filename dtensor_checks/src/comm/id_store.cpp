// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/error.hpp>
#include <tensordiag/dtensor_checks/comm/id_store.hpp>
#include <tensordiag/dtensor_checks/sim/validation_codes.hpp>

#include <fmt/format.h>

#include <fstream>
#include <thread>
#include <unistd.h>

namespace tdiag::dtensor::comm {
namespace {

[[noreturn]] void fail(std::string message, std::string hint = {}) {
  diagnostic d;
  d.code = std::string(validation_codes::id_exchange);
  d.title = "unique id exchange failed";
  d.message = std::move(message);
  d.hint = std::move(hint);
  throw tdiag::error(std::move(d));
}

class file_store final : public id_store {
public:
  file_store(const std::filesystem::path& dir, const std::string& key) : path_(dir / key) {}

private:
  void do_publish(std::string_view blob, int) override {
    auto tmp = path_;
    tmp += fmt::format(".tmp.{}", ::getpid());
    {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      out.write(blob.data(), static_cast<std::streamsize>(blob.size()));
      if (!out)
        fail(fmt::format("cannot write {}", tmp.string()),
             "use a directory every rank can write and read");
    }
    std::error_code ec;
    std::filesystem::rename(tmp, path_, ec);
    if (ec)
      fail(fmt::format("cannot rename {} to {}: {}", tmp.string(), path_.string(), ec.message()));
  }

  std::string do_fetch(std::size_t size, std::chrono::milliseconds timeout) override {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (true) {
      std::ifstream in(path_, std::ios::binary);
      if (in) {
        std::string blob(size, '\0');
        in.read(blob.data(), static_cast<std::streamsize>(size));
        if (static_cast<std::size_t>(in.gcount()) == size)
          return blob;
      }
      if (std::chrono::steady_clock::now() > deadline) {
        fail(
            fmt::format("no id of {} bytes appeared in {} within {} ms", size, path_.string(),
                        timeout.count()),
            "check that rank 0 started and that every rank uses the same shared directory and key");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }

  std::filesystem::path path_;
};

} // namespace

std::unique_ptr<id_store> make_file_store(const std::filesystem::path& dir,
                                          const std::string& key) {
  return std::make_unique<file_store>(dir, key);
}

} // namespace tdiag::dtensor::comm
