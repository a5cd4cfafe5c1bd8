// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Exchanging a small blob (NCCL's unique id) from rank 0 to the other ranks of a job: through a
// file in a shared directory (written then renamed, so readers never see half of it). Another
// transport (a job launcher's store) implements id_store.
#pragma once

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

namespace tdiag::dtensor::comm {

class id_store {
public:
  virtual ~id_store() = default;
  /// Rank 0: makes `blob` available to `readers` other ranks (a store that serves them may
  /// return only once they have it). Throws tdiag::error (TDIAG-DT-303) on I/O failure or timeout.
  void publish(std::string_view blob, int readers) { do_publish(blob, readers); }
  /// Other ranks: waits up to `timeout` for the blob of `size` bytes. Throws tdiag::error
  /// (TDIAG-DT-303) naming the path or address when it does not come.
  [[nodiscard]] std::string fetch(std::size_t size, std::chrono::milliseconds timeout) {
    return do_fetch(size, timeout);
  }

private:
  virtual void do_publish(std::string_view blob, int readers) = 0;
  virtual std::string do_fetch(std::size_t size, std::chrono::milliseconds timeout) = 0;
};

/// The file `dir / key`. Rank 0 should remove a stale file from an earlier run first
/// (publish() replaces it atomically; fetch() may read a stale one if it is older than the job).
[[nodiscard]] std::unique_ptr<id_store> make_file_store(const std::filesystem::path& dir,
                                                        const std::string& key);

} // namespace tdiag::dtensor::comm
