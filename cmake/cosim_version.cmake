# Provenance of the build (`cosim --version`, summary.json "software"): target
# cosim_build_info writes ${COSIM_GENERATED_DIR}/cosim_build_info.hpp at every build, with the
# git commit of that moment; cosim_runtime (runtime/src/version.cpp) reads it.
set(COSIM_GIT_COMMIT "" CACHE STRING
    "Commit reported when the source tree is not a git checkout (a release tarball)")
set(COSIM_GENERATED_DIR ${PROJECT_BINARY_DIR}/generated)
set(_cosim_build_info_args
  -DSOURCE_DIR=${PROJECT_SOURCE_DIR}
  -DOUTPUT=${COSIM_GENERATED_DIR}/cosim_build_info.hpp
  -DVERSION=${PROJECT_VERSION}
  -DBUILD_TYPE=${CMAKE_BUILD_TYPE}
  "-DCOMPILER=${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER_VERSION}"
  -DFALLBACK_COMMIT=${COSIM_GIT_COMMIT}
  -P ${CMAKE_CURRENT_LIST_DIR}/cosim_build_info.cmake)
# Once now, so that the header exists for the first compile and for clang-tidy.
execute_process(COMMAND ${CMAKE_COMMAND} ${_cosim_build_info_args})
add_custom_target(cosim_build_info
  COMMAND ${CMAKE_COMMAND} ${_cosim_build_info_args}
  BYPRODUCTS ${COSIM_GENERATED_DIR}/cosim_build_info.hpp
  COMMENT "Reading the git commit for cosim --version"
  VERBATIM)
