// The conventions every result's JSON mapping follows: an absent value is an absent key
// (never null, never 0), a null reads back as absent, and a status carries its reason only
// when there is one.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>

#include "gpudissect/status.hpp"

namespace gd::json_fields {

template <class T>
void put(nlohmann::json& j, const char* key, const std::optional<T>& v) {
  if (v) j[key] = *v;
}

template <class T>
void get(const nlohmann::json& j, const char* key, std::optional<T>& v) {
  auto it = j.find(key);
  if (it != j.end() && !it->is_null()) v = it->get<T>();
}

template <class T>
void get(const nlohmann::json& j, const char* key, T& v) {
  auto it = j.find(key);
  if (it != j.end() && !it->is_null()) v = it->get<T>();
}

inline void put_status(nlohmann::json& j, const Status& s) {
  j["status"] = s.status;
  if (!s.reason.empty()) j["reason"] = s.reason;
}

inline Status get_status(const nlohmann::json& j) {
  Status s;
  get(j, "status", s.status);
  get(j, "reason", s.reason);
  return s;
}

}  // namespace gd::json_fields
