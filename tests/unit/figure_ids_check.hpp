// Every figure a probe's figures() returns carries an id that probe declares
// (Probe::figure_ids): the check each probe's runs share, on the fake devices, on PoCL and
// on lavapipe. Returns how many figures it checked, so a test can tell it saw some.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "gpudissect/figure_ids.hpp"
#include "gpudissect/result.hpp"
#include "registry.hpp"

namespace gd {

inline int expect_figure_ids_declared(const RunResult& r) {
  int checked = 0;
  for (const Probe* p : probe_registry().all()) {
    const std::vector<std::string> declared = p->figure_ids();
    for (const Figure& f : p->figures(r)) {
      ++checked;
      EXPECT_TRUE(figure_id_declared(declared, f.id))
          << p->name() << " publishes '" << f.id << "' (" << f.label
          << "), which it does not declare";
    }
  }
  return checked;
}

}  // namespace gd
