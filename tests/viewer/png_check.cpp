// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// png_check: checks a tdiag-view screenshot against the layout its view must have. A test
// tool (CTest runs it after `tdiag-view --screenshot`), not a unit test.
//
//   png_check FILE WIDTHxHEIGHT timeline|memory|allocator|tables|fr|any
//
// All views: the requested size, not blank (many distinct colours, varied brightness).
// timeline: tracks drawn across most plot columns, on a fair number of pixel rows.
// memory:   the allocated-bytes colour (blue) in most pixel columns of the plot.
// allocator: the overview strip shows the curve across most columns, segments are drawn.
// tables:   many text lines (bright pixels on many rows) in the table area.
// fr:       Flight Recorder ring cells (a progress colour) on many rows, a culprit in red, text.
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <stb/stb_image.h>
#include <string>

namespace {

struct image {
  int w = 0;
  int h = 0;
  unsigned char* px = nullptr;
  const unsigned char* at(int x, int y) const {
    return px + (static_cast<std::size_t>(y) * w + x) * 3;
  }
};

bool bluish(const unsigned char* p) {
  return p[2] > 110 && p[2] > p[0] + 40 && p[1] > p[0] + 10;
}
bool bright(const unsigned char* p) {
  return p[0] + p[1] + p[2] > 3 * 170;
}
bool background(const unsigned char* p) {
  return std::abs(p[0] - 24) + std::abs(p[1] - 26) + std::abs(p[2] - 31) < 18;
}

int fail(const char* what, double value) {
  std::fprintf(stderr, "png_check: %s (%.3f)\n", what, value);
  return 1;
}

// Flight Recorder rings: cells of a progress colour (completed, started, scheduled, not
// completed) on several
// rows, a culprit's red (its label, outline or "no dump" bar), and the verdict's text. Returns
// the exit status: 0 when they are there.
int check_fr(const image& im) {
  int ring_rows = 0;
  int red = 0;
  int text_rows = 0;
  for (int y = 0; y < im.h; ++y) {
    int cells = 0;
    int lit = 0;
    for (int x = 0; x < im.w; ++x) {
      const auto* p = im.at(x, y);
      for (const auto& c : {std::array{78, 160, 98}, std::array{220, 170, 80},
                            std::array{92, 112, 146}, std::array{196, 110, 64}})
        cells +=
            std::abs(p[0] - c[0]) < 10 && std::abs(p[1] - c[1]) < 10 && std::abs(p[2] - c[2]) < 10;
      red += p[0] > 200 && p[1] < 110 && p[2] < 110;
      lit += bright(p);
    }
    ring_rows += cells > 20;
    text_rows += lit > 20;
  }
  if (ring_rows < 30)
    return fail("fr: too few rows of ring cells", ring_rows);
  if (red < 50)
    return fail("fr: no culprit marked", red);
  if (text_rows < 40)
    return fail("fr: too little text", text_rows);
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: png_check FILE WIDTHxHEIGHT VIEW\n");
    return 2;
  }
  int ew = 0;
  int eh = 0;
  if (std::sscanf(argv[2], "%dx%d", &ew, &eh) != 2)
    return 2;
  const std::string view = argv[3];
  image im;
  int channels = 0;
  im.px = stbi_load(argv[1], &im.w, &im.h, &channels, 3);
  if (im.px == nullptr)
    return fail("cannot read the PNG", 0);
  if (im.w != ew || im.h != eh) {
    std::fprintf(stderr, "png_check: size %dx%d, expected %dx%d\n", im.w, im.h, ew, eh);
    return 1;
  }
  // Not blank: colours and brightness vary.
  std::set<int> colours;
  double sum = 0;
  double sum2 = 0;
  for (int y = 0; y < im.h; y += 2)
    for (int x = 0; x < im.w; x += 2) {
      const auto* p = im.at(x, y);
      colours.insert((p[0] >> 3) << 10 | (p[1] >> 3) << 5 | (p[2] >> 3));
      const double l = 0.3 * p[0] + 0.59 * p[1] + 0.11 * p[2];
      sum += l;
      sum2 += l * l;
    }
  const double n = (im.w / 2.0) * (im.h / 2.0);
  const double stddev = std::sqrt(std::max(sum2 / n - (sum / n) * (sum / n), 0.0));
  if (colours.size() < 40)
    return fail("blank: too few distinct colours", static_cast<double>(colours.size()));
  if (stddev < 8.0)
    return fail("blank: brightness hardly varies", stddev);

  // The plot area, as the views lay it out at scale 1: label column ~230 px, details panel
  // ~430 px on the right, menu + tabs + ruler ~90 px at the top, status bar at the bottom.
  const int x0 = 250;
  const int x1 = im.w - 450;
  const int y0 = 110;
  const int y1 = im.h - 40;
  if (x1 - x0 < 100 || y1 - y0 < 100)
    return fail("image too small for the layout checks", 0);
  if (view == "any") {
    // Size and not blank only (e.g. the error screen).
  } else if (view == "memory") {
    int columns = 0;
    for (int x = x0; x < x1; ++x)
      for (int y = y0; y < y1; ++y)
        if (bluish(im.at(x, y))) {
          ++columns;
          break;
        }
    const double f = static_cast<double>(columns) / (x1 - x0);
    if (f < 0.6)
      return fail("memory: allocated colour in too few plot columns", f);
  } else if (view == "timeline") {
    // Tracks are drawn across most of the plot's width, on a fair number of pixel rows.
    int busy_rows = 0;
    for (int y = y0; y < y1; ++y) {
      int drawn = 0;
      for (int x = x0; x < x1; x += 2)
        drawn += !background(im.at(x, y));
      busy_rows += drawn > (x1 - x0) / 8;
    }
    if (busy_rows < 40)
      return fail("timeline: too few rows with events", busy_rows);
    int columns = 0;
    for (int x = x0; x < x1; ++x) {
      int drawn = 0;
      for (int y = y0; y < y1; ++y)
        drawn += !background(im.at(x, y));
      columns += drawn > 30;
    }
    const double f = static_cast<double>(columns) / (x1 - x0);
    if (f < 0.5)
      return fail("timeline: events cover too few columns", f);
  } else if (view == "allocator") {
    int columns = 0;
    for (int x = 20; x < x1; ++x)
      for (int y = 60; y < 150; ++y)
        if (bluish(im.at(x, y))) {
          ++columns;
          break;
        }
    const double f = static_cast<double>(columns) / (x1 - 20);
    if (f < 0.5)
      return fail("allocator: the scrub strip's curve covers too few columns", f);
    int segment_rows = 0;
    for (int y = 200; y < y1; ++y) {
      int drawn = 0;
      for (int x = x0; x < x1; x += 2)
        drawn += !background(im.at(x, y)) && std::abs(im.at(x, y)[0] - 27) > 6;
      segment_rows += drawn > 10;
    }
    if (segment_rows < 20)
      return fail("allocator: no segments drawn", segment_rows);
  } else if (view == "tables") {
    int text_rows = 0;
    for (int y = y0; y < y1; ++y) {
      int lit = 0;
      for (int x = 10; x < x1; ++x)
        lit += bright(im.at(x, y));
      text_rows += lit > 20;
    }
    if (text_rows < 60)
      return fail("tables: too little text", text_rows);
  } else if (view != "fr") {
    return fail("unknown view", 0);
  } else if (check_fr(im) != 0) {
    return 1;
  }
  stbi_image_free(im.px);
  std::printf("png_check: %s %dx%d %s ok (%zu colours, brightness stddev %.1f)\n", argv[1], im.w,
              im.h, view.c_str(), colours.size(), stddev);
  return 0;
}
