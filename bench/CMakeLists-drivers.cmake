# bench/drivers: launch overhead of each driver against the same tool started directly.
add_executable(bench_drivers ${CMAKE_CURRENT_LIST_DIR}/drivers.cpp)
target_link_libraries(bench_drivers PRIVATE sandbox_internal sandbox_compile_options)
