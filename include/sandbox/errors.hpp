// SPDX-License-Identifier: BSL-1.0
#ifndef SANDBOX_ERRORS_HPP
#define SANDBOX_ERRORS_HPP

#include <stdexcept>
#include <string>

namespace sandbox {

/// A driver could not launch the command: its binary is missing or unusable, its engine is
/// not running, or its work dir could not be made. The message says which and why, e.g.
/// "Failed to start docker: /usr/bin/docker: No such file or directory".
class launch_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

}  // namespace sandbox

#endif
