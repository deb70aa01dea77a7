# Helpers that let every module add files without editing shared CMake lists.
set(COMET_WARNINGS -Wall -Wextra -Wshadow -Wno-unused-parameter)
if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  # RapidJSON's member iterators compare through operators C++20 finds ambiguous when
  # reversed (a library matter, not Comet's).
  list(APPEND COMET_WARNINGS -Wno-ambiguous-reversed-operator)
endif()
if(COMET_WERROR)
  # g++ 12 at -O2 reports false positives inside libstdc++ (std::variant / std::string inlining):
  # keep them visible as warnings, not errors.
  list(APPEND COMET_WARNINGS -Werror)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    list(APPEND COMET_WARNINGS -Wno-error=maybe-uninitialized -Wno-error=restrict
         -Wno-error=array-bounds -Wno-error=stringop-overflow)
  endif()
endif()

# Library files compile in batches too (unity build, docs/testing.md "Where .ci/run's time
# goes"): a cold sanitizer build spent 756 of its 1081 CPU-seconds on src/, most of it parsing
# the same standard-library, asio, fmt and spdlog headers again for each file; batches of 8
# halve it. Consequence: file-local names (anonymous namespaces, statics) must be unique
# within a module, or batches fail to compile when files move between them. Developers who
# rebuild one file often may configure with -DCOMET_UNITY_LIBS=OFF.
option(COMET_UNITY_LIBS "Compile library files in batches (unity build)" ON)
set(COMET_UNITY_LIB_BATCH 8 CACHE STRING "files per unity batch of a library")

# comet_module(<name> DEPS <libs...>): library comet_<name> from src/<name>/*.cc.
function(comet_module name)
  cmake_parse_arguments(ARG "" "" "DEPS" ${ARGN})
  file(GLOB _srcs CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cc)
  if(_srcs)
    add_library(comet_${name} STATIC ${_srcs})
    target_include_directories(comet_${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
    target_link_libraries(comet_${name} PUBLIC ${ARG_DEPS})
    target_compile_options(comet_${name} PRIVATE ${COMET_WARNINGS})
    if(COMET_UNITY_LIBS)
      set_target_properties(comet_${name} PROPERTIES UNITY_BUILD ON
                            UNITY_BUILD_BATCH_SIZE ${COMET_UNITY_LIB_BATCH})
    endif()
  else()
    add_library(comet_${name} INTERFACE)
    target_include_directories(comet_${name} INTERFACE ${PROJECT_SOURCE_DIR}/src)
    target_link_libraries(comet_${name} INTERFACE ${ARG_DEPS})
  endif()
  add_library(comet::${name} ALIAS comet_${name})
endfunction()

# Unit-test binaries compile their files in batches (CMake unity build): every test file pulls
# in the same large headers (GoogleTest, gmock, the C++20 standard library), and parsing them
# once per batch instead of once per file is most of a cold build's saving (docs/testing.md,
# "CI time"). A test file therefore must not rely on file-local names being unique across the
# module: helpers live in the test's own namespace or have distinct names.
option(COMET_UNITY_TESTS "Compile unit-test files in batches (unity build)" ON)
set(COMET_UNITY_BATCH 8 CACHE STRING "files per unity batch of a unit-test binary")

# comet_unit_tests(<module> DEPS <libs...>): one GoogleTest binary unit_<module> from
# tests/unit/<module>/*_test.cc, registered with ctest (label "unit").
function(comet_unit_tests module)
  cmake_parse_arguments(ARG "" "TIMEOUT" "DEPS" ${ARGN})
  set(_dir ${PROJECT_SOURCE_DIR}/tests/unit/${module})
  file(GLOB _srcs CONFIGURE_DEPENDS ${_dir}/*_test.cc)
  if(NOT _srcs)
    return()
  endif()
  file(GLOB _helpers CONFIGURE_DEPENDS ${_dir}/*_helper.cc)
  add_executable(unit_${module} ${_srcs} ${_helpers})
  target_link_libraries(unit_${module} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gmock GTest::gtest_main)
  target_compile_options(unit_${module} PRIVATE ${COMET_WARNINGS})
  if(COMET_UNITY_TESTS)
    set_target_properties(unit_${module} PROPERTIES UNITY_BUILD ON
                          UNITY_BUILD_BATCH_SIZE ${COMET_UNITY_BATCH})
  endif()
  target_compile_definitions(unit_${module} PRIVATE
    COMET_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    COMET_BINARY_DIR="${PROJECT_BINARY_DIR}")
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 300)
  endif()
  set_property(GLOBAL APPEND PROPERTY COMET_UNIT_TEST_TARGETS unit_${module})
  add_test(NAME unit_${module} COMMAND unit_${module})
  set_tests_properties(unit_${module} PROPERTIES LABELS unit TIMEOUT ${ARG_TIMEOUT})
endfunction()
