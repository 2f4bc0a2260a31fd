# The engine's include rule (engine/README.md "Rooms"): a room includes only the rooms below it,
# and of the planner only what its room needs. Run as a script at build time (engine/CMakeLists.txt)
# and by tests/scripts/engine_rooms_test.sh:
#   cmake -DENGINE_DIR=<engine folder> [-DSTAMP=<file to touch when clean>] -P check_rooms.cmake
# Prints one line per wrong include ("engine/parallel/comm.hpp: includes "engine/run/launcher.hpp":
# room parallel may include engine/device, planner/core, planner/config") and fails.

cmake_minimum_required(VERSION 3.20)  # IN_LIST in script mode

# Room -> what its sources may include besides their own room. The order is the layering:
# device and io at the bottom (io has no LibTorch), measure at the top; main.cpp (the executable)
# may include every room.
set(_allowed_device   "planner/core" "planner/config")
set(_allowed_io       "planner/core" "planner/config")
set(_allowed_parallel "engine/device" "planner/core" "planner/config")
set(_allowed_model    "engine/device" "engine/io" "engine/parallel" "planner/core" "planner/config")
set(_allowed_run      "engine/device" "engine/io" "engine/parallel" "engine/model"
                      "planner/core" "planner/config" "planner/costmodel")
set(_allowed_measure  "engine/device" "engine/io" "engine/parallel" "engine/model" "engine/run"
                      "planner/core" "planner/config" "planner/search" "planner/corpus")
set(_allowed_main     "engine/device" "engine/io" "engine/parallel" "engine/model" "engine/run" "engine/measure"
                      "planner/core" "planner/config")
set(_rooms device io parallel model run measure)

if(NOT ENGINE_DIR)
  message(FATAL_ERROR "check_rooms.cmake: pass -DENGINE_DIR=<the engine folder>")
endif()
file(GLOB_RECURSE _sources RELATIVE "${ENGINE_DIR}"
     "${ENGINE_DIR}/*.cpp" "${ENGINE_DIR}/*.hpp" "${ENGINE_DIR}/*.cu" "${ENGINE_DIR}/*.cuh")
set(_errors "")
foreach(_file IN LISTS _sources)
  if(_file MATCHES "^(cmake|third_party)/")
    continue()
  endif()
  if(_file STREQUAL "main.cpp")
    set(_room main)
  elseif(_file MATCHES "^([a-z_]+)/" AND CMAKE_MATCH_1 IN_LIST _rooms)
    set(_room ${CMAKE_MATCH_1})
  else()
    list(JOIN _rooms ", " _what)
    string(APPEND _errors "engine/${_file}: not in a room (allowed: ${_what}, or main.cpp)\n")
    continue()
  endif()
  file(STRINGS "${ENGINE_DIR}/${_file}" _lines REGEX "^[ \t]*#[ \t]*include[ \t]*\"")
  foreach(_line IN LISTS _lines)
    if(NOT _line MATCHES "#[ \t]*include[ \t]*\"([^\"]+)\"")
      continue()
    endif()
    set(_inc "${CMAKE_MATCH_1}")
    if(_inc MATCHES "^engine/([a-z_]+)/")
      set(_target "engine/${CMAKE_MATCH_1}")
      if(CMAKE_MATCH_1 STREQUAL _room)
        continue()
      endif()
    elseif(_inc MATCHES "^(planner/[a-z_]+)/")
      set(_target "${CMAKE_MATCH_1}")
    elseif(_inc MATCHES "^(simulator|cli|gui|engine)/")
      set(_target "${CMAKE_MATCH_1}")
    else()
      continue()  # a header beside the file, or a third-party one
    endif()
    if(NOT _target IN_LIST _allowed_${_room})
      list(JOIN _allowed_${_room} ", " _what)
      string(APPEND _errors "engine/${_file}: includes \"${_inc}\": room ${_room} may include ${_what}\n")
    endif()
  endforeach()
endforeach()

if(_errors)
  message(NOTICE "${_errors}")  # as they are: one line each, not wrapped
  message(FATAL_ERROR "engine rooms: wrong includes (engine/README.md \"Rooms\")")
endif()
if(STAMP)
  file(TOUCH "${STAMP}")
endif()
