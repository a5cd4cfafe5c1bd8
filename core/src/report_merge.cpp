// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/report_merge.hpp>

namespace tdiag {

report merge_reports(std::span<const report> inputs) {
  report merged;
  if (inputs.empty())
    return merged;
  merged.metadata = inputs.front().metadata;
  for (const auto& in : inputs) {
    if (in.metadata.rank != merged.metadata.rank)
      merged.metadata.rank.reset();
    if (in.metadata.device != merged.metadata.device)
      merged.metadata.device.reset();
  }
  for (const auto& in : inputs) {
    for (auto d : in.diagnostics) {
      if (in.metadata.rank && d.find_field("rank") == nullptr)
        d.add_field("rank", *in.metadata.rank);
      if (in.metadata.device && !merged.metadata.device && d.find_field("device") == nullptr)
        d.add_field("device", *in.metadata.device);
      merged.diagnostics.push_back(std::move(d));
    }
  }
  return merged;
}

} // namespace tdiag
