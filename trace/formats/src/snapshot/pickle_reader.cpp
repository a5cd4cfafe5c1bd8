// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// pickle_document: the streaming machine of snapshot_stream.hpp with no entry sink (every dict
// stays a dict), plus the cycle and depth check that recursive consumers need.
#include <tensordiag/core/file_io.hpp>
#include <tensordiag/trace/pickle_reader.hpp>

#include <utility>

#include "snapshot_stream.hpp"

namespace tdiag::trace {

pickle_document::pickle_document() = default;
pickle_document::~pickle_document() = default;
pickle_document::pickle_document(pickle_document&&) noexcept = default;
pickle_document& pickle_document::operator=(pickle_document&&) noexcept = default;

pickle_document pickle_document::parse(std::string_view bytes, std::string_view source_name,
                                       const pickle_limits& limits) {
  pickle_document doc;
  doc.stream_ = std::make_unique<detail::snap_stream>(nullptr, bytes, std::string(source_name),
                                                      limits, nullptr);
  doc.stream_->run(); // strings are copied out: `bytes` may go once it returns
  if (limits.max_depth != 0)
    doc.stream_->check_depth();
  return doc;
}

pickle_document pickle_document::read_file(const std::filesystem::path& path,
                                           const pickle_limits& limits) {
  input_file in(path);
  if (!in.seekable())
    return parse(in.read_all(), in.name(), limits);
  pickle_document doc;
  doc.stream_ =
      std::make_unique<detail::snap_stream>(&in, std::string_view{}, in.name(), limits, nullptr);
  doc.stream_->run();
  if (limits.max_depth != 0)
    doc.stream_->check_depth();
  return doc;
}

pickle_value pickle_document::root() const noexcept {
  return {this, stream_->root()};
}
std::size_t pickle_document::value_count() const noexcept {
  return static_cast<std::size_t>(stream_->value_count());
}
std::size_t pickle_document::byte_size() const noexcept {
  return static_cast<std::size_t>(stream_->size());
}
int pickle_document::protocol() const noexcept {
  return stream_->protocol();
}
const std::string& pickle_document::source_name() const noexcept {
  return stream_->source_name();
}

} // namespace tdiag::trace
