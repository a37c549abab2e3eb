// SPDX-License-Identifier: GPL-2.0-only
#include "common/log.h"
#include "daemon/handlers/handlers.h"

namespace rl::daemon::handlers {

namespace {
constexpr uint64_t kMaxTtlSeconds = 3650ULL * 24 * 3600;

// The earlier of two expiries, 0 standing for none.
uint64_t earliest(uint64_t a, uint64_t b) { return !a || (b && b < a) ? b : a; }

const char* list_name(uint32_t flags) {
  return flags & RL_SRC_F_ALLOW ? control::kAllowList : control::kDenyList;
}

}  // namespace

std::string ttl_problem(uint64_t ttl_seconds, const std::string& what) {
  if (ttl_seconds <= kMaxTtlSeconds) return "";
  return "ttl_seconds " + std::to_string(ttl_seconds) +
         " is longer than the maximum of 3650 days; leave it out for " + what +
         " that does not expire";
}

Json acl_add(RuntimeLists& lists, const Clock& clock, const Json& args, RuntimeExpiry* expiry) {
  auto req = args.get<control::AclAddRequest>();
  auto p = Prefix::parse(req.cidr);
  if (!p) return control::fail(p.error().message);
  const bool allow = req.list == control::kAllowList;
  if (!allow && req.list != control::kDenyList) return control::fail("list must be allow or deny");
  uint64_t ttl = req.ttl_seconds;
  if (std::string why = ttl_problem(ttl, "an entry"); !why.empty()) return control::fail(why);
  uint64_t expires = ttl ? clock.now_ns() + ttl * 1'000'000'000ULL : 0;
  if (auto s = lists.runtime_acl_set(*p, allow ? RL_SRC_F_ALLOW : RL_SRC_F_DENY, expires); !s)
    return control::fail(s.error().str());
  if (expiry) expiry->added(expires);
  log::info("runtime entry added",
            {{"list", req.list}, {"prefix", p->str()}, {"ttl_seconds", std::to_string(ttl)}});
  return control::ok(control::AclAddResponse{req.list, p->str(), ttl});
}

Json acl_del(RuntimeLists& lists, const Json& args) {
  auto req = args.get<control::AclDelRequest>();
  auto p = Prefix::parse(req.cidr);
  if (!p) return control::fail(p.error().message);
  auto found = lists.runtime_acl_find(*p);
  if (!found) return control::fail(found.error().str());
  const std::string& list = req.list;
  if (!*found ||
      (!list.empty() && (list == control::kAllowList) != bool((*found)->flags & RL_SRC_F_ALLOW)))
    return control::fail("no runtime " + (list.empty() ? std::string("") : list + " ") + "entry " +
                         p->str());
  if (auto s = lists.runtime_acl_remove(*p); !s) return control::fail(s.error().str());
  log::info("runtime entry removed", {{"prefix", p->str()}});
  return control::ok(control::AclDelResponse{p->str()});
}

Json acl_list(const RuntimeLists& lists, const Clock& clock) {
  auto entries = lists.runtime_acl_list();
  if (!entries) return control::fail(entries.error().str());
  uint64_t now = clock.now_ns();
  control::AclListResponse out;
  for (const auto& e : *entries) {
    if (e.expires_ns && e.expires_ns <= now) continue;
    std::optional<uint64_t> left;
    if (e.expires_ns) left = (e.expires_ns - now) / 1'000'000'000ULL;
    out.entries.push_back({list_name(e.flags), e.prefix.str(), left});
  }
  return control::ok(out);
}

std::optional<size_t> expire_runtime_entries(RuntimeLists& lists, const Clock& clock,
                                             uint64_t* next_ns) {
  auto entries = lists.runtime_acl_list();
  if (!entries) return std::nullopt;
  uint64_t now = clock.now_ns();
  size_t removed = 0;
  uint64_t next = 0;
  for (const auto& e : *entries) {
    if (e.expires_ns && e.expires_ns <= now && lists.runtime_acl_remove(e.prefix)) {
      removed++;
      log::info("runtime entry expired",
                {{"prefix", e.prefix.str()}, {"list", list_name(e.flags)}});
    } else {
      next = earliest(next, e.expires_ns);  // one that failed to go: the next sweep tries again
    }
  }
  if (next_ns) *next_ns = next;
  return removed;
}

void RuntimeExpiry::added(uint64_t expires_ns) { next_ns_ = earliest(next_ns_, expires_ns); }

size_t RuntimeExpiry::sweep(RuntimeLists& lists, const Clock& clock) {
  if (known_ && (!next_ns_ || clock.now_ns() < next_ns_)) return 0;
  uint64_t next = 0;
  auto removed = expire_runtime_entries(lists, clock, &next);
  if (!removed) return 0;  // not listed: unknown still, the next sweep lists again
  known_ = true;
  next_ns_ = next;
  return *removed;
}

}  // namespace rl::daemon::handlers
