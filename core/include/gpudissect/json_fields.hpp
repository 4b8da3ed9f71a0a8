// The conventions every result's JSON mapping follows: an absent value is an absent key
// (never null, never 0), a null reads back as absent, and a status carries its reason only
// when there is one.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "gpudissect/json_read.hpp"
#include "gpudissect/status.hpp"

namespace gd::json_fields {

template <class T>
void put(nlohmann::json& j, const char* key, const std::optional<T>& v) {
  if (v) j[key] = *v;
}

// Reads a value of type T from `j`: a list element by element and an object key by key, so
// that an error names the index or key (JsonReadError's path), never recursing through the
// library's own conversions for the containers.
template <class T>
struct Reader {
  static void read(const nlohmann::json& j, T& v) {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
      v = json_integer<T>(j);  // range-checked: never get<T>()'s unchecked cast
    else
      v = j.get<T>();
  }
};
template <class T>
struct Reader<std::vector<T>> {
  static void read(const nlohmann::json& j, std::vector<T>& v) {
    if (!j.is_array()) throw JsonReadError("", "expected a list, got " + json_kind(j));
    std::vector<T> out;
    out.reserve(j.size());
    for (std::size_t i = 0; i < j.size(); ++i)
      read_at(index_segment(i), [&] {
        T x{};
        Reader<T>::read(j[i], x);
        out.push_back(std::move(x));
      });
    v = std::move(out);
  }
};
template <class T>
struct Reader<std::map<std::string, T>> {
  static void read(const nlohmann::json& j, std::map<std::string, T>& v) {
    if (!j.is_object()) throw JsonReadError("", "expected an object, got " + json_kind(j));
    std::map<std::string, T> out;
    // Not a structured binding: clang 15 (the sanitizer build's) lets no lambda capture one.
    for (const auto& kv : j.items()) {
      const std::string& k = kv.key();
      read_at(k, [&] { Reader<T>::read(kv.value(), out[k]); });
    }
    v = std::move(out);
  }
};

// A status word read from a file: a word StatusCode names, else an error at this key (a
// word this tool never writes is not carried along into reports and comparisons).
template <>
struct Reader<StatusCode> {
  static void read(const nlohmann::json& j, StatusCode& v) {
    if (!j.is_string()) throw JsonReadError("", "expected a string, got " + json_kind(j));
    const std::string& w = j.get_ref<const std::string&>();
    auto c = status_code_from(w);
    if (!c)
      throw JsonReadError("", "not a status: \"" + w.substr(0, 64) +
                                  "\" (ok, unsupported, skipped, error, interrupted, unstable, "
                                  "timeout, busy, missing or absent)");
    v = *c;
  }
};

// The value of a required key; a JsonReadError naming the key where it is absent or wrong.
template <class T>
void need(const nlohmann::json& j, const char* key, T& v) {
  if (!j.is_object()) throw JsonReadError("", "expected an object, got " + json_kind(j));
  auto it = j.find(key);
  if (it == j.end()) throw JsonReadError("", std::string("missing key \"") + key + "\"");
  read_at(key, [&] { Reader<T>::read(*it, v); });
}

// get() of a map whose keys name files and charts (paths, curves): a key that is not a
// plain_name is an error at that key.
template <class T>
void get_named(const nlohmann::json& j, const char* key, std::map<std::string, T>& v) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return;
  read_at(key, [&] {
    if (it->is_object())
      for (const auto& [k, x] : it->items())
        if (!plain_name(k))
          throw JsonReadError("",
                              "key \"" + k + "\" is not a name (1 to 64 letters, digits, _ . + -)");
    Reader<std::map<std::string, T>>::read(*it, v);
  });
}

template <class T>
void get(const nlohmann::json& j, const char* key, std::optional<T>& v) {
  auto it = j.find(key);
  if (it != j.end() && !it->is_null())
    read_at(key, [&] {
      T x{};
      Reader<T>::read(*it, x);
      v = std::move(x);
    });
}

template <class T>
void get(const nlohmann::json& j, const char* key, T& v) {
  auto it = j.find(key);
  if (it != j.end() && !it->is_null()) read_at(key, [&] { Reader<T>::read(*it, v); });
}

inline void put_status(nlohmann::json& j, const Status& s) {
  j["status"] = s.name();
  if (!s.reason.empty()) j["reason"] = s.reason;
}

inline Status get_status(const nlohmann::json& j) {
  Status s;
  get(j, "status", s.code);
  get(j, "reason", s.reason);
  return s;
}

}  // namespace gd::json_fields
