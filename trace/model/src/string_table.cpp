// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/trace/string_table.hpp>

namespace tdiag::trace {

std::size_t string_table::memory_bytes() const noexcept {
  // Per string: its pointer, the std::string and its heap text with the allocator's header;
  // per index entry a node (key, id, hash, link, header) and a bucket.
  constexpr std::size_t per_string = sizeof(void*) + sizeof(std::string) + 16,
                        per_entry = sizeof(std::string_view) + 8 + 8 + 8 + 16 + sizeof(void*);
  return strings_.capacity() * sizeof(void*) + strings_.size() * per_string + text_bytes_ +
         index_.size() * per_entry + index_.bucket_count() * sizeof(void*);
}

string_table::string_table() {
  strings_.push_back(std::make_unique<std::string>());
  index_.emplace(std::string_view(*strings_.front()), no_string);
}

string_table::string_table(const string_table& other) : string_table() {
  strings_.reserve(other.strings_.size());
  for (std::size_t i = 1; i < other.strings_.size(); ++i)
    (void)intern(*other.strings_[i]);
}

string_table& string_table::operator=(const string_table& other) {
  if (this != &other) {
    string_table copy(other);
    *this = std::move(copy);
  }
  return *this;
}

string_id string_table::intern(std::string_view text) {
  if (auto it = index_.find(text); it != index_.end())
    return it->second;
  const auto id = static_cast<string_id>(strings_.size());
  strings_.push_back(std::make_unique<std::string>(text));
  index_.emplace(std::string_view(*strings_.back()), id);
  text_bytes_ += text.size();
  return id;
}

string_id string_table::find(std::string_view text) const noexcept {
  auto it = index_.find(text);
  return it == index_.end() ? no_string : it->second;
}

bool operator==(const string_table& a, const string_table& b) {
  if (a.strings_.size() != b.strings_.size())
    return false;
  for (std::size_t i = 0; i < a.strings_.size(); ++i)
    if (*a.strings_[i] != *b.strings_[i])
      return false;
  return true;
}

} // namespace tdiag::trace
