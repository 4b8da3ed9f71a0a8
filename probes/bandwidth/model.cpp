#include <algorithm>
#include <cmath>
#include <cstdio>

#include "bandwidth/bandwidth.hpp"
#include "gpudissect/json_fields.hpp"
#include "gpudissect/result.hpp"

namespace gd {

using nlohmann::json;

std::string to_string(BwOp op) {
  switch (op) {
    case BwOp::read:
      return "read";
    case BwOp::write:
      return "write";
    case BwOp::copy:
      return "copy";
  }
  return "?";
}

std::string to_string(BwLoad l) {
  switch (l) {
    case BwLoad::cached:
      return "cached";
    case BwLoad::l2_only:
      return "l2_only";
    case BwLoad::readonly:
      return "readonly";
    case BwLoad::texture:
      return "texture";
    case BwLoad::no_allocate:
      return "no_allocate";
    case BwLoad::bulk:
      return "bulk";
  }
  return "?";
}

std::string to_string(HostDir d) {
  switch (d) {
    case HostDir::to_device:
      return "h2d";
    case HostDir::to_host:
      return "d2h";
    case HostDir::both:
      return "both";
  }
  return "?";
}

StreamLayout stream_layout(uint64_t buffer_bytes, uint64_t blocks, uint64_t chunk_bytes) {
  StreamLayout l;
  l.chunk_bytes = std::max<uint64_t>(chunk_bytes, 1);
  l.blocks = std::max<uint64_t>(blocks, 1);
  l.chunks = std::max<uint64_t>(buffer_bytes / l.chunk_bytes, 1);
  if (l.chunks > l.blocks) l.chunks -= l.chunks % l.blocks;
  l.chunks_per_block = l.chunks > l.blocks ? l.chunks / l.blocks : 1;
  return l;
}

uint64_t stream_chunk(const StreamLayout& l, uint64_t block, uint64_t j) {
  if (l.chunks <= l.blocks) return block % l.chunks;
  return j * l.blocks + block;
}

uint64_t stream_chunk_flattened(const StreamLayout& l, uint64_t block, uint64_t k) {
  return stream_chunk(l, block, k % std::max<uint64_t>(l.chunks_per_block, 1));
}

StreamLayout stream_layout_flat(uint64_t buffer_bytes, uint64_t chunk_bytes) {
  StreamLayout l;
  l.chunk_bytes = std::max<uint64_t>(chunk_bytes, 1);
  l.chunks = std::max<uint64_t>(buffer_bytes / l.chunk_bytes, 1);
  l.blocks = l.chunks;
  l.chunks_per_block = 1;
  return l;
}

Traffic stream_traffic(BwOp op, const StreamLayout& l, uint64_t passes) {
  // Every block moves chunks_per_block chunks per pass, whether or not chunks are shared.
  const uint64_t moved = l.blocks * l.chunks_per_block * l.chunk_bytes * passes;
  switch (op) {
    case BwOp::read:
      return {moved, 0};
    case BwOp::write:
      return {0, moved};
    case BwOp::copy:
      return {moved, moved};
  }
  return {};
}

uint64_t stream_footprint(BwOp op, const StreamLayout& l) {
  return l.buffer_bytes() * (op == BwOp::copy ? 2 : 1);
}

namespace {
// Sum of the words first..first+n-1 of a buffer holding word i = i, mod 2^32.
uint32_t index_sum(uint64_t first, uint64_t n) {
  // n*(2*first + n - 1)/2 without overflow of the halving: halve the even factor.
  uint64_t a = n, b = 2 * first + n - 1;
  if (a % 2 == 0)
    a /= 2;
  else
    b /= 2;
  return static_cast<uint32_t>(a * b);
}
}  // namespace

uint32_t stream_read_checksum(const StreamLayout& l, uint64_t passes) {
  const uint64_t words = l.chunk_bytes / 4;
  uint32_t sum = 0;
  if (l.chunks > l.blocks) {
    sum = index_sum(0, l.chunks * words);  // every chunk once per pass
  } else {
    for (uint64_t b = 0; b < l.blocks; ++b) sum += index_sum(stream_chunk(l, b, 0) * words, words);
  }
  return static_cast<uint32_t>(sum * passes);
}

uint32_t stream_written_checksum(const StreamLayout& l, uint64_t passes) {
  const uint64_t words = l.buffer_bytes() / 4;
  return static_cast<uint32_t>(index_sum(0, words) + words * (passes - 1));
}

std::string host_transfer_error(HostDir dir, std::optional<uint32_t> device_sum,
                                const uint32_t* host_words, uint64_t bytes) {
  if (dir != HostDir::to_host &&
      device_sum != stream_written_checksum(stream_layout(bytes, 1, bytes), 1))
    return "host->device data arrived wrong";
  if (dir != HostDir::to_device)
    for (uint64_t i = 0; i < bytes / 4; i += 1021)
      if (host_words[i] != static_cast<uint32_t>(i))
        return "device->host data arrived wrong at word " + std::to_string(i);
  return {};
}

uint32_t shared_element(const SharedLayout& l, uint64_t thread, uint32_t k, uint64_t iteration) {
  const uint32_t e =
      static_cast<uint32_t>((thread * l.stride + uint64_t(k) * 33) & (l.elements - 1));
  return e ^ ((iteration & 1) ? l.elements / 2 : 0);
}

uint64_t shared_loads_per_thread(const SharedLayout& l) {
  return l.iterations * l.loads_per_iteration;
}

uint64_t shared_bytes(const SharedLayout& l) {
  return l.blocks * l.threads * shared_loads_per_thread(l) * l.width_bytes;
}

uint32_t shared_checksum(const SharedLayout& l) {
  const uint32_t words = l.width_bytes / 4;
  auto element_sum = [&](uint32_t e) {
    uint32_t s = 0;
    for (uint32_t w = 0; w < words; ++w) s += shared_word(e * words + w);
    return s;
  };
  uint32_t even = 0, odd = 0;
  for (uint64_t t = 0; t < l.threads; ++t)
    for (uint32_t k = 0; k < l.loads_per_iteration; ++k) {
      even += element_sum(shared_element(l, t, k, 0));
      odd += element_sum(shared_element(l, t, k, 1));
    }
  const uint64_t n_odd = l.iterations / 2, n_even = l.iterations - n_odd;
  return static_cast<uint32_t>((even * uint32_t(n_even) + odd * uint32_t(n_odd)) *
                               uint32_t(l.blocks));
}

std::string shared_plausibility(double bytes_per_clk_sm) {
  if (!(bytes_per_clk_sm > 0) || !std::isfinite(bytes_per_clk_sm))
    return "no positive, finite bytes per clock";
  if (bytes_per_clk_sm > kSharedBytesPerClkSmLimit * 1.02)
    return "measured " + std::to_string(bytes_per_clk_sm) + " B/clk/SM, above the " +
           std::to_string(int(kSharedBytesPerClkSmLimit)) +
           " B/clk/SM an SM's 32 banks can deliver: fewer loads ran than were counted";
  return {};
}

std::optional<double> api_memory_peak_gbps(const DeviceInfo& info) {
  if (!info.memory_bus_width_bits || !info.memory_clock_mhz) return std::nullopt;
  return double(*info.memory_bus_width_bits) * *info.memory_clock_mhz * 1e6 * 2 / 8 / 1e9;
}

std::optional<BandwidthPeak> figure_peak(const BandwidthFigure& f, const DeviceInfo& info,
                                         std::optional<double> api_peak_gbps) {
  auto starts = [&](const char* p) { return f.name.rfind(p, 0) == 0; };
  if (starts("device memory")) {
    if (!api_peak_gbps) return std::nullopt;
    return BandwidthPeak{*api_peak_gbps, "API: bus width x memory clock x 2 transfers"};
  }
  const bool l1 = starts("L1");
  const bool shared = starts("shared");
  if (!l1 && !shared) return std::nullopt;
  auto has = [&](const char* v) {
    return info.vendor.find(v) != std::string::npos || info.name.find(v) != std::string::npos;
  };
  const bool nvidia = info.backend == "cuda" || has("NVIDIA");
  const bool amd = has("AMD") || has("Advanced Micro Devices");
  // L1's 128 B/clk/SM is NVIDIA's (the L1 and shared memory are one array since Volta); an
  // AMD vector L1 or a CPU's L1 (PoCL) has another width, undocumented here.
  if (l1 ? !nvidia : !(nvidia || amd)) return std::nullopt;
  if (!f.clock_mhz || *f.clock_mhz <= 0 || info.compute_units <= 0) return std::nullopt;
  const double gbps = kSharedBytesPerClkSmLimit * info.compute_units * *f.clock_mhz * 1e6 / 1e9;
  char basis[96];
  std::snprintf(basis, sizeof basis, "%.0f B/clk/SM x %d SMs x %.0f MHz (clock seen)",
                kSharedBytesPerClkSmLimit, info.compute_units, *f.clock_mhz);
  return BandwidthPeak{gbps, basis};
}

// ---- JSON ----

using json_fields::get;
using json_fields::get_status;
using json_fields::put;
using json_fields::put_status;

void to_json(json& j, const BandwidthPoint& p) {
  j = json{{"x", p.x}};
  put_status(j, p.status);
  if (p.read_bytes) j["read_bytes"] = p.read_bytes;
  if (p.write_bytes) j["write_bytes"] = p.write_bytes;
  put(j, "gbps", p.gbps);
  put(j, "bytes_per_clk_sm", p.bytes_per_clk_sm);
  put(j, "clock_mhz", p.clock_mhz);
  put(j, "seconds", p.seconds);
  if (p.sms) j["sms"] = p.sms;
}
void from_json(const json& j, BandwidthPoint& p) {
  get(j, "x", p.x);
  p.status = get_status(j);
  get(j, "read_bytes", p.read_bytes);
  get(j, "write_bytes", p.write_bytes);
  get(j, "gbps", p.gbps);
  get(j, "bytes_per_clk_sm", p.bytes_per_clk_sm);
  get(j, "clock_mhz", p.clock_mhz);
  get(j, "seconds", p.seconds);
  get(j, "sms", p.sms);
}

void to_json(json& j, const BandwidthLevel& l) {
  j = json{{"name", l.name}, {"gbps", l.gbps}, {"confidence", l.confidence}};
  if (l.capacity_lo_bytes && l.capacity_hi_bytes)
    j["capacity_interval_bytes"] = {*l.capacity_lo_bytes, *l.capacity_hi_bytes};
  put(j, "bytes_per_clk_sm", l.bytes_per_clk_sm);
}
void from_json(const json& j, BandwidthLevel& l) {
  get(j, "name", l.name);
  get(j, "gbps", l.gbps);
  get(j, "confidence", l.confidence);
  if (auto it = j.find("capacity_interval_bytes"); it != j.end() && it->size() == 2) {
    read_at("capacity_interval_bytes", [&] {
      l.capacity_lo_bytes = json_integer<uint64_t>((*it)[0]);
      l.capacity_hi_bytes = json_integer<uint64_t>((*it)[1]);
    });
  }
  get(j, "bytes_per_clk_sm", l.bytes_per_clk_sm);
}

void to_json(json& j, const BandwidthCurve& c) {
  j = json::object();
  put_status(j, c.status);
  j["x_unit"] = c.x_unit;
  put(j, "timed_instruction", c.timed_instruction);
  if (!c.note.empty()) j["note"] = c.note;
  j["points"] = c.points;
  j["levels"] = c.levels;
  j["wall_seconds"] = c.wall_seconds;
}
void from_json(const json& j, BandwidthCurve& c) {
  c.status = get_status(j);
  get(j, "x_unit", c.x_unit);
  get(j, "timed_instruction", c.timed_instruction);
  get(j, "note", c.note);
  get(j, "points", c.points);
  get(j, "levels", c.levels);
  get(j, "wall_seconds", c.wall_seconds);
}

void to_json(json& j, const BandwidthFigure& f) {
  j = json{{"name", f.name}, {"gbps", f.gbps}, {"where", f.where}};
  put(j, "bytes_per_clk_sm", f.bytes_per_clk_sm);
  put(j, "clock_mhz", f.clock_mhz);
  put(j, "timed_instruction", f.timed_instruction);
}
void from_json(const json& j, BandwidthFigure& f) {
  get(j, "name", f.name);
  get(j, "gbps", f.gbps);
  get(j, "where", f.where);
  get(j, "bytes_per_clk_sm", f.bytes_per_clk_sm);
  get(j, "clock_mhz", f.clock_mhz);
  get(j, "timed_instruction", f.timed_instruction);
}

void to_json(json& j, const BandwidthProbeResult& r) {
  j = json::object();
  put_status(j, r.status);
  j["wall_seconds"] = r.wall_seconds;
  put(j, "clock_mhz_measured", r.clock_mhz_measured);
  put(j, "peak_gbps_api", r.peak_gbps_api);
  put(j, "telemetry_before", r.telemetry_before);
  put(j, "telemetry_after", r.telemetry_after);
  j["figures"] = r.figures;
  j["footprint"] = r.footprint;
  j["scaling"] = r.scaling;
  j["shared"] = r.shared;
  j["host"] = r.host;
  j["other"] = r.other;
  put(j, "host_latency_us", r.host_latency_us);
  put(j, "last_cache_bytes", r.last_cache_bytes);
  if (!r.last_cache_source.empty()) j["last_cache_source"] = r.last_cache_source;
}
void from_json(const json& j, BandwidthProbeResult& r) {
  r.status = get_status(j);
  get(j, "wall_seconds", r.wall_seconds);
  get(j, "clock_mhz_measured", r.clock_mhz_measured);
  get(j, "peak_gbps_api", r.peak_gbps_api);
  get(j, "telemetry_before", r.telemetry_before);
  get(j, "telemetry_after", r.telemetry_after);
  get(j, "figures", r.figures);
  get(j, "footprint", r.footprint);
  get(j, "scaling", r.scaling);
  get(j, "shared", r.shared);
  get(j, "host", r.host);
  get(j, "other", r.other);
  get(j, "host_latency_us", r.host_latency_us);
  get(j, "last_cache_bytes", r.last_cache_bytes);
  get(j, "last_cache_source", r.last_cache_source);
}

std::optional<MemoryPlateau> find_memory_plateau(const std::vector<FootprintRate>& curve) {
  const std::size_t n = curve.size();
  if (n < kMemoryPlateauPoints + 1) return std::nullopt;
  // The longest flat run that ends the curve.
  std::size_t first = n - 1;
  double lo = curve[first].gbps, hi = lo;
  while (first > 0) {
    const double g = curve[first - 1].gbps;
    if (std::max(hi, g) > kMemoryPlateauFlatness * std::min(lo, g)) break;
    lo = std::min(lo, g);
    hi = std::max(hi, g);
    --first;
  }
  if (first == 0 || n - first < kMemoryPlateauPoints ||
      curve[n - 1].footprint_bytes < kMemoryPlateauSpan * curve[first].footprint_bytes)
    return std::nullopt;
  std::vector<double> rates;
  for (std::size_t i = first; i < n; ++i) rates.push_back(curve[i].gbps);
  std::sort(rates.begin(), rates.end());
  const std::size_t m = rates.size();
  const double plateau = m % 2 ? rates[m / 2] : 0.5 * (rates[m / 2 - 1] + rates[m / 2]);
  // The step down into it: the last point clearly faster, not far below the plateau (points
  // in between are footprints the cache still partly holds).
  for (std::size_t j = first; j-- > 0;) {
    if (curve[j].footprint_bytes * kMemoryPlateauReach < curve[first].footprint_bytes) break;
    if (curve[j].gbps >= kMemoryPlateauStep * plateau)
      return MemoryPlateau{curve[first].footprint_bytes, curve[j].footprint_bytes, plateau,
                           n - first};
  }
  return std::nullopt;
}

std::vector<uint64_t> host_transfer_sizes(bool quick, uint64_t max_bytes) {
  std::vector<uint64_t> sizes;
  if (quick) {
    // Up to 256 MiB: on the H200 the pinned link gave 53.3 GB/s at 16 MiB, 55.0 at 64 MiB and
    // 55.4 at 256 MiB and 1 GiB, so a --quick run that stops at 16 MiB reads the host link
    // 3.9 % low. 16 MiB stays: pageable transfers peak there. The 256 MiB point costs ~15 ms
    // pinned, ~70 ms pageable.
    for (uint64_t b : {4096ull, 256ull << 10, 4ull << 20, 16ull << 20, 64ull << 20, 256ull << 20})
      if (b <= max_bytes) sizes.push_back(b);
  } else {
    for (uint64_t b = 4096; b <= max_bytes; b *= 4) sizes.push_back(b);
  }
  return sizes;
}

}  // namespace gd
