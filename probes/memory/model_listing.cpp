// The memory probe's listing readers (listing.hpp): PTX and SASS of the OpenCL chase kernels.
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "memory/listing.hpp"

namespace gd {

namespace {

// The most counted key; the first seen among equals.
std::string most_frequent(const std::map<std::string, int>& counts,
                          const std::vector<std::string>& order) {
  std::string best;
  int n = 0;
  for (const std::string& k : order)
    if (counts.at(k) > n) {
      best = k;
      n = counts.at(k);
    }
  return best;
}

}  // namespace

std::string ptx_entry_load(const std::string& ptx, const std::string& entry) {
  const std::string head = ".entry " + entry + "(";
  std::size_t at = ptx.find(head);
  if (at == std::string::npos) return {};
  const std::size_t end = ptx.find(".entry ", at + head.size());
  std::istringstream body(ptx.substr(at, end == std::string::npos ? std::string::npos : end - at));
  static const std::regex kLoad(R"(^\s*(?:@!?%p\d+\s+)?)"
                                R"(((?:ld|tex|tld4|suld)(?:\.[a-z0-9_]+)+)\s)");
  std::map<std::string, int> counts;
  std::vector<std::string> order;
  std::string line;
  std::smatch m;
  while (std::getline(body, line)) {
    if ((line.find("ld") == std::string::npos && line.find("tex.") == std::string::npos) ||
        !std::regex_search(line, m, kLoad))
      continue;
    const std::string op = m[1];
    if (op.rfind("ld.param", 0) == 0) continue;
    if (!counts.count(op)) order.push_back(op);
    ++counts[op];
  }
  return most_frequent(counts, order);
}

std::string sass_function_load(const std::string& sass, const std::string& fn) {
  std::istringstream in(sass);
  static const std::regex kFunction(R"(Function : (\S+))");
  static const std::regex kLoad(R"(\b((?:LDG|LDC|TLD|TEX|LD)(?:\.[A-Z0-9_]+)*)\s+R\w+, (.*?);)");
  static const std::regex kParam(R"(^c\[0x0\]\[0x[0-9a-f]+\])");
  std::map<std::string, int> counts;
  std::vector<std::string> order;
  bool inside = false;
  std::string line;
  std::smatch m;
  while (std::getline(in, line)) {
    if (line.find("Function : ") != std::string::npos && std::regex_search(line, m, kFunction)) {
      inside = m[1] == fn;
      continue;
    }
    if (!inside || !std::regex_search(line, m, kLoad)) continue;
    if (std::regex_search(m[2].str(), kParam)) continue;
    const std::string op = m[1];
    if (!counts.count(op)) order.push_back(op);
    ++counts[op];
  }
  return most_frequent(counts, order);
}

uint32_t chase_end_line(uint64_t end, uint64_t base, uint64_t stride, uint64_t unit,
                        uint64_t lines) {
  if (stride == 0 || unit == 0 || stride % unit != 0 || end < base) return kNotALine;
  const uint64_t step = stride / unit;  // positions per line
  const uint64_t off = end - base;
  if (off % step != 0 || off / step >= lines) return kNotALine;
  return static_cast<uint32_t>(off / step);
}

}  // namespace gd
