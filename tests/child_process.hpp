// Runs part of a test in a child process: SystemC allows one elaboration
// per process, so a test that compares two simulations runs at least one of
// them in a child, which hands its figures back through a pipe.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <iostream>
#include <map>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

namespace vrdmasim {

// Runs `fn` in a child process and returns the text it returned; empty if
// the child returned nothing (an exception escaping `fn` ends the child
// without a word).
inline std::string in_child_text(const std::function<std::string()>& fn) {
    int fd[2];
    REQUIRE(pipe(fd) == 0);
    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        close(fd[0]);
        std::string text;
        try {
            text = fn();
        } catch (const std::exception& e) {
            // Said, so that a failing case shows why (the parent only sees
            // that the child returned nothing).
            std::cerr << "child process: " << e.what() << std::endl;
            _exit(2);
        } catch (...) {
            _exit(2);
        }
        std::size_t off = 0;
        while (off < text.size()) {
            const ssize_t n = write(fd[1], text.data() + off, text.size() - off);
            if (n <= 0) _exit(2);
            off += static_cast<std::size_t>(n);
        }
        _exit(0);
    }
    close(fd[1]);
    std::string text;
    char buf[65536];
    for (ssize_t n; (n = read(fd[0], buf, sizeof buf)) > 0;) text.append(buf, static_cast<std::size_t>(n));
    close(fd[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    return text;
}

// Runs `fn` in a child process and returns what it returns; NaN if the
// child failed (threw, or returned nothing).
inline double in_child(const std::function<double()>& fn) {
    const std::string text = in_child_text([&fn] {
        double v = std::nan("");
        try {
            v = fn();
        } catch (...) {
        }
        return std::string(reinterpret_cast<const char*>(&v), sizeof v);
    });
    double v = std::nan("");
    if (text.size() == sizeof v) std::memcpy(&v, text.data(), sizeof v);
    return v;
}

// Runs `fn` in a child process, which writes its figures as "name value"
// lines; returns them by name (none if the child failed).
inline std::map<std::string, double> in_child_figures(const std::function<std::string()>& fn) {
    std::map<std::string, double> figures;
    std::istringstream in(in_child_text(fn));
    std::string name;
    double value = 0;
    while (in >> name >> value) figures[name] = value;
    return figures;
}

}   // namespace vrdmasim
