// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/error.hpp>
#include <tensordiag/dtensor_checks/comm/id_store.hpp>
#include <tensordiag/dtensor_checks/sim/validation_codes.hpp>

#include <fmt/format.h>

#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

namespace tdiag::dtensor::comm {
namespace {

[[noreturn]] void fail(std::string message, std::string hint = {}) {
  diagnostic d;
  d.code = std::string(validation_codes::id_exchange);
  d.title = "unique id exchange failed";
  d.message = std::move(message);
  d.hint = std::move(hint);
  throw tdiag::error(std::move(d));
}

class file_store final : public id_store {
public:
  file_store(std::filesystem::path dir, std::string key) : path_(std::move(dir) / std::move(key)) {}

private:
  void do_publish(std::string_view blob, int) override {
    auto tmp = path_;
    tmp += fmt::format(".tmp.{}", ::getpid());
    {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      out.write(blob.data(), static_cast<std::streamsize>(blob.size()));
      if (!out)
        fail(fmt::format("cannot write {}", tmp.string()),
             "use a directory every rank can write and read");
    }
    std::error_code ec;
    std::filesystem::rename(tmp, path_, ec);
    if (ec)
      fail(fmt::format("cannot rename {} to {}: {}", tmp.string(), path_.string(), ec.message()));
  }

  std::string do_fetch(std::size_t size, std::chrono::milliseconds timeout) override {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (true) {
      std::ifstream in(path_, std::ios::binary);
      if (in) {
        std::string blob(size, '\0');
        in.read(blob.data(), static_cast<std::streamsize>(size));
        if (static_cast<std::size_t>(in.gcount()) == size)
          return blob;
      }
      if (std::chrono::steady_clock::now() > deadline) {
        fail(
            fmt::format("no id of {} bytes appeared in {} within {} ms", size, path_.string(),
                        timeout.count()),
            "check that rank 0 started and that every rank uses the same shared directory and key");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }

  std::filesystem::path path_;
};

struct socket_fd {
  int fd = -1;
  explicit socket_fd(int f) : fd(f) {}
  ~socket_fd() {
    if (fd >= 0)
      ::close(fd);
  }
  socket_fd(const socket_fd&) = delete;
  socket_fd& operator=(const socket_fd&) = delete;
};

sockaddr_in loopback(int port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

class tcp_store final : public id_store {
public:
  tcp_store(int port, bool serve, std::chrono::milliseconds accept_timeout)
      : port_(port), serve_(serve), accept_timeout_(accept_timeout) {
    if (!serve_)
      return;
    listen_ = ::socket(AF_INET, SOCK_STREAM, 0);
    if (listen_ < 0)
      fail(fmt::format("socket(): {}", std::strerror(errno)));
    const int one = 1;
    ::setsockopt(listen_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    auto addr = loopback(port_);
    if (::bind(listen_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
        ::listen(listen_, 128) != 0) {
      const auto why = std::strerror(errno);
      ::close(listen_);
      fail(fmt::format("cannot listen on 127.0.0.1:{}: {}", port_, why),
           "pick a free port or pass 0");
    }
    socklen_t len = sizeof(addr);
    ::getsockname(listen_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
  }
  ~tcp_store() override {
    if (listen_ >= 0)
      ::close(listen_);
  }
  tcp_store(const tcp_store&) = delete;
  tcp_store& operator=(const tcp_store&) = delete;
  [[nodiscard]] int port() const noexcept { return serve_ ? port_ : 0; }

private:
  void do_publish(std::string_view blob, int readers) override {
    if (!serve_)
      fail("publish() on a TCP store that does not serve");
    for (int served = 0; served < readers; ++served) {
      pollfd p{listen_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(accept_timeout_.count())) <= 0) {
        fail(fmt::format("only {} of {} ranks fetched the id from 127.0.0.1:{} within {} ms",
                         served, readers, port_, accept_timeout_.count()),
             "start every rank with the same port");
      }
      socket_fd client(::accept(listen_, nullptr, nullptr));
      if (client.fd < 0)
        fail(fmt::format("accept(): {}", std::strerror(errno)));
      std::size_t sent = 0;
      while (sent < blob.size()) {
        const auto n = ::send(client.fd, blob.data() + sent, blob.size() - sent, MSG_NOSIGNAL);
        if (n <= 0)
          fail(fmt::format("send(): {}", std::strerror(errno)));
        sent += static_cast<std::size_t>(n);
      }
    }
  }

  std::string do_fetch(std::size_t size, std::chrono::milliseconds timeout) override {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (true) {
      socket_fd s(::socket(AF_INET, SOCK_STREAM, 0));
      auto addr = loopback(port_);
      if (s.fd >= 0 && ::connect(s.fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
        std::string blob(size, '\0');
        std::size_t got = 0;
        while (got < size) {
          const auto n = ::recv(s.fd, blob.data() + got, size - got, 0);
          if (n <= 0)
            break;
          got += static_cast<std::size_t>(n);
        }
        if (got == size)
          return blob;
      }
      if (std::chrono::steady_clock::now() > deadline) {
        fail(fmt::format("no id from 127.0.0.1:{} within {} ms", port_, timeout.count()),
             "check that rank 0 started its TCP store on this port");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }

  int port_;
  bool serve_;
  std::chrono::milliseconds accept_timeout_;
  int listen_ = -1;
};

} // namespace

std::unique_ptr<id_store> make_file_store(std::filesystem::path dir, std::string key) {
  return std::make_unique<file_store>(std::move(dir), std::move(key));
}

std::unique_ptr<id_store> make_tcp_store(int port, bool serve,
                                         std::chrono::milliseconds accept_timeout) {
  return std::make_unique<tcp_store>(port, serve, accept_timeout);
}

int tcp_store_port(const id_store& store) noexcept {
  const auto* t = dynamic_cast<const tcp_store*>(&store);
  return t ? t->port() : 0;
}

} // namespace tdiag::dtensor::comm
