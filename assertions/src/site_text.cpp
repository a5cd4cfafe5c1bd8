// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include "site_text.hpp"

#include <tensordiag/assertions/codes.hpp>
#include <tensordiag/core/error.hpp>

#include <fmt/args.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

namespace tdiag::assertions::detail {
namespace {

constexpr std::uint32_t max_string = 64 * 1024;

std::string read_string(const backend& owner, int device, const char* address,
                        std::uint32_t length) {
  if (address == nullptr || length == 0)
    return {};
  std::string s(std::min(length, max_string), '\0');
  owner.read_device_memory(device, address, s.data(), s.size());
  return s;
}

struct typed_value {
  field_value field;
  std::string text;
};

typed_value decode(value_type type, std::uint64_t bits) {
  switch (type) {
  case value_type::i8:
  case value_type::i16:
  case value_type::i32:
  case value_type::i64: {
    const auto v = static_cast<std::int64_t>(bits);
    return {field_value(static_cast<long long>(v)), fmt::format("{}", v)};
  }
  case value_type::u8:
  case value_type::u16:
  case value_type::u32:
  case value_type::u64:
    return {field_value(static_cast<unsigned long long>(bits)), fmt::format("{}", bits)};
  case value_type::f32:
  case value_type::f64: {
    double d = 0;
    std::memcpy(&d, &bits, sizeof(d));
    return {field_value(d), type == value_type::f32 ? fmt::format("{}", static_cast<float>(d))
                                                    : fmt::format("{}", d)};
  }
  case value_type::boolean:
    return {field_value(bits != 0), bits != 0 ? "true" : "false"};
  case value_type::pointer: {
    const std::string s = fmt::format("{:#x}", bits);
    return {field_value(s), s};
  }
  case value_type::none:
    break;
  }
  return {field_value("?"), "?"};
}

void push_arg(fmt::dynamic_format_arg_store<fmt::format_context>& store, value_type type,
              std::uint64_t bits) {
  switch (type) {
  case value_type::i8:
  case value_type::i16:
  case value_type::i32:
  case value_type::i64:
    store.push_back(static_cast<std::int64_t>(bits));
    return;
  case value_type::u8:
  case value_type::u16:
  case value_type::u32:
  case value_type::u64:
    store.push_back(bits);
    return;
  case value_type::f32:
  case value_type::f64: {
    double d = 0;
    std::memcpy(&d, &bits, sizeof(d));
    if (type == value_type::f32)
      store.push_back(static_cast<float>(d));
    else
      store.push_back(d);
    return;
  }
  case value_type::boolean:
    store.push_back(bits != 0);
    return;
  case value_type::pointer:
    store.push_back(reinterpret_cast<const void*>(static_cast<std::uintptr_t>(bits)));
    return;
  case value_type::none:
    break;
  }
  store.push_back(std::string("?"));
}

const char* operator_text(site_kind k) {
  switch (k) {
  case site_kind::eq:
    return "==";
  case site_kind::ne:
    return "!=";
  case site_kind::lt:
    return "<";
  case site_kind::le:
    return "<=";
  case site_kind::gt:
    return ">";
  case site_kind::ge:
    return ">=";
  default:
    return "?";
  }
}

const char* macro_name(site_kind k) {
  switch (k) {
  case site_kind::eq:
    return "TDIAG_ASSERT_EQ";
  case site_kind::ne:
    return "TDIAG_ASSERT_NE";
  case site_kind::lt:
    return "TDIAG_ASSERT_LT";
  case site_kind::le:
    return "TDIAG_ASSERT_LE";
  case site_kind::gt:
    return "TDIAG_ASSERT_GT";
  case site_kind::ge:
    return "TDIAG_ASSERT_GE";
  case site_kind::index:
    return "TDIAG_CHECK_INDEX";
  default:
    return "TDIAG_ASSERT";
  }
}

std::string trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\n'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n'))
    s.remove_suffix(1);
  return std::string(s);
}

} // namespace

site_text read_site(const backend& owner, int device, std::uint64_t address) {
  site_descriptor d{};
  owner.read_device_memory(
      device, reinterpret_cast<const void*>(static_cast<std::uintptr_t>(address)), &d, sizeof(d));
  if (d.version != layout_version) {
    diagnostic diag;
    diag.code = codes::unreadable_site;
    diag.title = "unreadable assertion site";
    diag.message = fmt::format("the site descriptor at {:#x} has layout version {}, expected {}: "
                               "the kernel was built with another tensordiag version",
                               address, d.version, layout_version);
    throw error(std::move(diag));
  }
  site_text s;
  s.kind = d.kind;
  s.line = d.line;
  s.site_id = d.site_id;
  s.operand_count = d.operand_count;
  s.file = read_string(owner, device, d.file, d.file_length);
  s.expression = read_string(owner, device, d.expression, d.expression_length);
  s.message = read_string(owner, device, d.message, d.message_length);
  s.function = read_string(owner, device, d.function, d.function_length);
  return s;
}

std::optional<site_text> saved_site(const trap_text_area* area, std::uint64_t address) {
  if (area == nullptr || address == 0)
    return std::nullopt;
  for (const site_text_copy& e : area->entries) {
    if (__atomic_load_n(&e.site, __ATOMIC_ACQUIRE) != address)
      continue;
    const site_descriptor& d = e.descriptor;
    if (d.version != layout_version)
      return std::nullopt;
    site_text s;
    s.kind = d.kind;
    s.line = d.line;
    s.site_id = d.site_id;
    s.operand_count = d.operand_count;
    // Four NUL-terminated strings, each at most its length (gpu_fail.h clips them to fit).
    std::string_view rest(e.text, trap_text_bytes);
    std::string* out[4] = {&s.file, &s.expression, &s.message, &s.function};
    const std::uint32_t lengths[4] = {d.file_length, d.expression_length, d.message_length,
                                      d.function_length};
    for (int i = 0; i < 4; ++i) {
      const std::size_t n = std::min<std::size_t>({lengths[i], rest.size(), rest.find('\0')});
      *out[i] = std::string(rest.substr(0, n));
      rest.remove_prefix(std::min(rest.size(), n + 1));
    }
    return s;
  }
  return std::nullopt;
}

std::vector<std::string> split_arguments(std::string_view text) {
  std::vector<std::string> parts;
  int depth = 0;
  char quote = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quote != 0) {
      if (c == '\\')
        ++i;
      else if (c == quote)
        quote = 0;
      continue;
    }
    if (c == '"' || c == '\'')
      quote = c;
    else if (c == '(' || c == '[' || c == '{')
      ++depth;
    else if (c == ')' || c == ']' || c == '}')
      --depth;
    else if (c == ',' && depth == 0) {
      parts.push_back(trim(text.substr(start, i - start)));
      start = i + 1;
    }
  }
  parts.push_back(trim(text.substr(start)));
  return parts;
}

std::string strip_parentheses(std::string_view text) {
  std::string s = trim(text);
  while (s.size() >= 2 && s.front() == '(' && s.back() == ')')
    s = trim(std::string_view(s).substr(1, s.size() - 2));
  return s;
}

std::string short_function_name(std::string_view spelled) {
  // Demanglers spell an unnamed namespace "(anonymous namespace)", __PRETTY_FUNCTION__ "<unnamed>".
  std::string unnamed(spelled);
  for (std::size_t at = 0; (at = unnamed.find("(anonymous namespace)", at)) != std::string::npos;)
    unnamed.replace(at, std::string_view("(anonymous namespace)").size(), "<unnamed>");
  const std::string_view pretty = unnamed;
  // The parameter list opens at the first '(' outside template brackets.
  int angle = 0;
  std::size_t open = std::string_view::npos;
  for (std::size_t i = 0; i < pretty.size(); ++i) {
    const char c = pretty[i];
    if (c == '<')
      ++angle;
    else if (c == '>' && angle > 0)
      --angle;
    else if (c == '(' && angle == 0) {
      if (pretty.substr(0, i).ends_with("operator"))
        continue;
      open = i;
      break;
    }
  }
  if (open == std::string_view::npos)
    return trim(pretty);
  std::string_view head = pretty.substr(0, open);
  angle = 0;
  std::size_t name_start = 0;
  for (std::size_t i = 0; i < head.size(); ++i) {
    if (head[i] == '<')
      ++angle;
    else if (head[i] == '>' && angle > 0)
      --angle;
    else if (head[i] == ' ' && angle == 0)
      name_start = i + 1;
  }
  std::string name(head.substr(name_start));
  while (!name.empty() && (name.front() == '*' || name.front() == '&'))
    name.erase(0, 1);
  // "[with T = float; I = int]" (GCC, nvcc) or "[T = float, I = int]" (clang).
  const auto bracket = pretty.rfind(" [");
  if (bracket != std::string_view::npos && pretty.back() == ']' &&
      name.find('<') == std::string::npos) {
    std::string_view args = pretty.substr(bracket + 2, pretty.size() - bracket - 3);
    if (args.starts_with("with "))
      args.remove_prefix(5);
    std::string list;
    int depth = 0;
    std::size_t start = 0;
    auto take = [&](std::size_t end) {
      const std::string item = trim(args.substr(start, end - start));
      const auto eq = item.find(" = ");
      if (eq != std::string::npos)
        list += (list.empty() ? "" : ", ") + item.substr(eq + 3);
    };
    for (std::size_t i = 0; i < args.size(); ++i) {
      const char c = args[i];
      if (c == '<' || c == '(')
        ++depth;
      else if ((c == '>' || c == ')') && depth > 0)
        --depth;
      else if ((c == ';' || c == ',') && depth == 0) {
        take(i);
        start = i + 1;
      }
    }
    take(args.size());
    if (!list.empty())
      name += "<" + list + ">";
  }
  return name;
}

assertion_text describe(const site_text& site, const failure_record* record) {
  assertion_text t;
  const auto parts = split_arguments(site.expression);
  const std::uint32_t n = record ? std::min<std::uint32_t>(record->operand_count, max_operands) : 0;
  std::vector<std::string> names;
  for (std::uint32_t i = 0; i < site.operand_count; ++i) {
    const std::size_t at =
        parts.size() >= site.operand_count ? parts.size() - site.operand_count + i : i;
    names.push_back(at < parts.size() ? parts[at] : fmt::format("value{}", i));
  }
  std::vector<typed_value> values;
  for (std::uint32_t i = 0; i < n; ++i) {
    values.push_back(decode(record->types[i], record->values[i]));
    t.values.push_back(
        {i < names.size() ? names[i] : fmt::format("value{}", i), values.back().field});
  }
  const std::string a = names.size() > 0 ? names[0] : "a";
  const std::string b = names.size() > 1 ? names[1] : "b";
  switch (site.kind) {
  case site_kind::assertion: {
    t.condition = parts.empty() ? site.expression : parts.front();
    std::string formatted;
    if (!site.message.empty()) {
      fmt::dynamic_format_arg_store<fmt::format_context> store;
      for (std::uint32_t i = 0; i < n; ++i)
        push_arg(store, record->types[i], record->values[i]);
      try {
        formatted = record ? fmt::vformat(site.message, store) : site.message;
      } catch (const fmt::format_error& e) {
        // The user's format string does not fit the values: show both rather than hide either.
        std::string shown;
        for (const auto& v : t.values)
          shown += fmt::format("{}{}", shown.empty() ? "" : ", ", v.name);
        formatted = fmt::format("{} [format error: {}; values {}]", site.message, e.what(), shown);
      }
    }
    t.headline = formatted.empty() ? t.condition : fmt::format("{} ({})", formatted, t.condition);
    break;
  }
  case site_kind::index: {
    t.condition = fmt::format("TDIAG_CHECK_INDEX({}, {})", a, b);
    if (n >= 2) {
      const bool negative =
          (record->types[0] >= value_type::i8 && record->types[0] <= value_type::i64) &&
          static_cast<std::int64_t>(record->values[0]) < 0;
      t.headline = negative ? fmt::format("index {} is negative ({})", values[0].text, t.condition)
                            : fmt::format("index {} not below {} ({})", values[0].text,
                                          values[1].text, t.condition);
      t.hint =
          fmt::format("`{}` must lie in [0, {}): check how it is computed or where `{}` comes from",
                      a, values[1].text, b);
    } else {
      t.headline = t.condition;
    }
    break;
  }
  default: {
    t.condition = fmt::format("{} {} {}", a, operator_text(site.kind), b);
    t.headline = n >= 2 ? fmt::format("expected {}, got {} vs {} ({}({}, {}))", t.condition,
                                      values[0].text, values[1].text, macro_name(site.kind), a, b)
                        : fmt::format("{}({}, {})", macro_name(site.kind), a, b);
    break;
  }
  }
  return t;
}

} // namespace tdiag::assertions::detail
