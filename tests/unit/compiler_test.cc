#include <gtest/gtest.h>
#include "compiler/compiler.h"
TEST(Compiler, Empty) { EXPECT_TRUE(rl::compiler::compile({}).ok()); }
