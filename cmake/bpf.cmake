# SPDX-License-Identifier: GPL-2.0-only
# rl_bpf_skeleton(<name> <source.bpf.c>)
# Compiles an XDP program with clang for the BPF target and generates its libbpf skeleton with
# bpftool. Defines the INTERFACE target <name>_skel whose include directory holds <name>.skel.h:
# the object is embedded in the skeleton, so binaries carry their data path with them.
find_program(RL_CLANG NAMES clang REQUIRED)
find_program(RL_BPFTOOL NAMES bpftool REQUIRED PATHS /usr/sbin /sbin)

execute_process(COMMAND ${CMAKE_C_COMPILER} -print-multiarch
                OUTPUT_VARIABLE RL_MULTIARCH OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT RL_MULTIARCH)
  set(RL_MULTIARCH "${CMAKE_SYSTEM_PROCESSOR}-linux-gnu")
endif()

# -mcpu=v3: 32-bit jumps and atomics (compare-and-swap) that the limiters rely on.
set(RL_BPF_CFLAGS -target bpf -mcpu=v3 -O2 -g -Wall -Werror
    -idirafter /usr/include/${RL_MULTIARCH})

function(rl_bpf_skeleton name src)
  set(out_dir ${CMAKE_CURRENT_BINARY_DIR}/skel)
  set(obj ${out_dir}/${name}.bpf.o)
  set(skel ${out_dir}/${name}.skel.h)
  # The headers an object includes come from clang's depfile, so a header added later is
  # tracked without re-running cmake.
  add_custom_command(
    OUTPUT ${obj}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${out_dir}
    COMMAND ${RL_CLANG} ${RL_BPF_CFLAGS} -I${PROJECT_SOURCE_DIR}/abi -I${PROJECT_SOURCE_DIR}/bpf/lib
            -MD -MF ${obj}.d -c ${CMAKE_CURRENT_SOURCE_DIR}/${src} -o ${obj}
    DEPENDS ${src}
    DEPFILE ${obj}.d
    COMMENT "BPF ${src}"
    VERBATIM)
  add_custom_command(
    OUTPUT ${skel}
    COMMAND ${RL_BPFTOOL} gen skeleton ${obj} name ${name} > ${skel}
    DEPENDS ${obj}
    COMMENT "skeleton ${name}.skel.h"
    VERBATIM)
  add_custom_target(${name}_skel_gen DEPENDS ${skel})
  add_library(${name}_skel INTERFACE)
  add_dependencies(${name}_skel ${name}_skel_gen)
  # SYSTEM: bpftool's generated code is held to its own conventions, not to the checks.
  target_include_directories(${name}_skel SYSTEM INTERFACE ${out_dir})
endfunction()
