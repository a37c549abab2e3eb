// SPDX-License-Identifier: GPL-2.0-only
// Policy text as rld reads it from a file: YAML through validation, and a valid policy through
// the compiler. Any crash, sanitizer report, leak or hang past -timeout is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "compiler/compiler.h"
#include "policy/loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  rl::policy::LoadResult loaded = rl::policy::load_string(text, "fuzz.yaml");
  if (!loaded.ok()) return 0;
  auto compiled = rl::compiler::compile(loaded.policy);
  (void)compiled.ok();
  return 0;
}
