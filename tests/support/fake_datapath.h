// SPDX-License-Identifier: GPL-2.0-only
// The in-memory data path of rld's unit tests, kept beside the data path's components
// (controller/datapath/fake/).
#pragma once

#include "datapath/fake/fake_datapath.h"
