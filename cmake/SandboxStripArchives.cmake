# Run by cpack on the staged tree before packaging (CPACK_PRE_BUILD_SCRIPTS): drops the debug
# information from static archives, which CPACK_STRIP_FILES leaves alone (it would strip
# their symbols), as Debian's own packages do.
file(GLOB_RECURSE archives "${CPACK_TEMPORARY_DIRECTORY}/*.a")
foreach(archive IN LISTS archives)
    execute_process(COMMAND "${CPACK_SANDBOX_STRIP}" --strip-debug "${archive}" RESULT_VARIABLE rc)
    if(rc)
        message(FATAL_ERROR "${CPACK_SANDBOX_STRIP} --strip-debug ${archive} failed: ${rc}")
    endif()
endforeach()
