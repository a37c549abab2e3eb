# SPDX-License-Identifier: GPL-2.0-only
# Run by cpack after it has written the packages (CPACK_POST_BUILD_SCRIPTS), on rl-dbgsym.
# CMake 3.25 (Debian 12's) writes that package's md5sums with the absolute paths of its staging
# directory, so neither dpkg --verify nor lintian finds a file it lists, and gives the package no
# /usr/share/doc entry. The package is rebuilt with md5sums relative to its root, as dpkg
# writes them, its debug files 0644, and /usr/share/doc/rl-dbgsym a link to rl's documentation
# (it depends on rl of its own version), as Debian's own dbgsym packages have it.
#
# And on rl, whose documentation is installed as it is in the source tree: uncompressed, with
# relative links to files the package does not ship (the benchmark archive, sources). docs.py
# finishes it as Debian ships documentation: a link to a file not shipped names that file in the
# source tree instead, and a document over 4 KB is compressed (Debian Policy 12.3), the links to
# it naming the .gz. The package is rebuilt with md5sums and Installed-Size to match.
find_program(DPKG_DEB dpkg-deb REQUIRED)
find_program(RL_PACKAGE_PYTHON3 python3 REQUIRED)
foreach(package ${CPACK_PACKAGE_FILES})
  if(NOT package MATCHES "\\.ddeb$")
    continue()
  endif()
  set(root ${CPACK_TOPLEVEL_DIRECTORY}/dbgsym-root)
  file(REMOVE_RECURSE ${root})
  execute_process(COMMAND ${DPKG_DEB} --raw-extract ${package} ${root} COMMAND_ERROR_IS_FATAL ANY)
  file(GLOB_RECURSE debug_files RELATIVE ${root} ${root}/usr/*)
  list(SORT debug_files)
  set(md5sums "")
  foreach(f ${debug_files})
    file(CHMOD ${root}/${f} PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)
    file(MD5 ${root}/${f} sum)
    string(APPEND md5sums "${sum}  ${f}\n")
  endforeach()
  file(WRITE ${root}/DEBIAN/md5sums "${md5sums}")
  file(MAKE_DIRECTORY ${root}/usr/share/doc)
  file(CREATE_LINK rl ${root}/usr/share/doc/rl-dbgsym SYMBOLIC)
  execute_process(COMMAND ${DPKG_DEB} --root-owner-group -Zgzip --build ${root} ${package}
                  OUTPUT_QUIET COMMAND_ERROR_IS_FATAL ANY)
  file(REMOVE_RECURSE ${root})
endforeach()

foreach(package ${CPACK_PACKAGE_FILES})
  if(NOT package MATCHES "\\.deb$")
    continue()
  endif()
  set(root ${CPACK_TOPLEVEL_DIRECTORY}/deb-root)
  set(doc usr/share/doc/rl)
  file(REMOVE_RECURSE ${root})
  execute_process(COMMAND ${DPKG_DEB} --raw-extract ${package} ${root} COMMAND_ERROR_IS_FATAL ANY)
  # What the documentation's size changes by: its bytes before, taken away here, and after.
  file(GLOB_RECURSE doc_files ${root}/${doc}/*)
  set(doc_growth 0)
  foreach(f ${doc_files})
    file(SIZE ${f} size)
    math(EXPR doc_growth "${doc_growth} - ${size}")
  endforeach()
  execute_process(COMMAND ${RL_PACKAGE_PYTHON3} ${CMAKE_CURRENT_LIST_DIR}/docs.py ${root}/${doc}
                  COMMAND_ERROR_IS_FATAL ANY)
  # md5sums: every line cpack wrote but the documentation's, then the documentation's anew.
  file(STRINGS ${root}/DEBIAN/md5sums lines)
  set(md5sums "")
  foreach(line ${lines})
    if(NOT line MATCHES "^[0-9a-f]+  ${doc}/")
      string(APPEND md5sums "${line}\n")
    endif()
  endforeach()
  file(GLOB_RECURSE doc_files RELATIVE ${root} ${root}/${doc}/*)
  list(SORT doc_files)
  foreach(f ${doc_files})
    file(MD5 ${root}/${f} sum)
    string(APPEND md5sums "${sum}  ${f}\n")
    file(SIZE ${root}/${f} size)
    math(EXPR doc_growth "${doc_growth} + ${size}")
  endforeach()
  file(WRITE ${root}/DEBIAN/md5sums "${md5sums}")
  # Installed-Size (KiB) less what the compression saved.
  file(READ ${root}/DEBIAN/control control)
  if(NOT control MATCHES "Installed-Size: ([0-9]+)")
    message(FATAL_ERROR "${package}: no Installed-Size")
  endif()
  math(EXPR kib "(${CMAKE_MATCH_1} * 1024 + ${doc_growth} + 1023) / 1024")
  string(REGEX REPLACE "Installed-Size: [0-9]+" "Installed-Size: ${kib}" control "${control}")
  file(WRITE ${root}/DEBIAN/control "${control}")
  execute_process(COMMAND ${DPKG_DEB} --root-owner-group -Zgzip --build ${root} ${package}
                  OUTPUT_QUIET COMMAND_ERROR_IS_FATAL ANY)
  file(REMOVE_RECURSE ${root})
endforeach()
