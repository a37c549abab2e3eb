// SPDX-License-Identifier: GPL-2.0-only
// Reading a rule's `match:`: which packets the rule applies to.
#include <algorithm>
#include <cctype>

#include "policy/fragment.h"
#include "policy/protocols.h"

namespace rl::policy::detail {

// Function-local statics: the rule schema, a global of another file, reads these while it is
// constructed.
const std::vector<std::string>& transport_field_names() {
  static const std::vector<std::string> names{
      "ports", "port", "source_ports", "source_port", "tcp_flags", "icmp_types", "icmp_codes"};
  return names;
}

const std::vector<std::string>& match_field_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out{"sources", "destinations", "destination", "protocol"};
    const auto& transport = transport_field_names();
    out.insert(out.end(), transport.begin(), transport.end());
    out.insert(out.end(), {"ttl", "length", "fragment"});
    return out;
  }();
  return names;
}

namespace {

const Schema kMatchSchema{"in match",
                          match_field_names(),
                          {{{"name", "priority", "limit", "key", "prefix", "action", "block",
                             "report", "cluster", "syn_cookies"},
                            "it belongs to the rule, one level up"},
                           {{"algorithm", "rate", "burst"}, "it belongs under limit:"}}};

void read_sources(Reader& r, const Field& f, RuleDraft& d) {
  if (!expect_list(r, f, "sources must be a list of CIDRs or set names")) return;
  if (f.value.size() == 0) {
    r.error(f.at, "sources must not be empty (leave it out to match any source)");
    return;
  }
  d.sources_at = f.at;
  for (const auto& item : f.value) {
    SourceLocation at = r.at(item);
    auto entry = read_cidr_or_set(r, item, at, "sources entries must be CIDRs or set names");
    if (!entry) continue;
    if (!entry->prefix)
      d.set_refs.push_back(SetRef{entry->set, at});
    else if (std::find(d.inline_prefixes.begin(), d.inline_prefixes.end(), *entry->prefix) ==
             d.inline_prefixes.end())
      d.inline_prefixes.push_back(*entry->prefix);
  }
}

// A destination is an address or a CIDR (no set names: sets hold sources).
void read_destination(Reader& r, const YAML::Node& node, const SourceLocation& at, Match& m) {
  const std::string type_error = "destinations entries must be addresses or CIDRs";
  auto text = scalar(r, node, at, type_error);
  if (!text) return;
  if (!looks_like_address(*text)) {
    r.error(at, "destination '" + *text +
                    "' is not an address or CIDR (set names are for sources); " + type_error +
                    " like 192.0.2.10 or 2001:db8::/64");
    return;
  }
  auto prefix = Prefix::parse(*text);
  if (!prefix) {
    r.error(at, prefix.error().message);
    return;
  }
  if (std::find(m.destinations.begin(), m.destinations.end(), *prefix) != m.destinations.end()) {
    r.error(at, "destination " + prefix->str() + " is listed twice");
    return;
  }
  m.destinations.push_back(*prefix);
}

// `destination: CIDR` or `destinations: [CIDR, ...]`, like port and ports.
void read_destinations(Reader& r, const Field* many, const Field* one, Match& m) {
  if (many && one) {
    auto after = [](const SourceLocation& a, const SourceLocation& b) {
      return a.line != b.line ? a.line > b.line : a.column > b.column;
    };
    r.error((after(many->key_at, one->key_at) ? many : one)->key_at,
            "use either destination or destinations, not both");
    return;
  }
  if (one) {
    read_destination(r, one->value, one->at, m);
    return;
  }
  if (!expect_list(r, *many, "destinations must be a list of addresses or CIDRs")) return;
  if (many->value.size() == 0) {
    r.error(many->at, "destinations must not be empty (leave it out to match any destination)");
    return;
  }
  for (const auto& item : many->value) read_destination(r, item, r.at(item), m);
}

std::optional<uint8_t> read_protocol(Reader& r, const Field& f) {
  const std::string expected = "protocol must be tcp, udp, icmp, icmpv6 or a number 0-255";
  auto text = scalar(r, f, expected);
  if (!text) return std::nullopt;
  if (auto n = parse_int(*text)) {
    if (*n < 0 || *n > 255) {
      r.error(f.at, "protocol " + *text + " is out of range (0-255)");
      return std::nullopt;
    }
    return static_cast<uint8_t>(*n);
  }
  if (auto n = protocol_number(*text)) return n;
  r.error(f.at, "unknown protocol '" + *text + "'" + did_you_mean(*text, protocol_names()) + "; " +
                    expected);
  return std::nullopt;
}

// What a range of values is checked against: its name in messages, its bounds, an example.
struct RangeKind {
  std::string name;
  int64_t lo;
  int64_t hi;
  std::string example;
};
const RangeKind kPortKind{"port", 1, 65535, "8000-8100"};
const RangeKind kTtlKind{"ttl", 0, 255, "0-2"};
const RangeKind kIcmpCodeKind{"icmp code", 0, 255, "0-3"};
const RangeKind kLengthKind{"length", 0, 65535, "0-64"};

// A value or a range "first-last" of `kind`.
std::optional<PortRange> read_range(Reader& r, const YAML::Node& node, const SourceLocation& at,
                                    const std::string& many, const RangeKind& kind) {
  const std::string bounds = std::to_string(kind.lo) + "-" + std::to_string(kind.hi);
  auto text = scalar(r, node, at,
                     many + " entries must be a " + kind.name + " or a range like " + kind.example);
  if (!text) return std::nullopt;
  std::string first_text = *text, last_text = *text;
  if (auto dash = text->find('-'); dash != std::string::npos && dash > 0) {
    first_text = text->substr(0, dash);
    last_text = text->substr(dash + 1);
  }
  auto trim = [](std::string s) {
    s.erase(0, s.find_first_not_of(' '));
    s.erase(s.find_last_not_of(' ') + 1);
    return s;
  };
  auto first = parse_int(trim(first_text)), last = parse_int(trim(last_text));
  if (!first || !last) {
    r.error(at, "invalid " + kind.name + " '" + *text + "': use a number " + bounds +
                    " or a range like " + kind.example);
    return std::nullopt;
  }
  for (int64_t v : {*first, *last}) {
    if (v < kind.lo || v > kind.hi) {
      r.error(at, kind.name + " " + std::to_string(v) + " is out of range (" + bounds + ")");
      return std::nullopt;
    }
  }
  if (*first > *last) {
    r.error(at, kind.name + " range " + *text + " is reversed (did you mean " +
                    std::to_string(*last) + "-" + std::to_string(*first) + "?)");
    return std::nullopt;
  }
  return PortRange{static_cast<uint16_t>(*first), static_cast<uint16_t>(*last)};
}

// `ttl: 0-2`, `ttl: 64` or a list of values and ranges, into `out`.
void read_ranges(Reader& r, const Field& f, const RangeKind& kind, std::vector<PortRange>& out) {
  if (!f.value.IsSequence()) {
    if (auto range = read_range(r, f.value, f.at, f.name, kind)) out.push_back(*range);
    return;
  }
  if (f.value.size() == 0) {
    r.error(f.at, f.name + " must not be empty (leave it out to match any " + kind.name + ")");
    return;
  }
  for (const auto& item : f.value)
    if (auto range = read_range(r, item, r.at(item), f.name, kind)) out.push_back(*range);
}

// `ports:`/`port:` or `source_ports:`/`source_port:` into `out`.
void read_ports(Reader& r, const Field* ports, const Field* port, std::vector<PortRange>& out) {
  if (ports && port) {
    auto after = [](const SourceLocation& a, const SourceLocation& b) {
      return a.line != b.line ? a.line > b.line : a.column > b.column;
    };
    const Field* later = after(ports->key_at, port->key_at) ? ports : port;
    r.error(later->key_at, "use either " + port->name + " or " + ports->name + ", not both");
    return;
  }
  if (port) {
    if (auto range = read_range(r, port->value, port->at, port->name + "s", kPortKind))
      out.push_back(*range);
    return;
  }
  if (!expect_list(r, *ports, ports->name + " must be a list of ports or ranges")) return;
  if (ports->value.size() == 0) {
    r.error(ports->at, ports->name + " must not be empty (leave it out to match any port)");
    return;
  }
  for (const auto& item : ports->value)
    if (auto range = read_range(r, item, r.at(item), ports->name, kPortKind)) out.push_back(*range);
}

void read_icmp_types(Reader& r, const Field& f, uint8_t protocol, Match& m) {
  if (!expect_list(r, f, "icmp_types must be a list of ICMP type numbers or names")) return;
  if (f.value.size() == 0) {
    r.error(f.at, "icmp_types must not be empty (leave it out to match any type)");
    return;
  }
  std::vector<std::string> names = icmp_type_names(protocol);
  for (const auto& item : f.value) {
    SourceLocation at = r.at(item);
    auto text = scalar(r, item, at, "icmp_types entries must be numbers 0-255 or names");
    if (!text) continue;
    if (auto n = parse_int(*text)) {
      if (*n < 0 || *n > 255)
        r.error(at, "icmp type " + *text + " is out of range (0-255)");
      else
        m.icmp_types.push_back(static_cast<uint8_t>(*n));
      continue;
    }
    if (auto n = icmp_type_number(protocol, *text)) {
      m.icmp_types.push_back(*n);
      continue;
    }
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
    r.error(at, "unknown " + protocol_name(protocol) + " type '" + *text + "'" +
                    did_you_mean(*text, names) + "; use a number 0-255 or " + list);
  }
}

const Schema kTcpFlagsSchema{"in tcp_flags", {"set", "unset"}, {}};

// `set:` or `unset:` of tcp_flags: one flag name or a list of them, as a mask.
std::optional<uint8_t> read_flag_list(Reader& r, const Field& f) {
  std::vector<std::pair<YAML::Node, SourceLocation>> items;
  if (f.value.IsSequence()) {
    if (f.value.size() == 0) {
      r.error(f.at, "tcp_flags " + f.name + " must not be empty (leave it out)");
      return std::nullopt;
    }
    for (const auto& item : f.value) items.emplace_back(item, r.at(item));
  } else {
    items.emplace_back(f.value, f.at);
  }
  const auto& names = tcp_flag_names();
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
  uint8_t mask = 0;
  bool ok = true;
  for (const auto& [node, at] : items) {
    auto text =
        scalar(r, node, at, "tcp_flags " + f.name + " must be a flag name or a list of them");
    if (!text) {
      ok = false;
      continue;
    }
    std::string word = *text;
    for (char& c : word) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    auto it = std::find(names.begin(), names.end(), word);
    if (it == names.end()) {
      r.error(at, "unknown TCP flag '" + *text + "'" + did_you_mean(word, names) + "; flags are " +
                      list);
      ok = false;
      continue;
    }
    uint8_t bit = static_cast<uint8_t>(1u << (it - names.begin()));
    if (mask & bit) {
      r.error(at, "TCP flag " + word + " is listed twice");
      ok = false;
    }
    mask |= bit;
  }
  return ok ? std::optional<uint8_t>(mask) : std::nullopt;
}

// `tcp_flags: syn` (a new connection: SYN without ACK), or flags under a mask:
// `tcp_flags: {set: [ack], unset: [syn, rst, fin]}` matches packets with ACK set and SYN, RST and
// FIN clear, whatever the other flags.
void read_tcp_flags(Reader& r, const Field& f, Match& m) {
  const std::string expected =
      "tcp_flags must be syn (a new connection: SYN without ACK) or a mapping like "
      "{set: [ack], unset: [syn]}";
  if (!f.value.IsMap()) {
    auto text = scalar(r, f, expected);
    if (!text) return;
    if (*text != "syn" && *text != "SYN")
      r.error(f.at, expected + ", got '" + *text + "'");
    else
      m.tcp_syn = true;
    return;
  }
  Fields fields(r, f.value, kTcpFlagsSchema);
  const Field* set = fields.get("set");
  const Field* unset = fields.get("unset");
  if (!set && !unset) {
    r.error(f.at, "tcp_flags needs set:, unset: or both");
    return;
  }
  std::optional<uint8_t> on = set ? read_flag_list(r, *set) : uint8_t{0};
  std::optional<uint8_t> off = unset ? read_flag_list(r, *unset) : uint8_t{0};
  if (!on || !off) return;
  if (uint8_t both = *on & *off) {
    const auto& names = tcp_flag_names();
    size_t bit = static_cast<size_t>(__builtin_ctz(both));
    r.error(unset->at,
            "TCP flag " + names[bit] + " is both set and unset: the rule can never match");
    return;
  }
  m.tcp_flags = TcpFlags{static_cast<uint8_t>(*on | *off), *on};
}

// `fragment: none | first | later | any`: where in a fragmented datagram a packet sits. A later
// fragment carries no transport header, so every condition on one is refused with it.
void read_fragment_class(Reader& r, const Field& f, const Fields& fields, Match& m) {
  const std::string expected =
      "fragment must be none (not a fragment), first (the fragment with the transport header), "
      "later (the fragments after it) or any (first or later)";
  auto text = scalar(r, f, expected);
  if (!text) return;
  uint8_t mask = 0;
  for (const auto& c : fragment_classes())
    if (*text == c.name) mask = c.mask;
  if (!mask) {
    r.error(f.at, expected + ", got '" + *text + "'");
    return;
  }
  if (mask & (1u << RL_FRAG_LATER)) {
    for (const std::string& name : transport_field_names()) {
      if (!fields.get(name)) continue;
      r.error(f.at, "fragment: " + *text + " with " + name +
                        ": a later fragment carries no transport header, so " + name +
                        " never matches it (fragment: first matches the fragment that has it)");
      return;
    }
  }
  m.fragments = mask;
}

bool carries_ports(uint8_t protocol) { return protocol == kTcp || protocol == kUdp; }
bool is_icmp(uint8_t protocol) { return protocol == kIcmp || protocol == kIcmpv6; }

}  // namespace

std::vector<const Schema*> match_schemas() { return {&kMatchSchema, &kTcpFlagsSchema}; }

void read_match(Reader& r, const Field& f, RuleDraft& d) {
  if (f.is_null()) return;  // `match:` with nothing under it matches everything, like no match
  if (expect_map(r, f, "match")) {
    Fields fields(r, f.value, kMatchSchema);
    Match& m = d.rule.match;

    if (const Field* sources = fields.get("sources")) read_sources(r, *sources, d);
    const Field* dsts = fields.get("destinations");
    const Field* dst = fields.get("destination");
    if (dsts || dst) read_destinations(r, dsts, dst, m);

    // Conditions below depend on the protocol; when it failed to read, they are checked for
    // syntax only, since "can never match" would be a guess.
    bool protocol_ok = true;
    if (const Field* protocol = fields.get("protocol")) {
      m.protocol = read_protocol(r, *protocol);
      protocol_ok = m.protocol.has_value();
    }
    std::string proto_name = m.protocol ? protocol_name(*m.protocol) : "";

    for (bool source : {false, true}) {
      const Field* ports = fields.get(source ? "source_ports" : "ports");
      const Field* port = fields.get(source ? "source_port" : "port");
      if (!ports && !port) continue;
      read_ports(r, ports, port, source ? m.source_ports : m.ports);
      const Field* given = ports ? ports : port;
      if (m.protocol && !carries_ports(*m.protocol))
        r.error(given->key_at, given->name + " can never match protocol " + proto_name +
                                   " (only tcp and udp have ports)");
    }

    if (const Field* flags = fields.get("tcp_flags")) {
      if (!m.protocol && protocol_ok)
        r.error(flags->key_at, "tcp_flags requires protocol: tcp");
      else if (m.protocol && *m.protocol != kTcp)
        r.error(flags->key_at,
                "tcp_flags can never match protocol " + proto_name + " (only tcp has flags)");
      else
        read_tcp_flags(r, *flags, m);
    }

    // TTL (IPv4) or hop limit (IPv6): every IP packet has one.
    if (const Field* ttl = fields.get("ttl")) read_ranges(r, *ttl, kTtlKind, m.ttl);
    // The length the IP header declares: IPv4 total length, IPv6 payload length + 40.
    if (const Field* len = fields.get("length")) read_ranges(r, *len, kLengthKind, m.length);

    if (const Field* types = fields.get("icmp_types")) {
      if (!m.protocol && protocol_ok)
        r.error(types->key_at, "icmp_types requires protocol: icmp or icmpv6");
      else if (m.protocol && !is_icmp(*m.protocol))
        r.error(types->key_at, "icmp_types can never match protocol " + proto_name +
                                   " (only icmp and icmpv6 have types)");
      else if (m.protocol)
        read_icmp_types(r, *types, *m.protocol, m);
    }

    if (const Field* frag = fields.get("fragment")) read_fragment_class(r, *frag, fields, m);

    // A code means something only under its type: codes need icmp_types, which report a
    // missing or other protocol themselves.
    if (const Field* codes = fields.get("icmp_codes")) {
      if (!fields.get("icmp_types"))
        r.error(codes->key_at,
                "icmp_codes requires icmp_types (a code means something only under its type)");
      else
        read_ranges(r, *codes, kIcmpCodeKind, m.icmp_codes);
    }
  }
}

}  // namespace rl::policy::detail
