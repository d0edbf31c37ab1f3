// SPDX-License-Identifier: BSL-1.0
#define BOOST_TEST_MODULE sandbox session and process tests
#include <boost/test/unit_test.hpp>
