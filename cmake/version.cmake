# The commit `--version` prints: read when CMake configures (scripts/build.sh configures on every
# run). Outside a git checkout (a source tarball, a copied tree on a GPU node) it is "unknown".
# A copied tree can be told its commit: SPPLAN_GIT_COMMIT in the environment (hex) wins over git,
# so a GPU node's measurements name the commit they measured (the lease's copy of the tree carried
# a .git whose HEAD was older than the tree: its runs said 25fdb4a, the tree was c167f12).
# Only planner/core/version.cpp sees the value, so a new commit recompiles one file.
find_package(Git QUIET)
set(SPPLAN_GIT_COMMIT "unknown")
if(GIT_FOUND)
  execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse --short=12 HEAD
                  WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
                  OUTPUT_VARIABLE _spplan_commit OUTPUT_STRIP_TRAILING_WHITESPACE
                  RESULT_VARIABLE _spplan_git_rc ERROR_QUIET)
  if(_spplan_git_rc EQUAL 0 AND _spplan_commit MATCHES "^[0-9a-f]+$")
    set(SPPLAN_GIT_COMMIT "${_spplan_commit}")
  endif()
endif()
if("$ENV{SPPLAN_GIT_COMMIT}" MATCHES "^[0-9a-f]+$")
  set(SPPLAN_GIT_COMMIT "$ENV{SPPLAN_GIT_COMMIT}")
endif()
