// SPDX-License-Identifier: GPL-2.0-only
#include "traffic.h"

#include <nlohmann/json.hpp>

namespace rl::testing {
namespace {

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", v);
  return buf;
}

// The last non-empty line: the tools print their summary last.
std::string last_line(const std::string& s) {
  size_t end = s.find_last_not_of('\n');
  if (end == std::string::npos) return "";
  size_t begin = s.rfind('\n', end);
  return s.substr(begin == std::string::npos ? 0 : begin + 1, end + 1 - (begin + 1));
}

// A tool in server i's namespace that says "listening" on stderr once it can take traffic.
Result<Process> spawn_listening(const Lab& lab, size_t server, const std::vector<std::string>& argv,
                                const std::string& what) {
  auto p = lab.spawn_in(lab.server_ns(server), argv);
  if (!p) return p.error();
  if (!p->wait_for("listening", std::chrono::seconds(5)))
    return Error{0, what + " did not start: " + p->err()};
  return p;
}

}  // namespace

std::vector<std::string> rlsend_argv(const Pair& pair, const SendSpec& spec) {
  std::string dst = spec.dst;
  if (dst.empty())
    dst = spec.src.find(':') == std::string::npos ? pair.server.ipv4 : pair.server.ipv6;
  std::vector<std::string> a = {RL_RLSEND_PATH, "--quiet"};
  auto opt = [&a](const char* name, std::string value) {
    a.emplace_back(name);
    a.push_back(std::move(value));
  };
  opt("--iface", pair.client.ifname);
  opt("--dst-mac", pair.server.mac);
  opt("--src", spec.src);
  opt("--sources", std::to_string(spec.sources));
  opt("--dst", dst);
  opt("--proto", spec.proto);
  opt("--sport", std::to_string(spec.sport));
  opt("--dport", std::to_string(spec.dport));
  opt("--size", std::to_string(spec.size));
  opt("--count", std::to_string(spec.count));
  opt("--rate", std::to_string(spec.rate));
  opt("--max-seconds", number(spec.max_seconds));
  if (spec.syn) a.emplace_back("--syn");
  if (!spec.fragment.empty()) opt("--fragment", spec.fragment);
  if (spec.vlan) {
    a.emplace_back("--vlan");
    a.push_back(std::to_string(*spec.vlan));
  }
  return a;
}

Result<SendSummary> send(const Lab& lab, size_t server, const SendSpec& spec) {
  return send(lab, lab.pair(server), spec);
}

Result<SendSummary> send(const Lab& lab, const Pair& pair, const SendSpec& spec) {
  auto timeout = std::chrono::milliseconds(static_cast<int64_t>(spec.max_seconds * 1000) + 5000);
  Output out = lab.run(lab.client_ns(), rlsend_argv(pair, spec), timeout);
  if (!out.ok()) return Error{0, "rlsend: " + out.describe()};
  return parse_send_summary(out.out);
}

Result<SendSummary> parse_send_summary(const std::string& text) {
  try {
    auto j = nlohmann::json::parse(last_line(text));
    return SendSummary{j.at("sent").get<uint64_t>(), j.at("errors").get<uint64_t>(),
                       j.at("seconds").get<double>()};
  } catch (const nlohmann::json::exception& e) {
    return Error{0, std::string("rlsend summary '") + text + "': " + e.what()};
  }
}

Result<Process> start_sink(const Lab& lab, size_t server, const SinkSpec& spec) {
  return spawn_listening(
      lab, server,
      {RL_UDP_SINK_PATH, "--port", std::to_string(spec.port), "--seconds", number(spec.seconds),
       "--expect", std::to_string(spec.expect), "--idle-ms", std::to_string(spec.idle_ms)},
      "udp_sink");
}

Result<SinkSummary> finish_sink(Process& sink, std::chrono::milliseconds timeout) {
  Output out = sink.wait(timeout);
  if (!out.ok()) return Error{0, "udp_sink: " + out.describe()};
  return parse_sink_summary(out.out);
}

Result<SinkSummary> parse_sink_summary(const std::string& text) {
  try {
    auto j = nlohmann::json::parse(last_line(text));
    SinkSummary s{j.at("received").get<uint64_t>(),
                  j.at("bytes").get<uint64_t>(),
                  j.at("seconds").get<double>(),
                  {},
                  j.at("source_ports").get<uint64_t>()};
    for (const auto& [src, n] : j.at("sources").items()) s.sources[src] = n.get<uint64_t>();
    return s;
  } catch (const nlohmann::json::exception& e) {
    return Error{0, std::string("udp_sink summary '") + text + "': " + e.what()};
  }
}

Result<Process> start_tcp_server(const Lab& lab, size_t server, const TcpServeSpec& spec) {
  return spawn_listening(
      lab, server,
      {RL_TCP_PEER_PATH, "serve", "--port", std::to_string(spec.port), "--expect",
       std::to_string(spec.expect), "--seconds", number(spec.seconds)},
      "tcp_peer serve");
}

Result<TcpServeSummary> finish_tcp_server(Process& p, std::chrono::milliseconds timeout) {
  Output out = p.wait(timeout);
  if (!out.ok()) return Error{0, "tcp_peer serve: " + out.describe()};
  try {
    auto j = nlohmann::json::parse(last_line(out.out));
    TcpServeSummary s{j.at("accepted").get<uint64_t>(), {}};
    for (const auto& [peer, n] : j.at("peers").items()) s.peers[peer] = n.get<uint64_t>();
    return s;
  } catch (const nlohmann::json::exception& e) {
    return Error{0, "tcp_peer serve summary '" + out.out + "': " + e.what()};
  }
}

Result<TcpConnectSummary> tcp_connect(const Lab& lab, const TcpConnectSpec& spec) {
  auto timeout = std::chrono::milliseconds(static_cast<int64_t>(spec.seconds * 1000) + 5000);
  Output out =
      lab.run(lab.client_ns(),
              {RL_TCP_PEER_PATH, "connect", "--to", spec.to, "--port", std::to_string(spec.port),
               "--count", std::to_string(spec.count), "--seconds", number(spec.seconds)},
              timeout);
  if (!out.ok()) return Error{0, "tcp_peer connect: " + out.describe()};
  try {
    auto j = nlohmann::json::parse(last_line(out.out));
    return TcpConnectSummary{j.at("completed").get<uint64_t>(), j.at("failed").get<uint64_t>(),
                             j.at("seconds").get<double>()};
  } catch (const nlohmann::json::exception& e) {
    return Error{0, "tcp_peer connect summary '" + out.out + "': " + e.what()};
  }
}

}  // namespace rl::testing
