// The status line of long runs (sgpu/diag/progress.hpp): its format, its estimate of the time
// left, and that it stays silent when not asked to draw (not a terminal, or CI set).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "sgpu/diag/progress.hpp"

using namespace sgpu::diag;
using namespace std::chrono_literals;

namespace {

std::string read_all(std::FILE* f) {
  std::fflush(f);
  std::rewind(f);
  std::string s;
  for (int c; (c = std::fgetc(f)) != EOF;) s += static_cast<char>(c);
  return s;
}

}  // namespace

TEST_CASE("progress: the estimate is the elapsed time scaled to the work left", "[progress]") {
  CHECK_FALSE(estimate_left(0, 100, 5s));
  CHECK_FALSE(estimate_left(10, 0, 5s));
  CHECK(*estimate_left(25, 100, 10s) == 30s);
  CHECK(*estimate_left(50, 100, 3s) == 3s);
  CHECK(*estimate_left(100, 100, 3s) == 0s);
  CHECK(*estimate_left(150, 100, 3s) == 0s);
}

TEST_CASE("progress: durations read naturally at every scale", "[progress]") {
  CHECK(format_duration(850ms) == "850 ms");
  CHECK(format_duration(2100ms) == "2.1 s");
  CHECK(format_duration(185s) == "3 min 05 s");
  CHECK(format_duration(3720s) == "1 h 02 min");
}

TEST_CASE("progress: the line has a bar, a percentage, counts, elapsed time and time left", "[progress]") {
  CHECK(format_progress("soak", 45, 100, 9s, 20) == "soak [#########-----------]  45% 45/100, 9.0 s elapsed, ~11.0 s left");
  CHECK(format_progress("soak", 0, 100, 1s, 10) == "soak [----------]   0% 0/100, 1.0 s elapsed, ~? left");
  CHECK(format_progress("soak", 120, 100, 1s, 4) == "soak [####] 100% 100/100, 1.0 s elapsed, ~0 ms left");
}

TEST_CASE("progress: silent when stderr is not a terminal or CI is set", "[progress]") {
  std::FILE* f = std::tmpfile();
  REQUIRE(f);
  CHECK_FALSE(progress_wanted(f));  // a file is not a terminal
  {
    Progress::Options o;
    o.stream = f;
    Progress p("quiet", 10, o);
    CHECK_FALSE(p.enabled());
    for (int i = 0; i <= 10; ++i) p.update(i);
    p.finish();
  }
  CHECK(read_all(f).empty());
  std::fclose(f);
  // CI set: quiet whatever the stream (restored afterwards).
  const char* old = std::getenv("CI");
  const std::string saved = old ? old : "";
  setenv("CI", "true", 1);
  CHECK_FALSE(progress_wanted(stderr));
  if (old) setenv("CI", saved.c_str(), 1);
  else unsetenv("CI");
}

TEST_CASE("progress: when drawing, redraws at most every interval and ends the line once", "[progress]") {
  std::FILE* f = std::tmpfile();
  REQUIRE(f);
  std::chrono::nanoseconds clock{0};
  {
    Progress::Options o;
    o.stream = f;
    o.enabled = true;
    o.min_interval = 100ms;
    o.now = [&] { return clock; };
    Progress p("run", 4, o);
    p.update(1);  // drawn (first)
    clock = 50ms;
    p.update(2);  // too soon
    clock = 200ms;
    p.update(3);  // drawn
    p.finish();
    p.finish();  // once
  }
  const std::string out = read_all(f);
  std::fclose(f);
  std::size_t lines = 0;
  for (std::size_t at = 0; (at = out.find('\r', at)) != std::string::npos; ++at) ++lines;
  CHECK(lines == 3);  // 1, 3 and the final line
  CHECK(out.find("2/4") == std::string::npos);
  CHECK(out.find("run [###---]") == std::string::npos);  // default width 24
  CHECK(out.find(" 75% 3/4, 200 ms elapsed, ~66 ms left") != std::string::npos);
  CHECK(out.back() == '\n');
  CHECK(std::count(out.begin(), out.end(), '\n') == 1);
}
