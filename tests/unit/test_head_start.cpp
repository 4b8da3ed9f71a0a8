// The pieces behind a run's head start: values built once per key from any thread
// (BuildOnce), a parallel loop that can be cancelled (parallel_for), and the background thread
// that runs the probes' AheadWork (HeadStart).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "gpudissect/build_once.hpp"
#include "gpudissect/head_start.hpp"
#include "gpudissect/parallel.hpp"

using namespace std::chrono_literals;

TEST(BuildOnce, ConcurrentCallersOfOneKeyBuildItOnce) {
  gd::BuildOnce<std::string> once;
  std::atomic<int> builds{0};
  auto slow_build = [&] {
    ++builds;
    std::this_thread::sleep_for(50ms);  // long enough for the others to arrive meanwhile
    return std::string("cubin");
  };
  std::vector<std::thread> ts;
  std::vector<const std::string*> got(8);
  for (int i = 0; i < 8; ++i) ts.emplace_back([&, i] { got[i] = &once.get("k", slow_build); });
  for (auto& t : ts) t.join();
  EXPECT_EQ(builds, 1);
  for (const std::string* g : got) {
    ASSERT_NE(g, nullptr);
    EXPECT_EQ(g, got[0]);  // the one value, not copies
    EXPECT_EQ(*g, "cubin");
  }
  EXPECT_EQ(once.find("k"), got[0]);
  EXPECT_EQ(once.find("other"), nullptr);
}

TEST(BuildOnce, DifferentKeysBuildInParallel) {
  gd::BuildOnce<int> once;
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> ts;
  for (int i = 0; i < 4; ++i)
    ts.emplace_back([&, i] {
      once.get(std::to_string(i), [&] {
        std::this_thread::sleep_for(100ms);
        return i;
      });
    });
  for (auto& t : ts) t.join();
  // Serialised the four would take 400 ms; a slow machine still ends well under that.
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 350ms);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(*once.find(std::to_string(i)), i);
}

TEST(BuildOnce, AFailedBuildIsTriedAgain) {
  gd::BuildOnce<int> once;
  EXPECT_THROW(once.get("k", []() -> int { throw std::runtime_error("nvrtc failed"); }),
               std::runtime_error);
  EXPECT_EQ(once.find("k"), nullptr);
  EXPECT_EQ(once.get("k", [] { return 7; }), 7);
}

TEST(ParallelFor, EveryIndexOnceAndExceptionsStayInside) {
  std::mutex mu;
  std::multiset<std::size_t> seen;
  gd::parallel_for(
      100, nullptr,
      [&](std::size_t i) {
        {
          std::lock_guard<std::mutex> g(mu);
          seen.insert(i);
        }
        if (i % 7 == 0) throw std::runtime_error("one kernel failed");
      },
      4);
  ASSERT_EQ(seen.size(), 100u);
  for (std::size_t i = 0; i < 100; ++i) EXPECT_EQ(seen.count(i), 1u) << i;
  gd::parallel_for(0, nullptr, [](std::size_t) { FAIL() << "no index"; });
}

TEST(ParallelFor, CancelStopsNewItems) {
  std::atomic<bool> cancel{false};
  std::atomic<int> ran{0};
  gd::parallel_for(
      1000, &cancel,
      [&](std::size_t) {
        if (++ran == 10) cancel = true;
      },
      2);
  EXPECT_GE(ran, 10);
  EXPECT_LE(ran, 11);  // at most the other worker's item in flight
}

TEST(HeadStart, RunsTheWorksInOrderAndSkipsEmptyOnes) {
  std::vector<int> order;
  std::mutex mu;
  auto work = [&](int i) {
    return [&, i](const std::atomic<bool>&) {
      std::lock_guard<std::mutex> g(mu);
      order.push_back(i);
    };
  };
  {
    gd::HeadStart h({work(1),
                     {},
                     work(2),
                     [](const std::atomic<bool>&) { throw std::runtime_error("compile failed"); },
                     work(3)});
    EXPECT_EQ(h.size(), 4u);
    for (int i = 0; i < 500 && !h.done(); ++i) std::this_thread::sleep_for(10ms);
    EXPECT_TRUE(h.done());
    EXPECT_GT(h.seconds(), 0);
  }
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3}));  // the throwing work did not end the thread
  gd::HeadStart none({});
  EXPECT_TRUE(none.done());
  EXPECT_EQ(none.size(), 0u);
}

TEST(HeadStart, DestructionCancelsAndWaits) {
  std::atomic<bool> saw_cancel{false}, second_ran{false};
  {
    gd::HeadStart h({[&](const std::atomic<bool>& cancel) {
                       while (!cancel) std::this_thread::sleep_for(1ms);
                       saw_cancel = true;
                     },
                     [&](const std::atomic<bool>&) { second_ran = true; }});
    std::this_thread::sleep_for(20ms);
  }  // the destructor cancels: the first work ends, the second never starts
  EXPECT_TRUE(saw_cancel);
  EXPECT_FALSE(second_ran);
}
