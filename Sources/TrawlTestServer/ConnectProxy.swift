import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A forward proxy on loopback that answers `CONNECT host:port` as corporate proxies do: a
/// `200 Connection established` head, then the bytes of both directions passed through unchanged (a TLS
/// tunnel). With `refusal` set, every request (CONNECT or a plain http one) gets that answer instead (`407 Proxy
/// Authentication Required`, `502 Bad Gateway`) and the connection closes. Otherwise anything but CONNECT gets a 405.
///
/// ```swift
/// let proxy = try ConnectProxy()
/// defer { proxy.stop() }
/// // https_proxy=proxy.url trawl get https://127.0.0.1:PORT/…
/// ```
///
/// Plain threads and blocking sockets: a handful of connections per test, nothing to schedule.
public final class ConnectProxy: Sendable {
    /// The OS-chosen port on 127.0.0.1.
    public let port: Int
    /// `http://127.0.0.1:PORT`, the value for `https_proxy`.
    public var url: String { "http://127.0.0.1:\(port)" }
    private let listener: Int32
    private let refusal: String?
    private let tunnels = Atomic<Int>(0)

    /// Tunnels opened so far.
    public var tunnelCount: Int { tunnels.load(ordering: .relaxed) }

    /// `refusal`: a status line such as `"407 Proxy Authentication Required"` sent to every CONNECT.
    public init(refusal: String? = nil) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestServerError.noLocalAddress }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                bind(fd, generic, length) == 0 && listen(fd, 16) == 0 && getsockname(fd, generic, &length) == 0
            }
        }
        guard bound else {
            close(fd)
            throw TestServerError.noLocalAddress
        }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        self.refusal = refusal
        let thread = Thread { [self] in acceptLoop() }
        thread.name = "connect-proxy"
        thread.start()
    }

    /// Stops accepting (tunnels already open end when either side closes).
    public func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
    }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                break
            }
            let thread = Thread { [self] in serve(client) }
            thread.start()
        }
        close(listener)
    }

    private func serve(_ client: Int32) {
        defer { close(client) }
        var head: [UInt8] = []
        var byte: UInt8 = 0
        while head.count < 8192, read(client, &byte, 1) == 1 {
            head.append(byte)
            if head.count >= 4, head.suffix(4) == [13, 10, 13, 10] { break }
        }
        let requestLine = String(decoding: head.prefix { $0 != 13 }, as: UTF8.self).split(separator: " ")
        if let refusal {
            return send(client, "HTTP/1.1 \(refusal)\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        }
        guard requestLine.count == 3, requestLine[0] == "CONNECT" else {
            return send(client, "HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        }
        let target = requestLine[1]
        guard let colon = target.lastIndex(of: ":"), let targetPort = UInt16(target[target.index(after: colon)...]),
              let origin = Self.connect(host: String(target[..<colon]), port: targetPort)
        else {
            return send(client, "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        }
        defer { close(origin) }
        tunnels.add(1, ordering: .relaxed)
        send(client, "HTTP/1.1 200 Connection established\r\nProxy-Agent: trawl-test\r\n\r\n")
        Self.splice(client, origin)
    }

    private func send(_ fd: Int32, _ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    }

    private static func connect(host: String, port: UInt16) -> Int32? {
        guard host == "127.0.0.1" || host == "localhost" else { return nil }  // loopback only
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = port.bigEndian
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        if !connected {
            close(fd)
            return nil
        }
        return fd
    }

    /// Copies bytes both ways until either side closes.
    private static func splice(_ a: Int32, _ b: Int32) {
        var fds = [pollfd(fd: a, events: Int16(POLLIN), revents: 0), pollfd(fd: b, events: Int16(POLLIN), revents: 0)]
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while poll(&fds, 2, 30_000) > 0 {
            for index in 0..<2 where fds[index].revents != 0 {
                let from = fds[index].fd, to = fds[1 - index].fd
                let count = buffer.withUnsafeMutableBytes { read(from, $0.baseAddress, $0.count) }
                guard count > 0 else { return }
                var written = 0
                while written < count {
                    let step = buffer.withUnsafeBytes {
                        write(to, UnsafeRawBufferPointer(rebasing: $0[written..<count]).baseAddress, count - written)
                    }
                    guard step > 0 else { return }
                    written += step
                }
            }
        }
    }
}
