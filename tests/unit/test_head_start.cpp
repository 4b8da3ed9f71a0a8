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

TEST(HeadStart, WorksRunAtOnceAndAFailureStaysInside) {
  std::atomic<int> started{0}, finished{0};
  // Each of the two waits (up to 5 s) for the other to have started: both finish only when
  // they run at the same time, as the longest compile of every probe must start at once.
  auto meet = [&](const std::atomic<bool>&) {
    ++started;
    for (int i = 0; i < 5000 && started < 2; ++i) std::this_thread::sleep_for(1ms);
    if (started >= 2) ++finished;
  };
  gd::HeadStart h({meet,
                   {},
                   [](const std::atomic<bool>&) { throw std::runtime_error("compile failed"); },
                   meet});
  EXPECT_EQ(h.size(), 3u);
  h.wait();
  EXPECT_TRUE(h.done());
  EXPECT_EQ(finished, 2);
  EXPECT_GT(h.seconds(), 0);
  gd::HeadStart none({});
  EXPECT_TRUE(none.done());
  EXPECT_EQ(none.size(), 0u);
  EXPECT_LT(none.wait(), 0.01);
}

TEST(HeadStart, DestructionCancelsAndWaits) {
  std::atomic<bool> saw_cancel{false};
  {
    gd::HeadStart h({[&](const std::atomic<bool>& cancel) {
      while (!cancel) std::this_thread::sleep_for(1ms);
      saw_cancel = true;
    }});
    std::this_thread::sleep_for(20ms);
    EXPECT_FALSE(h.done());
  }  // the destructor cancels, and returns once the work has
  EXPECT_TRUE(saw_cancel);
}

// A host-timed measurement waits for the run's background compiles, and only while a run's
// head start exists.
TEST(HeadStart, WaitForCurrentWaitsForTheRunningOne) {
  EXPECT_EQ(gd::HeadStart::wait_for_current(), 0.0);
  std::atomic<bool> finished{false};
  {
    gd::HeadStart h({[&](const std::atomic<bool>&) {
      std::this_thread::sleep_for(100ms);
      finished = true;
    }});
    const double waited = gd::HeadStart::wait_for_current();
    EXPECT_TRUE(finished);
    EXPECT_GT(waited, 0.02);
    EXPECT_LT(gd::HeadStart::wait_for_current(), 0.01);  // done: no further wait
  }
  EXPECT_EQ(gd::HeadStart::wait_for_current(), 0.0);
}
