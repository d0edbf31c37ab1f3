# bench_peers: sandbox-run --batch against Python asyncio, GNU parallel and xargs -P on the
# same batches (bench/peers/run.sh). Run with `cmake --build build --target bench_peers`.
if(TARGET sandbox-run)
    add_custom_target(bench_peers
        COMMAND ${CMAKE_CURRENT_LIST_DIR}/peers/run.sh --sandbox-run $<TARGET_FILE:sandbox-run>
        DEPENDS sandbox-run
        WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
        USES_TERMINAL
        COMMENT "sandbox-run --batch vs Python asyncio, GNU parallel, xargs -P")
endif()
