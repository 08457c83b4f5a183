# Helpers shared by every library and tool of the project.
#
# Libraries are plain static libraries that link MLIR through
# mlir_target_link_libraries(), so the same tree builds against the static MLIR
# archives or, with -DMLIR_LINK_MLIR_DYLIB=ON, against libMLIR.so (much faster
# links on small machines). Every library joins the FP8MLIRTargets export set
# so that downstream compilers can find_package(FP8MLIR).

set(FP8_INSTALL_PACKAGE_DIR "lib/cmake/fp8mlir")

# Sanitizer builds (scripts/sanitize.sh, cmake/caches/sanitize.cmake):
# FP8_SANITIZER_FLAGS instruments every target of the project. MLIR and LLVM
# stay the uninstrumented Debian libraries. The flags are also interface
# options of the exported libraries: a compiler that links the instrumented
# static libraries needs the same sanitizer runtime, and is built with the
# same flags (test/Integration/downstream-package.mlir).
set(FP8_SANITIZER_FLAGS "" CACHE STRING
  "Compile and link flags (a ;-list) for every target, e.g. -fsanitize=address")
if(FP8_BUILD_FUZZER)
  # Coverage for libFuzzer in everything the fuzz target links from here.
  list(APPEND FP8_SANITIZER_FLAGS -fsanitize=fuzzer-no-link)
endif()
add_compile_options(${FP8_SANITIZER_FLAGS})
add_link_options(${FP8_SANITIZER_FLAGS})
if(FP8_SANITIZER_FLAGS)
  # Shared libraries get the sanitizer runtime from the executable that
  # loads them, so they cannot be linked with every symbol defined (as
  # HandleLLVMOptions does for LLVM_USE_SANITIZER).
  string(REPLACE "-Wl,-z,defs" "" CMAKE_SHARED_LINKER_FLAGS
         "${CMAKE_SHARED_LINKER_FLAGS}")
endif()

# Precompiled headers: lib/PCH/MLIRHeaders.h (Debian's MLIR and LLVM headers)
# is compiled once per build tree, by the FP8PrecompiledHeaders object
# library, and reused by every target that uses MLIR (a reusing target must
# be compiled with the same flags; everything here is). Parsing those headers
# and instantiating their templates is most of each translation unit's time.
option(FP8_PRECOMPILED_HEADERS
  "Compile the MLIR/LLVM headers once and reuse them in every target." ON)

# Called once, after the include directories are set (CMakeLists.txt).
function(fp8_add_precompiled_headers)
  if(NOT FP8_PRECOMPILED_HEADERS)
    return()
  endif()
  add_library(FP8PrecompiledHeaders OBJECT
    ${PROJECT_SOURCE_DIR}/lib/PCH/MLIRHeaders.cpp)
  set_target_properties(FP8PrecompiledHeaders PROPERTIES
    POSITION_INDEPENDENT_CODE ON)
  target_precompile_headers(FP8PrecompiledHeaders PRIVATE
    ${PROJECT_SOURCE_DIR}/lib/PCH/MLIRHeaders.h)
endfunction()

# fp8_use_precompiled_headers(target): compile target with the shared PCH.
function(fp8_use_precompiled_headers target)
  if(TARGET FP8PrecompiledHeaders)
    target_precompile_headers(${target} REUSE_FROM FP8PrecompiledHeaders)
  endif()
endfunction()

# add_fp8_library(name src...
#   [DEPENDS tablegen-targets...]
#   [LINK_LIBS project-libraries...]
#   [MLIR_LIBS mlir-libraries...])
function(add_fp8_library name)
  cmake_parse_arguments(ARG "" "" "DEPENDS;LINK_LIBS;MLIR_LIBS" ${ARGN})
  add_library(${name} STATIC ${ARG_UNPARSED_ARGUMENTS})
  add_library(FP8MLIR::${name} ALIAS ${name})
  target_include_directories(${name} PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
    $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/include>
    $<INSTALL_INTERFACE:include>)
  if(ARG_DEPENDS)
    add_dependencies(${name} ${ARG_DEPENDS})
  endif()
  if(ARG_LINK_LIBS)
    target_link_libraries(${name} PUBLIC ${ARG_LINK_LIBS})
  endif()
  if(ARG_MLIR_LIBS)
    # Debian's LLVM is one shared libLLVM.so whichever way MLIR is linked.
    mlir_target_link_libraries(${name} PUBLIC ${ARG_MLIR_LIBS})
    target_link_libraries(${name} PUBLIC LLVM)
    fp8_use_precompiled_headers(${name})
  endif()
  set_target_properties(${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  if(FP8_SANITIZER_FLAGS)
    target_compile_options(${name} INTERFACE ${FP8_SANITIZER_FLAGS})
    target_link_options(${name} INTERFACE ${FP8_SANITIZER_FLAGS})
  endif()
  install(TARGETS ${name} EXPORT FP8MLIRTargets
    ARCHIVE DESTINATION lib
    LIBRARY DESTINATION lib)
  set_property(GLOBAL APPEND PROPERTY FP8_ALL_LIBS ${name})
endfunction()

# add_fp8_tool(name src... [LINK_LIBS ...] [MLIR_LIBS ...])
function(add_fp8_tool name)
  cmake_parse_arguments(ARG "" "" "LINK_LIBS;MLIR_LIBS" ${ARGN})
  add_executable(${name} ${ARG_UNPARSED_ARGUMENTS})
  target_link_libraries(${name} PRIVATE ${ARG_LINK_LIBS})
  if(ARG_MLIR_LIBS)
    mlir_target_link_libraries(${name} PRIVATE ${ARG_MLIR_LIBS})
    target_link_libraries(${name} PRIVATE LLVM)
    fp8_use_precompiled_headers(${name})
  endif()
  install(TARGETS ${name} EXPORT FP8MLIRTargets RUNTIME DESTINATION bin)
endfunction()
