// SPDX-License-Identifier: BSL-1.0
// Runs files through a fuzz target without libFuzzer, so that the seed corpora and the saved
// crash inputs are replayed by every build of the test suite (plain, ASan+UBSan, TSan).
// Usage: fuzz_replay_<target> <file or directory>...  A missing path is skipped (a target
// may have no regressions yet); no input at all is an error.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

int main(int argc, char** argv)
{
    namespace fs = std::filesystem;
    std::vector<fs::path> files;
    for (int i = 1; i < argc; ++i) {
        const fs::path p = argv[i];
        std::error_code ec;
        if (fs::is_directory(p, ec)) {
            for (const auto& e : fs::recursive_directory_iterator(p))
                if (e.is_regular_file()) files.push_back(e.path());
        } else if (fs::is_regular_file(p, ec)) {
            files.push_back(p);
        }
    }
    // Sorted, so that a failure reproduces in the same order everywhere.
    std::sort(files.begin(), files.end());
    if (files.empty()) {
        std::fprintf(stderr, "no inputs found\n");
        return 1;
    }
    for (const auto& f : files) {
        std::ifstream in(f, std::ios::binary);
        const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        if (!in.good() && !in.eof()) {
            std::fprintf(stderr, "cannot read %s\n", f.c_str());
            return 1;
        }
        // Named before it runs: a crash leaves the input's name as the last line.
        std::fprintf(stderr, "running %s (%zu bytes)\n", f.c_str(), bytes.size());
        // A copy of exactly the input's size, so ASan sees a read past its end.
        std::vector<std::uint8_t> copy(bytes.begin(), bytes.end());
        LLVMFuzzerTestOneInput(copy.data(), copy.size());
    }
    std::fprintf(stderr, "%zu inputs passed\n", files.size());
    return 0;
}
