// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// A report that exercises every member of the model, shared by the writer and reader tests.
#pragma once

#include <tensordiag/core/report.hpp>

#include <limits>

namespace tdiag::test {

inline report sample_report() {
  report r;
  r.metadata.tool = "tensordiag";
  r.metadata.version = "0.1.0";
  r.metadata.time = "2026-12-02T13:14:15Z";
  r.metadata.host = "gpu-node-07";
  r.metadata.pid = 48213;
  r.metadata.rank = 3;
  r.metadata.device = 1;

  diagnostic assertion;
  assertion.code = "TDIAG-DSA-001";
  assertion.title = "device assertion failed: idx < n";
  assertion.message = "index 4113 is out of range for 4096 rows";
  assertion.location = {"kernels/gather.cu", 42, 5, "gather_rows<float>"};
  assertion.add_field("block", field_value::list{3, 0, 0})
      .add_field("index", 4113)
      .add_field("ratio", 1.0)
      .add_field("tiny", 2.5e-7)
      .add_field("launch", "gather_rows<<<64, 128>>>")
      .add_field("ok", false)
      .add_field("nested", field_value::list{field_value::list{1, 2}, "x", 0.5});
  assertion.notes = {"16 more threads failed", "second note\nwith two lines"};
  assertion.hint = "check the vocabulary size";
  assertion.related.push_back({{"main.cpp", 88, 0, "main"}, "launched here"});
  assertion.stack.push_back({"launch_checked", "launch.cpp", 57, "libtdiag.so", 0x7f3a12c4e1b0});
  assertion.stack.push_back({"main", "", 0, "", 0x55d0c0a40b17});
  r.diagnostics.push_back(assertion);

  diagnostic sharding;
  sharding.level = severity::warning;
  sharding.code = "TDIAG-DT-012";
  sharding.title = "sharding: a shard cannot become a pending sum";
  sharding.message = "aten.add_ arg 1: S(0) must become P(sum), 100% \"impossible\", a, b: c";
  sharding.location.file = "model/layers.py";
  sharding.location.line = 214;
  sharding.hint = "redistribute first";
  r.diagnostics.push_back(sharding);

  diagnostic note;
  note.level = severity::note;
  note.code = "TDIAG-TEST-003";
  note.title = "no location";
  note.message = "a note without a location\r\nand CR LF";
  note.add_field("nan", std::numeric_limits<double>::quiet_NaN());
  note.add_field("inf", std::numeric_limits<double>::infinity());
  note.add_field("ninf", -std::numeric_limits<double>::infinity());
  r.diagnostics.push_back(note);
  return r;
}

} // namespace tdiag::test
