// SPDX-License-Identifier: GPL-2.0-only
// rlctl's text output: each command's response as the tables and lines it prints without -o
// json. Pure functions of the response, so that tests render them without an rld.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <type_traits>

#include "control/protocol.h"

namespace rlctl {

namespace proto = rl::control;

// A number as a table cell: a float with one decimal, "-" for none.
std::string num(double v);
template <class T>
requires std::is_integral_v<T> std::string num(T v) { return std::to_string(v); }
template <class T>
std::string num(const std::optional<T>& v) {
  return v ? num(*v) : "-";
}

// Unix seconds as local date and time ("2026-12-07 17:02:11").
std::string local_time(int64_t unix_seconds);

void render_status(const proto::StatusResponse& d, std::ostream& out);
// rlctl status's exit status: kExitOk while rld is ready, kExitNotReady (4) while it is not.
int status_exit_code(const proto::StatusResponse& d);
void render_attach(const std::string& interface, const proto::AttachResponse& d, std::ostream& out);
void render_detach(const std::string& interface, std::ostream& out);
void render_policy_list(const proto::PolicyListResponse& d, std::ostream& out);
void render_policy_show(const proto::PolicyShowResponse& d, std::ostream& out);
void render_policy_diff(const proto::PolicyDiffResponse& d, std::ostream& out);
void render_policy_apply(const proto::ReloadResponse& d, std::ostream& out);
void render_policy_reload(const proto::ReloadResponse& d, std::ostream& out);
void render_acl_add(const std::string& list, const proto::AclAddResponse& d, std::ostream& out);
void render_acl_del(const proto::AclDelResponse& d, std::ostream& out);
// The entries given (rlctl allow list: the allow list's only).
void render_acl_list(const proto::AclListResponse& d, std::ostream& out);
// "added override of rule web limit web for 198.18.0.0/16: 1000/s, burst 2000"
void render_override(const char* verb, const proto::OverrideView& v, std::ostream& out);
void render_override_list(const proto::OverrideListResponse& d, std::ostream& out);
void render_unblock(const proto::UnblockResponse& d, std::ostream& out);
void render_top_drops(const proto::TopDropsResponse& d, std::ostream& out);
void render_top_traffic(const proto::TopTrafficResponse& d, std::ostream& out);
void render_key_show(const proto::KeyShowResponse& d, std::ostream& out);
void render_stats(const proto::StatsResponse& d, std::ostream& out);
void render_cluster_status(const proto::ClusterStatusResponse& d, std::ostream& out);

}  // namespace rlctl
