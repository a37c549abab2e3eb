// SPDX-License-Identifier: GPL-2.0-only
#include "daemon/daemon.h"

#include <sys/epoll.h>
#include <sys/inotify.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <set>

#include "common/clock.h"
#include "common/log.h"
#include "daemon/config/check_config.h"
#include "daemon/handlers/handlers.h"
#include "daemon/handlers/key_show.h"
#include "daemon/metrics_snapshot.h"
#include "daemon/service/kernel_floor.h"
#include "daemon/service/loop_priority.h"
#include "daemon/service/notify.h"
#include "datapath/pin_lock.h"
#include "datapath/pin_scope.h"
#include "datapath/pins.h"
#include "metrics/exporter.h"

namespace rl::daemon {
namespace fs = std::filesystem;
using control::Json;

namespace {

// Why rld did not start: the load's errors, each "file:line:col: error: ...", the first few.
std::string startup_policy_error(const std::string& dir, const std::vector<std::string>& errors) {
  constexpr size_t kShown = 5;
  std::string out = "no valid policy in " + dir;
  for (size_t i = 0; i < errors.size() && i < kShown; i++) out += (i ? "; " : ": ") + errors[i];
  if (errors.size() > kShown)
    out += "; and " + std::to_string(errors.size() - kShown) + " more (rld --check-config)";
  return out;
}

// What the event loop reads from its signalfd; blocked everywhere else.
sigset_t loop_signals() {
  sigset_t mask;
  sigemptyset(&mask);
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&mask, sig);
  return mask;
}

}  // namespace

Daemon::Daemon(Config cfg) : cfg_(std::move(cfg)) { register_handlers(); }

Daemon::~Daemon() {
  if (listen_) ::unlink(cfg_.control_socket.c_str());
}

Result<std::unique_ptr<Daemon>> Daemon::start(const Config& cfg) {
  std::unique_ptr<Daemon> d(new Daemon(cfg));
  if (auto s = d->init(); !s) {
    // The directories this start made go again, still under its lock, unless something was
    // pinned in them: a failed first start leaves the pin root as it found it.
    remove_made_dirs(d->made_pin_dirs_);
    return s.error();
  }
  return d;
}

Status Daemon::init() {
  // Before anything is loaded: an older kernel fails the load with an error that does not say why.
  if (auto s = check_kernel_floor(); !s) return s;
  if (cfg_.interfaces.empty()) log::warn(kNoInterfaceWarning);
  if (auto s = make_cluster_store(); !s) return s;
  if (auto s = block_signals(); !s) return s;
  if (auto s = claim_pin_root(); !s) return s;
  if (auto s = load_datapath(); !s) return s;
  if (auto s = make_policy_manager(); !s) return s;
  if (auto s = load_first_policy(); !s) return s;
  // Attach after the first policy is in place, so the program never runs a half-set state.
  if (auto s = attach_interfaces(); !s) return s;
  if (auto s = take_over_replaced_pins(); !s) return s;
  start_event_logs();
  if (cfg_.cluster_enabled())
    if (auto s = start_cluster(); !s) return s;
  start_key_usage();
  if (auto s = start_metrics(); !s) return s;
  if (auto s = open_event_loop(); !s) return s;
  rates_.sample(*dp_, policies_->rules(), std::chrono::steady_clock::now());
  return {};
}

// Blocked before any thread starts (the metrics endpoint's, the cluster sync's): threads
// inherit the mask, so the signals wait for signalfd on the event loop instead of killing the
// process by their default action in whichever thread the kernel picks.
Status Daemon::block_signals() {
  sigset_t mask = loop_signals();
  if (sigprocmask(SIG_BLOCK, &mask, nullptr) != 0) return errno_error("block signals");
  return {};
}

Status Daemon::claim_pin_root() {
  auto made = prepare_pin_root(cfg_.pin_root);
  if (!made) return made.error();
  if (auto scope = pin_scope(cfg_.pin_root); scope && scope->private_pins()) {
    pin_warning_ = scope->warning(cfg_.pin_root);
    log::warn(pin_warning_, {{"pin_root", cfg_.pin_root}});
  }
  // Before anything is loaded, pinned or bound: a second rld must leave the first one alone.
  auto lock = lock_pin_root(cfg_.pin_root);
  // Another rld's: the directories are its now, even those this start made.
  if (!lock) return lock.error();
  pin_lock_ = std::move(*lock);
  made_pin_dirs_ = std::move(*made);
  return {};
}

Status Daemon::load_datapath() {
  LoadOptions lo;
  lo.key_capacity = cfg_.key_capacity;
  lo.max_rules = rule_capacity(cfg_);
  lo.key_table_full = cfg_.key_table_full;
  lo.pin_root = cfg_.pin_root;
  lo.traffic_sample_shift = cfg_.traffic_sample_shift;
  auto dp = BpfDatapath::load(lo);
  if (!dp) return dp.error().wrap("load data path");
  dp_ = std::move(*dp);
  return {};
}

// The policy manager, with the rule ids and rules of a pinned data path it adopts.
Status Daemon::make_policy_manager() {
  compiler::RuleIds ids;
  if (dp_->adopted()) {
    auto adopted = dp_->rule_ids();
    if (!adopted) return adopted.error().wrap("read the rule set in force");
    ids = *adopted;
    log::info("adopted pinned data path",
              {{"pin_root", cfg_.pin_root},
               {"rules", std::to_string(ids.by_name.size())},
               {"key_capacity", std::to_string(dp_->key_sets() * RL_WAYS)}});
  }
  compiler::CompileOptions co;
  co.coarse_clock_ns = coarse_clock_resolution_ns().value_or(co.coarse_clock_ns);
  co.cpus = static_cast<uint32_t>(std::max(libbpf_num_possible_cpus(), 1));
  co.cluster_nodes = std::max<uint32_t>(cfg_.cluster_nodes, 1);
  co.source_prefixes = cfg_.source_prefixes;
  co.max_rules = rule_capacity(cfg_);
  policies_ = std::make_unique<PolicyManager>(*dp_, cfg_.policy_dir, co, ids);
  synproxy_.enable(!cfg_.interfaces.empty() || !pinned_links(cfg_.pin_root).empty());
  policies_->add_hooks(&synproxy_);
  connections_ = std::make_unique<ConnectionWatch>(*dp_);
  policies_->add_hooks(connections_.get());
  auto overrides = OverrideBook::open(
      *dp_, *dp_, [this] { return policies_->rules(); }, co);
  if (!overrides) return overrides.error();
  overrides_ = std::move(*overrides);
  overrides_->carry(dp_->carried_overrides());
  policies_->add_hooks(overrides_.get());
  if (!dp_->adopted()) return {};
  auto in_force = dp_->active_rules();
  if (!in_force) return in_force.error().wrap("read the rule set in force");
  std::vector<RuleView> views;
  for (const auto& [name, r] : *in_force) {
    RuleView v{name, r, {}};
    v.rule.name = name;
    v.rule.action =
        r.action == RL_ACTION_MONITOR ? policy::Action::kMonitor : policy::Action::kDrop;
    views.push_back(std::move(v));
  }
  policies_->adopt(std::move(views));
  return {};
}

// On the worker like every load, so that its time limit holds; nothing else runs yet. With
// nothing in force, a directory without policy files is an explicit empty rule set; a data
// path of another layout may hold rules, which an empty directory must not replace.
Status Daemon::load_first_policy() {
  ReloadReport first;
  policies_->set_empty_directory_applies(!dp_->adopted() && !dp_->replaced_abi());
  request_reload("startup", true, [&first](const ReloadReport& r) { first = r; });
  loads_->drain();
  policies_->set_empty_directory_applies(false);
  // Across layouts the old program still enforces its rules: say so, not just that none load.
  if (auto s = refuse_unruled_replacement(first); !s) return s;
  if (!first.ok && !dp_->adopted()) {
    // Nothing would be enforced: fail the start, visibly, rather than run open. Nothing is
    // attached yet; the maps this start pinned go too, or the next start would adopt them.
    if (auto s = dp_->unpin_fresh_maps(); !s)
      log::warn("pinned maps left behind", {{"error", s.error().str()}});
    return Error{kNotConfiguredErrno, startup_policy_error(cfg_.policy_dir, first.errors)};
  }
  if (!first.ok)
    log::warn(
        "degraded: the policy did not load; the rule set adopted from the pinned state "
        "stays in force until a valid policy replaces it",
        {{"dir", cfg_.policy_dir},
         {"rules", std::to_string(policies_->rule_count())},
         {"errors", std::to_string(first.errors.size())},
         {"first", first.errors.empty() ? "" : first.errors.front()}});
  return {};
}

Status Daemon::take_over_replaced_pins() {
  uint32_t old = dp_->replaced_abi();
  if (!old) return {};
  // Every interface now runs the new program (bpf_link_update in attach_interfaces): only now
  // do the old program's maps lose their pins. Per-key state does not carry across layouts; the
  // runtime entries did (BpfDatapath::load), unless their layout was unknown.
  if (auto s = dp_->take_over_pins(); !s) return s;
  log::warn("replaced a data path with another layout; per-key state starts fresh",
            {{"old_abi", std::to_string(old)},
             {"new_abi", std::to_string(RL_ABI_VERSION)},
             {"runtime_entries_kept", std::to_string(dp_->carried_runtime_entries())},
             {"overrides_kept", std::to_string(dp_->carried_overrides().size())}});
  if (!dp_->override_carry_error().empty())
    log::error("the runtime overrides of the replaced data path are lost: add them again",
               {{"reason", dp_->override_carry_error()}});
  if (!dp_->runtime_carry_error().empty())
    log::error("the runtime allow/deny entries of the replaced data path are lost: add them again",
               {{"reason", dp_->runtime_carry_error()}});
  return {};
}

void Daemon::start_event_logs() {
  offenders_ = std::make_unique<OffenderLog>(
      dp_->events_fd(), [this](uint32_t id) { return rule_ref(id); },
      [this](uint64_t h) { return dp_->offender_drops(h); }, /*max_log_lines_per_second=*/50,
      cfg_.offender_capacity);
  if (dp_->traffic_sample_shift())
    traffic_ = std::make_unique<TrafficLog>(dp_->samples_fd(), dp_->traffic_sample_shift());
}

// The thread that counts the keys also grows the table to suit them: off the event loop,
// since a doubling waits for a few kernel grace periods. A count can show up to four keys per
// set (a full table), so a table filling up grows fourfold at a time. Between counts it looks
// every 100 ms at the keys the data path inserted since the last one (a per-CPU counter, not
// the table): a flood of new sources grows the table from its smallest to the default
// capacity in a few tenths of a second, where at one count a second its sources met full sets
// (and their prefixes' overflow buckets) for two seconds.
void Daemon::start_key_usage() {
  key_usage_ = std::make_unique<KeyUsageSampler>(
      [this] {
        inserted_at_count_ = keys_inserted();
        auto usage = dp_->key_table_usage(dp_->now_ns());
        grow_key_table(usage.first);
        return usage;
      },
      std::chrono::seconds(1),
      [this](const KeyUsageSampler::Usage& last) {
        // Inserts also reuse idle keys' slots, so this may overstate the keys until the next
        // count: by at most the inserts of one second. Counters unreadable now or at the count,
        // or fewer inserts than then (counters replaced with the maps), say nothing: the next
        // count decides.
        auto inserted = keys_inserted();
        if (!inserted || !inserted_at_count_ || *inserted < *inserted_at_count_) return;
        grow_key_table(last.tracked + (*inserted - *inserted_at_count_));
      },
      std::chrono::milliseconds(100));
}

Status Daemon::start_metrics() {
  if (cfg_.metrics_listen.empty()) return {};
  auto ex = metrics::Exporter::start(
      cfg_.metrics_listen, [this]() { return snapshot(); },
      static_cast<int>(cfg_.metrics_realtime_priority));
  if (!ex) return ex.error().wrap("metrics endpoint");
  exporter_ = std::make_shared<metrics::Exporter>(std::move(*ex));
  log::info("metrics endpoint listening", {{"address", cfg_.metrics_listen}});
  return {};
}

// The event loop's file descriptors, the control socket and its server.
Status Daemon::open_event_loop() {
  epoll_.reset(::epoll_create1(EPOLL_CLOEXEC));
  if (!epoll_) return errno_error("epoll_create1");
  sigset_t mask = loop_signals();
  signals_.reset(::signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK));
  if (!signals_) return errno_error("signalfd");
  if (auto s = watch_policy_dir(); !s)
    log::warn("not watching the policy directory", {{"error", s.error().str()}});
  if (auto s = open_control_socket(); !s) return s;

  auto add = [&](int fd) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = fd;
    return ::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, fd, &ev);
  };
  for (int fd : {signals_.get(), listen_.get(), offenders_->epoll_fd(),
                 traffic_ ? traffic_->epoll_fd() : -1, inotify_.get(), loads_->fd()})
    if (fd >= 0 && add(fd) != 0) return errno_error("epoll_ctl");
  control_ = std::make_unique<ControlServer>(
      epoll_.get(), listen_.get(), [this](const Json& req) { return handle(req); },
      [this](const Json& req, ControlServer::Responder reply) {
        return defer_policy_request(req, std::move(reply));
      });
  return {};
}

// A data path of another layout is pinned and attached, with its rules: the new program replaces
// it only with a policy of its own. Without one the start fails and leaves the old program and
// its pins as they are, still enforcing; a later start (systemd's Restart=) tries again.
Status Daemon::refuse_unruled_replacement(const ReloadReport& first) const {
  if (!dp_->replaced_abi() || first.ok) return {};
  std::string why;
  for (const auto& e : first.errors) why += (why.empty() ? "" : "; ") + e;
  if (why.empty()) why = "no valid policy";
  return Error{kNotConfiguredErrno, "the policy in " + cfg_.policy_dir +
                                        " does not load, so the data path of another layout (ABI " +
                                        std::to_string(dp_->replaced_abi()) + ") pinned under " +
                                        cfg_.pin_root +
                                        " stays attached and enforcing with its own rules: " + why};
}

void Daemon::grow_key_table(uint64_t tracked) {
  if (auto grown = dp_->grow_key_table(tracked); !grown)
    log::warn("key table growth failed", {{"error", grown.error().str()}});
  else if (*grown)
    log::info("key table grew",
              {{"tracked", std::to_string(tracked)},
               {"capacity_in_use", std::to_string(uint64_t{dp_->key_sets_active()} * RL_WAYS)}});
}

std::optional<uint64_t> Daemon::keys_inserted() const {
  auto g = dp_->global_counters();
  if (!g) return std::nullopt;
  return (*g)[RL_GC_KEY_INSERTED].pkts;
}

Status Daemon::watch_policy_dir() {
  inotify_.reset(::inotify_init1(IN_CLOEXEC | IN_NONBLOCK));
  if (!inotify_) return errno_error("inotify_init1");
  std::error_code ec;
  fs::create_directories(cfg_.policy_dir, ec);
  uint32_t mask = IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_CREATE;
  if (::inotify_add_watch(inotify_.get(), cfg_.policy_dir.c_str(), mask) < 0)
    return errno_error("watch " + cfg_.policy_dir);
  watch_set_files();
  return {};
}

void Daemon::watch_set_files() {
  if (!inotify_) return;  // the first load comes before the watches; watch_policy_dir calls this
  std::set<std::string> dirs;
  for (const auto& src : policies_->set_sources())
    dirs.insert(src.directory ? src.path : fs::path(src.path).parent_path().string());
  for (auto it = set_watches_.begin(); it != set_watches_.end();) {
    if (dirs.count(it->first)) {
      ++it;
      continue;
    }
    ::inotify_rm_watch(inotify_.get(), it->second);
    it = set_watches_.erase(it);
  }
  const uint32_t mask =
      IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_CREATE | IN_ATTRIB;
  for (const auto& dir : dirs) {
    if (set_watches_.count(dir) || dir == cfg_.policy_dir) continue;
    int wd = ::inotify_add_watch(inotify_.get(), dir.c_str(), mask);
    if (wd < 0) {
      log::warn("set files' directory not watched: their changes apply on SIGHUP or rlctl reload",
                {{"dir", dir}, {"error", std::strerror(errno)}});
      continue;
    }
    set_watches_[dir] = wd;
  }
}

Status Daemon::open_control_socket() {
  std::error_code ec;
  fs::create_directories(fs::path(cfg_.control_socket).parent_path(), ec);
  // A stale socket from an earlier rld is replaced; anything else at the path is not rld's to
  // remove (one rld per pin root is already ensured, so no live rld owns a socket here).
  struct stat st {};
  if (::lstat(cfg_.control_socket.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode))
      return Error{EEXIST, "control socket " + cfg_.control_socket +
                               " exists and is not a socket: refusing to remove it"};
    ::unlink(cfg_.control_socket.c_str());
  }
  listen_.reset(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!listen_) return errno_error("control socket");
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (cfg_.control_socket.size() >= sizeof(addr.sun_path))
    return Error{ENAMETOOLONG, "control socket path too long"};
  std::memcpy(addr.sun_path, cfg_.control_socket.c_str(), cfg_.control_socket.size() + 1);
  mode_t old = ::umask(0077);  // created 0600: the socket steers the kernel's filter
  int rc = ::bind(listen_.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  ::umask(old);
  if (rc != 0) return errno_error("bind " + cfg_.control_socket);
  if (::listen(listen_.get(), 16) != 0) return errno_error("listen " + cfg_.control_socket);
  return {};
}

int Daemon::run() {
  // Here, on the loop's thread, once every other thread has started at the default.
  auto raised =
      raise_loop_priority({static_cast<int>(cfg_.loop_realtime_priority), cfg_.loop_nice});
  if (raised)
    loop_priority_ = *raised;
  else
    log::warn("event loop left at the default priority: replies may wait behind a flood",
              {{"error", raised.error().str()}});
  log::info("rld running", {{"policy_dir", cfg_.policy_dir},
                            {"control_socket", cfg_.control_socket},
                            {"event_loop", loop_priority_}});
  // Degraded, rld still tells systemd it is up: it enforces the adopted rule set and answers
  // rlctl, and a start that never became ready would be killed. STATUS= and /readyz say what
  // is wrong.
  notify::ready(systemd_status());
  epoll_event events[16];
  bool drain = false;          // the offender ring held more than a batch at the last poll
  bool drain_samples = false;  // the same for the traffic samples
  while (!stop_) {
    notify::loop_tick();
    int timeout = drain || drain_samples ? 0 : 1000;
    for (auto at :
         {reload_pending_ ? std::optional(reload_at_) : std::nullopt, loads_->deadline()}) {
      if (!at) continue;
      auto left =
          std::chrono::ceil<std::chrono::milliseconds>(*at - std::chrono::steady_clock::now());
      timeout = static_cast<int>(std::max<int64_t>(0, std::min<int64_t>(left.count(), timeout)));
    }
    if (int c = control_->expire(std::chrono::steady_clock::now()); c >= 0)
      timeout = std::min(timeout, c);
    int n = ::epoll_wait(epoll_.get(), events, 16, timeout);
    if (n < 0 && errno != EINTR) {
      log::error("epoll_wait failed", {{"error", std::strerror(errno)}});
      return 1;
    }
    bool reports = drain;
    for (int i = 0; i < n; i++) {
      int fd = events[i].data.fd;
      if (fd == signals_.get()) {
        signalfd_siginfo si{};
        while (::read(signals_.get(), &si, sizeof(si)) == sizeof(si)) {
          if (si.ssi_signo == SIGHUP) {
            request_reload("SIGHUP", true);
          } else {
            log::info("stopping", {{"signal", std::to_string(si.ssi_signo)}});
            notify::stopping();
            stop_ = true;
          }
        }
      } else if (control_->owns(fd)) {
        control_->on_event(fd, events[i].events);
      } else if (fd == inotify_.get()) {
        on_inotify();
      } else if (fd == loads_->fd()) {
        loads_->on_ready();
      } else if (offenders_ && fd == offenders_->epoll_fd()) {
        reports = true;
      }
    }
    // One bounded batch per turn, after signals and the control socket: a flood of reports
    // delays them by one batch at most.
    drain = reports && !stop_ && offenders_->poll();
    // The data path wakes rld for samples only once a batch waits (bpf/lib/sample.h): they
    // are read on every turn, at least once a second.
    drain_samples = traffic_ && !stop_ && traffic_->poll();
    if (reload_pending_ && std::chrono::steady_clock::now() >= reload_at_) {
      reload_pending_ = false;
      request_reload("inotify", /*force=*/false);
    }
    loads_->check_deadline();
    if (std::chrono::steady_clock::now() - last_housekeeping_ >= std::chrono::seconds(1))
      housekeeping();
  }
  if (cfg_.detach_on_exit) {
    for (const auto& [ifname, a] : attachments()) {
      auto s = detach_xdp(ifname, cfg_.pin_root);
      log::info(s ? "detached" : "detach failed", {{"interface", ifname}});
    }
    if (auto s = SynProxy::remove(cfg_.netfilter_sysctl_dir); !s) log::error(s.error().str());
  }
  return 0;
}

void Daemon::on_inotify() {
  char buf[4096];
  while (::read(inotify_.get(), buf, sizeof(buf)) > 0) {
  }
  // Editors write, rename and delete in bursts: reload once the directory is quiet.
  reload_pending_ = true;
  reload_at_ =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(cfg_.reload_debounce_ms);
}

std::string Daemon::systemd_status() {
  Readiness r = readiness(status_model());
  std::string text = r.ready
                         ? "enforcing on " + std::to_string(attachments().size()) +
                               " interfaces, " + std::to_string(policies_->rule_count()) + " rules"
                         : "NOT READY: " + r.reasons.front();
  notify_status_ = text;
  return text;
}

void Daemon::housekeeping() {
  last_housekeeping_ = std::chrono::steady_clock::now();
  // systemctl status shows the last STATUS=: kept in step with readiness.
  if (std::string before = notify_status_; systemd_status() != before)
    notify::status(notify_status_);
  // Expired runtime entries no longer apply in the kernel; remove them from the maps, listing
  // them only once one may have expired.
  runtime_expiry_.sweep(*dp_, *dp_);
  overrides_->sweep();
  if (connections_ && last_housekeeping_ - last_tables_check_ >= std::chrono::seconds(5)) {
    last_tables_check_ = last_housekeeping_;
    connections_->restore();
    synproxy_.restore();
  }
  if (last_housekeeping_ - rates_.last() >= std::chrono::seconds(5))
    rates_.sample(*dp_, policies_->rules(), last_housekeeping_);
}

Json Daemon::handle(const Json& req) { return handlers_.dispatch(req); }

// Every command rld answers on the spot; policy.reload, .diff and .apply load on the worker
// (defer_policy_request) and are answered when their load is done.
void Daemon::register_handlers() {
  auto& h = handlers_;
  h.add<control::Status>([this](const Json&) { return cmd_status(); });
  h.add<control::Attach>([this](const Json& a) { return cmd_attach(a); });
  h.add<control::Detach>([this](const Json& a) { return cmd_detach(a); });
  h.add<control::PolicyList>(
      [this](const Json&) { return handlers::policy_list(policies_->rules()); });
  h.add<control::PolicyShow>(
      [this](const Json& a) { return handlers::policy_show(*dp_, policies_->rules(), a); });
  h.add<control::AclAdd>(
      [this](const Json& a) { return handlers::acl_add(*dp_, *dp_, a, &runtime_expiry_); });
  h.add<control::AclDel>([this](const Json& a) { return handlers::acl_del(*dp_, a); });
  h.add<control::AclList>([this](const Json&) { return handlers::acl_list(*dp_, *dp_); });
  h.add<control::OverrideAdd>([this](const Json& a) {
    return handlers::override_add(*overrides_, policies_->rules(), *dp_, a);
  });
  h.add<control::OverrideDel>([this](const Json& a) {
    return handlers::override_del(*overrides_, policies_->rules(), *dp_, a);
  });
  h.add<control::OverrideList>([this](const Json&) {
    return handlers::override_list(*overrides_, policies_->rules(), *dp_);
  });
  h.add<control::Unblock>(
      [this](const Json& a) { return handlers::unblock(*dp_, policies_->rules(), a); });
  h.add<control::Top>([this](const Json& a) {
    return handlers::top(
        *offenders_, traffic_.get(), [this](uint32_t id) { return rule_ref(id); }, *dp_, a);
  });
  h.add<control::KeyShow>([this](const Json& a) {
    return key_show(*dp_, policies_->rules(), *offenders_, a, overrides_.get());
  });
  h.add<control::Stats>([this](const Json&) {
    rates_.sample(*dp_, policies_->rules(), std::chrono::steady_clock::now());
    return handlers::stats(*dp_, policies_->rules(), rates_);
  });
  h.add<control::ClusterStatus>(
      [this](const Json&) { return handlers::cluster_status(cluster_.get(), cfg_.node_name); });
}

StatusModel Daemon::status_model() const {
  StatusModel m;
  m.version = RL_VERSION;
  m.policy_dir = cfg_.policy_dir;
  m.pin_root = cfg_.pin_root;
  m.pin_warning = pin_warning_;
  m.uptime =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - started_);
  m.last_reload = policies_->last();
  m.last_good_reload = policies_->last_success();
  m.reloads_ok = policies_->reloads_ok();
  m.reloads_failed = policies_->reloads_failed();
  m.rules = policies_->rule_count();
  m.sets = policies_->sets();
  m.data_path_generation = dp_->active_generation();
  m.adopted = dp_->adopted();
  m.configured_interfaces = cfg_.interfaces;
  for (const auto& [name, a] : attachments()) {
    auto mode = attached_mode(name);
    m.interfaces.push_back({name, mode ? *mode : a.mode});
  }
  m.keys = key_usage_->latest();
  m.keys_capacity = static_cast<uint64_t>(dp_->key_sets()) * RL_WAYS;
  m.keys_capacity_in_use = static_cast<uint64_t>(dp_->key_sets_active()) * RL_WAYS;
  return m;
}

Json Daemon::cmd_status() {
  StatusModel m = status_model();
  // Only the loop thread reads these: it writes them.
  m.event_loop = loop_priority_;
  m.reload_running = loads_->running();
  return control::ok(status_json(m));
}

RuleRef Daemon::rule_ref(uint32_t id) const { return handlers::rule_ref(policies_->rules(), id); }

Result<metrics::Snapshot> Daemon::snapshot() const {
  std::optional<ClusterStats> cluster;
  if (cluster_) cluster = cluster_->stats();
  auto s = metrics_snapshot(
      *dp_, *dp_, *dp_, [this] { return policies_->rules(); }, status_model(), cluster);
  if (s)
    for (const auto& [rule, n] : overrides_->per_rule()) s->overrides[rule] = n;
  if (s && connections_)
    s->connections = {connections_->tracked(), connections_->events_lost(), connections_->errors()};
  return s;
}

}  // namespace rl::daemon
