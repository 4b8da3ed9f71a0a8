#include "host_memory/host_memory.hpp"

#include "gpudissect/json_fields.hpp"

namespace gd {

void to_json(nlohmann::json& j, const HostMemoryResult& r) {
  j = nlohmann::json{{"threads", r.threads}, {"cpu", r.cpu},
                     {"caches", r.caches},   {"curves", r.curves},
                     {"figures", r.figures}, {"wall_seconds", r.wall_seconds}};
  json_fields::put_status(j, r.status);
}

void from_json(const nlohmann::json& j, HostMemoryResult& r) {
  r.status = json_fields::get_status(j);
  json_fields::get(j, "threads", r.threads);
  json_fields::get(j, "cpu", r.cpu);
  json_fields::get(j, "caches", r.caches);
  json_fields::get_named(j, "curves", r.curves);  // keys name CSV files
  json_fields::get(j, "figures", r.figures);
  json_fields::get(j, "wall_seconds", r.wall_seconds);
}

}  // namespace gd
