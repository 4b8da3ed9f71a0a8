#include "gpudissect/parallel.hpp"

#include <algorithm>
#include <thread>
#include <vector>

namespace gd {

void parallel_for(std::size_t n, const std::atomic<bool>* cancel,
                  const std::function<void(std::size_t)>& fn, unsigned workers) {
  if (workers == 0) workers = std::min(16u, std::max(1u, std::thread::hardware_concurrency()));
  workers = static_cast<unsigned>(std::min<std::size_t>(workers, n));
  std::atomic<std::size_t> next{0};
  auto loop = [&] {
    for (std::size_t i; !(cancel && *cancel) && (i = next++) < n;) {
      try {
        fn(i);
      } catch (...) {
        // fn keeps its own failures (see the header)
      }
    }
  };
  std::vector<std::thread> threads;
  for (unsigned w = 1; w < workers; ++w) threads.emplace_back(loop);
  if (workers > 0) loop();  // this thread is one of the workers
  for (auto& t : threads) t.join();
}

}  // namespace gd
