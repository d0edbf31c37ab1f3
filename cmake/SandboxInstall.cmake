include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(SANDBOX_CMAKE_DIR "${CMAKE_INSTALL_LIBDIR}/cmake/sandbox")

install(TARGETS sandbox EXPORT sandboxTargets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
    RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS sandbox-seccomp-exec sandbox-landlock-exec sandbox-spawn sandbox-sweep RUNTIME DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/sandbox)
install(DIRECTORY "${PROJECT_SOURCE_DIR}/include/sandbox" DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# Where Debian's policy wants a package's licence: share/doc/<package>/copyright.
install(FILES "${PROJECT_SOURCE_DIR}/LICENSE" DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/sandbox RENAME copyright)
install(FILES "${PROJECT_BINARY_DIR}/include/sandbox/version.hpp" DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/sandbox)
install(FILES "${PROJECT_BINARY_DIR}/include/sandbox/detail/export.hpp" DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/sandbox/detail)
install(EXPORT sandboxTargets NAMESPACE sandbox:: DESTINATION ${SANDBOX_CMAKE_DIR})

configure_package_config_file("${PROJECT_SOURCE_DIR}/cmake/sandboxConfig.cmake.in"
    "${PROJECT_BINARY_DIR}/sandboxConfig.cmake" INSTALL_DESTINATION ${SANDBOX_CMAKE_DIR})
write_basic_package_version_file("${PROJECT_BINARY_DIR}/sandboxConfigVersion.cmake"
    COMPATIBILITY SameMinorVersion)  # 0.x: a minor version may break the API
install(FILES "${PROJECT_BINARY_DIR}/sandboxConfig.cmake" "${PROJECT_BINARY_DIR}/sandboxConfigVersion.cmake"
    DESTINATION ${SANDBOX_CMAKE_DIR})

# For builds without CMake. Boost installs no .pc files, hence -lboost_json in Libs.
file(RELATIVE_PATH SANDBOX_PC_PREFIX "${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig" "${CMAKE_INSTALL_PREFIX}")
string(REGEX REPLACE "/$" "" SANDBOX_PC_PREFIX "${SANDBOX_PC_PREFIX}")
get_target_property(sandbox_type sandbox TYPE)
if(sandbox_type STREQUAL "STATIC_LIBRARY")
    set(SANDBOX_PC_SECCOMP Requires)  # an archive's users link libseccomp themselves
    set(SANDBOX_PC_CFLAGS " -DSANDBOX_STATIC_DEFINE")  # SANDBOX_DECL expands to nothing
else()
    set(SANDBOX_PC_SECCOMP Requires.private)
    set(SANDBOX_PC_CFLAGS "")
endif()
configure_file("${PROJECT_SOURCE_DIR}/cmake/sandbox.pc.in" "${PROJECT_BINARY_DIR}/sandbox.pc" @ONLY)
install(FILES "${PROJECT_BINARY_DIR}/sandbox.pc" DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
