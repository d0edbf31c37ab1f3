// SPDX-License-Identifier: BSL-1.0
// The containers get the rows of the library's syscall table (sys/syscall_rules.hpp) through
// their engine's profile: the containers' default one (podman's packages ship it; docker takes
// it too) with each row applied. Rules appended to a profile cannot take back what its
// unconditional allow lists allow (podman's lets a container make user namespaces and use
// keyctl; docker 20.10's allows io_uring), so each row's calls are removed from those lists
// first, then refused, or allowed again only with harmless arguments: clone without namespace
// flags, chmod and file creation without set-id bits.
#include "drivers/seccomp_profile.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <mutex>
#include <sstream>
#include <stdexcept>

namespace sandbox::detail {

namespace {

// CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET.
constexpr std::uint64_t namespace_flags = 0x7E020000;
const char* const guarded[] = {"clone", "clone3", "unshare", "setns"};

bool is_guarded(std::string_view name)
{
    for (const char* g : guarded)
        if (name == g) return true;
    return false;
}

// Takes the names `drop` says out of every unconditional allow rule of the profile; with
// `every_rule`, out of every rule whatever its action and conditions (the caller then owns
// those calls entirely: two rules of different actions for one call would conflict).
void remove_from_allow_lists(json::array& syscalls, const std::function<bool(std::string_view)>& drop,
                             bool every_rule = false)
{
    for (auto& r : syscalls) {
        auto& o = r.as_object();
        const auto* action = o.if_contains("action");
        if (!every_rule) {
            if (!action || !action->is_string() || action->as_string() != "SCMP_ACT_ALLOW") continue;
            // Allowed only with a capability: the container has none.
            if (const auto* inc = o.if_contains("includes"); inc && inc->is_object() && inc->as_object().contains("caps"))
                continue;
        }
        auto* names = o.if_contains("names");
        if (!names || !names->is_array()) continue;
        json::array kept;
        for (auto& n : names->as_array())
            if (!(n.is_string() && drop(n.as_string()))) kept.push_back(n);
        *names = std::move(kept);
    }
    // A rule left without names would be refused by the engine.
    json::array rest;
    for (auto& r : syscalls) {
        const auto* names = r.as_object().if_contains("names");
        if (!names || !names->is_array() || !names->as_array().empty()) rest.push_back(std::move(r));
    }
    syscalls = std::move(rest);
}

json::object masked(int index, std::uint64_t mask, std::uint64_t value)
{
    return json::object{{"index", index}, {"value", mask}, {"valueTwo", value}, {"op", "SCMP_CMP_MASKED_EQ"}};
}

json::object rule(std::initializer_list<std::string_view> names, std::string_view action)
{
    json::array n;
    for (auto s : names) n.emplace_back(s);
    return json::object{{"names", std::move(n)}, {"action", action}};
}

std::string read_file(const std::filesystem::path& p)
{
    std::ifstream in(p);
    if (!in) return {};
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// An existing profile file may be used only if this user wrote it and no one else can.
bool trusted_copy(const std::filesystem::path& p, const std::string& content)
{
    const int fd = ::open(p.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return false;
    struct stat st {};
    const bool ok = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == ::geteuid() &&
                    !(st.st_mode & (S_IWGRP | S_IWOTH));
    ::close(fd);
    return ok && read_file(p) == content;
}

}  // namespace

std::string without_user_namespaces(std::string_view profile_json)
{
    json::value v = json::parse(profile_json);
    auto& syscalls = v.as_object().at("syscalls").as_array();
    remove_from_allow_lists(syscalls, is_guarded);
    // clone only without namespace flags; clone3's flags sit in memory seccomp cannot read,
    // so it is refused with ENOSYS and the C library falls back to clone.
    auto clone = rule({"clone"}, "SCMP_ACT_ALLOW");
    clone["args"] = json::array{json::object{
        {"index", 0}, {"value", namespace_flags}, {"valueTwo", 0}, {"op", "SCMP_CMP_MASKED_EQ"}}};
    syscalls.emplace_back(std::move(clone));
    auto clone3 = rule({"clone3"}, "SCMP_ACT_ERRNO");
    clone3["errnoRet"] = 38;  // ENOSYS
    syscalls.emplace_back(std::move(clone3));
    auto refused = rule({"unshare", "setns"}, "SCMP_ACT_ERRNO");
    refused["errnoRet"] = 1;  // EPERM
    syscalls.emplace_back(std::move(refused));
    return json::serialize(v);
}

std::string without_setid_files(std::string_view profile_json)
{
    json::value v = json::parse(profile_json);
    auto& syscalls = v.as_object().at("syscalls").as_array();
    // Which argument holds the mode, and for the open family which holds the flags.
    struct call {
        std::string_view name;
        int mode;
        int flags;  // -1: the call always creates
    };
    static constexpr call calls[] = {{"chmod", 1, -1},  {"fchmod", 1, -1}, {"fchmodat", 2, -1}, {"mknod", 1, -1},
                                     {"mknodat", 2, -1}, {"creat", 1, -1},  {"open", 2, 1},      {"openat", 3, 2}};
    auto listed = [](std::string_view n) {
        for (const auto& c : calls)
            if (c.name == n) return true;
        return n == "openat2";
    };
    remove_from_allow_lists(syscalls, listed);
    constexpr std::uint64_t set_id = 06000, creating = 0100 /* O_CREAT */ | 020000000 /* __O_TMPFILE */;
    auto with_args = [](std::string_view name, std::string_view action, json::array args) {
        auto r = rule({name}, action);
        r["args"] = std::move(args);
        if (action == "SCMP_ACT_ERRNO") r["errnoRet"] = 1;  // EPERM
        return r;
    };
    // Disjoint conditions, each rule one comparison per argument: allowed without set-id
    // bits (or, for open, without creating), refused with either bit when creating.
    for (const auto& c : calls) {
        syscalls.emplace_back(with_args(c.name, "SCMP_ACT_ALLOW", {masked(c.mode, set_id, 0)}));
        for (std::uint64_t bit : {04000, 02000}) {
            json::array refused{masked(c.mode, bit, bit)};
            if (c.flags < 0) {
                syscalls.emplace_back(with_args(c.name, "SCMP_ACT_ERRNO", std::move(refused)));
                continue;
            }
            syscalls.emplace_back(with_args(c.name, "SCMP_ACT_ALLOW",
                                            {masked(c.flags, creating, 0), masked(c.mode, bit, bit)}));
            for (std::uint64_t flag : {0100, 020000000})
                syscalls.emplace_back(with_args(c.name, "SCMP_ACT_ERRNO", {masked(c.flags, flag, flag), masked(c.mode, bit, bit)}));
        }
    }
    // openat2's mode sits in memory a filter cannot read: refused as a kernel without it would.
    auto openat2 = rule({"openat2"}, "SCMP_ACT_ERRNO");
    openat2["errnoRet"] = 38;  // ENOSYS
    syscalls.emplace_back(std::move(openat2));
    return json::serialize(v);
}

std::string with_syscall_rules(std::string_view profile_json, std::uint32_t rules)
{
    std::string out(profile_json);
    const auto all = syscall_rules();
    for (std::size_t i = 0; i < all.size(); ++i) {
        if (!(rules >> i & 1u)) continue;
        const auto& r = all[i];
        switch (r.shape) {
        case rule_shape::namespace_flags: out = without_user_namespaces(out); break;
        case rule_shape::setid_modes: out = without_setid_files(out); break;
        case rule_shape::calls: out = refusing(out, r.calls, r.error); break;
        case rule_shape::unix_socket:
        case rule_shape::any_socket:
        case rule_shape::supervised:
            // A container has its own file system and network: these rows never apply to it.
            throw std::invalid_argument("syscall rule " + std::string(r.id) + " cannot be applied to a container profile");
        }
    }
    return out;
}

std::string refusing(std::string_view profile_json, std::span<const std::string_view> calls, int error)
{
    json::value v = json::parse(profile_json);
    auto& syscalls = v.as_object().at("syscalls").as_array();
    remove_from_allow_lists(syscalls, [&](std::string_view n) {
        for (auto c : calls)
            if (c == n) return true;
        return false;
    }, true);
    json::array names;
    for (auto c : calls) names.emplace_back(c);
    syscalls.emplace_back(json::object{{"names", std::move(names)}, {"action", "SCMP_ACT_ERRNO"}, {"errnoRet", error}});
    return json::serialize(v);
}

std::filesystem::path seccomp_profile_file(std::uint32_t rules, std::string& why)
{
    // Never destroyed, as every static a library thread may touch (it outlives them).
    static auto& m = *new std::mutex;
    static auto& made = *new std::map<std::uint32_t, std::filesystem::path>;
    std::lock_guard lock(m);
    auto& cached = made[rules];
    if (!cached.empty() && ::access(cached.c_str(), R_OK) == 0) return cached;

    std::filesystem::path source;
    std::string text;
    for (const char* p : {"/etc/containers/seccomp.json", "/usr/share/containers/seccomp.json"}) {
        text = read_file(p);
        if (!text.empty()) {
            source = p;
            break;
        }
    }
    if (text.empty()) {
        why = "the containers' default seccomp profile (/usr/share/containers/seccomp.json, from the "
              "golang-github-containers-common package that podman depends on) was not found, so the library's "
              "syscall rules cannot be given to the container engine";
        return {};
    }
    std::string derived;
    try {
        derived = with_syscall_rules(text, rules);
    } catch (const std::exception& e) {
        why = "the seccomp profile " + source.string() + " cannot be read as a profile: " + e.what();
        return {};
    }
    // Named by content, so processes share one file; never someone else's.
    std::ostringstream name;
    name << "sandbox-seccomp-" << std::hex << std::hash<std::string>{}(derived) << "-" << ::geteuid() << ".json";
    std::error_code ec;
    auto dir = std::filesystem::temp_directory_path(ec);
    if (ec) dir = "/tmp";
    const auto path = dir / name.str();
    if (!trusted_copy(path, derived)) {
        auto tmp = (dir / (name.str() + ".XXXXXX")).string();
        const int fd = ::mkstemp(tmp.data());
        if (fd < 0) {
            why = "cannot write a seccomp profile in " + dir.string();
            return {};
        }
        const bool written = ::write(fd, derived.data(), derived.size()) == static_cast<ssize_t>(derived.size()) &&
                             ::fchmod(fd, 0644) == 0;
        ::close(fd);
        // In a sticky /tmp, rename() cannot replace a file another user planted there; then
        // the unique name stays.
        std::filesystem::path final_path = tmp;
        if (written && ::rename(tmp.c_str(), path.c_str()) == 0) final_path = path;
        if (!written) {
            ::unlink(tmp.c_str());
            why = "cannot write a seccomp profile in " + dir.string();
            return {};
        }
        cached = final_path;
        return cached;
    }
    cached = path;
    return cached;
}

}  // namespace sandbox::detail
