// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include <chrono>

#include "view_fr.hpp"

namespace tdiag::view {

namespace {

std::vector<std::string> names_of(std::span<const std::filesystem::path> inputs) {
  std::vector<std::string> names;
  for (const auto& p : inputs)
    names.push_back(p.string());
  return names;
}

} // namespace

bool is_fr_input(std::span<const std::filesystem::path> inputs) {
  return !inputs.empty() && trace::fr::looks_like_dumps(names_of(inputs));
}

std::unique_ptr<document> load_fr_document(std::span<const std::filesystem::path> inputs,
                                           load_progress& progress) {
  progress.set(fmt::format("reading the Flight Recorder dumps of {} input(s)", inputs.size()),
               -1.0f);
  const auto start = std::chrono::steady_clock::now();
  auto fr_doc = std::make_shared<fr_document>();
  fr_doc->dumps = trace::fr::load_dumps(names_of(inputs));
  const double load_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  progress.set(fmt::format("matching {} rank(s)", fr_doc->dumps.size()), -1.0f);
  fr_doc->report = trace::fr::analyze(fr_doc->dumps);
  fr_doc->rings = build_fr_rings(fr_doc->dumps, fr_doc->report);
  fr_doc->text = trace::fr::to_text(fr_doc->report);
  trace::trace empty;
  empty.metadata.format = "Flight Recorder dumps";
  auto doc = make_document(std::move(empty), progress);
  doc->path = inputs.front();
  doc->load_seconds = load_seconds;
  for (const auto& d : fr_doc->dumps) {
    std::error_code ec;
    doc->file_bytes += std::filesystem::file_size(d.source, ec);
  }
  doc->fr = std::move(fr_doc);
  return doc;
}

} // namespace tdiag::view
