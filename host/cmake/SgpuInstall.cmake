# Install rules: headers, static libraries, a CMake package (find_package(sgpu) → sgpu::sgpu)
# and a pkg-config file (sgpu.pc).
#
# The installed libsgpu is the core plus open_transport() without the simulator: the Verilated
# model is a build-tree artefact, so there "sim" answers Unsupported while "mock" works (and
# "pcie" does). The `sgpu` CLI is installed with the simulator linked in.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

if(PROJECT_VERSION)
  set(SGPU_HOST_VERSION ${PROJECT_VERSION})
else()
  set(SGPU_HOST_VERSION 0.0.0)
endif()

add_library(sgpu_dist STATIC ${CMAKE_CURRENT_SOURCE_DIR}/src/transport/open_transport.cpp)
set_target_properties(sgpu_dist PROPERTIES
  OUTPUT_NAME sgpu
  EXPORT_NAME sgpu
  ARCHIVE_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/dist
  POSITION_INDEPENDENT_CODE ON)
target_include_directories(sgpu_dist PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src)
target_compile_options(sgpu_dist PRIVATE ${SGPU_CXX_WARNINGS})
target_link_libraries(sgpu_dist PUBLIC sgpu_core sgpu_pcie PRIVATE fmt::fmt)

install(TARGETS sgpu_core sgpu_pcie sgpu_dist EXPORT sgpuTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/include/sgpu DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS sgpu_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

set(SGPU_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/sgpu)
install(EXPORT sgpuTargets NAMESPACE sgpu:: DESTINATION ${SGPU_CMAKE_DIR})
configure_package_config_file(${CMAKE_CURRENT_SOURCE_DIR}/cmake/sgpuConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/sgpuConfig.cmake INSTALL_DESTINATION ${SGPU_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/sgpuConfigVersion.cmake
  VERSION ${SGPU_HOST_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/sgpuConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/sgpuConfigVersion.cmake
  DESTINATION ${SGPU_CMAKE_DIR})

configure_file(${CMAKE_CURRENT_SOURCE_DIR}/cmake/sgpu.pc.in ${CMAKE_CURRENT_BINARY_DIR}/sgpu.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/sgpu.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
