// SPDX-License-Identifier: GPL-2.0-only
#include "sender_options.h"

#include <net/if.h>

#include "lab_range.h"

namespace rl::lab {

void add_sender_options(CLI::App& app, const SenderLimits& limits, SenderRaw& raw,
                        SenderOptions& o) {
  app.add_option("--iface", o.iface, "Interface to send on (the sending end of a veth)")
      ->required();
  app.add_option("--dst-mac", raw.dst_mac, "Destination MAC (the receiving interface's)")
      ->required();
  app.add_option("--src", raw.src, "Source address, or a CIDR prefix to draw --sources from")
      ->required();
  app.add_option("--sources", raw.sources, limits.sources_help);
  app.add_option("--dst", raw.dst, "Destination address")->required();
  app.add_option("--dport", raw.dport, "Destination port (default 9)");
  app.add_option("--sport", raw.sport, "Source port (default 40000)");
  app.add_option("--count", raw.count, "Frames to send")->required();
  app.add_option("--rate", raw.rate, limits.rate_help);
  app.add_option("--max-seconds", o.max_seconds,
                 "Stop after this long (default 10, max " +
                     std::to_string(static_cast<int>(limits.max_seconds)) + ")");
  app.add_flag("--quiet", o.quiet, "Only the JSON summary and fatal errors");
}

Status validate_sender(const SenderRaw& raw, const SenderLimits& limits, SenderOptions& o) {
  if (o.iface.empty() || o.iface.size() >= IFNAMSIZ)
    return Error{0, "--iface '" + o.iface + "' is not a valid interface name"};
  auto mac = parse_mac(raw.dst_mac);
  if (!mac) return mac.error().wrap("--dst-mac");
  o.dst_mac = *mac;

  if (auto s = parse_lab_addresses(raw.src, raw.dst, o.src, o.dst); !s) return s;
  if (auto s = in_range("--sources", raw.sources, 1, limits.max_sources, o.sources); !s) return s;
  if (auto s = in_range("--sport", raw.sport, 0, 65535, o.sport); !s) return s;
  if (auto s = in_range("--dport", raw.dport, 0, 65535, o.dport); !s) return s;
  if (auto s = in_range("--count", raw.count, 1, limits.max_count, o.count); !s) return s;
  if (auto s = in_range("--rate", raw.rate, 0, limits.max_rate, o.rate); !s) return s;
  if (!(o.max_seconds > 0 && o.max_seconds <= limits.max_seconds))
    return Error{0, "--max-seconds must be in (0, " +
                        std::to_string(static_cast<int>(limits.max_seconds)) + "]"};
  return {};
}

Status parse_command_line(CLI::App& app, int argc, char** argv, std::optional<std::string>& help) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success&) {
    help = app.help();
  } catch (const CLI::ParseError& e) {
    return Error{0, e.what()};
  }
  return {};
}

}  // namespace rl::lab
