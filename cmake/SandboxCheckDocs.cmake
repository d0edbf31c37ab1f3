# Run by test_docs (cmake -P, with BUILD_DIR and HAVE_DOCS): builds the API reference, target
# sandbox_doc, and fails on any Doxygen warning, listing them.
if(NOT HAVE_DOCS)
    if("$ENV{CI}" STREQUAL "true")
        message(FATAL_ERROR "The API reference is not built: Doxygen was not found (scripts/install-deps.sh "
                            "installs it) or SANDBOX_BUILD_DOCS is OFF. Under CI=true that is a failure.")
    endif()
    message("test_docs skipped: Doxygen was not found, or SANDBOX_BUILD_DOCS is OFF")
    return()
endif()
execute_process(COMMAND "${CMAKE_COMMAND}" --build "${BUILD_DIR}" --target sandbox_doc
    RESULT_VARIABLE rc OUTPUT_VARIABLE output ERROR_VARIABLE output)
message("${output}")
# WARN_AS_ERROR prints Doxygen's warnings as "error:".
string(REGEX MATCHALL "[^\n]*: (warning|error): " warnings "${output}")
list(LENGTH warnings count)
if(rc OR count)
    message(FATAL_ERROR "the API reference has ${count} Doxygen warnings (building it exited with ${rc})")
endif()
