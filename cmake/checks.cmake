# SPDX-License-Identifier: GPL-2.0-only
# Build variants the CI stages use (scripts/test.sh); a plain build needs none of them.
#   RL_WERROR    warnings in C++ fail the build
#   RL_SANITIZE  AddressSanitizer and UndefinedBehaviorSanitizer, any report fatal
#   RL_FUZZ      the libFuzzer targets in tests/fuzz (clang); every object gets the coverage
#                instrumentation they steer by, so the fuzzers and the tests share one build
#   RL_DEBUG_INFO  full (the build type's -g), lines (line tables: backtraces and sanitizer
#                reports keep file:line, at a fraction of full DWARF's compile and link time) or
#                none
#   RL_LLD       link with lld where it is installed: the links of the test programs take a
#                fraction of ld.bfd's time
option(RL_WERROR "Treat C++ warnings as errors" OFF)
option(RL_SANITIZE "Build with ASan and UBSan" OFF)
option(RL_FUZZ "Build the libFuzzer targets (clang only)" OFF)
set(RL_DEBUG_INFO full CACHE STRING "debug information: full, lines or none")
set_property(CACHE RL_DEBUG_INFO PROPERTY STRINGS full lines none)
option(RL_LLD "Link with lld when it is installed" ON)

# After the build type's flags on the command line, so these levels win over its -g.
if(RL_DEBUG_INFO STREQUAL "lines")
  add_compile_options(-g1)  # clang: -gline-tables-only
elseif(RL_DEBUG_INFO STREQUAL "none")
  add_compile_options(-g0)
elseif(NOT RL_DEBUG_INFO STREQUAL "full")
  message(FATAL_ERROR "RL_DEBUG_INFO is full, lines or none, not '${RL_DEBUG_INFO}'")
endif()
if(RL_LLD)
  find_program(RL_LD_LLD ld.lld)
  if(RL_LD_LLD)
    add_link_options(-fuse-ld=lld)
  endif()
endif()

if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  # Members marked GUARDED_BY (common/thread_annotations.h) touched without their mutex.
  add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-Wthread-safety>)
endif()
if(RL_WERROR)
  add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-Werror>)
endif()
if(RL_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=all
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()
if(RL_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "RL_FUZZ needs clang: -DCMAKE_CXX_COMPILER=clang++")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()
