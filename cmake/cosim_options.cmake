# One function applies warnings, sanitizers and clang-tidy to every project target.
function(cosim_apply_options target)
  get_target_property(_type ${target} TYPE)
  if(_type STREQUAL "INTERFACE_LIBRARY")
    return()
  endif()
  target_compile_options(${target} PRIVATE
    -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Woverloaded-virtual
    -Wimplicit-fallthrough -Wcast-qual -Wformat=2
    # errno from sqrt/cos is never read; without it GCC can merge and inline them.
    # Results are unchanged (no reassociation, no fast-math).
    -fno-math-errno)
  if(COSIM_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
  if(COSIM_SANITIZE)
    target_compile_options(${target} PRIVATE -fsanitize=${COSIM_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all)
    target_link_options(${target} PRIVATE -fsanitize=${COSIM_SANITIZE})
    # GCC 12 reports -Wmaybe-uninitialized false positives inside libstdc++
    # (std::function in std::regex) once sanitizer instrumentation is added.
    target_compile_options(${target} PRIVATE -Wno-maybe-uninitialized)
    if(COSIM_SANITIZE MATCHES "thread")
      # Boost.Asio's fenced blocks use std::atomic_thread_fence, which GCC warns TSan does
      # not model (-Wtsan); the drivers' own code uses acquire/release atomics only.
      target_compile_options(${target} PRIVATE -Wno-tsan)
    endif()
    # Lets long tests shorten their runs under sanitizers.
    target_compile_definitions(${target} PRIVATE COSIM_SANITIZED=1)
  endif()
  if(COSIM_CLANG_TIDY)
    find_program(_tidy clang-tidy REQUIRED)
    set_target_properties(${target} PROPERTIES CXX_CLANG_TIDY "${_tidy}")
  endif()
endfunction()

# A library per top-level folder: sources from src/, public headers from include/.
function(cosim_add_folder_library name)
  cmake_parse_arguments(ARG "" "" "DEPS" ${ARGN})
  file(GLOB _src CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/src/*.cpp)
  add_library(cosim_${name} STATIC ${_src})
  add_library(cosim::${name} ALIAS cosim_${name})
  # Installed, the public headers of every folder are under <prefix>/include (cosim_install.cmake).
  target_include_directories(cosim_${name}
    PUBLIC $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
           $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>
    PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src)
  set_target_properties(cosim_${name} PROPERTIES EXPORT_NAME ${name})
  target_link_libraries(cosim_${name} PUBLIC ${ARG_DEPS})
  cosim_apply_options(cosim_${name})
  if(COSIM_SANITIZE)
    # Instrumented static libraries need the sanitizer runtime wherever they are linked (an
    # installed sanitizer build's package says so too).
    target_link_options(cosim_${name} INTERFACE -fsanitize=${COSIM_SANITIZE})
  endif()
endfunction()
