// Pipeline executables and SPIR-V loops as opcode histograms (vulkan_listing.hpp).
#include "vulkan_listing.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <set>
#include <sstream>

#include "vulkan_context.hpp"

namespace gd::vulkan {

namespace {

std::string statistic_text(const VkPipelineExecutableStatisticKHR& s) {
  switch (s.format) {
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR:
      return s.value.b32 ? "true" : "false";
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR:
      return std::to_string(s.value.i64);
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR:
      return std::to_string(s.value.u64);
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_FLOAT64_KHR: {
      std::ostringstream o;
      o << s.value.f64;
      return o.str();
    }
    default:
      return "?";
  }
}

template <typename Fn>
Fn device_function(VkDevice device, const char* name) {
  auto fn = reinterpret_cast<Fn>(vkGetDeviceProcAddr(device, name));
  if (!fn) throw BackendError(std::string("the device has no ") + name);
  return fn;
}

// A mnemonic: letters first, then letters, digits, '_' and '.'; "(8)" and similar execution
// size suffixes dropped; at least two characters.
std::string mnemonic(std::string t) {
  if (const auto p = t.find('('); p != std::string::npos) t.erase(p);
  if (t.size() < 2 || !std::isalpha(static_cast<unsigned char>(t[0]))) return {};
  for (const char c : t)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.') return {};
  return t;
}

// Words that open a line of a listing without being an instruction (NIR's and LLVM's
// structure, declarations).
const std::set<std::string> kNotOpcodes = {
    "block",         "loop",   "if",      "else",   "impl",    "decl_var", "decl_reg",
    "decl_function", "define", "declare", "shader", "name",    "inputs",   "outputs",
    "uniforms",      "shared", "stage",   "end",    "entry",   "source",   "attributes",
    "target",        "preds",  "succs",   "con",    "function"};

// SPIR-V opcodes by number (the SPIR-V specification's table): those compute.comp's loops
// and their control flow hold.
const std::map<uint32_t, const char*> kSpirvOps = {{12, "OpExtInst"},
                                                   {59, "OpVariable"},
                                                   {61, "OpLoad"},
                                                   {62, "OpStore"},
                                                   {65, "OpAccessChain"},
                                                   {80, "OpCompositeConstruct"},
                                                   {81, "OpCompositeExtract"},
                                                   {109, "OpConvertFToU"},
                                                   {110, "OpConvertFToS"},
                                                   {111, "OpConvertSToF"},
                                                   {112, "OpConvertUToF"},
                                                   {113, "OpUConvert"},
                                                   {114, "OpSConvert"},
                                                   {115, "OpFConvert"},
                                                   {124, "OpBitcast"},
                                                   {126, "OpSNegate"},
                                                   {127, "OpFNegate"},
                                                   {128, "OpIAdd"},
                                                   {129, "OpFAdd"},
                                                   {130, "OpISub"},
                                                   {131, "OpFSub"},
                                                   {132, "OpIMul"},
                                                   {133, "OpFMul"},
                                                   {134, "OpUDiv"},
                                                   {135, "OpSDiv"},
                                                   {136, "OpFDiv"},
                                                   {151, "OpUMulExtended"},
                                                   {152, "OpSMulExtended"},
                                                   {169, "OpSelect"},
                                                   {170, "OpIEqual"},
                                                   {171, "OpINotEqual"},
                                                   {172, "OpUGreaterThan"},
                                                   {174, "OpUGreaterThanEqual"},
                                                   {176, "OpULessThan"},
                                                   {178, "OpULessThanEqual"},
                                                   {194, "OpShiftRightLogical"},
                                                   {195, "OpShiftRightArithmetic"},
                                                   {196, "OpShiftLeftLogical"},
                                                   {197, "OpBitwiseOr"},
                                                   {198, "OpBitwiseXor"},
                                                   {4451, "OpUDot"},
                                                   {199, "OpBitwiseAnd"},
                                                   {200, "OpNot"},
                                                   {204, "OpBitReverse"},
                                                   {205, "OpBitCount"},
                                                   {224, "OpControlBarrier"},
                                                   {225, "OpMemoryBarrier"},
                                                   {245, "OpPhi"},
                                                   {246, "OpLoopMerge"},
                                                   {247, "OpSelectionMerge"},
                                                   {248, "OpLabel"},
                                                   {249, "OpBranch"},
                                                   {250, "OpBranchConditional"},
                                                   {339, "OpGroupNonUniformBallot"},
                                                   {345, "OpGroupNonUniformShuffle"},
                                                   {346, "OpGroupNonUniformShuffleXor"},
                                                   {347, "OpGroupNonUniformShuffleUp"},
                                                   {348, "OpGroupNonUniformShuffleDown"},
                                                   {349, "OpGroupNonUniformIAdd"},
                                                   {350, "OpGroupNonUniformFAdd"}};
// GLSL.std.450's extended instructions by number (its specification's table).
const std::map<uint32_t, const char*> kGlslStd450 = {{4, "FAbs"},
                                                     {13, "Sin"},
                                                     {14, "Cos"},
                                                     {29, "Exp2"},
                                                     {30, "Log2"},
                                                     {31, "Sqrt"},
                                                     {32, "InverseSqrt"},
                                                     {37, "FMin"},
                                                     {40, "FMax"},
                                                     {41, "UMax"},
                                                     {50, "Fma"},
                                                     {58, "PackHalf2x16"},
                                                     {59, "PackDouble2x32"},
                                                     {62, "UnpackHalf2x16"},
                                                     {65, "UnpackDouble2x32"},
                                                     {74, "FindSMsb"},
                                                     {75, "FindUMsb"}};

}  // namespace

std::vector<ExecutableListing> read_executables(VkDevice device, VkPipeline pipeline) {
  auto props = device_function<PFN_vkGetPipelineExecutablePropertiesKHR>(
      device, "vkGetPipelineExecutablePropertiesKHR");
  auto stats = device_function<PFN_vkGetPipelineExecutableStatisticsKHR>(
      device, "vkGetPipelineExecutableStatisticsKHR");
  auto reprs = device_function<PFN_vkGetPipelineExecutableInternalRepresentationsKHR>(
      device, "vkGetPipelineExecutableInternalRepresentationsKHR");
  VkPipelineInfoKHR pi{VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR};
  pi.pipeline = pipeline;
  uint32_t n = 0;
  check(props(device, &pi, &n, nullptr), "vkGetPipelineExecutablePropertiesKHR");
  std::vector<VkPipelineExecutablePropertiesKHR> ex(
      n, {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_PROPERTIES_KHR});
  check(props(device, &pi, &n, ex.data()), "vkGetPipelineExecutablePropertiesKHR");
  std::vector<ExecutableListing> out;
  for (uint32_t e = 0; e < n; ++e) {
    ExecutableListing l;
    l.name = ex[e].name;
    VkPipelineExecutableInfoKHR ei{VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR};
    ei.pipeline = pipeline;
    ei.executableIndex = e;
    uint32_t ns = 0;
    check(stats(device, &ei, &ns, nullptr), "vkGetPipelineExecutableStatisticsKHR");
    std::vector<VkPipelineExecutableStatisticKHR> st(
        ns, {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR});
    check(stats(device, &ei, &ns, st.data()), "vkGetPipelineExecutableStatisticsKHR");
    for (uint32_t s = 0; s < ns; ++s) l.statistics.emplace_back(st[s].name, statistic_text(st[s]));
    // Two calls per text: its size, then the text.
    uint32_t nr = 0;
    check(reprs(device, &ei, &nr, nullptr), "vkGetPipelineExecutableInternalRepresentationsKHR");
    std::vector<VkPipelineExecutableInternalRepresentationKHR> r(
        nr, {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INTERNAL_REPRESENTATION_KHR});
    check(reprs(device, &ei, &nr, r.data()), "vkGetPipelineExecutableInternalRepresentationsKHR");
    std::vector<std::vector<char>> text(nr);
    for (uint32_t k = 0; k < nr; ++k) {
      text[k].assign(r[k].dataSize + 1, '\0');
      r[k].pData = text[k].data();
    }
    const VkResult got = reprs(device, &ei, &nr, r.data());
    if (got != VK_INCOMPLETE) check(got, "vkGetPipelineExecutableInternalRepresentationsKHR");
    for (uint32_t k = 0; k < nr; ++k)
      l.representations.emplace_back(r[k].name, std::string(text[k].data()));
    out.push_back(std::move(l));
  }
  return out;
}

std::map<std::string, int> ir_opcodes(const std::string& text) {
  std::map<std::string, int> counts;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    // Comments: ';' (AMD ISA's encodings, LLVM IR), '//' and '#'.
    for (const char* c : {";", "//", "#"})
      if (const auto p = line.find(c); p != std::string::npos) line.erase(p);
    std::istringstream words(line);
    std::string w, op;
    std::vector<std::string> t;
    while (words >> w) t.push_back(w);
    if (t.empty()) continue;
    const auto eq = std::find(t.begin(), t.end(), "=");
    if (eq != t.end()) {
      // SSA form: the operation after '=' (NIR's "intrinsic NAME" and "@NAME" included).
      auto it = eq + 1;
      if (it != t.end() && *it == "intrinsic") ++it;
      if (it != t.end()) op = mnemonic(it->front() == '@' ? it->substr(1) : *it);
    } else {
      // An ISA line: its first word, unless a label, predicate or structure word leads.
      size_t k = 0;
      if (t[0].front() == '@' || t[0].front() == '(') k = 1;  // predicate: "@P0", "(+f0.0)"
      if (k < t.size() && t[k].back() != ':' && t[k].back() != '{') op = mnemonic(t[k]);
      if (kNotOpcodes.count(op)) op.clear();
    }
    if (!op.empty()) ++counts[op];
  }
  return counts;
}

std::vector<std::string> top_counts(const std::map<std::string, int>& counts, std::size_t top) {
  std::vector<std::pair<std::string, int>> v(counts.begin(), counts.end());
  std::stable_sort(v.begin(), v.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::vector<std::string> out;
  for (std::size_t i = 0; i < v.size() && i < top; ++i)
    out.push_back(v[i].first + " x" + std::to_string(v[i].second));
  return out;
}

std::string executables_suffix(VkDevice device, VkPipeline pipeline, bool captured,
                               std::size_t max_chars) {
  if (!captured || pipeline == VK_NULL_HANDLE) return {};
  try {
    const std::string isa = summarize_executables(read_executables(device, pipeline), max_chars);
    return isa.empty() ? std::string() : "; " + isa;
  } catch (const BackendError&) {
    return {};
  }
}

std::string summarize_executables(const std::vector<ExecutableListing>& e, std::size_t max_chars) {
  std::string s;
  for (const auto& x : e) {
    std::string part = x.name;
    // The representation nearest the machine code.
    const std::pair<std::string, std::string>* pick = nullptr;
    for (const auto& r : x.representations) {
      std::string lower = r.first;
      std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
      if (lower.find("assembly") != std::string::npos || lower.find("isa") != std::string::npos)
        pick = &r;
    }
    if (!pick && !x.representations.empty()) pick = &x.representations.back();
    if (pick) {
      const auto counts = ir_opcodes(pick->second);
      int total = 0;
      for (const auto& [op, n] : counts) total += n;
      part += ", " + pick->first + " (" + std::to_string(total) + " instructions):";
      for (const auto& c : top_counts(counts, 6)) part += " " + c + ",";
      if (part.back() == ',') part.pop_back();
    }
    if (!x.statistics.empty()) {
      part += "; statistics:";
      for (std::size_t k = 0; k < x.statistics.size() && k < 6; ++k)
        part += " " + x.statistics[k].first + " " + x.statistics[k].second + ",";
      part.pop_back();
    }
    s += (s.empty() ? "" : " | ") + part;
  }
  if (s.size() > max_chars) s = s.substr(0, max_chars - 3) + "...";
  return s;
}

std::map<std::string, int> spirv_loop_opcodes(const std::vector<uint32_t>& words) {
  std::map<std::string, int> counts;
  if (words.size() < 5 || words[0] != 0x07230203u) return counts;
  uint32_t glsl_set = 0, merge = 0;  // ids; 0 is never one
  bool in_loop = false;
  for (std::size_t i = 5; i < words.size();) {
    const uint32_t n = words[i] >> 16, code = words[i] & 0xFFFFu;
    if (n == 0 || i + n > words.size()) return {};  // not SPIR-V after all
    if (code == 11 && n >= 3 &&                     // OpExtInstImport
        std::strncmp(reinterpret_cast<const char*>(&words[i + 2]), "GLSL.std.450", (n - 2) * 4) ==
            0)
      glsl_set = words[i + 1];
    if (code == 246 && !in_loop && n >= 3) {  // OpLoopMerge: the merge block ends the loop
      in_loop = true;
      merge = words[i + 1];
    } else if (in_loop && code == 248 && words[i + 1] == merge) {
      break;
    } else if (in_loop) {
      const auto it = kSpirvOps.find(code);
      std::string name = it != kSpirvOps.end() ? it->second : "Op#" + std::to_string(code);
      if (code == 12 && n >= 5 && words[i + 3] == glsl_set) {
        const auto g = kGlslStd450.find(words[i + 4]);
        name = "GLSL.std.450 " +
               (g != kGlslStd450.end() ? std::string(g->second) : std::to_string(words[i + 4]));
      }
      ++counts[name];
    }
    i += n;
  }
  return counts;
}

}  // namespace gd::vulkan
