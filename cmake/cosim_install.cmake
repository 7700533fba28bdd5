# Install rules and the relocatable CMake package: `find_package(cosim CONFIG)` gives
# cosim::runtime, cosim::subsystems, cosim::fmi, cosim::drivers, cosim::dds, cosim::rt_config
# (static libraries; their dependencies found again by cosimConfig.cmake), and a pkg-config
# file cosim.pc. Every path in the installed files is relative to the prefix.
include(CMakePackageConfigHelpers)
set(COSIM_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/cosim)

install(TARGETS cosim cosim-device RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

set(_cosim_libraries cosim_runtime cosim_subsystems cosim_fmi_headers cosim_fmi cosim_drivers
    cosim_remote_types cosim_dds cosim_rt_config cosim_plugin_api)
install(TARGETS ${_cosim_libraries} EXPORT cosim_targets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# Public headers: every folder's include/ (cosim/<folder>/...), the FMI C headers, and the DDS
# types idlc generated (included by drivers/dds's headers' sources only, kept for completeness).
foreach(_dir runtime subsystems subsystems/fmi drivers drivers/dds rt_config)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${_dir}/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endforeach()
install(FILES ${PROJECT_BINARY_DIR}/drivers/dds/cosim_remote.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

install(EXPORT cosim_targets NAMESPACE cosim:: FILE cosimTargets.cmake
        DESTINATION ${COSIM_INSTALL_CMAKEDIR})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/cosimConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cosimConfig.cmake INSTALL_DESTINATION ${COSIM_INSTALL_CMAKEDIR})
# The plugin API is versioned separately; the package version follows project().
write_basic_package_version_file(${PROJECT_BINARY_DIR}/cosimConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/cosimConfig.cmake ${PROJECT_BINARY_DIR}/cosimConfigVersion.cmake
        DESTINATION ${COSIM_INSTALL_CMAKEDIR})

# pkg-config: the libraries in link order, their dependencies by their own .pc names (in
# Requires, not Requires.private: the libraries are static). The prefix is found from the .pc
# file's own place, so the installed tree can be moved.
set(COSIM_PC_URING "")
set(COSIM_HAVE_URING_INT 0)
if(COSIM_HAVE_URING)
  set(COSIM_PC_URING "liburing")
  set(COSIM_HAVE_URING_INT 1)
endif()
string(REGEX REPLACE "[^/]+" ".." COSIM_PC_UP "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
configure_file(${CMAKE_CURRENT_LIST_DIR}/cosim.pc.in ${PROJECT_BINARY_DIR}/cosim.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/cosim.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR})
