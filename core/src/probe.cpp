#include "gpudissect/probe.hpp"

#include <stdexcept>

#include "gpudissect/json_fields.hpp"

namespace gd {

using json_fields::get;
using json_fields::get_status;
using json_fields::put;
using json_fields::put_status;

void to_json(nlohmann::json& j, const Figure& f) {
  j = nlohmann::json{{"id", f.id}, {"label", f.label}, {"unit", f.unit}};
  put(j, "value", f.value);
  put(j, "per_sm_per_clk", f.per_sm_per_clk);
  if (!f.per_sm_per_clk_unit.empty()) j["per_sm_per_clk_unit"] = f.per_sm_per_clk_unit;
  if (!f.instruction.empty()) j["instruction"] = f.instruction;
  if (!f.where.empty()) j["where"] = f.where;
  put(j, "clock_mhz", f.clock_mhz);
  put(j, "resolution", f.resolution);
  j["better"] = f.higher_is_better ? "higher" : "lower";
  put_status(j, f.status);
  if (!f.suspect.empty()) j["suspect"] = f.suspect;
}

void from_json(const nlohmann::json& j, Figure& f) {
  json_fields::need(j, "id", f.id);
  get(j, "label", f.label);
  get(j, "unit", f.unit);
  get(j, "value", f.value);
  get(j, "per_sm_per_clk", f.per_sm_per_clk);
  get(j, "per_sm_per_clk_unit", f.per_sm_per_clk_unit);
  get(j, "instruction", f.instruction);
  get(j, "where", f.where);
  get(j, "clock_mhz", f.clock_mhz);
  get(j, "resolution", f.resolution);
  std::string better = "higher";
  get(j, "better", better);
  f.higher_is_better = better != "lower";
  f.status = get_status(j);
  get(j, "suspect", f.suspect);
}

Summary single_value(double v) {
  Summary s;
  s.median = s.q1 = s.q3 = s.min = s.max = v;
  s.n = 1;
  return s;
}

void ProbeRegistry::add(std::unique_ptr<Probe> p) {
  if (!p) throw std::invalid_argument("ProbeRegistry::add: null probe");
  if (find(p->name())) throw std::invalid_argument("probe '" + p->name() + "' registered twice");
  probes_.push_back(std::move(p));
}

const Probe* ProbeRegistry::find(const std::string& name) const {
  for (const auto& p : probes_)
    if (p->name() == name) return p.get();
  return nullptr;
}

std::vector<std::string> ProbeRegistry::names() const {
  std::vector<std::string> v;
  for (const auto& p : probes_) v.push_back(p->name());
  return v;
}

std::vector<const Probe*> ProbeRegistry::all() const {
  std::vector<const Probe*> v;
  for (const auto& p : probes_) v.push_back(p.get());
  return v;
}

}  // namespace gd
