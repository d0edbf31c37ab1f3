// SPDX-License-Identifier: BSL-1.0
#include "single_run.hpp"

#include "enforcement.hpp"
#include "io.hpp"
#include "job.hpp"
#include "signals.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/json/value_from.hpp>
#include <boost/system/system_error.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace sandbox::cli {

namespace {

// A command that did not start: 127 and 126 as a shell says them; anything else (the base
// dir missing, descriptors running out) is the sandbox's failure, 125.
int exit_status_of(const exec_result& r)
{
    if (!r.start_error) return r.exit_code;
    if (r.start_error == errc::command_not_found) return exit_codes::command_not_found;
    if (r.start_error == errc::command_not_executable) return exit_status::cannot_execute;
    return exit_status::sandbox_failed;
}

void say(const std::string& line) noexcept
{
    try {
        write_all(STDERR_FILENO, std::string(program_name) + ": " + line + "\n");
    } catch (...) {  // nowhere left to report it
    }
}

// Why the command ended, when sandbox-run ended it: one line, so that a 124 or a SIGKILL
// is never a riddle.
void say_why_ended(const options& o, const execution_policy& p, const exec_result& r)
{
    if (r.timed_out && r.timeout == timeout_reason::idle && p.idle_timeout()) {
        say("timed out after " + seconds_text(*p.idle_timeout()) + " without output (idle; " +
            limit_origin(o, o.idle_timeout.has_value(), "--idle-timeout", "idle_timeout_seconds") + ")");
    } else if (r.timed_out) {
        say("timed out after " + seconds_text(p.timeout()) + " (wall; " + limit_origin(o, o.timeout.has_value(), "--timeout", "timeout_seconds") +
            ")");
    } else if (r.oom_killed) {
        say("killed: out of memory at the limit of " + p.memory_limit() + " (" +
            limit_origin(o, o.memory.has_value(), "--memory", "memory_limit") + ")");
    }
}

// --dry-run: what would start, and nothing started.
int print_dry_run(const options& o, const command_runner& runner)
{
    const auto p = runner.preview(o.command);
    std::string text;
    if (o.json) {
        boost::json::object obj;
        obj["driver"] = to_string(o.driver);
        obj["argv"] = boost::json::value_from(p.argv);
        obj["env"] = boost::json::value_from(p.env);
        obj["cwd"] = p.cwd.string();
        text = serialize_json(obj) + "\n";
    } else {
        text = "# the " + std::string(to_string(o.driver)) + " driver would start this (nothing was started):\n";
        text += "cwd:  " + shell_quote(p.cwd.string()) + "\n";
        for (const auto& e : p.env) text += "env:  " + shell_quote(e) + "\n";
        text += "argv: " + shell_command(p.argv) + "\n";
    }
    write_all(STDOUT_FILENO, text);
    return exit_status::ok;
}

}  // namespace

run_outcome run_until_stopped(command_runner& runner, const std::vector<std::string>& command, exec_options eo,
                              bool stream)
{
    asio::io_context ctx;
    asio::cancellation_signal cancel;
    stop_signals stop(ctx, [&](int) { cancel.emit(asio::cancellation_type::terminal); });
    if (stream) {
        eo.on_output = [](stream_kind k, std::string_view chunk) {
            try {
                write_all(k == stream_kind::out ? STDOUT_FILENO : STDERR_FILENO, chunk);
            } catch (const write_error& e) {
                if (e.error != EBADF) throw;  // a closed stream is ignored; EPIPE ends the command
            }
        };
    }
    run_outcome outcome;
    asio::co_spawn(ctx, runner.execute(command, std::move(eo)),
                   asio::bind_cancellation_slot(cancel.slot(), [&](std::exception_ptr e, exec_result r) {
                       outcome.error = e;
                       outcome.result = std::move(r);
                       stop.close();
                   }));
    ctx.run();
    outcome.stop_signal = stop.received();
    return outcome;
}

int run_single(const options& o, const execution_policy& policy)
{
    // stdin goes to the command as it is, read by the command as it comes: nothing is
    // buffered here, and the timeout runs from the start.
    const bool pass_stdin = !o.no_stdin && !is_terminal(STDIN_FILENO) && ::fcntl(STDIN_FILENO, F_GETFD) >= 0;

    auto runner = make_runner(policy, o.driver, driver_options_for(o));
    const auto caps = runner->caps();
    for (const auto& what : unenforced_settings(asked_by(o), policy, caps, o.driver)) {
        if (o.strict) {
            say(what + " (" + make_error_code(errc::limit_not_enforced).message() + "; --strict)");
            return exit_status::sandbox_failed;
        }
        say("warning: " + what);
    }
    if (o.dry_run) return print_dry_run(o, *runner);

    exec_options eo;
    eo.stdin_fd = pass_stdin ? STDIN_FILENO : -1;
    if (o.verbose)
        eo.on_launch = [&](const launch_preview& p) {
            say("starting (" + std::string(to_string(o.driver)) + " driver, in " + shell_quote(p.cwd.string()) +
                "): " + shell_command(p.argv));
        };
    auto [error, result, stopped_by] = run_until_stopped(*runner, o.command, std::move(eo), !o.json);

    if (error) {
        try {
            std::rethrow_exception(error);
        } catch (const launch_error& e) {
            say(e.what());
            return exit_status::sandbox_failed;
        } catch (const boost::system::system_error& e) {
            if (e.code() == asio::error::operation_aborted && stopped_by) {
                say("stopped the command on " + signal_name(stopped_by));
                return 128 + stopped_by;
            }
            say(e.what());
            return exit_status::sandbox_failed;
        } catch (const write_error& e) {
            if (e.error == EPIPE) return 128 + SIGPIPE;  // as if we had died of it, after stopping the command
            say(std::string("cannot write the output: ") + e.what());
            return exit_status::sandbox_failed;
        } catch (const std::exception& e) {
            say(e.what());
            return exit_status::sandbox_failed;
        }
    }

    say_why_ended(o, policy, result);
    if (o.json) {
        try {
            auto text = result_json(result);
            text.pop_back();  // the closing brace: the driver and what it enforces follow
            text += ",\"driver\":\"" + std::string(to_string(o.driver)) + "\",\"caps\":" + caps_json(caps) + "}\n";
            write_all(STDOUT_FILENO, text);
        } catch (const write_error& e) {
            if (e.error != EPIPE) say(std::string("cannot write the result: ") + e.what());
            return exit_status::sandbox_failed;
        }
    }
    // The library's start-failure message has no newline of its own; end the line we streamed.
    if (!o.json && result.start_error && !result.err.empty() && result.err.back() != '\n') {
        try {
            write_all(STDERR_FILENO, "\n");
        } catch (...) {
        }
    }
    if (result.exit_code < 0) {  // the library could not learn the status
        say("the command's exit status was lost");
        return exit_status::sandbox_failed;
    }
    return exit_status_of(result);
}

}  // namespace sandbox::cli
