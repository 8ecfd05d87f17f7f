# Components: one CMake target per layer of runara, each compiled from its folders and seeing
# only its own headers and those of the components it names in DEPENDS (and theirs). That is
# how the build enforces the direction base -> engines -> the run core -> primitives -> the
# command (docs/architecture.md): an #include of a component above or beside is "No such
# file", not a review finding.
#
# How: each component gets a folder of its own in the build tree, include-views/<name>/, holding
# one symbolic link per source folder ("load" -> runtime/load). Sources spell project headers
# "folder/file.hpp"; the include path of a component is its own view plus, through the usage
# requirements of DEPENDS, the views of everything below it. The public headers (include/) are
# every component's; the Lua headers only those of the components that link LuaJIT.
function(runara_component name)
  cmake_parse_arguments(PARSE_ARGV 1 C "" "" "FOLDERS;DEPENDS;LIBS;SYSTEM_INCLUDES")
  set(view ${CMAKE_BINARY_DIR}/include-views/${name})
  file(MAKE_DIRECTORY ${view})
  set(sources)
  foreach(folder IN LISTS C_FOLDERS)
    file(GLOB found CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/${folder}/*.cpp)
    list(APPEND sources ${found})
    get_filename_component(leaf ${folder} NAME)
    file(CREATE_LINK ${PROJECT_SOURCE_DIR}/${folder} ${view}/${leaf} SYMBOLIC)
  endforeach()
  add_library(${name} OBJECT ${sources})
  set_target_properties(${name} PROPERTIES CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
  target_include_directories(${name} PUBLIC ${view} ${PROJECT_SOURCE_DIR}/include)
  if(C_SYSTEM_INCLUDES)
    target_include_directories(${name} SYSTEM PUBLIC ${C_SYSTEM_INCLUDES})
  endif()
  target_link_libraries(${name} PUBLIC ${C_DEPENDS} ${C_LIBS})
  # The component's whole include path, one folder a line, for tests/layers.sh.
  file(GENERATE OUTPUT ${CMAKE_BINARY_DIR}/include-views/${name}.include-path
    CONTENT "$<JOIN:$<TARGET_PROPERTY:${name},INCLUDE_DIRECTORIES>,\n>\n")
  target_compile_definitions(${name} PRIVATE ${RUNARA_COMPONENT_DEFINITIONS})
  if(RUNARA_FUZZ)  # coverage for libFuzzer (clang only; tests/fuzz/README.md)
    target_compile_options(${name} PRIVATE -fsanitize=fuzzer-no-link)
  endif()
  # The unoptimised (sanitizer) build, which CI makes after the normal one on two cores: the
  # headers most files include are parsed once per component, not in each file. Not in optimised
  # builds: there GCC 12 reports false -Warray-bounds inside libstdc++ once its headers come
  # precompiled.
  # The first component compiles the header once; the others, made with the same flags and
  # definitions, reuse it.
  if(CMAKE_BUILD_TYPE STREQUAL "Debug")
    if(name STREQUAL "runara_base")
      target_precompile_headers(${name} PRIVATE <nlohmann/json.hpp> <string> <string_view> <vector> <map>
        <memory> <functional> <optional> <chrono> <mutex> <atomic> <cstdint>)
    else()
      target_precompile_headers(${name} REUSE_FROM runara_base)
    endif()
  endif()
endfunction()

# The objects of components, for a target that links them (object libraries add their objects
# only to what links them directly, not transitively).
function(runara_link_components target)
  foreach(component IN LISTS ARGN)
    target_link_libraries(${target} PRIVATE ${component})
  endforeach()
endfunction()
