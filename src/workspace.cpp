// SPDX-License-Identifier: BSL-1.0
#include <sandbox/workspace.hpp>
