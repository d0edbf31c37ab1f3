# bench/slurm: driver::slurm against bare srun running the same argv, one job at a time and
# a 1,000-job batch through `sandbox-run --batch`. Needs a Slurm cluster (scripts/setup-slurm.sh).
add_executable(bench_slurm ${CMAKE_CURRENT_LIST_DIR}/slurm.cpp)
target_link_libraries(bench_slurm PRIVATE sandbox::sandbox sandbox_compile_options Threads::Threads)
# The node program of the library runs and the batch driver of the batch part.
target_compile_definitions(bench_slurm PRIVATE SANDBOX_BENCH_RUN_BIN="$<TARGET_FILE:sandbox-run>")
add_dependencies(bench_slurm sandbox-run)
