// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The allocator state at the view's cursor, computed off the UI thread. Going to an event index
// costs a keyframe copy, a replay of up to one keyframe interval and a pass over every block for
// the figures: with hundreds of thousands of live blocks that is tens of milliseconds, which no
// frame can spend. The view asks for an index and draws the newest state published; a worker
// thread (started at the first request) seeks with trace's replay_cursor and publishes a copy,
// then wakes the UI. States the UI let go are freed on the worker, not in a frame.
#pragma once

#include <tensordiag/trace/allocator_replay.hpp>
#include <tensordiag/trace/allocator_state.hpp>

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace tdiag::view {

/// One published state: the replay's state after the first `index` events, with its figures.
struct seeked_state {
  std::size_t index = 0;
  trace::allocator_state state;
  trace::state_figures figures;
};

class state_seeker {
public:
  /// Seeks over `replay`, which must outlive the seeker. The initial state is published at once.
  explicit state_seeker(const trace::allocator_replay& replay);
  ~state_seeker();
  state_seeker(const state_seeker&) = delete;
  state_seeker& operator=(const state_seeker&) = delete;

  /// Called on the worker after each publish (a window's event loop wakes on it). Set it before
  /// the first request.
  void set_wake(std::function<void()> wake) { wake_ = std::move(wake); }

  /// Asks for the state after the first `index` events (clamped to the replay's size); returns
  /// at once. A newer request replaces one not yet served.
  void request(std::size_t index);
  /// The newest published state; never null.
  [[nodiscard]] std::shared_ptr<const seeked_state> latest() const;
  /// Blocks until the last request is published (a screenshot, a benchmark, tests).
  void wait() const;

private:
  void run();

  const trace::allocator_replay& replay_;
  std::function<void()> wake_;
  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  std::size_t target_ = 0; // guarded by mutex_, as everything below
  std::shared_ptr<const seeked_state> latest_;
  bool stop_ = false;
  // Worker-only: states published before, freed once nobody else holds them.
  std::vector<std::shared_ptr<const seeked_state>> retired_;
  std::thread worker_;
};

} // namespace tdiag::view
