# bench/landlock: the landlock driver's launch against the host driver and raw posix_spawn.
add_executable(bench_landlock ${CMAKE_CURRENT_LIST_DIR}/landlock.cpp)
target_link_libraries(bench_landlock PRIVATE sandbox::sandbox sandbox_compile_options)
# The launcher just built, not an installed one.
target_compile_definitions(bench_landlock PRIVATE SANDBOX_BENCH_LANDLOCK_EXEC="$<TARGET_FILE:sandbox-landlock-exec>")
add_dependencies(bench_landlock sandbox-landlock-exec)
