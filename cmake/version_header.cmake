# Writes the manager's version header (cmd/octorun/version.hpp.in) at build
# time, so the commit is that of the tree being built, not of the last
# configure. Run as: cmake -DIN=... -DOUT=... -DVERSION=... -DSOURCE_DIR=...
#   [-DGIT_COMMIT=...] -P version_header.cmake
# The commit: GIT_COMMIT (the OCTORUN_GIT_COMMIT cache variable), else the
# OCTORUN_GIT_COMMIT environment variable (image builds outside a checkout),
# else `git rev-parse --short HEAD`, else "unknown".
set(_commit "${GIT_COMMIT}")
if(_commit STREQUAL "" AND DEFINED ENV{OCTORUN_GIT_COMMIT})
  set(_commit "$ENV{OCTORUN_GIT_COMMIT}")
endif()
if(_commit STREQUAL "")
  execute_process(COMMAND git rev-parse --short HEAD
    WORKING_DIRECTORY "${SOURCE_DIR}" OUTPUT_VARIABLE _commit OUTPUT_STRIP_TRAILING_WHITESPACE
    RESULT_VARIABLE _rc ERROR_QUIET)
  if(NOT _rc EQUAL 0)
    set(_commit "")
  endif()
endif()
if(_commit STREQUAL "")
  set(_commit "unknown")
endif()
set(OCTORUN_VERSION "${VERSION}")
set(OCTORUN_GIT_COMMIT "${_commit}")
configure_file("${IN}" "${OUT}.tmp" @ONLY)
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUT}.tmp")
