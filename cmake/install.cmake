# Installation and the CMake package, so that find_package(nuvec) works.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS nuvec nuvec_nn nuvec_lm EXPORT nuvecTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
if(TARGET nuvec-lm)
  install(TARGETS nuvec-lm RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
install(DIRECTORY include/nuvec nn/include/nuvec lm/include/nuvec DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT nuvecTargets NAMESPACE nuvec:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/nuvec)
configure_package_config_file(cmake/nuvecConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/nuvecConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/nuvec)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/nuvecConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/nuvecConfig.cmake
  ${CMAKE_CURRENT_BINARY_DIR}/nuvecConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/nuvec)
