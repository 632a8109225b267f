# Install rules: libsgpu (the same library the tree links), the generated ABI headers, a CMake
# package (find_package(sgpu) → sgpu::sgpu) and a pkg-config file (sgpu.pc). The installed
# library carries libsgpu's own transports ("mock", "pcie"); the testbench's ("sim", "model",
# "pcie-sim") stay in the build tree, linked into the `sgpu` CLI, which is installed too.
#
# libsgpu is a static archive, so its private dependency (libpciaccess, for "pcie") travels with
# it: the CMake package finds it again (find_dependency), sgpu.pc names it in Requires.private
# (`pkg-config --static --libs sgpu`).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

if(PROJECT_VERSION)
  set(SGPU_HOST_VERSION ${PROJECT_VERSION})
else()
  set(SGPU_HOST_VERSION 0.0.0)
endif()

install(TARGETS sgpu sgpu_abi EXPORT sgpuTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/include/sgpu ${CMAKE_CURRENT_SOURCE_DIR}/abi/include/sgpu
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
if(TARGET sgpu_cli)
  install(TARGETS sgpu_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

set(SGPU_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/sgpu)
install(EXPORT sgpuTargets NAMESPACE sgpu:: DESTINATION ${SGPU_CMAKE_DIR})
configure_package_config_file(${CMAKE_CURRENT_SOURCE_DIR}/cmake/sgpuConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/sgpuConfig.cmake INSTALL_DESTINATION ${SGPU_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/sgpuConfigVersion.cmake
  VERSION ${SGPU_HOST_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/sgpuConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/sgpuConfigVersion.cmake
  DESTINATION ${SGPU_CMAKE_DIR})

# sgpu.pc finds its prefix relative to itself (relocatable), whatever depth the libdir has.
file(RELATIVE_PATH SGPU_PC_TO_PREFIX /${CMAKE_INSTALL_LIBDIR}/pkgconfig /)
string(REGEX REPLACE "/$" "" SGPU_PC_TO_PREFIX "${SGPU_PC_TO_PREFIX}")
configure_file(${CMAKE_CURRENT_SOURCE_DIR}/cmake/sgpu.pc.in ${CMAKE_CURRENT_BINARY_DIR}/sgpu.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/sgpu.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
