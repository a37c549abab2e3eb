// SPDX-License-Identifier: GPL-2.0-only
// Where a loaded BPF program's source lines landed in its JIT image, so that CPU samples (perf,
// which cannot disassemble BPF without libopcodes) can be charged to source lines. The kernel
// keeps, for each line-info record the compiler emitted, the address of its first JIT
// instruction (bpf_prog_info.jited_line_info); a sample belongs to the last line at or before its
// address, within the function that holds it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"

namespace rl::bench {

struct JitFunction {
  uint64_t start = 0;
  uint32_t len = 0;
  std::string name;
};

struct JitLine {
  uint64_t addr = 0;
  std::string file;  // the source file's base name
  uint32_t line = 0;
  std::string text;  // the source line, as the compiler recorded it
};

struct JitLines {
  std::vector<JitFunction> functions;
  std::vector<JitLine> lines;  // by address
};

// The program's functions (main program and subprograms) and lines. Needs the JIT's addresses,
// which the kernel gives only to a caller with CAP_SYSLOG and CAP_BPF.
Result<JitLines> jit_lines(int prog_fd);

// One record per line, "func ADDR LEN NAME" then "line ADDR FILE:LINE TEXT" (hex addresses):
// what scripts/profile-lines.py reads.
std::string format_jit_lines(const JitLines& l);

}  // namespace rl::bench
