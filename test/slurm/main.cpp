// SPDX-License-Identifier: BSL-1.0
#define BOOST_TEST_MODULE sandbox slurm driver tests
#include <boost/test/unit_test.hpp>
