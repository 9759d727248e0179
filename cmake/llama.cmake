# llama.cmake — the pinned llama.cpp, built as static CPU libraries (llama,
# ggml, ggml-cpu, ggml-base: no tools, examples, server or tests) in one
# build folder that the release and sanitizer trees share, and imported as
# the target tt::llama. TABLETALK_LLAMA_DIR points at the source
# (scripts/fetch-llama.sh unpacks the release there by default);
# TABLETALK_LLAMA_BUILD is where it is built and cached between runs.
include(ExternalProject)

set(TABLETALK_LLAMA_DIR "${CMAKE_SOURCE_DIR}/third_party/llama.cpp" CACHE PATH
    "llama.cpp checkout of the pinned release (v0.4.0, node-llama-cpp 3.21.1)")
set(TABLETALK_LLAMA_BUILD "${CMAKE_SOURCE_DIR}/build-llama" CACHE PATH
    "Where llama.cpp is built (shared by all build trees)")
option(TT_LLAMA_NATIVE "Build llama.cpp for this machine's CPU (-march=native)" ON)
option(TT_LLAMA_OPENMP "Use OpenMP threads in ggml (OFF: ggml's own pool)" OFF)

if(NOT EXISTS "${TABLETALK_LLAMA_DIR}/include/llama.h")
  message(FATAL_ERROR "llama.cpp not found in ${TABLETALK_LLAMA_DIR}: run scripts/fetch-llama.sh "
                      "or pass -DTABLETALK_LLAMA_DIR=/path/to/llama.cpp (release v0.4.0)")
endif()

# One compiler for the shared build, whatever compiles the project itself.
find_program(TT_LLAMA_CC NAMES gcc cc)
find_program(TT_LLAMA_CXX NAMES g++ c++)
include(ProcessorCount)
ProcessorCount(TT_NPROC)
if(TT_NPROC EQUAL 0)
  set(TT_NPROC 2)
endif()

# -march=native turns on AMX on CPUs that have it, but its kernels fault
# where the OS does not grant AMX state (seen in VMs): keep AMX off.
set(TT_LLAMA_FLAGS "")
if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64" AND TT_LLAMA_NATIVE)
  set(TT_LLAMA_FLAGS "-mno-amx-tile -mno-amx-int8 -mno-amx-bf16")
endif()

set(TT_LLAMA_LIBS
  "${TABLETALK_LLAMA_BUILD}/src/libllama.a"
  "${TABLETALK_LLAMA_BUILD}/ggml/src/libggml.a"
  "${TABLETALK_LLAMA_BUILD}/ggml/src/libggml-cpu.a"
  "${TABLETALK_LLAMA_BUILD}/ggml/src/libggml-base.a")

ExternalProject_Add(llama_cpp
  SOURCE_DIR "${TABLETALK_LLAMA_DIR}"
  BINARY_DIR "${TABLETALK_LLAMA_BUILD}"
  CMAKE_ARGS
    -DCMAKE_BUILD_TYPE=Release
    -DCMAKE_C_COMPILER=${TT_LLAMA_CC}
    -DCMAKE_CXX_COMPILER=${TT_LLAMA_CXX}
    -DBUILD_SHARED_LIBS=OFF
    -DCMAKE_POSITION_INDEPENDENT_CODE=ON
    -DLLAMA_BUILD_COMMON=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_TOOLS=OFF
    -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_APP=OFF
    -DLLAMA_OPENSSL=OFF -DGGML_CCACHE=OFF
    -DGGML_NATIVE=${TT_LLAMA_NATIVE}
    "-DCMAKE_C_FLAGS=${TT_LLAMA_FLAGS}"
    "-DCMAKE_CXX_FLAGS=${TT_LLAMA_FLAGS}"
    -DGGML_OPENMP=${TT_LLAMA_OPENMP}
  BUILD_COMMAND ${CMAKE_COMMAND} --build <BINARY_DIR> --target llama -j ${TT_NPROC}
  INSTALL_COMMAND ""
  BUILD_BYPRODUCTS ${TT_LLAMA_LIBS}
  LOG_CONFIGURE ON
  LOG_BUILD ON
  LOG_OUTPUT_ON_FAILURE ON)

add_library(tt_llama_libs INTERFACE)
add_dependencies(tt_llama_libs llama_cpp)
target_include_directories(tt_llama_libs SYSTEM INTERFACE
  "${TABLETALK_LLAMA_DIR}/include" "${TABLETALK_LLAMA_DIR}/ggml/include")
# The C++ runtime llama.cpp needs is linked in statically: as a shared
# library, libstdc++ cost every start of the program about 1,700 symbol
# lookups (0.5 ms or more), paid by `tabletalk sql` that never runs C++.
# Not under the sanitizers, which supply their own operator new.
set(TT_LLAMA_STDCXX stdc++)
if(NOT TT_SANITIZE)
  execute_process(COMMAND ${TT_LLAMA_CXX} -print-file-name=libstdc++.a
                  OUTPUT_VARIABLE TT_STDCXX_A OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(IS_ABSOLUTE "${TT_STDCXX_A}" AND EXISTS "${TT_STDCXX_A}")
    set(TT_LLAMA_STDCXX "${TT_STDCXX_A}")
    target_link_options(tt_llama_libs INTERFACE -static-libgcc)
  endif()
endif()
target_link_libraries(tt_llama_libs INTERFACE ${TT_LLAMA_LIBS} ${TT_LLAMA_STDCXX} m Threads::Threads)
if(TT_LLAMA_OPENMP)
  target_link_libraries(tt_llama_libs INTERFACE gomp)
endif()
add_library(tt::llama ALIAS tt_llama_libs)

# llama.cpp's headers alone, for the code that calls it through the table
# loaded at run time (src/llm/llama_api.h).
add_library(tt_llama_headers INTERFACE)
target_include_directories(tt_llama_headers SYSTEM INTERFACE
  "${TABLETALK_LLAMA_DIR}/include" "${TABLETALK_LLAMA_DIR}/ggml/include")
add_library(tt::llama_headers ALIAS tt_llama_headers)

# libtabletalk-llama.so: llama.cpp's static libraries linked whole into a
# shared object of their own (the pinned build is position-independent for
# it), with the C++ runtime inside, exporting only llama.cpp's C API
# (cmake/llama.map). The program loads it when the embedded engine is first
# used (src/llm/llama_api.c), so that no other command pays for llama.cpp's
# static constructors, relocations and size at start (issue 30). It is
# written beside the program and installed under LIBDIR/tabletalk/, which
# the program finds relative to its own folder.
add_library(tabletalk-llama SHARED src/llm/llama_lib.c)
target_include_directories(tabletalk-llama PRIVATE src ${CMAKE_BINARY_DIR}/generated)
add_dependencies(tabletalk-llama llama_cpp)
target_link_libraries(tabletalk-llama PRIVATE tt_llama_headers
  -Wl,--whole-archive ${TT_LLAMA_LIBS} -Wl,--no-whole-archive ${TT_LLAMA_STDCXX} m Threads::Threads)
if(TT_LLAMA_OPENMP)
  target_link_libraries(tabletalk-llama PRIVATE gomp)
endif()
if(IS_ABSOLUTE "${TT_LLAMA_STDCXX}")
  target_link_options(tabletalk-llama PRIVATE -static-libgcc)
endif()
target_link_options(tabletalk-llama PRIVATE -Wl,--version-script=${CMAKE_CURRENT_LIST_DIR}/llama.map)
if(NOT TT_SANITIZE) # the sanitizers' runtime is the program's, so left undefined here
  target_link_options(tabletalk-llama PRIVATE -Wl,--no-undefined)
endif()
set_target_properties(tabletalk-llama PROPERTIES
  LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}
  LINK_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/llama.map)
