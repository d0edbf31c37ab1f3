# `cpack -G DEB` in the build dir: one package, "sandbox", with everything the install rules
# install (library, headers, CMake and pkg-config files, sandbox-run with its manual page
# and bash completion, the seccomp helper). One package because the tool and the library
# are one release; a "libsandbox-dev" would, by Debian's naming, hold only what building
# against the library needs, and people looking for sandbox-run would not find it.

set(SANDBOX_PACKAGE_MAINTAINER "sandbox maintainers <maintainers@users.noreply.a-seed-b7080986.example>"
    CACHE STRING "The Maintainer field of the .deb")

set(CPACK_PACKAGE_NAME sandbox)
set(CPACK_PACKAGE_VENDOR sandbox)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "${SANDBOX_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
# Lines of at most 80 columns, as Debian's tools expect.
set(CPACK_PACKAGE_DESCRIPTION [[
A C++20 library and the sandbox-run command: wall and idle timeouts,
memory and disk limits, output caps, a filtered environment, network on
or off, readable and writable mounts, on the host, under Landlock, bubblewrap,
firejail, docker or podman. sandbox-run runs one command or a batch of
JSON lines.]])
set(CPACK_RESOURCE_FILE_LICENSE "${PROJECT_SOURCE_DIR}/LICENSE")
# The library looks for its seccomp helper at the libexec path it was built with, so the
# package installs under the prefix the build was configured for (-DCMAKE_INSTALL_PREFIX=/usr
# for a system package).
set(CPACK_PACKAGING_INSTALL_PREFIX "${CMAKE_INSTALL_PREFIX}")

# Debug information stays in the build tree: programs are stripped, archives lose only it.
set(CPACK_STRIP_FILES ON)
if(CMAKE_STRIP)
    set(CPACK_SANDBOX_STRIP "${CMAKE_STRIP}")
    set(CPACK_PRE_BUILD_SCRIPTS "${CMAKE_CURRENT_LIST_DIR}/SandboxStripArchives.cmake")
endif()

set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # sandbox_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# Runtime libraries (libboost-json, libseccomp2, libstdc++) from what the binaries link.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# What building against the installed headers needs; recommended, not required, so that
# sandbox-run alone installs without a compiler's worth of headers.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS
    "libboost${Boost_VERSION_MAJOR}.${Boost_VERSION_MINOR}-dev, libboost-json${Boost_VERSION_MAJOR}.${Boost_VERSION_MINOR}-dev, libseccomp-dev")
# The isolating drivers' launchers.
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "bubblewrap, firejail, docker.io | podman")

set(CPACK_GENERATOR DEB)
include(CPack)
