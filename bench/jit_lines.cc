// SPDX-License-Identifier: GPL-2.0-only
#include "jit_lines.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <linux/bpf.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <memory>

namespace rl::bench {
namespace {

struct BtfCloser {
  void operator()(btf* b) const { btf__free(b); }
};

std::string base_name(const char* path) {
  std::string p = path ? path : "";
  auto slash = p.rfind('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

uint64_t ptr(const void* p) { return reinterpret_cast<uintptr_t>(p); }

}  // namespace

Result<JitLines> jit_lines(int prog_fd) {
  bpf_prog_info info{};
  uint32_t len = sizeof(info);
  if (bpf_obj_get_info_by_fd(prog_fd, &info, &len) != 0)
    return errno_error("read the program's info");
  if (info.nr_jited_ksyms == 0) return Error{0, "the program is not JIT-compiled"};
  if (info.nr_line_info == 0 || info.nr_jited_line_info == 0)
    return Error{0, "the program carries no line info (built without -g?)"};

  std::vector<uint64_t> ksyms(info.nr_jited_ksyms);
  std::vector<uint32_t> func_lens(info.nr_jited_func_lens);
  std::vector<uint8_t> func_info(size_t{info.nr_func_info} * info.func_info_rec_size);
  std::vector<uint8_t> line_info(size_t{info.nr_line_info} * info.line_info_rec_size);
  std::vector<uint64_t> jited_lines(info.nr_jited_line_info);
  const uint32_t btf_id = info.btf_id;
  const uint32_t func_rec = info.func_info_rec_size, line_rec = info.line_info_rec_size;

  bpf_prog_info want{};
  want.nr_jited_ksyms = ksyms.size();
  want.jited_ksyms = ptr(ksyms.data());
  want.nr_jited_func_lens = func_lens.size();
  want.jited_func_lens = ptr(func_lens.data());
  want.nr_func_info = info.nr_func_info;
  want.func_info_rec_size = func_rec;
  want.func_info = ptr(func_info.data());
  want.nr_line_info = info.nr_line_info;
  want.line_info_rec_size = line_rec;
  want.line_info = ptr(line_info.data());
  want.nr_jited_line_info = jited_lines.size();
  want.jited_line_info_rec_size = sizeof(uint64_t);
  want.jited_line_info = ptr(jited_lines.data());
  len = sizeof(want);
  if (bpf_obj_get_info_by_fd(prog_fd, &want, &len) != 0)
    return errno_error("read the program's JIT line info");
  if (std::all_of(ksyms.begin(), ksyms.end(), [](uint64_t a) { return a == 0; }))
    return Error{0, "the kernel hid the JIT addresses (kptr_restrict; run as root)"};

  std::unique_ptr<btf, BtfCloser> types(btf__load_from_kernel_by_id(btf_id));
  if (!types) return errno_error("load the program's BTF");

  JitLines out;
  for (size_t i = 0; i < ksyms.size() && i < func_lens.size(); i++) {
    JitFunction f{.start = ksyms[i], .len = func_lens[i], .name = "?"};
    if (i < want.nr_func_info) {
      const auto* rec = reinterpret_cast<const bpf_func_info*>(func_info.data() + i * func_rec);
      if (const btf_type* t = btf__type_by_id(types.get(), rec->type_id))
        f.name = btf__name_by_offset(types.get(), t->name_off);
    }
    out.functions.push_back(std::move(f));
  }
  for (size_t i = 0; i < jited_lines.size() && i < want.nr_line_info; i++) {
    const auto* rec = reinterpret_cast<const bpf_line_info*>(line_info.data() + i * line_rec);
    const char* text = btf__name_by_offset(types.get(), rec->line_off);
    out.lines.push_back(
        JitLine{.addr = jited_lines[i],
                .file = base_name(btf__name_by_offset(types.get(), rec->file_name_off)),
                .line = BPF_LINE_INFO_LINE_NUM(rec->line_col),
                .text = text ? text : ""});
  }
  std::stable_sort(out.lines.begin(), out.lines.end(),
                   [](const JitLine& a, const JitLine& b) { return a.addr < b.addr; });
  return out;
}

std::string format_jit_lines(const JitLines& l) {
  std::string out;
  char buf[64];
  for (const auto& f : l.functions) {
    std::snprintf(buf, sizeof(buf), "func %" PRIx64 " %u ", f.start, f.len);
    out += buf + f.name + "\n";
  }
  for (const auto& line : l.lines) {
    std::string text = line.text;
    std::replace(text.begin(), text.end(), '\n', ' ');
    std::snprintf(buf, sizeof(buf), "line %" PRIx64 " ", line.addr);
    out += buf + line.file + ":" + std::to_string(line.line) + " " + text + "\n";
  }
  return out;
}

}  // namespace rl::bench
