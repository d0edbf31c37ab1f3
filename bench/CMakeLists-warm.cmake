# bench/warm: end to end through each driver, cold and from sandboxes started ahead, against host.
add_executable(bench_warm ${CMAKE_CURRENT_LIST_DIR}/warm.cpp)
target_link_libraries(bench_warm PRIVATE sandbox::sandbox sandbox_compile_options)
