// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/viewer/state_seeker.hpp>

#include <algorithm>
#include <utility>

namespace tdiag::view {
namespace {

std::shared_ptr<const seeked_state> make_seeked(std::size_t index,
                                                const trace::allocator_state& state) {
  auto s = std::make_shared<seeked_state>();
  s->index = index;
  s->state = state;
  s->figures = s->state.figures();
  return s;
}

} // namespace

state_seeker::state_seeker(const trace::allocator_replay& replay)
    : replay_(replay), latest_(make_seeked(0, replay.initial_state())) {}

state_seeker::~state_seeker() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  if (worker_.joinable())
    worker_.join();
}

void state_seeker::request(std::size_t index) {
  index = std::min(index, replay_.size());
  {
    std::lock_guard lock(mutex_);
    if (index == target_)
      return;
    target_ = index;
    if (!worker_.joinable())
      worker_ = std::thread([this] { run(); });
  }
  changed_.notify_all();
}

std::shared_ptr<const seeked_state> state_seeker::latest() const {
  std::lock_guard lock(mutex_);
  return latest_;
}

void state_seeker::wait() const {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return stop_ || latest_->index == target_; });
}

void state_seeker::run() {
  trace::replay_cursor cursor(replay_);
  std::unique_lock lock(mutex_);
  while (true) {
    changed_.wait(lock, [&] { return stop_ || latest_->index != target_; });
    if (stop_)
      return;
    const std::size_t target = target_;
    lock.unlock();
    // A keyframe copy when going back or far ahead, else a replay forward (replay_cursor).
    auto next = make_seeked(target, cursor.seek(target));
    lock.lock();
    retired_.push_back(std::exchange(latest_, std::move(next)));
    // States only retired_ still holds are freed here, on the worker, outside the lock: the
    // count cannot grow again, as nothing hands out a retired state.
    std::vector<std::shared_ptr<const seeked_state>> unused;
    std::erase_if(retired_, [&](std::shared_ptr<const seeked_state>& s) {
      if (s.use_count() != 1)
        return false;
      unused.push_back(std::move(s));
      return true;
    });
    lock.unlock();
    changed_.notify_all();
    if (wake_)
      wake_();
    unused.clear();
    lock.lock();
  }
}

} // namespace tdiag::view
