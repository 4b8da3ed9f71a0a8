// The readers of outside input fuzzed: seeds are the committed results, reference files and
// fleet reports, shrunk (every list cut to a few elements) so that one iteration is cheap;
// each iteration mutates one seed structurally (a value of another type, a huge or negative
// number, a deleted key, a long list, a deep nest, a hostile key) or byte-wise (flips,
// inserts, deletions, copies) with a fixed-seed PRNG, and feeds the result to every reader
// entry point: the run JSON (and what report, compare and fleet --baseline do with it next),
// a reference file, a fleet rank report. Every input must either read or be refused with an
// exception whose message has no JSON library tag; a crash, a sanitizer report or a hang
// fails. Runs GD_FUZZ_SECONDS seconds (default 3; CI's sanitizer build runs 30).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "gpudissect/compare.hpp"
#include "gpudissect/fleet.hpp"
#include "gpudissect/json_read.hpp"
#include "gpudissect/result.hpp"
#include "registry.hpp"
#include "report.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using namespace gd;

namespace {

const fs::path kRepo = fs::path(GD_FIXTURES) / ".." / "..";

// Every list of objects or lists cut to its first `keep` elements, every list of numbers to
// 8 (records such as a trace's [sm, slot, start, end] stay whole), recursively (the
// iterative walk keeps the test itself free of recursion on input).
void shrink(json& doc, std::size_t keep) {
  std::vector<json*> todo = {&doc};
  while (!todo.empty()) {
    json* j = todo.back();
    todo.pop_back();
    const std::size_t cut = j->is_array() && !j->empty() && (*j)[0].is_structured() ? keep : 8;
    if (j->is_array() && j->size() > cut) j->erase(j->begin() + static_cast<long>(cut), j->end());
    if (j->is_structured())
      for (auto& c : *j) todo.push_back(&c);
  }
}

enum class Kind { result, reference, fleet_rank };
struct Seed {
  Kind kind;
  std::string name;
  json doc;
};

std::vector<Seed> seeds() {
  std::vector<Seed> out;
  auto add = [&](Kind k, const fs::path& p, std::size_t keep) {
    json j = read_json_file(p);
    shrink(j, keep);
    out.push_back({k, p.filename().string(), std::move(j)});
  };
  for (const char* f :
       {"results/nvidia-h200/nvidia-h200.json",
        "results/cpu-vm-pocl/pthread-skylake-avx512-intel-r-xeon-r-processor.json",
        "results/nvidia-h200/memory.json", "results/nvidia-h200/atomics.json",
        "results/nvidia-h200-x2/links.json", "tests/fixtures/h200_latency_sample.json"})
    if (fs::exists(kRepo / f)) add(Kind::result, kRepo / f, 3);
  for (const char* f : {"data/reference/gtx-980-ti.json", "data/reference/nvidia-h200-peers.json"})
    if (fs::exists(kRepo / f)) add(Kind::reference, kRepo / f, 4);
  if (fs::exists(kRepo / "results/nvidia-h200-x2/fleet.json")) {
    json fleet = read_json_file(kRepo / "results/nvidia-h200-x2/fleet.json");
    if (fleet.contains("ranks") && fleet["ranks"].is_array() && !fleet["ranks"].empty()) {
      json rank = fleet["ranks"][0];
      shrink(rank, 3);
      out.push_back({Kind::fleet_rank, "fleet.json ranks[0]", rank});
    }
  }
  return out;
}

class Mutator {
 public:
  explicit Mutator(uint64_t seed) : rng_(seed) {}
  std::size_t below(std::size_t n) {
    return n ? std::uniform_int_distribution<std::size_t>(0, n - 1)(rng_) : 0;
  }

  json scalar() {
    static const std::vector<json> values = {json(nullptr),
                                             json(true),
                                             json(false),
                                             json(0),
                                             json(-1),
                                             json(1),
                                             json(-1e308),
                                             json(1e308),
                                             json(4294967298ull),
                                             json(18446744073709551615ull),
                                             json(-9223372036854775807ll - 1),
                                             json(0.5),
                                             json(""),
                                             json("x"),
                                             json("ok"),
                                             json("../../etc/passwd"),
                                             json("a/b"),
                                             json("'; system('id') #"),
                                             json("<script>alert(1)</script>"),
                                             json(std::string(20000, 'A')),
                                             json::array(),
                                             json::object(),
                                             json::array({1, 2, 3}),
                                             json({{"median", "x"}})};
    return values[below(values.size())];
  }

  // A random node of `doc` (its parent kept so that keys can be removed or renamed).
  json* pick(json& doc, json** parent, std::string* key) {
    json* j = &doc;
    *parent = nullptr;
    key->clear();
    for (int steps = 0; steps < 12 && j->is_structured() && !j->empty(); ++steps) {
      if (below(4) == 0) break;
      const std::size_t i = below(j->size());
      *parent = j;
      if (j->is_array()) {
        *key = "";
        j = &(*j)[i];
      } else {
        auto it = j->begin();
        std::advance(it, static_cast<long>(i));
        *key = it.key();
        j = &it.value();
      }
    }
    return j;
  }

  void structural(json& doc) {
    json* parent = nullptr;
    std::string key;
    json* j = pick(doc, &parent, &key);
    switch (below(9)) {
      case 0:
      case 1:
        *j = scalar();
        break;
      case 2:  // a deleted key
        if (parent && parent->is_object()) parent->erase(key);
        break;
      case 3:  // a renamed or hostile key
        if (parent && parent->is_object()) {
          json v = (*parent)[key];
          parent->erase(key);
          static const char* names[] = {"a/b", "..", "", "x y", "global", "stride_0", "\"'<>"};
          (*parent)[names[below(7)]] = v;
        }
        break;
      case 4:  // a long list
        if (j->is_array() && !j->empty()) {
          const json first = (*j)[0];
          const int copies = first.dump().size() < 200 ? 2000 : 20;  // inputs stay small
          for (int k = 0; k < copies; ++k) j->push_back(first);
        } else {
          *j = json::array();
          for (int k = 0; k < 2000; ++k) j->push_back(k);
        }
        break;
      case 5: {  // a deep nest: within the bound or beyond it
        json v = *j;
        const int depth = below(2) ? 40 : 80;
        for (int k = 0; k < depth; ++k) v = json::array({v});
        *j = v;
        break;
      }
      case 6:  // a number made extreme
        if (j->is_number())
          *j = below(2) ? json(-j->get<double>()) : json(j->get<double>() * 1e300);
        else
          *j = scalar();
        break;
      case 7:  // a copy of another part
      {
        json* p2 = nullptr;
        std::string k2;
        const json other = *pick(doc, &p2, &k2);
        *j = other;
        break;
      }
      default:  // a string where a number was, and the other way
        if (j->is_string())
          *j = 7;
        else
          *j = "7";
        break;
    }
  }

  void bytes(std::string& s) {
    static const std::string alphabet = "{}[]\",:0123456789.-eE truefalsn\\u\x01\xff";
    const int edits = 1 + static_cast<int>(below(4));
    for (int e = 0; e < edits && !s.empty(); ++e) {
      const std::size_t at = below(s.size());
      switch (below(4)) {
        case 0:
          s[at] = alphabet[below(alphabet.size())];
          break;
        case 1:
          s.insert(at, 1, alphabet[below(alphabet.size())]);
          break;
        case 2:
          s.erase(at, 1 + below(16));
          break;
        default: {
          const std::size_t len = 1 + below(64);
          s.insert(at, s.substr(below(s.size()), len));
        }
      }
    }
  }

 private:
  std::mt19937_64 rng_;
};

// What a reader may say: any message without the JSON library's tag.
void expect_words(const std::exception& e, const std::string& where) {
  EXPECT_EQ(std::string(e.what()).find("[json.exception"), std::string::npos)
      << where << ": " << e.what();
}

// One input through every entry point. Returns false when an expectation failed.
void feed(const std::string& text, const Seed& seed, const CompareInput* base,
          const std::string& where) {
  json j;
  try {
    j = parse_json_text(text);
  } catch (const JsonReadError& e) {
    expect_words(e, where);
    return;
  }
  // Every reader gets every input: a result may be fed to the reference reader, and so on.
  try {
    const RunResult r = run_result_from_json(j, probe_registry());
    (void)collect_figures(r, probe_registry());
    (void)to_json(r, probe_registry()).dump();
    const CompareInput in = input_from_result(r, "fuzz.json");
    if (base) {
      (void)compare_baseline(*base, in, 0.05);
      (void)compare_baseline(in, *base, 0.05);
    }
    std::ostringstream os;
    report::print_summary(os, r, probe_registry());
  } catch (const std::exception& e) {
    expect_words(e, where + " (run result)");
  }
  try {
    (void)reference_from_json(j, "fuzz.json");
  } catch (const std::exception&) {
    // the reference reader lists problems in its own words (validate_reference_json)
  }
  try {
    (void)j.get<FleetRank>();  // a rank's own report: any exception is a refusal
  } catch (const std::exception&) {
  }
  (void)seed;
}

}  // namespace

TEST(FuzzReaders, MutatedSeedsNeverCrashAndAreRefusedInWords) {
  double seconds = 3;
  if (const char* s = std::getenv("GD_FUZZ_SECONDS")) seconds = std::atof(s);
  const std::vector<Seed> all = seeds();
  ASSERT_GE(all.size(), 5u);
  for (const Seed& s : all)  // the seeds themselves read (shrinking kept them valid)
    if (s.kind == Kind::result)
      EXPECT_NO_THROW(run_result_from_json(s.doc, probe_registry())) << s.name;
    else if (s.kind == Kind::reference)
      EXPECT_NO_THROW(reference_from_json(s.doc)) << s.name;
  if (HasFailure()) return;
  // The baseline of compare --baseline: the first result as read.
  const CompareInput base =
      input_from_result(run_result_from_json(all.front().doc, probe_registry()), "base.json");
  Mutator m(25);  // fixed: a failure names its iteration, and the same run repeats it
  const auto t0 = std::chrono::steady_clock::now();
  long iterations = 0;
  for (;; ++iterations) {
    const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (iterations >= 50 && t > seconds) break;
    const Seed& seed = all[m.below(all.size())];
    std::string text;
    if (m.below(3) == 0) {
      text = seed.doc.dump();
      m.bytes(text);
    } else {
      json doc = seed.doc;
      const int n = 1 + static_cast<int>(m.below(3));
      for (int k = 0; k < n; ++k) m.structural(doc);
      text = doc.dump();
    }
    // Copies of copies can grow a seed past what one iteration should cost: size is bounded
    // by the readers (kMaxJsonBytes), not what this test is after.
    if (text.size() > (4u << 20)) continue;
    const std::string where = "iteration " + std::to_string(iterations) + " from " + seed.name;
    const auto i0 = std::chrono::steady_clock::now();
    feed(text, seed, &base, where);
    const double took =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - i0).count();
    if (took > 5)  // not a failure (a loaded machine is slow), but worth a look
      std::cout << "[ fuzz ] " << where << " took " << took << " s (" << text.size() << " bytes)\n";
    if (::testing::Test::HasFailure()) {
      const fs::path keep = fs::temp_directory_path() / "gd-fuzz-failure.json";
      std::ofstream(keep) << text;
      ADD_FAILURE() << where << ": input kept in " << keep;
      break;
    }
  }
  RecordProperty("iterations", std::to_string(iterations));
  std::cout << "[ fuzz ] " << iterations << " inputs in " << seconds << " s\n";
}
