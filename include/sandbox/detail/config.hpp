// SPDX-License-Identifier: BSL-1.0
#ifndef SANDBOX_DETAIL_CONFIG_HPP
#define SANDBOX_DETAIL_CONFIG_HPP

namespace boost::asio {}
namespace boost::json {}

namespace sandbox {
namespace asio = boost::asio;
namespace json = boost::json;
}  // namespace sandbox

#endif
