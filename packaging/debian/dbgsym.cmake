# SPDX-License-Identifier: GPL-2.0-only
# Run by cpack after it has written the packages (CPACK_POST_BUILD_SCRIPTS), on rl-dbgsym.
# CMake 3.25 (Debian 12's) writes that package's md5sums with the absolute paths of its staging
# directory, so neither dpkg --verify nor lintian finds a file it lists, and gives the package no
# /usr/share/doc entry. The package is rebuilt with md5sums relative to its root, as dpkg
# writes them, its debug files 0644, and /usr/share/doc/rl-dbgsym a link to rl's documentation
# (it depends on rl of its own version), as Debian's own dbgsym packages have it.
find_program(DPKG_DEB dpkg-deb REQUIRED)
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
