// SPDX-License-Identifier: GPL-2.0-only
#include "policy/yaml_scan.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>

#include <sstream>
#include <unordered_map>
#include <vector>

namespace rl::policy::detail {
namespace {

struct Stop {
  YAML::Mark mark;
  std::string message;
};

class Counter : public YAML::EventHandler {
 public:
  explicit Counter(const ScanLimits& limits) : limits_(limits) {}
  size_t nodes() const { return nodes_; }

  void OnDocumentStart(const YAML::Mark& mark) override {
    anchors_.clear();  // anchors are per document
    mark_ = mark;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override { leaf(mark, anchor); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                const std::string&) override {
    leaf(mark, anchor);
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    mark_ = mark;
    auto it = anchors_.find(anchor);
    // An alias inside the node it names (a cycle) is not expanded by the schema walk, which
    // only goes as deep as the schema.
    alias_ = true;
    add(it == anchors_.end() ? 1 : it->second);
    alias_ = false;
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    open(mark, anchor);
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    open(mark, anchor);
  }
  void OnMapEnd() override { close(); }

 private:
  struct Open {
    size_t nodes_before;
    YAML::anchor_t anchor;
  };

  void leaf(const YAML::Mark& mark, YAML::anchor_t anchor) {
    mark_ = mark;
    add(1);
    if (anchor) anchors_[anchor] = 1;
  }
  void open(const YAML::Mark& mark, YAML::anchor_t anchor) {
    mark_ = mark;
    if (open_.size() >= limits_.max_depth)
      throw Stop{mark, "nested deeper than " + std::to_string(limits_.max_depth) +
                           " levels, the most a policy file may nest"};
    open_.push_back({nodes_, anchor});
    add(1);
  }
  void close() {
    Open o = open_.back();
    open_.pop_back();
    if (o.anchor) anchors_[o.anchor] = nodes_ - o.nodes_before;
  }
  void add(size_t n) {
    nodes_ += n;
    size_t stated = limits_.stated_nodes ? limits_.stated_nodes : limits_.max_nodes;
    if (nodes_ > limits_.max_nodes)
      throw Stop{mark_, alias_ ? "aliases expand to more than " + std::to_string(stated) +
                                     " YAML nodes, the most a policy may hold; refused"
                               : "more than " + std::to_string(stated) +
                                     " YAML nodes, the most a policy may hold; refused"};
    if ((++events_ & 4095) == 0 && std::chrono::steady_clock::now() > limits_.deadline)
      throw Stop{mark_, "reading the policy took longer than its time limit"};
  }

  const ScanLimits& limits_;
  size_t nodes_ = 0;
  size_t events_ = 0;
  bool alias_ = false;  // the nodes being added are an alias's expansion
  YAML::Mark mark_ = YAML::Mark::null_mark();
  std::vector<Open> open_;
  std::unordered_map<YAML::anchor_t, size_t> anchors_;
};

}  // namespace

ScanResult scan_yaml(const std::string& text, const ScanLimits& limits) {
  std::istringstream in(text);
  Counter counter(limits);
  ScanResult out;
  try {
    YAML::Parser parser(in);
    while (parser.HandleNextDocument(counter)) {
    }
  } catch (const Stop& s) {
    out.problem = ScanProblem{s.mark, s.message};
  } catch (const YAML::Exception& e) {
    out.problem = ScanProblem{e.mark, "invalid YAML: " + e.msg};
  }
  out.nodes = counter.nodes();
  return out;
}

}  // namespace rl::policy::detail
