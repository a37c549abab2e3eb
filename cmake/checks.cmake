# SPDX-License-Identifier: GPL-2.0-only
# Build variants the CI stages use (scripts/test.sh); a plain build needs none of them.
#   RL_WERROR    warnings in C++ fail the build
#   RL_SANITIZE  AddressSanitizer and UndefinedBehaviorSanitizer, any report fatal
#   RL_FUZZ      the libFuzzer targets in tests/fuzz (clang); every object gets the coverage
#                instrumentation they steer by, so the fuzzers and the tests share one build
option(RL_WERROR "Treat C++ warnings as errors" OFF)
option(RL_SANITIZE "Build with ASan and UBSan" OFF)
option(RL_FUZZ "Build the libFuzzer targets (clang only)" OFF)

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
