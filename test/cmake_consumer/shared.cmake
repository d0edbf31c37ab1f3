# Builds the library alone as a shared library (-DBUILD_SHARED_LIBS=ON), installs it into a
# scratch prefix, builds and runs the consumer project against it, and checks what
# libsandbox.so exports: the public API, and of sandbox::detail only what the public headers'
# inline and template code calls, besides the std and Asio instantiations g++ cannot hide
# (the allow-lists below).
#
# -D arguments: PROJECT_DIR (the library's source), SOURCE_DIR (the consumer's), WORK_DIR,
# GENERATOR, and optionally CXX_COMPILER, CXX_COMPILER_LAUNCHER, BUILD_TYPE.

# Exported symbols that name sandbox::detail, as `nm -DC` prints them (regular expressions,
# matched against the whole symbol). Each one is here for a reason; anything else fails.
#
# What the public headers need:
set(allowed_detail_symbols
    # async_execute's handler adapter (command_runner.hpp) turns the runner's exception into
    # the handler's error code.
    "sandbox::detail::to_error_code\\(std::__exception_ptr::exception_ptr\\)"
    # ... and makes the result say the failure (command_runner.hpp).
    "sandbox::detail::describe_failure\\(sandbox::exec_result&, std::__exception_ptr::exception_ptr, boost::system::error_code\\)"
    # process's async_read_some and async_write_some start their operation on the state
    # they hold, so that an operation survives a move of the process (process.hpp).
    "sandbox::process::start_(read|write)_some\\(std::shared_ptr<sandbox::detail::process_state> const&, .*\\)"
    # ... and async_wait its wait, for the same reason (process.hpp).
    "sandbox::process::start_wait\\(std::shared_ptr<sandbox::detail::process_state>, .*\\)"
    # process is made by the library from its state, which users never see but which the
    # constructor's signature names (process.hpp).
    "sandbox::process::process\\(std::shared_ptr<sandbox::detail::process_state>\\)")
# Instantiations of std and Asio templates over internal types. libstdc++ and Asio give
# their templates default visibility explicitly, and g++ then keeps it whatever the template
# arguments' visibility, so hidden visibility cannot keep these in; only the library's own
# code uses them.
set(allowed_instantiations
    # std::packaged_task<spawn_outcome()>: a long-lived process waits for its spawn
    # (src/run/process.cpp).
    "(typeinfo|typeinfo name|vtable) for std::__future_base::_Result<sandbox::detail::spawn_outcome>"
    "(typeinfo|typeinfo name|vtable) for std::__future_base::_Task_state_base<sandbox::detail::spawn_outcome \\(\\)>"
    # asio::use_service<offload_service>: results handed back from the library's worker
    # threads (src/run/offload.cpp).
    "boost::asio::execution_context::service\\* boost::asio::detail::service_registry::create<sandbox::detail::offload_service, boost::asio::execution_context>\\(void\\*\\)")

# What must be exported for users of the shared library: a function, a class users derive
# from (its typeinfo), an exception users catch, and what a template in a header calls.
set(required_symbols
    "sandbox::make_runner\\(sandbox::execution_policy, sandbox::driver, sandbox::driver_options\\)"
    "typeinfo for sandbox::command_runner"
    "typeinfo for sandbox::launch_error"
    "sandbox::process::start_read_some\\(")

function(run what)
    execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
    if(rc)
        message(FATAL_ERROR "${what} failed: ${rc}")
    endif()
endfunction()

file(REMOVE_RECURSE "${WORK_DIR}")
set(build_options)
foreach(var IN ITEMS CXX_COMPILER CXX_COMPILER_LAUNCHER BUILD_TYPE)
    if(${var})
        list(APPEND build_options "-DCMAKE_${var}=${${var}}")
    endif()
endforeach()
run("configuring the shared library" "${CMAKE_COMMAND}" -S "${PROJECT_DIR}" -B "${WORK_DIR}/lib" -G "${GENERATOR}"
    ${build_options} -DBUILD_SHARED_LIBS=ON -DCMAKE_INSTALL_LIBDIR=lib -DSANDBOX_WERROR=ON
    -DSANDBOX_BUILD_TESTS=OFF -DSANDBOX_BUILD_EXAMPLES=OFF -DSANDBOX_BUILD_BENCH=OFF -DSANDBOX_BUILD_CLI=OFF
    -DSANDBOX_BUILD_DOCS=OFF)
run("building the shared library" "${CMAKE_COMMAND}" --build "${WORK_DIR}/lib" -j2)
run("installing the shared library" "${CMAKE_COMMAND}" --install "${WORK_DIR}/lib" --prefix "${WORK_DIR}/prefix")

set(library "${WORK_DIR}/prefix/lib/libsandbox.so")
if(NOT EXISTS "${library}")
    message(FATAL_ERROR "no ${library} was installed")
endif()

run("configuring the consumer" "${CMAKE_COMMAND}" -S "${SOURCE_DIR}" -B "${WORK_DIR}/consumer" -G "${GENERATOR}"
    ${build_options} "-DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix")
run("building the consumer" "${CMAKE_COMMAND}" --build "${WORK_DIR}/consumer")
run("the consumer" "${WORK_DIR}/consumer/consumer")
execute_process(COMMAND ldd "${WORK_DIR}/consumer/consumer" OUTPUT_VARIABLE linked)
string(REGEX MATCH "libsandbox\\.so[^\n]*" loaded "${linked}")
string(FIND "${loaded}" "=> ${WORK_DIR}/prefix/lib/" at)
if(at EQUAL -1)
    message(FATAL_ERROR "the consumer does not load the installed libsandbox.so:\n${linked}")
endif()

find_program(NM nm REQUIRED)
execute_process(COMMAND "${NM}" -DC --defined-only "${library}" OUTPUT_VARIABLE exported RESULT_VARIABLE rc)
if(rc)
    message(FATAL_ERROR "nm -DC --defined-only ${library} failed: ${rc}")
endif()
string(REPLACE ";" "\\;" exported "${exported}")
string(REPLACE "\n" ";" exported "${exported}")

set(offending)
set(public_count 0)
foreach(line IN LISTS exported)
    string(REGEX REPLACE "^[0-9a-f]+ [A-Za-z] " "" symbol "${line}")
    if(symbol MATCHES "sandbox::")
        math(EXPR public_count "${public_count} + 1")
    endif()
    if(NOT symbol MATCHES "sandbox::detail::")
        continue()
    endif()
    set(allowed FALSE)
    foreach(pattern IN LISTS allowed_detail_symbols allowed_instantiations)
        if(symbol MATCHES "^${pattern}$")
            set(allowed TRUE)
        endif()
    endforeach()
    if(NOT allowed)
        list(APPEND offending "${symbol}")
    endif()
endforeach()
if(offending)
    list(REMOVE_DUPLICATES offending)
    list(JOIN offending "\n  " offending)
    message(FATAL_ERROR "libsandbox.so exports symbols of sandbox::detail that no public header needs "
                        "(hide them, or add them to the allow-list in this file if one does):\n  ${offending}")
endif()

foreach(pattern IN LISTS required_symbols)
    set(found FALSE)
    foreach(line IN LISTS exported)
        string(REGEX REPLACE "^[0-9a-f]+ [A-Za-z] " "" symbol "${line}")
        if(symbol MATCHES "^${pattern}")
            set(found TRUE)
            break()
        endif()
    endforeach()
    if(NOT found)
        message(FATAL_ERROR "libsandbox.so does not export ${pattern}")
    endif()
endforeach()
message(STATUS "libsandbox.so exports ${public_count} symbols of namespace sandbox, none of sandbox::detail beyond the allow-list")
