# Install rules for C users: `cmake --install build --prefix P` puts
#   P/include/tilelang/*.h                      the public headers
#   P/<libdir>/libtilelang.so.<version>         with SONAME libtilelang.so.<major> and the dev symlink
#   P/bin/tl-opt, P/bin/tl-run                  the tools (rpath $ORIGIN/<bin→lib>)
#   P/<libdir>/cmake/tilelang/                  the CMake package: find_package(tilelang) gives the
#                                               imported target tilelang::tilelang
#   P/<libdir>/pkgconfig/tilelang.pc            for pkg-config --cflags --libs tilelang
# Everything is relocatable: the CMake package computes its prefix from its
# own location (configure_package_config_file's PACKAGE_PREFIX_DIR) and
# tilelang.pc from ${pcfiledir}; the binaries find the library through a
# relative rpath.  The public headers include <dlpack/dlpack.h> (Debian's
# libdlpack-dev); the library finds libdevice as in the build tree
# (TL_LIBDEVICE or /usr/local/cuda/nvvm/libdevice/libdevice.10.bc).
#
# Included from the top-level CMakeLists.txt after the targets and
# cmake/LLVM.cmake (which sets TL_LLVM_LIBDIR and TL_LLVM_STATIC).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(TL_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/tilelang)
target_include_directories(tilelang INTERFACE $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)

# Run-time search path of the installed library and tools: the library's own
# directory relative to the binary, plus LLVM's when libLLVM is shared.
file(RELATIVE_PATH _tl_bin_to_lib /${CMAKE_INSTALL_BINDIR} /${CMAKE_INSTALL_LIBDIR})
set(_tl_lib_rpath "\$ORIGIN")
set(_tl_bin_rpath "\$ORIGIN/${_tl_bin_to_lib}")
if(NOT TL_LLVM_STATIC)
  string(APPEND _tl_lib_rpath ";${TL_LLVM_LIBDIR}")
  string(APPEND _tl_bin_rpath ";${TL_LLVM_LIBDIR}")
endif()
set_target_properties(tilelang PROPERTIES INSTALL_RPATH "${_tl_lib_rpath}")

install(TARGETS tilelang EXPORT tilelangTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${CMAKE_SOURCE_DIR}/include/tilelang DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h" PATTERN "*.def")
foreach(tool tl-opt tl-run)
  if(TARGET ${tool})
    set_target_properties(${tool} PROPERTIES INSTALL_RPATH "${_tl_bin_rpath}")
    install(TARGETS ${tool} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  endif()
endforeach()

install(EXPORT tilelangTargets NAMESPACE tilelang:: DESTINATION ${TL_INSTALL_CMAKEDIR})
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/tilelangConfig.cmake.in
                              ${CMAKE_BINARY_DIR}/tilelangConfig.cmake
                              INSTALL_DESTINATION ${TL_INSTALL_CMAKEDIR}
                              PATH_VARS CMAKE_INSTALL_INCLUDEDIR)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/tilelangConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_BINARY_DIR}/tilelangConfig.cmake ${CMAKE_BINARY_DIR}/tilelangConfigVersion.cmake
        DESTINATION ${TL_INSTALL_CMAKEDIR})

# pkg-config: relocatable through ${pcfiledir} (pkgconf and pkg-config >= 0.27).
file(RELATIVE_PATH _tl_pc_to_prefix /${CMAKE_INSTALL_LIBDIR}/pkgconfig /)
string(REGEX REPLACE "/$" "" _tl_pc_to_prefix "${_tl_pc_to_prefix}")
configure_file(${CMAKE_SOURCE_DIR}/cmake/tilelang.pc.in ${CMAKE_BINARY_DIR}/tilelang.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/tilelang.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
