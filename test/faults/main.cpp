// SPDX-License-Identifier: BSL-1.0
#define BOOST_TEST_MODULE sandbox fault injection tests
#include <boost/test/unit_test.hpp>
