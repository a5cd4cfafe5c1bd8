// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// In-process ranks: one thread per rank, collectives over shared memory with a mutex/condition
// variable barrier (happens-before for every buffer handed over, so ThreadSanitizer stays quiet).
// For CI and the simulated mesh.
#pragma once

#include <tensordiag/dtensor_checks/comm/communicator.hpp>

#include <functional>
#include <memory>
#include <vector>

namespace tdiag::dtensor::comm {

/// `n` communicators over one shared group, rank order; hand each to its own thread. When a rank
/// fails with an exception, call abort_group() on any of them so the others leave their barrier
/// with a TDIAG-DT-301 error instead of waiting for ever.
[[nodiscard]] std::vector<std::unique_ptr<communicator>> make_thread_communicators(int n);

/// Wakes every rank waiting in a collective of `c`'s world (and its split groups) with an error.
void abort_group(communicator& c);

/// Runs `fn(comm)` on `n` threads, one per rank, and joins them. If ranks throw, the group is
/// aborted and the first exception (by rank) is rethrown after every thread has finished.
void run_thread_ranks(int n, const std::function<void(communicator&)>& fn);

} // namespace tdiag::dtensor::comm
