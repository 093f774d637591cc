# LLVM 19 for lib/NVPTX (SIMT IR -> LLVM IR -> PTX through the LLVM C API).
#
# Included from the top-level CMakeLists.txt after the `tilelang` and
# `tilelang_internal` targets exist:   include(cmake/LLVM.cmake)
#
# Finds llvm-config-19 (or LLVM_CONFIG=/path/to/llvm-config), adds LLVM's
# include directory to the sources under lib/NVPTX only, and links LLVM:
#  - default: the shared libLLVM-19 (dynamic; fast to link; needs LLVM at run time);
#  - TL_LLVM_STATIC=ON: the static component libraries (nvptx core target
#    passes bitreader linker ipo analysis) linked into libtilelang.so with
#    -Wl,--exclude-libs,ALL so no LLVM symbol is exported, plus
#    -lz -lzstd -lstdc++ -lpthread -ldl -lm behind -Wl,--as-needed.
#    llvm-config's --system-libs is NOT used: it names libz3 and libxml2,
#    which the GPU host lacks (docs/testing.md "The bundle").
#  - tl-opt alone: static LLVM by default (TL_TOOL_STATIC_LLVM), see the end.
# Exposes TL_LLVM_VERSION, TL_LLVM_INCLUDE_DIR, TL_LLVM_LIBDIR, TL_LLVM_BINDIR.

find_program(LLVM_CONFIG NAMES llvm-config-19 llvm-config
             HINTS /usr/lib/llvm-19/bin DOC "llvm-config of LLVM 19")
if(NOT LLVM_CONFIG)
  message(FATAL_ERROR "llvm-config-19 not found: install llvm-19-dev or set -DLLVM_CONFIG=...")
endif()

function(_tl_llvm_config out)
  execute_process(COMMAND ${LLVM_CONFIG} ${ARGN} OUTPUT_VARIABLE v
                  RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${LLVM_CONFIG} ${ARGN} failed")
  endif()
  set(${out} "${v}" PARENT_SCOPE)
endfunction()

_tl_llvm_config(TL_LLVM_VERSION --version)
_tl_llvm_config(TL_LLVM_INCLUDE_DIR --includedir)
_tl_llvm_config(TL_LLVM_LIBDIR --libdir)
_tl_llvm_config(TL_LLVM_BINDIR --bindir)
string(REGEX MATCH "^[0-9]+" TL_LLVM_MAJOR "${TL_LLVM_VERSION}")
if(NOT TL_LLVM_MAJOR STREQUAL "19")
  message(FATAL_ERROR "LLVM 19 is required (${LLVM_CONFIG} reports ${TL_LLVM_VERSION})")
endif()
message(STATUS "LLVM ${TL_LLVM_VERSION} from ${LLVM_CONFIG} (static: ${TL_LLVM_STATIC})")

# Only lib/NVPTX includes LLVM's headers.
file(GLOB TL_NVPTX_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/lib/NVPTX/*.c ${CMAKE_SOURCE_DIR}/lib/NVPTX/*/*.c)
set_property(SOURCE ${TL_NVPTX_SOURCES} APPEND PROPERTY INCLUDE_DIRECTORIES ${TL_LLVM_INCLUDE_DIR})

set(TL_LLVM_COMPONENTS nvptx core target passes bitreader linker ipo analysis)
set(TL_LLVM_SYSTEM_LIBS -Wl,--as-needed z zstd stdc++ pthread dl m)

if(TL_LLVM_STATIC)
  _tl_llvm_config(_libs --link-static --libs ${TL_LLVM_COMPONENTS})
  separate_arguments(TL_LLVM_LIBS UNIX_COMMAND "${_libs}")
  # Static archives reference each other in llvm-config's order; keep it.
  target_link_directories(tilelang PRIVATE ${TL_LLVM_LIBDIR})
  target_link_libraries(tilelang PRIVATE ${TL_LLVM_LIBS} ${TL_LLVM_SYSTEM_LIBS})
  target_link_options(tilelang PRIVATE -Wl,--exclude-libs,ALL)
  target_link_directories(tilelang_internal PUBLIC ${TL_LLVM_LIBDIR})
  target_link_libraries(tilelang_internal PUBLIC ${TL_LLVM_LIBS} ${TL_LLVM_SYSTEM_LIBS})
else()
  find_library(TL_LLVM_SHARED NAMES LLVM-19 LLVM HINTS ${TL_LLVM_LIBDIR} NO_DEFAULT_PATH)
  if(NOT TL_LLVM_SHARED)
    message(FATAL_ERROR "libLLVM-19.so not found in ${TL_LLVM_LIBDIR}")
  endif()
  target_link_libraries(tilelang PRIVATE ${TL_LLVM_SHARED} pthread)
  target_link_libraries(tilelang_internal PUBLIC ${TL_LLVM_SHARED} pthread)
  # Executables and the library find libLLVM in LLVM's own lib directory.
  set_property(TARGET tilelang APPEND PROPERTY BUILD_RPATH ${TL_LLVM_LIBDIR})
endif()

# tl-opt with LLVM linked statically (TL_TOOL_STATIC_LLVM, default ON, unless
# TL_LLVM_STATIC already puts a static LLVM in libtilelang.so): a process
# using the shared libLLVM-19 spends ~10 ms before main (its static
# constructors, its dependencies z3, xml2 and icu) -- a fifth of a whole
# `tl-opt --emit=ptx examples/gemm.py` run (issue 6).  tl-opt then links the
# project's objects from tilelang_internal's archive, named by file because
# that target's link interface names the shared libLLVM; the other tools and
# the tests keep the shared library (fast links while developing).
if(TL_TOOL_STATIC_LLVM AND NOT TL_LLVM_STATIC)
  _tl_llvm_config(_tool_libs --link-static --libs ${TL_LLVM_COMPONENTS})
  separate_arguments(TL_TOOL_LLVM_LIBS UNIX_COMMAND "${_tool_libs}")
  add_dependencies(tl-opt tilelang_internal)
  target_include_directories(tl-opt PRIVATE ${CMAKE_SOURCE_DIR}/include)
  target_link_directories(tl-opt PRIVATE ${TL_LLVM_LIBDIR})
  target_link_libraries(tl-opt PRIVATE $<TARGET_FILE:tilelang_internal> ${TL_TOOL_LLVM_LIBS}
                        ${TL_LLVM_SYSTEM_LIBS} PkgConfig::TL_XXHASH m)
endif()
