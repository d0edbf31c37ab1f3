// SPDX-License-Identifier: BSL-1.0
//
// command_server: an async HTTP server (Boost.Beast) that runs one command per request under
// a fixed execution policy and answers with the result as JSON.
//
//   POST /run   {"argv": ["echo", "hi"], "stdin": "optional"}
//   -> 200      {"stdout": "hi\n", "stderr": "", "exit_code": 0, ...}   (exec_result's JSON)
//   -> 400      {"error": "..."} for a body that is not such an object
//   -> 404/405  for other paths and methods
//
// Every connection is a coroutine on one io_context, so a slow command never holds up the
// others, and a client that disconnects mid-request cancels its command (the process tree is
// killed), because the read of the next request and the execution are raced with `||`.
//
// Usage: command_server [--serve PORT]
//   Without --serve it starts on an ephemeral port, sends itself a few requests (one that
//   times out, concurrent ones, bad ones), checks the answers and exits: 0 when all were as
//   expected. With --serve it keeps serving on 127.0.0.1:PORT, e.g.
//     curl -s localhost:8080/run -d '{"argv":["uname","-a"]}'
#include <sandbox/sandbox.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace json = boost::json;
using tcp = asio::ip::tcp;
using namespace std::chrono_literals;
using namespace asio::experimental::awaitable_operators;

namespace {

// What every request's command may do: half a second, 64 KiB of output kept per stream.
sandbox::execution_policy server_policy()
{
    return sandbox::execution_policy::defaults()
        .with_timeout(500ms)
        .with_memory("128M")
        .with_output_caps(64 * 1024, 64 * 1024);
}

using response = http::response<http::string_body>;

response make_response(const http::request<http::string_body>& req, http::status status, std::string body)
{
    response res{status, req.version()};
    res.set(http::field::server, "sandbox-command-server");
    res.set(http::field::content_type, "application/json");
    res.keep_alive(req.keep_alive());
    res.body() = std::move(body);
    res.prepare_payload();
    return res;
}

std::string error_body(const std::string& message)
{
    return json::serialize(json::object{{"error", message}});
}

// Parses {"argv": [...], "stdin": "..."}; returns an error message, empty when fine.
std::string parse_request(const std::string& body, std::vector<std::string>& argv, std::optional<std::string>& input)
{
    boost::system::error_code ec;
    auto v = json::parse(body, ec);
    if (ec) return "the body is not JSON: " + ec.message();
    const auto* obj = v.if_object();
    if (!obj) return "the body must be a JSON object";
    const auto* a = obj->if_contains("argv");
    if (!a || !a->is_array() || a->as_array().empty()) return "\"argv\" must be a non-empty array of strings";
    for (const auto& item : a->as_array()) {
        if (!item.is_string()) return "\"argv\" must be a non-empty array of strings";
        argv.emplace_back(item.as_string());
    }
    if (const auto* s = obj->if_contains("stdin")) {
        if (!s->is_string()) return "\"stdin\" must be a string";
        input = std::string(s->as_string());
    }
    return {};
}

// Runs the request's command. Raced against a read on the same socket: if the client goes
// away first, the execution is cancelled and its process tree killed.
asio::awaitable<response> handle(sandbox::command_runner& runner, beast::tcp_stream& stream,
                                 const http::request<http::string_body>& req)
{
    if (req.target() != "/run") co_return make_response(req, http::status::not_found, error_body("no such path"));
    if (req.method() != http::verb::post)
        co_return make_response(req, http::status::method_not_allowed, error_body("use POST"));

    std::vector<std::string> argv;
    std::optional<std::string> input;
    if (auto problem = parse_request(req.body(), argv, input); !problem.empty())
        co_return make_response(req, http::status::bad_request, error_body(problem));

    // The peek completes when the client closes (end of file) or sends more. as_tuple makes
    // that a success whatever its error code: `||` waits for the first operation to succeed,
    // so an EOF thrown as an error would never win the race.
    char probe = 0;
    auto outcome = co_await (runner.execute(std::move(argv), std::move(input)) ||
                             stream.socket().async_receive(asio::buffer(&probe, 1), tcp::socket::message_peek,
                                                           asio::as_tuple(asio::use_awaitable)));
    // The peek finished first: the client went away, or sent more before its answer
    // (pipelining is not supported here), and the command was cancelled. Drop the connection.
    if (outcome.index() == 1) throw boost::system::system_error(asio::error::connection_aborted);
    co_return make_response(req, http::status::ok, sandbox::to_json(std::get<0>(outcome)));
}

asio::awaitable<void> session(sandbox::command_runner& runner, tcp::socket socket)
{
    beast::tcp_stream stream(std::move(socket));
    beast::flat_buffer buffer;
    try {
        for (;;) {
            http::request_parser<http::string_body> parser;
            parser.body_limit(1024 * 1024);
            stream.expires_after(30s);
            co_await http::async_read(stream, buffer, parser, asio::use_awaitable);
            auto req = parser.release();
            stream.expires_never();
            auto res = co_await handle(runner, stream, req);
            co_await http::async_write(stream, res, asio::use_awaitable);
            if (!res.keep_alive()) break;
        }
    } catch (const boost::system::system_error&) {  // the client went away or sent garbage
    }
    beast::error_code ignored;
    stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
}

asio::awaitable<void> serve(tcp::acceptor& acceptor, sandbox::command_runner& runner)
{
    for (;;) {
        auto socket = co_await acceptor.async_accept(asio::use_awaitable);
        asio::co_spawn(acceptor.get_executor(), session(runner, std::move(socket)), asio::detached);
    }
}

// ---- the self-test client ----------------------------------------------------------------

struct reply {
    unsigned status = 0;
    json::value body;
};

asio::awaitable<reply> request(tcp::endpoint server, http::verb verb, std::string body)
{
    beast::tcp_stream stream(co_await asio::this_coro::executor);
    stream.expires_after(10s);
    co_await stream.async_connect(server, asio::use_awaitable);
    http::request<http::string_body> req{verb, "/run", 11};
    req.set(http::field::host, "localhost");
    req.set(http::field::content_type, "application/json");
    req.body() = std::move(body);
    req.prepare_payload();
    co_await http::async_write(stream, req, asio::use_awaitable);
    beast::flat_buffer buffer;
    http::response<http::string_body> res;
    co_await http::async_read(stream, buffer, res, asio::use_awaitable);
    beast::error_code ignored;
    stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
    co_return reply{res.result_int(), json::parse(res.body())};
}

int failures = 0;

// A file of /proc/<pid>; empty when the process ended meanwhile (the read then fails with
// ESRCH, which libstdc++'s filebuf reports by throwing).
std::string proc_file(const std::filesystem::path& path)
{
    std::ifstream f(path);
    try {
        return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
    } catch (const std::ios_base::failure&) {
        return {};
    }
}

// A process's identity: its pid and its start time (field 22 of /proc/PID/stat), so that a
// reused pid is not taken for it. Zero while not found.
struct process_id {
    long pid = 0;
    std::string start_time;
};

// The start time of a live process (not a zombie), or empty.
std::string start_time_of(long pid)
{
    const std::string stat = proc_file("/proc/" + std::to_string(pid) + "/stat");
    const auto close = stat.rfind(')');
    if (close == std::string::npos || close + 2 >= stat.size() || stat[close + 2] == 'Z') return {};
    std::size_t at = close + 2;  // field 3, the state
    for (int field = 3; field < 22; ++field) {
        at = stat.find(' ', at);
        if (at == std::string::npos) return {};
        ++at;
    }
    return stat.substr(at, stat.find(' ', at) - at);
}

// The live process whose command line is exactly `cmdline` (arguments joined by spaces).
process_id find_process(const std::string& cmdline)
{
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
        const auto name = entry.path().filename().string();
        if (name.find_first_not_of("0123456789") != std::string::npos) continue;
        std::string cmd = proc_file(entry.path() / "cmdline");
        std::replace(cmd.begin(), cmd.end(), '\0', ' ');
        if (!cmd.empty() && cmd.back() == ' ') cmd.pop_back();
        if (cmd != cmdline) continue;
        const long pid = std::stol(name);
        if (auto started = start_time_of(pid); !started.empty()) return {pid, std::move(started)};
    }
    return {};
}

bool still_running(const process_id& p) { return p.pid && start_time_of(p.pid) == p.start_time; }

// A client that sends a request for a long command and closes its connection once the
// command runs and `after` has passed: returns how long after the close the command was
// still running (an hour if it never ran). The process is found once, by its command line;
// after the close only its own /proc entry is read, so a machine with many processes does
// not slow the measurement down.
asio::awaitable<std::chrono::duration<double>> disconnect_during(tcp::endpoint server, std::string cmdline,
                                                                 std::chrono::milliseconds after)
{
    auto ex = co_await asio::this_coro::executor;
    beast::tcp_stream stream(ex);
    co_await stream.async_connect(server, asio::use_awaitable);
    http::request<http::string_body> req{http::verb::post, "/run", 11};
    req.set(http::field::host, "localhost");
    std::string argv_json = "[";
    for (std::size_t start = 0; start <= cmdline.size();) {
        auto end = cmdline.find(' ', start);
        if (end == std::string::npos) end = cmdline.size();
        argv_json += (argv_json.size() > 1 ? ",\"" : "\"") + cmdline.substr(start, end - start) + "\"";
        start = end + 1;
    }
    req.body() = R"({"argv":)" + argv_json + "]}";
    req.prepare_payload();
    co_await http::async_write(stream, req, asio::use_awaitable);
    const auto sent = std::chrono::steady_clock::now();
    asio::steady_timer timer(ex);
    process_id command;
    while (!(command = find_process(cmdline)).pid && std::chrono::steady_clock::now() - sent < 5s) {
        timer.expires_after(5ms);
        co_await timer.async_wait(asio::use_awaitable);
    }
    if (!command.pid) co_return std::chrono::hours(1);
    timer.expires_at(sent + after);
    co_await timer.async_wait(asio::use_awaitable);
    stream.close();
    const auto closed = std::chrono::steady_clock::now();
    while (still_running(command) && std::chrono::steady_clock::now() - closed < 5s) {
        timer.expires_after(1ms);
        co_await timer.async_wait(asio::use_awaitable);
    }
    co_return std::chrono::steady_clock::now() - closed;
}

void expect(bool ok, const std::string& what)
{
    std::cout << (ok ? "  ok    " : "  FAIL  ") << what << "\n";
    if (!ok) ++failures;
}

asio::awaitable<void> self_test(tcp::endpoint server)
{
    std::cout << "command_server listening on " << server << "\n";

    auto hello = co_await request(server, http::verb::post, R"({"argv":["echo","hello"]})");
    expect(hello.status == 200 && hello.body.at("stdout") == "hello\n" && hello.body.at("exit_code") == 0,
           "echo hello -> 200, stdout \"hello\\n\", exit 0");

    auto upper = co_await request(server, http::verb::post, R"({"argv":["tr","a-z","A-Z"],"stdin":"shout"})");
    expect(upper.status == 200 && upper.body.at("stdout") == "SHOUT", "stdin reaches the command");

    auto failing = co_await request(server, http::verb::post, R"({"argv":["sh","-c","echo oops >&2; exit 3"]})");
    expect(failing.status == 200 && failing.body.at("exit_code") == 3 && failing.body.at("stderr") == "oops\n",
           "a failing command is a result: exit 3, its stderr");

    auto slow = co_await request(server, http::verb::post, R"({"argv":["sleep","10"]})");
    expect(slow.status == 200 && slow.body.at("timed_out") == true && slow.body.at("exit_code") == 124,
           "sleep 10 under the 0.5 s policy -> timed out, exit 124");

    // Four commands of 0.3 s at once: served concurrently, so about 0.3 s in all.
    const auto start = std::chrono::steady_clock::now();
    const std::string nap = R"({"argv":["sleep","0.3"]})";
    auto [a, b, c, d] = co_await (request(server, http::verb::post, nap) && request(server, http::verb::post, nap) &&
                                  request(server, http::verb::post, nap) && request(server, http::verb::post, nap));
    const auto took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    expect(a.status == 200 && b.status == 200 && c.status == 200 && d.status == 200 && took < 1.1,
           "4 concurrent requests of 0.3 s took " + std::to_string(took).substr(0, 4) + " s");

    auto bad = co_await request(server, http::verb::post, "not json");
    expect(bad.status == 400 && bad.body.as_object().contains("error"), "a body that is not JSON -> 400");
    auto no_argv = co_await request(server, http::verb::post, R"({"cmd":"ls"})");
    expect(no_argv.status == 400, "a body without argv -> 400");
    auto get = co_await request(server, http::verb::get, "");
    expect(get.status == 405, "GET -> 405");

    // A client that goes away cancels its command: the process is gone a few milliseconds
    // after the close, long before the policy's 0.5 s timeout would have ended it (0.4 s
    // after the close at the soonest). The bound leaves room for a busy machine.
    const auto lingered = co_await disconnect_during(server, "sleep 7.25", 100ms);
    expect(lingered < 200ms, "a client that disconnects at 0.1 s: its command gone " +
                                 std::to_string(std::chrono::duration<double, std::milli>(lingered).count()).substr(0, 5) +
                                 " ms after the close");
}

}  // namespace

int main(int argc, char** argv)
{
    std::optional<unsigned short> port;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--serve" && i + 1 < argc) {
            port = static_cast<unsigned short>(std::atoi(argv[++i]));
        } else {
            std::cerr << "usage: command_server [--serve PORT]\n";
            return 2;
        }
    }

    asio::io_context ctx;
    auto runner = sandbox::make_runner(server_policy(), sandbox::driver::host);
    tcp::acceptor acceptor(ctx, {asio::ip::make_address("127.0.0.1"), port.value_or(0)});
    asio::co_spawn(ctx, serve(acceptor, *runner), asio::detached);

    if (port) {
        std::cout << "command_server serving on " << acceptor.local_endpoint() << " (POST /run)\n";
        ctx.run();
        return 0;
    }

    std::exception_ptr error;
    asio::co_spawn(ctx, self_test(acceptor.local_endpoint()), [&](std::exception_ptr e) {
        error = e;
        ctx.stop();  // the server and any idle connections end with the io_context
    });
    ctx.run();
    if (error) {
        try {
            std::rethrow_exception(error);
        } catch (const std::exception& e) {
            std::cout << "  FAIL  " << e.what() << "\n";
            return 1;
        }
    }
    std::cout << (failures ? "some checks failed\n" : "all checks passed\n");
    return failures ? 1 : 0;
}
