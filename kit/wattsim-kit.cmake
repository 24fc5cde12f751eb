# What find_package(wattsim) defines, for the installed kit
# (wattsimConfig.cmake) and the build tree's (wattsimBuildConfig.cmake.in)
# alike; they set WATTSIM_INCLUDE_DIR, WATTSIM_LIBRARY and
# WATTSIM_POLICY_DIR first.
#
#   wattsim::policy                    the policy ABI header (an interface
#                                      target: include path, C17, no FP
#                                      contraction: npreduce.h's sums as
#                                      numpy's)
#   wattsim::wattsim                   libwattsim (the simulator as a library)
#   wattsim_add_policy(NAME SOURCES..) a policy plugin NAME.so (a MODULE
#                                      library without the "lib" prefix)
#   WATTSIM_POLICY_DIR                 the built-in policy folder
#   WATTSIM_POLICY_ABI                 the policy ABI version, "2.1"
#   WATTSIM_RANDOM_STREAMS             the random streams' version, 2
#   wattsim_VERSION                    the package version (find_package)

if(NOT TARGET wattsim::policy)
  add_library(wattsim::policy INTERFACE IMPORTED)
  set_target_properties(wattsim::policy PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${WATTSIM_INCLUDE_DIR}"
    INTERFACE_COMPILE_FEATURES c_std_17
    INTERFACE_COMPILE_OPTIONS "$<$<C_COMPILER_ID:GNU,Clang>:-ffp-contract=off>")
endif()
if(NOT TARGET wattsim::wattsim)
  add_library(wattsim::wattsim SHARED IMPORTED)
  set_target_properties(wattsim::wattsim PROPERTIES
    IMPORTED_LOCATION "${WATTSIM_LIBRARY}"
    IMPORTED_NO_SONAME FALSE
    INTERFACE_INCLUDE_DIRECTORIES "${WATTSIM_INCLUDE_DIR}")
endif()

function(wattsim_add_policy name)
  cmake_parse_arguments(WS "" "" "SOURCES" ${ARGN})
  if(NOT WS_SOURCES)
    set(WS_SOURCES ${WS_UNPARSED_ARGUMENTS})
  endif()
  if(NOT WS_SOURCES)
    message(FATAL_ERROR "wattsim_add_policy(${name}): no SOURCES")
  endif()
  add_library(${name} MODULE ${WS_SOURCES})
  set_target_properties(${name} PROPERTIES PREFIX "" C_VISIBILITY_PRESET hidden)
  target_link_libraries(${name} PRIVATE wattsim::policy)
endfunction()
