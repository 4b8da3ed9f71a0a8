// Status codes (issue 24): each code's JSON word reads back as the same code, and a reader
// refuses a word that names no code, with the key path, instead of carrying it along.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <string>

#include "bandwidth/bandwidth.hpp"
#include "gpudissect/figure.hpp"
#include "gpudissect/json_fields.hpp"
#include "gpudissect/json_read.hpp"
#include "gpudissect/result.hpp"
#include "gpudissect/status.hpp"
#include "links/links.hpp"
#include "memory/memory.hpp"

using nlohmann::json;
using namespace gd;

TEST(StatusCode, EveryCodeRoundTripsThroughItsWord) {
  std::set<std::string> words;
  for (StatusCode c : kAllStatusCodes) {
    const std::string w = to_string(c);
    EXPECT_TRUE(words.insert(w).second) << "two codes share the word " << w;
    ASSERT_TRUE(status_code_from(w).has_value()) << w;
    EXPECT_EQ(*status_code_from(w), c) << w;
    EXPECT_EQ(parse_status(w), c) << w;
  }
  EXPECT_EQ(words.size(), 10u);
}

TEST(StatusCode, TheWordsAreTheFileFormat) {
  // These strings are in every result file written so far: they never change.
  EXPECT_STREQ(to_string(StatusCode::ok), "ok");
  EXPECT_STREQ(to_string(StatusCode::unsupported), "unsupported");
  EXPECT_STREQ(to_string(StatusCode::skipped), "skipped");
  EXPECT_STREQ(to_string(StatusCode::error), "error");
  EXPECT_STREQ(to_string(StatusCode::interrupted), "interrupted");
  EXPECT_STREQ(to_string(StatusCode::unstable), "unstable");
  EXPECT_STREQ(to_string(StatusCode::timeout), "timeout");
  EXPECT_STREQ(to_string(StatusCode::busy), "busy");
  EXPECT_STREQ(to_string(StatusCode::missing), "missing");
  EXPECT_STREQ(to_string(StatusCode::absent), "absent");
  EXPECT_EQ((Status{StatusCode::busy, "x"}.name()), "busy");
  EXPECT_TRUE(Status{}.ok());
  EXPECT_FALSE((Status{StatusCode::unstable, ""}.ok()));
}

TEST(StatusCode, UnknownWordsNameNoCode) {
  for (const char* w : {"", "OK", "Error", "ok ", "fine", "unknown"}) {
    EXPECT_FALSE(status_code_from(w).has_value()) << w;
    EXPECT_THROW(parse_status(w), std::invalid_argument) << w;
  }
}

TEST(StatusJson, WritesTheWordAndReadsItBack) {
  json j;
  json_fields::put_status(j, Status{StatusCode::timeout, "killed"});
  EXPECT_EQ(j.at("status"), "timeout");
  EXPECT_EQ(j.at("reason"), "killed");
  const Status s = json_fields::get_status(j);
  EXPECT_EQ(s.code, StatusCode::timeout);
  EXPECT_EQ(s.reason, "killed");
  json ok;
  json_fields::put_status(ok, Status{});
  EXPECT_EQ(ok, (json{{"status", "ok"}}));                    // no reason key when there is none
  EXPECT_TRUE(json_fields::get_status(json::object()).ok());  // absent: ok, as before
}

TEST(StatusJson, AnUnknownWordIsAnErrorAtItsKey) {
  try {
    json_fields::get_status(json{{"status", "fine"}, {"reason", "x"}});
    FAIL() << "an unknown status word was accepted";
  } catch (const JsonReadError& e) {
    EXPECT_EQ(e.path(), "status");
    EXPECT_NE(e.detail().find("\"fine\""), std::string::npos) << e.what();
  }
  EXPECT_THROW(json_fields::get_status(json{{"status", 3}}), JsonReadError);
}

TEST(StatusJson, AFigureWithAnUnknownStatusIsRefusedWithItsPath) {
  json f = {
      {"id", "bandwidth.dram.read"}, {"label", "x"}, {"unit", "GB/s"}, {"status", "<b>fine</b>"}};
  std::string path;
  try {
    read_at("figures", [&] { read_at(index_segment(2), [&] { (void)f.get<Figure>(); }); });
  } catch (const JsonReadError& e) {
    path = e.path();
  }
  EXPECT_EQ(path, "figures[2].status");
}

// One status_text for the report writers and the regression gate: the same words in both.
TEST(StatusText, OkAloneOrTheCodeWithItsReason) {
  EXPECT_EQ(status_text(Status{}), "ok");
  EXPECT_EQ(status_text(Status{StatusCode::ok, "a note"}), "ok");  // ok shows no reason
  EXPECT_EQ(status_text(Status{StatusCode::skipped, ""}), "skipped");
  EXPECT_EQ(status_text(Status{StatusCode::error, "out of memory"}), "error: out of memory");
  // with_reason: the word and any reason, an ok one's too (the fleet's and HTML's notes).
  EXPECT_EQ((Status{StatusCode::ok, "a note"}).with_reason(), "ok: a note");
  EXPECT_EQ((Status{StatusCode::busy, ""}).with_reason(), "busy");
  EXPECT_EQ((Status{StatusCode::timeout, "rank 3"}).with_reason(), "timeout: rank 3");
}

// ---- the points of the curves: a Status each, written and read as the same words ----

// Each point type with the smallest JSON its reader takes.
template <class P>
json smallest_point_json();
template <>
json smallest_point_json<LatencyPoint>() {
  return {{"footprint_bytes", 64}};
}
template <>
json smallest_point_json<BandwidthPoint>() {
  return {{"x", 1024}};
}
template <>
json smallest_point_json<CollectivePoint>() {
  return {{"bytes", 8}, {"count", 2}};
}
template <>
json smallest_point_json<MemPoint>() {
  return {{"footprint_bytes", 64}};
}

template <class P>
class PointStatus : public ::testing::Test {};
using PointTypes = ::testing::Types<LatencyPoint, BandwidthPoint, CollectivePoint, MemPoint>;
TYPED_TEST_SUITE(PointStatus, PointTypes);

TYPED_TEST(PointStatus, WritesTheSameWordsAndReadsThemBack) {
  const json plain = json(smallest_point_json<TypeParam>().template get<TypeParam>());
  EXPECT_EQ(plain.at("status"), "ok");
  EXPECT_FALSE(plain.contains("reason"));
  EXPECT_TRUE(smallest_point_json<TypeParam>().template get<TypeParam>().status.ok());
  for (const char* word : {"ok", "skipped", "error"}) {
    json j = smallest_point_json<TypeParam>();
    j["status"] = word;
    j["reason"] = std::string("why ") + word;
    const TypeParam p = j.template get<TypeParam>();
    EXPECT_EQ(p.status.code, parse_status(word)) << word;
    EXPECT_EQ(p.status.reason, std::string("why ") + word);
    const json back = p;
    EXPECT_EQ(back.at("status"), word);
    EXPECT_EQ(back.at("reason"), std::string("why ") + word);
    EXPECT_EQ(back, json(back.template get<TypeParam>()));
  }
}

TYPED_TEST(PointStatus, AnUnknownWordIsRefusedWithItsPath) {
  for (const json& bad : {json("fine"), json("OK"), json(3)}) {
    json j = smallest_point_json<TypeParam>();
    j["status"] = bad;
    std::string path;
    try {
      read_at("points",
              [&] { read_at(index_segment(1), [&] { (void)j.template get<TypeParam>(); }); });
    } catch (const JsonReadError& e) {
      path = e.path();
      if (bad.is_string())
        EXPECT_NE(e.detail().find("not a status: " + bad.dump()), std::string::npos) << e.what();
    }
    EXPECT_EQ(path, "points[1].status") << bad.dump();
  }
}
