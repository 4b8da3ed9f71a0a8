// The quoting functions (report/format.hpp) and the one write helper (report/output.hpp):
// text from a file cannot leave its quotes, and an output is whole or not there at all.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "format.hpp"
#include "gpudissect/shell.hpp"
#include "output.hpp"
#include "report.hpp"

namespace fs = std::filesystem;
using namespace gd::report;
using namespace gd::report::detail;

namespace {

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A fresh folder, removed afterwards.
struct TempDir {
  fs::path dir;
  TempDir() {
    char tmpl[] = "/tmp/gd-output-test.XXXXXX";
    dir = ::mkdtemp(tmpl);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  // The names in the folder (temporary files start with a dot).
  std::vector<std::string> names() const {
    std::vector<std::string> n;
    for (const auto& e : fs::directory_iterator(dir)) n.push_back(e.path().filename().string());
    std::sort(n.begin(), n.end());
    return n;
  }
};

}  // namespace

TEST(Format, HtmlEscapeLeavesNoMarkupOrQuote) {
  const std::string e = html_escape("a<script>'\"&x\x01");
  EXPECT_EQ(e, "a&lt;script&gt;&#39;&quot;&amp;x ");
}

TEST(Format, GnuplotQuoteDoublesQuotesAndDropsLineBreaks) {
  EXPECT_EQ(gnuplot_quote("it's"), "'it''s'");
  // A line break would end the command: the rest would run as one of its own.
  EXPECT_EQ(gnuplot_quote("a\nEOD\n!touch x\r"), "'a EOD !touch x '");
  // Backticks and @macros stay text inside single quotes (gnuplot substitutes neither).
  EXPECT_EQ(gnuplot_quote("`id`@m"), "'`id`@m'");
}

TEST(Format, GnuplotDatumStaysOneColumnOfOneLine) {
  EXPECT_EQ(gnuplot_datum("a\"b\nEOD\n!x"), "\"a'b EOD !x\"");
}

TEST(Format, SvgIdAndFileStemHaveAStrictShape) {
  EXPECT_EQ(svg_id("latency_global-"), "latency_global-");
  const std::string id = svg_id("\"><script>x</script>");
  for (char c : id)
    EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-');
  EXPECT_TRUE(std::isalpha(static_cast<unsigned char>(id[0])));
  // Different names never share an id.
  EXPECT_NE(svg_id("a b"), svg_id("a/b"));
  EXPECT_EQ(file_stem("compute_sweep_ffma"), "compute_sweep_ffma");
  const std::string f = file_stem("../../etc/passwd");
  EXPECT_EQ(f.find('/'), std::string::npos);
  EXPECT_NE(f[0], '.');
  EXPECT_LE(file_stem(std::string(1000, 'a')).size(), 90u);
}

TEST(Format, CsvFieldQuotesAndDefusesFormulas) {
  EXPECT_EQ(csv_field("plain"), "plain");
  EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_field("say \"hi\"\n"), "\"say \"\"hi\"\"\n\"");
  EXPECT_EQ(csv_field("=1+2"), "'=1+2");
}

TEST(Format, ScriptNumKeepsEveryDigitAndMarksNaN) {
  EXPECT_EQ(script_num(0.1), "0.1");
  EXPECT_EQ(script_num(1.0 / 3), "0.333333333");
  EXPECT_EQ(script_num(std::nan("")), "NaN");
  EXPECT_EQ(script_num(HUGE_VAL), "NaN");
}

TEST(Format, NumbersPrintADashWhereAbsent) {
  EXPECT_EQ(opt_fixed(12.345, 1), "12.3");
  EXPECT_EQ(opt_fixed(std::nullopt, 1), "-");
  EXPECT_EQ(opt_fixed(std::nan(""), 1), "-");
  EXPECT_EQ(opt_bytes(uint64_t{3} << 20), "3 MiB");
  EXPECT_EQ(opt_bytes(std::nullopt), "-");
  EXPECT_EQ(mhz(1980.4), "1980 MHz");
  EXPECT_EQ(mhz(std::nullopt), "-");
}

TEST(Format, MedianSpreadShowsHalfTheIqrAndUnstable) {
  EXPECT_EQ(median_spread(std::nullopt, 2), "-");
  gd::Summary one;
  one.n = 1;
  one.median = one.q1 = one.q3 = 4;
  EXPECT_EQ(median_spread(one, 2), "4.00");  // one sample: no spread to state
  gd::Summary tight = one;
  tight.n = 5;
  tight.q1 = 99;
  tight.median = 100;
  tight.q3 = 103;
  EXPECT_EQ(median_spread(tight, 1), "100.0 ±2.0%");
  gd::Summary wide = tight;
  wide.q1 = 80;
  wide.q3 = 120;  // IQR 40 % of the median
  EXPECT_EQ(median_spread(wide, 0), "100 ±20.0% UNSTABLE");
}

TEST(Format, StatusTextIsOkOrStatusAndReason) {
  EXPECT_EQ(status_text(gd::Status{}), "ok");
  EXPECT_EQ(status_text(gd::Status{gd::StatusCode::unsupported, ""}), "unsupported");
  EXPECT_EQ(status_text(gd::Status{gd::StatusCode::error, "out of memory"}),
            "error: out of memory");
}

// A path or name through `sh -c` arrives as one argument, byte for byte: quotes, spaces,
// `$(...)`, backquotes and a line break are no shell syntax.
TEST(Format, ShellQuoteKeepsEveryByteOneArgument) {
  const std::string hostile = "a b'c\"d $(touch /tmp/gd-pwned) `id` ;|&\n*?~\\";
  const std::string cmd = "printf '%s|' " + gd::shell_quote(hostile) + " " + gd::shell_quote("");
  std::FILE* f = ::popen(cmd.c_str(), "r");
  ASSERT_NE(f, nullptr);
  std::string out;
  char buf[256];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
  ASSERT_EQ(::pclose(f), 0);
  EXPECT_EQ(out, hostile + "||");
  EXPECT_EQ(gd::shell_quote("it's"), "'it'\\''s'");
}

TEST(Output, WritesWholeFilesAndReplacesRegularOnes) {
  TempDir t;
  const fs::path f = t.dir / "sub" / "out.txt";
  write_file(f, "first");
  EXPECT_EQ(read(f), "first");
  ::chmod(f.c_str(), 0640);
  write_file(f, "second");
  EXPECT_EQ(read(f), "second");
  struct stat st {};
  ASSERT_EQ(::stat(f.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u) << "a replaced file keeps its permissions";
  EXPECT_EQ(t.names(), std::vector<std::string>{"sub"});
  for (const auto& e : fs::directory_iterator(t.dir / "sub"))
    EXPECT_EQ(e.path().filename(), "out.txt") << "no temporary file left behind";
}

TEST(Output, WritesThroughASymlinkAndKeepsIt) {
  TempDir t;
  write_file(t.dir / "real.json", "old");
  fs::create_symlink("real.json", t.dir / "link.json");
  write_file(t.dir / "link.json", "new");
  EXPECT_TRUE(fs::is_symlink(t.dir / "link.json"));
  EXPECT_EQ(read(t.dir / "real.json"), "new");
}

TEST(Output, RefusesTargetsThatAreNotRegularFiles) {
  TempDir t;
  const fs::path fifo = t.dir / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  fs::create_directory(t.dir / "folder");
  for (const fs::path& p : {fifo, t.dir / "folder"}) {
    try {
      write_file(p, "x");
      ADD_FAILURE() << p << " was written";
    } catch (const RefusedOutput& e) {
      EXPECT_NE(std::string(e.what()).find(p.string()), std::string::npos) << e.what();
    }
    EXPECT_THROW(ensure_writable(p), RefusedOutput);
  }
  EXPECT_TRUE(fs::is_fifo(fifo));
  EXPECT_TRUE(fs::is_directory(t.dir / "folder"));
  // A character device (read-only check: nothing is written to it).
  EXPECT_THROW(check_output_target("/dev/null"), RefusedOutput);
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
}

TEST(Output, AFullDiskLeavesTheOldFileAndNoPartialOne) {
  // A file size limit stands in for a full disk: write() fails part way (EFBIG).
  TempDir t;
  const fs::path f = t.dir / "report.html";
  write_file(f, "old");
  struct rlimit old {};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old), 0);
  auto old_handler = ::signal(SIGXFSZ, SIG_IGN);
  struct rlimit small = old;
  small.rlim_cur = 4096;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  bool threw = false;
  try {
    write_file(f, std::string(1 << 20, 'x'));
  } catch (const std::runtime_error& e) {
    threw = true;
    EXPECT_NE(std::string(e.what()).find(f.string()), std::string::npos) << e.what();
  }
  ::setrlimit(RLIMIT_FSIZE, &old);
  ::signal(SIGXFSZ, old_handler);
  EXPECT_TRUE(threw);
  EXPECT_EQ(read(f), "old");
  EXPECT_EQ(t.names(), std::vector<std::string>{"report.html"});
}

TEST(Output, OutputFileWritesOnlyOnCommit) {
  TempDir t;
  {
    OutputFile o(t.dir / "a.csv");
    o << "x,y\n";
  }
  EXPECT_FALSE(fs::exists(t.dir / "a.csv"));
  OutputFile o(t.dir / "a.csv");
  o << "x,y\n";
  o.commit();
  EXPECT_EQ(read(t.dir / "a.csv"), "x,y\n");
}
