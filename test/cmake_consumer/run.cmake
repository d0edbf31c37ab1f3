# Installs the built library into a scratch prefix, then configures, builds and runs a
# consumer project against it with find_package(sandbox).
file(REMOVE_RECURSE "${WORK_DIR}")
execute_process(COMMAND "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${WORK_DIR}/prefix"
    RESULT_VARIABLE rc)
if(rc)
    message(FATAL_ERROR "install failed: ${rc}")
endif()
# The helper firejail's runs start their command through (src/helpers/seccomp_exec.cpp).
include(GNUInstallDirs)
if(NOT EXISTS "${WORK_DIR}/prefix/${CMAKE_INSTALL_LIBEXECDIR}/sandbox/sandbox-seccomp-exec")
    message(FATAL_ERROR "sandbox-seccomp-exec was not installed in ${CMAKE_INSTALL_LIBEXECDIR}/sandbox")
endif()
execute_process(COMMAND "${CMAKE_COMMAND}" -S "${SOURCE_DIR}" -B "${WORK_DIR}/build" -G "${GENERATOR}"
    "-DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix" RESULT_VARIABLE rc)
if(rc)
    message(FATAL_ERROR "configuring the consumer failed: ${rc}")
endif()
execute_process(COMMAND "${CMAKE_COMMAND}" --build "${WORK_DIR}/build" RESULT_VARIABLE rc)
if(rc)
    message(FATAL_ERROR "building the consumer failed: ${rc}")
endif()
execute_process(COMMAND "${WORK_DIR}/build/consumer" RESULT_VARIABLE rc)
if(rc)
    message(FATAL_ERROR "the consumer failed: ${rc}")
endif()
