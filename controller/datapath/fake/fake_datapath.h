// SPDX-License-Identifier: GPL-2.0-only
// An in-memory data path for rld's logic in unit tests: every interface of datapath/datapath.h,
// each from its own fake, with state the test can set and read. It judges no packets; the BPF
// tests do that on the kernel's verifier and maps.
#pragma once

#include "datapath/datapath.h"
#include "datapath/fake/fake_clock.h"
#include "datapath/fake/fake_cluster_maps.h"
#include "datapath/fake/fake_connections.h"
#include "datapath/fake/fake_counters.h"
#include "datapath/fake/fake_key_table.h"
#include "datapath/fake/fake_overrides.h"
#include "datapath/fake/fake_rule_sets.h"
#include "datapath/fake/fake_runtime_lists.h"

namespace rl::testing {

class FakeDatapath : public Datapath,
                     public FakeRuleSets,
                     public FakeCounters,
                     public FakeRuntimeLists,
                     public FakeOverrides,
                     public FakeKeyTable,
                     public FakeClusterMaps,
                     public FakeConnections,
                     public FakeClock {};

}  // namespace rl::testing
