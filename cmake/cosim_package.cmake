# The Debian package (cpack -G DEB in the build folder): the installed tree of
# cosim_install.cmake under /usr, man pages made from --help by help2man, and the systemd unit
# template cosim@.service; its dependencies are found by dpkg-shlibdeps.
find_program(COSIM_HELP2MAN help2man)
if(COSIM_HELP2MAN)
  set(_man ${PROJECT_BINARY_DIR}/man)
  set(_name_cosim "real-time hardware-in-the-loop co-simulation runtime")
  set(_name_cosim-device "simulated bench devices speaking the cosim bench protocol")
  foreach(_prog cosim cosim-device)
    # Compressed as Debian policy wants (gzip -n: no time stamp, the same bytes every build).
    add_custom_command(OUTPUT ${_man}/${_prog}.1.gz
      COMMAND ${CMAKE_COMMAND} -E make_directory ${_man}
      COMMAND ${COSIM_HELP2MAN} --no-info --no-discard-stderr --output=${_man}/${_prog}.1
              "--name=${_name_${_prog}}" $<TARGET_FILE:${_prog}>
      COMMAND gzip -9nf ${_man}/${_prog}.1
      DEPENDS ${_prog}
      COMMENT "Writing the man page of ${_prog} (help2man)"
      VERBATIM)
    list(APPEND _man_pages ${_man}/${_prog}.1.gz)
  endforeach()
  add_custom_target(cosim_man_pages ALL DEPENDS ${_man_pages})
  install(FILES ${_man_pages} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
endif()

set(COSIM_SERVICE_BINDIR /usr/bin CACHE STRING "Where cosim@.service finds the cosim program")
configure_file(${PROJECT_SOURCE_DIR}/tools/systemd/cosim@.service.in
               ${PROJECT_BINARY_DIR}/cosim@.service @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/cosim@.service DESTINATION lib/systemd/system)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME cosim)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "cosim maintainers <cosim@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Real-time hardware-in-the-loop co-simulation runtime")
# Lines under 80 characters (lintian extended-description-line-too-long).
set(CPACK_PACKAGE_DESCRIPTION
    "Subsystems stepped at fixed macro steps on pinned real-time threads,
exchanging coupling variables through lock-free rings, with UDP bench
drivers, a watchdog and an energy-residual safety stop. The package holds
the cosim and cosim-device programs, the cosim@.service unit template, and
the headers, static libraries and CMake/pkg-config files to embed the
runtime or to build subsystem plugins.")
set(CPACK_STRIP_FILES ON)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# adduser for the service user; the -dev packages an embedding project compiles against.
set(CPACK_DEBIAN_PACKAGE_DEPENDS
    "adduser, libeigen3-dev, libspdlog-dev, libtomlplusplus-dev, libboost1.81-dev | libboost-dev, cyclonedds-dev, libzip-dev, libpugixml-dev")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${PROJECT_SOURCE_DIR}/tools/systemd/postinst)
set(CPACK_DEBIAN_COMPRESSION_TYPE gzip)
# cpack packs what is built: it does not build the whole tree (tests included) first.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)
include(CPack)
