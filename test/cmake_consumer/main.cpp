// A project that only knows the installed package.
#include <sandbox/sandbox.hpp>

#include <iostream>

int main()
{
    auto runner = sandbox::make_runner(sandbox::execution_policy::defaults(), sandbox::driver::host);
    auto result = sandbox::run_sync(*runner, {"echo", "consumer ok"});
    std::cout << result.out;
    return result.success() && result.out == "consumer ok\n" ? 0 : 1;
}
