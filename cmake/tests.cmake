# SPDX-License-Identifier: GPL-2.0-only
# rl_discover_tests(<target> [LABELS <label>...] [SERIAL <gtest pattern>...]
#                   [<gtest_discover_tests arguments>...])
# gtest_discover_tests for a test program whose tests ctest may run beside others
# (scripts/test.sh runs the root stage two at a time), except those that SERIAL names: the
# exactness, flood, rate and cost tests, whose figures need the CPUs to themselves. They get
# RUN_SERIAL and the label `serial` (alone: gtest_discover_tests passes no list-valued property
# through), so ctest runs each of them alone and scripts/test.sh after the rest. LABELS apply to
# the others; the properties given after PROPERTIES to all.
include(GoogleTest)

function(rl_discover_tests target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "LABELS;SERIAL;PROPERTIES")
  if(NOT arg_SERIAL)
    gtest_discover_tests(${target} ${arg_UNPARSED_ARGUMENTS}
                         PROPERTIES LABELS "${arg_LABELS}" ${arg_PROPERTIES})
    return()
  endif()
  list(JOIN arg_SERIAL ":" serial)
  gtest_discover_tests(${target} ${arg_UNPARSED_ARGUMENTS} TEST_FILTER "${serial}"
                       PROPERTIES RUN_SERIAL TRUE LABELS serial ${arg_PROPERTIES})
  gtest_discover_tests(${target} ${arg_UNPARSED_ARGUMENTS} TEST_FILTER "-${serial}"
                       PROPERTIES LABELS "${arg_LABELS}" ${arg_PROPERTIES})
endfunction()
