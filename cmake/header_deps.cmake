# toml++, nlohmann-json and Eigen: the system's packages when it has them, else the copies that
# scripts/bundle-headers.sh put under SPPLAN_BUNDLE_DIR. A GPU node (BUILD-NOTES.md section 9) has
# neither the -dev packages nor a registry to get them from, so the headers travel with the tree.
#
# Defines tomlplusplus::tomlplusplus, nlohmann_json::nlohmann_json and Eigen3::Eigen either way, so no other
# CMake file needs to know where they came from.

set(SPPLAN_BUNDLE_DIR "${PROJECT_SOURCE_DIR}/third_party_bundle" CACHE PATH
    "Folder written by scripts/bundle-headers.sh; used for a header library the system lacks")
set(_spplan_bundle_inc "${SPPLAN_BUNDLE_DIR}/include")

# Reads "#define NAME <number>" from a header; empty when the header does not define it.
function(_spplan_header_define header name out)
  file(STRINGS "${header}" _line REGEX "^#[ \t]*define[ \t]+${name}[ \t]+[0-9]+")
  string(REGEX REPLACE ".*${name}[ \t]+([0-9]+).*" "\\1" _value "${_line}")
  set(${out} "${_value}" PARENT_SCOPE)
endfunction()

function(_spplan_missing_header_lib what package)
  message(FATAL_ERROR
    "${what}: not found on this system, nor in SPPLAN_BUNDLE_DIR (${SPPLAN_BUNDLE_DIR}). "
    "Install ${package} (scripts/install-deps.sh), or run scripts/bundle-headers.sh on a machine "
    "that has it and bring ${SPPLAN_BUNDLE_DIR} along with the source tree.")
endfunction()

# toml++ ---------------------------------------------------------------------------------------
find_package(tomlplusplus QUIET)
if(tomlplusplus_FOUND)
  set(SPPLAN_TOMLPLUSPLUS_FROM "system")
elseif(EXISTS "${_spplan_bundle_inc}/toml++/toml.h")
  # Debian's package is a compiled library (TOML_HEADER_ONLY=0, BUILD-NOTES.md section 6); the
  # bundled copy carries the implementation in its .inl headers, so it must be header-only.
  add_library(tomlplusplus::tomlplusplus INTERFACE IMPORTED GLOBAL)
  set_target_properties(tomlplusplus::tomlplusplus PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${_spplan_bundle_inc}"
    INTERFACE_COMPILE_DEFINITIONS "TOML_HEADER_ONLY=1")
  set(SPPLAN_TOMLPLUSPLUS_FROM "bundle ${_spplan_bundle_inc}")
else()
  _spplan_missing_header_lib("toml++" "libtomlplusplus-dev")
endif()

# nlohmann-json --------------------------------------------------------------------------------
set(_spplan_json_min 3.11)
find_package(nlohmann_json ${_spplan_json_min} QUIET)
if(nlohmann_json_FOUND)
  set(SPPLAN_NLOHMANN_JSON_FROM "system")
elseif(EXISTS "${_spplan_bundle_inc}/nlohmann/json.hpp")
  # 3.11 moved the version macros into detail/abi_macros.hpp; older copies keep them in json.hpp.
  set(_spplan_json_ver_header "${_spplan_bundle_inc}/nlohmann/detail/abi_macros.hpp")
  if(NOT EXISTS "${_spplan_json_ver_header}")
    set(_spplan_json_ver_header "${_spplan_bundle_inc}/nlohmann/json.hpp")
  endif()
  _spplan_header_define("${_spplan_json_ver_header}" NLOHMANN_JSON_VERSION_MAJOR _major)
  _spplan_header_define("${_spplan_json_ver_header}" NLOHMANN_JSON_VERSION_MINOR _minor)
  if("${_major}.${_minor}" VERSION_LESS ${_spplan_json_min})
    message(FATAL_ERROR "${_spplan_bundle_inc}/nlohmann: version '${_major}.${_minor}' is older "
                        "than ${_spplan_json_min}, which spplan needs; bundle a newer nlohmann-json")
  endif()
  add_library(nlohmann_json::nlohmann_json INTERFACE IMPORTED GLOBAL)
  set_target_properties(nlohmann_json::nlohmann_json PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${_spplan_bundle_inc}")
  set(SPPLAN_NLOHMANN_JSON_FROM "bundle ${_spplan_bundle_inc} (${_major}.${_minor})")
else()
  _spplan_missing_header_lib("nlohmann-json ${_spplan_json_min}" "nlohmann-json3-dev")
endif()

# Eigen (the least-squares fits of `spplan calibrate`, engine/measure/kernel_fit.cpp) -------------------
set(_spplan_eigen_min 3.3)
find_package(Eigen3 ${_spplan_eigen_min} QUIET NO_MODULE)
if(Eigen3_FOUND)
  set(SPPLAN_EIGEN_FROM "system")
elseif(EXISTS "${_spplan_bundle_inc}/Eigen/Dense")
  set(_spplan_eigen_macros "${_spplan_bundle_inc}/Eigen/src/Core/util/Macros.h")
  _spplan_header_define("${_spplan_eigen_macros}" EIGEN_WORLD_VERSION _world)
  _spplan_header_define("${_spplan_eigen_macros}" EIGEN_MAJOR_VERSION _major)
  if("${_world}.${_major}" VERSION_LESS ${_spplan_eigen_min})
    message(FATAL_ERROR "${_spplan_bundle_inc}/Eigen: version '${_world}.${_major}' is older "
                        "than ${_spplan_eigen_min}, which spplan needs; bundle a newer Eigen")
  endif()
  add_library(Eigen3::Eigen INTERFACE IMPORTED GLOBAL)
  set_target_properties(Eigen3::Eigen PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${_spplan_bundle_inc}")
  set(SPPLAN_EIGEN_FROM "bundle ${_spplan_bundle_inc} (${_world}.${_major})")
else()
  _spplan_missing_header_lib("Eigen ${_spplan_eigen_min}" "libeigen3-dev")
endif()

message(STATUS "spplan: toml++ from ${SPPLAN_TOMLPLUSPLUS_FROM}; nlohmann-json from ${SPPLAN_NLOHMANN_JSON_FROM}; "
               "Eigen from ${SPPLAN_EIGEN_FROM}")
