# The CUDA backend (src/backend/cuda): its own object library, built when
# the CUDA toolkit is found and NUVEC_CUDA is on, compiled into nuvec. The
# core never includes its headers (src/backend/gpu.cpp forwards to it).
# sm_90 machine code plus compute_90 PTX for later GPUs. Element-wise code
# is built without contraction or flush-to-zero (DESIGN.md section 10).
set(NUVEC_WITH_CUDA OFF)
if(NUVEC_CUDA)
  include(CheckLanguage)
  check_language(CUDA)
endif()
if(NUVEC_CUDA AND CMAKE_CUDA_COMPILER)
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 90)
  endif()
  if(CCACHE_PROGRAM)
    set(CMAKE_CUDA_COMPILER_LAUNCHER ${CCACHE_PROGRAM})
  endif()
  enable_language(CUDA)
  # CMake 3.25 does not know nvcc 13's flag for C++20.
  set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
  set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
  find_package(CUDAToolkit REQUIRED)
  file(GLOB NUVEC_CUDA_SOURCES CONFIGURE_DEPENDS src/backend/cuda/*.cu src/backend/cuda/*.cpp)
  add_library(nuvec_cuda OBJECT ${NUVEC_CUDA_SOURCES})
  target_include_directories(nuvec_cuda PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/include
    ${CMAKE_CURRENT_SOURCE_DIR}/src)
  target_compile_options(nuvec_cuda PRIVATE
    $<$<COMPILE_LANGUAGE:CUDA>:--fmad=false --ftz=false --prec-div=true --prec-sqrt=true
      -diag-suppress=186 --expt-relaxed-constexpr -Xcompiler=-ffp-contract=off -O3>
    $<$<COMPILE_LANGUAGE:CXX>:${NUVEC_KERNEL_FLAGS} ${NUVEC_WARNINGS} ${NUVEC_OPT_CORE}>)
  # NVRTC by its file: the CUDA::nvrtc target also links the driver's stub,
  # which would make every program need libcuda.so.1, absent where there is
  # no GPU (CI); the runtime loads the driver itself when a GPU is there.
  get_target_property(NUVEC_NVRTC_LIB CUDA::nvrtc IMPORTED_LOCATION)
  target_include_directories(nuvec_cuda PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
  target_link_libraries(nuvec_cuda PRIVATE CUDA::cudart_static CUDA::cublas CUDA::cublasLt)
  set_target_properties(nuvec_cuda PROPERTIES POSITION_INDEPENDENT_CODE ON CUDA_STANDARD 20
    CUDA_STANDARD_REQUIRED ON CUDA_EXTENSIONS OFF)
  # The nccl backend needs only NCCL's header (the CUDA toolkit's, or name
  # its folder in NUVEC_NCCL_INCLUDE): libnccl.so.2 is loaded at run time.
  find_path(NUVEC_NCCL_INCLUDE nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
  if(NUVEC_NCCL_INCLUDE)
    set_source_files_properties(${CMAKE_CURRENT_SOURCE_DIR}/src/backend/cuda/nccl.cpp PROPERTIES
      INCLUDE_DIRECTORIES "${NUVEC_NCCL_INCLUDE}" COMPILE_DEFINITIONS NUVEC_HAVE_NCCL_H=1)
    message(STATUS "nuvec: the nccl backend is built (${NUVEC_NCCL_INCLUDE}/nccl.h; NCCL loaded at run time)")
  else()
    message(STATUS "nuvec: nccl.h not found (NUVEC_NCCL_INCLUDE): no nccl backend")
  endif()
  target_sources(nuvec PRIVATE $<TARGET_OBJECTS:nuvec_cuda>)
  # Only the forwarding file sees the define, so the other objects are the
  # same with and without CUDA (ccache shares them between the two builds).
  set_source_files_properties(${CMAKE_CURRENT_SOURCE_DIR}/src/backend/gpu.cpp
    PROPERTIES COMPILE_DEFINITIONS NUVEC_WITH_CUDA)
  target_link_libraries(nuvec PUBLIC CUDA::cudart_static CUDA::cublas CUDA::cublasLt ${NUVEC_NVRTC_LIB})
  set(NUVEC_WITH_CUDA ON)
  message(STATUS "nuvec: CUDA backend on (${CMAKE_CUDA_COMPILER}, architectures ${CMAKE_CUDA_ARCHITECTURES})")
else()
  message(STATUS "nuvec: CUDA backend off")
endif()
