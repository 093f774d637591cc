# GPU tests (test/GPU) and the elementwise benchmark: plain executables that
# link libtilelang (never libcuda: the tests dlopen the driver like the
# library does), labelled "gpu", exit 77 = skipped when no driver/GPU.
# Their rpath looks first in $ORIGIN/../lib (the self-contained bundle made
# by scripts/build-device.sh), then in the build tree.  They find kernel
# files in $TL_KERNEL_DIR, default ./examples (ctest runs them from the
# source directory; scripts/run-gpu.sh from the bundle).
file(GLOB TL_GPU_TEST_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/test/GPU/test_*.c)
set(TL_GPU_TARGETS)
foreach(src ${TL_GPU_TEST_SOURCES})
  get_filename_component(name ${src} NAME_WE)
  add_executable(${name} ${src})
  target_link_libraries(${name} PRIVATE tilelang m ${CMAKE_DL_LIBS})
  list(APPEND TL_GPU_TARGETS ${name})
  if(BUILD_TESTING OR TL_BUILD_TESTS)
    add_test(NAME gpu/${name} COMMAND ${name} WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
    set_tests_properties(gpu/${name} PROPERTIES LABELS gpu SKIP_RETURN_CODE 77)
  endif()
endforeach()

add_executable(bench_elementwise ${CMAKE_SOURCE_DIR}/benchmarks/elementwise/bench_elementwise.c)
target_link_libraries(bench_elementwise PRIVATE tilelang m ${CMAKE_DL_LIBS})
list(APPEND TL_GPU_TARGETS bench_elementwise)

# GEMM benchmark (ours vs cuBLAS) and the user-style example examples/gemm.c;
# both dlopen cuBLAS (libcublas.so.13) at run time, so nothing links it.
add_executable(bench_gemm ${CMAKE_SOURCE_DIR}/benchmarks/gemm/bench_gemm.c)
target_link_libraries(bench_gemm PRIVATE tilelang m ${CMAKE_DL_LIBS} pthread)
add_executable(example_gemm ${CMAKE_SOURCE_DIR}/examples/gemm.c)
target_link_libraries(example_gemm PRIVATE tilelang m ${CMAKE_DL_LIBS} pthread)
list(APPEND TL_GPU_TARGETS bench_gemm example_gemm)
# tf32 and int8 GEMM 4096^3 next to cuBLAS (issue 14)
add_executable(bench_gemm_types ${CMAKE_SOURCE_DIR}/benchmarks/gemm/bench_gemm_types.c)
target_link_libraries(bench_gemm_types PRIVATE tilelang m ${CMAKE_DL_LIBS} pthread)
list(APPEND TL_GPU_TARGETS bench_gemm_types)

set_target_properties(${TL_GPU_TARGETS} PROPERTIES
  BUILD_RPATH "\$ORIGIN/../lib;${CMAKE_BINARY_DIR}"
  RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/gpu-bin)
add_custom_target(gpu-all DEPENDS ${TL_GPU_TARGETS})

# Compile latency (per stage, PTX load, first call; runs without a GPU too,
# skipping the GPU parts) and launch overhead (tl_kernel_call vs a bare
# cuLaunchKernel of the same function): benchmarks/compile, benchmarks/launch.
add_executable(bench_compile ${CMAKE_SOURCE_DIR}/benchmarks/compile/bench_compile.c)
target_link_libraries(bench_compile PRIVATE tilelang m ${CMAKE_DL_LIBS})
add_executable(bench_launch ${CMAKE_SOURCE_DIR}/benchmarks/launch/bench_launch.c)
target_link_libraries(bench_launch PRIVATE tilelang m ${CMAKE_DL_LIBS})
list(APPEND TL_GPU_TARGETS bench_compile bench_launch)
set_target_properties(bench_compile bench_launch PROPERTIES
  BUILD_RPATH "\$ORIGIN/../lib;${CMAKE_BINARY_DIR}"
  RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/gpu-bin)
add_dependencies(gpu-all bench_compile bench_launch)
# The launch path's host cost without a GPU (issue 16): bench_launch_cpu
# calls a fake driver (libtl_fake_cuda.so, beside it in gpu-bin/).
add_library(tl_fake_cuda SHARED ${CMAKE_SOURCE_DIR}/benchmarks/launch/fake_cuda.c)
set_target_properties(tl_fake_cuda PROPERTIES C_VISIBILITY_PRESET hidden
  LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/gpu-bin)
add_executable(bench_launch_cpu ${CMAKE_SOURCE_DIR}/benchmarks/launch/bench_launch_cpu.c)
target_link_libraries(bench_launch_cpu PRIVATE tilelang ${CMAKE_DL_LIBS})
add_dependencies(bench_launch_cpu tl_fake_cuda)
set_target_properties(bench_launch_cpu PROPERTIES
  BUILD_RPATH "\$ORIGIN/../lib;${CMAKE_BINARY_DIR}"
  RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/gpu-bin)
add_dependencies(gpu-all bench_launch_cpu)

# Row softmax / RMSNorm bandwidth vs cuMemcpyDtoD (issue 7, acceptance 2).
add_executable(bench_norm ${CMAKE_SOURCE_DIR}/benchmarks/norm/bench_norm.c)
target_link_libraries(bench_norm PRIVATE tilelang m ${CMAKE_DL_LIBS})
set_target_properties(bench_norm PROPERTIES
  BUILD_RPATH "\$ORIGIN/../lib;${CMAKE_BINARY_DIR}"
  RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/gpu-bin)
add_dependencies(gpu-all bench_norm)

# Old PTX against new PTX of one kernel, timed interleaved (benchmarks/ptx_ab;
# scripts/ptx-ab.sh makes the PTX pairs and runs it over them).
add_executable(ptx_ab ${CMAKE_SOURCE_DIR}/benchmarks/ptx_ab/ptx_ab.c)
target_link_libraries(ptx_ab PRIVATE tilelang m)
set_target_properties(ptx_ab PROPERTIES
  BUILD_RPATH "\$ORIGIN/../lib;${CMAKE_BINARY_DIR}"
  RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/gpu-bin)
add_dependencies(gpu-all ptx_ab)

# The AOT export on a GPU (issue 32, docs/aot.md): examples/gemm.py at 4096^3 exported by tl-opt --emit=c and
# built as a module that links libcuda (CUDA's stub libcuda.so here; the driver's libcuda.so.1 on the GPU host)
# and nothing of this library; test_aot_gemm dlopens it after it found a GPU and compares it with libtilelang.
find_library(TL_CUDA_STUB cuda PATHS $ENV{CUDA_HOME}/lib64/stubs /usr/local/cuda/lib64/stubs NO_DEFAULT_PATH)
if(TL_CUDA_STUB AND TARGET test_aot_gemm)
  set(TL_AOT_GEMM_DIR ${CMAKE_BINARY_DIR}/aot-gemm)
  add_custom_command(OUTPUT ${TL_AOT_GEMM_DIR}/aot_gemm.c ${TL_AOT_GEMM_DIR}/aot_gemm.h
    COMMAND ${CMAKE_COMMAND} -E env TL_CACHE=0 $<TARGET_FILE:tl-opt> --emit=c --target=sm_80 --export-name=aot_gemm
            -D M=4096 -D N=4096 -D K=4096 ${CMAKE_SOURCE_DIR}/examples/gemm.py -o ${TL_AOT_GEMM_DIR}
    DEPENDS tl-opt ${CMAKE_SOURCE_DIR}/examples/gemm.py
    COMMENT "tl-opt --emit=c examples/gemm.py (4096^3) for test_aot_gemm")
  add_library(tl_aot_gemm MODULE ${TL_AOT_GEMM_DIR}/aot_gemm.c)
  target_include_directories(tl_aot_gemm PRIVATE ${TL_AOT_GEMM_DIR})
  target_link_libraries(tl_aot_gemm PRIVATE ${TL_CUDA_STUB} Threads::Threads)
  set_target_properties(tl_aot_gemm PROPERTIES C_STANDARD 99 LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/gpu-bin)
  add_dependencies(test_aot_gemm tl_aot_gemm)
endif()
