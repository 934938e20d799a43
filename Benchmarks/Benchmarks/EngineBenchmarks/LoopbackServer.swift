#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// A minimal HTTP/1.1 keep-alive server on 127.0.0.1 (an ephemeral port), one thread per
/// connection, for the engine round-trip benchmarks. It answers every request (GET, no body) with
/// the same small JSON response; it parses nothing but the end of the request head.
/// Only loopback; it lives as long as the benchmark process.
final class LoopbackServer: Sendable {
    let port: Int
    private let listener: Int32

    static let body = Array(#"{"id":1,"name":"trawl","items":[1,2,3],"ok":true}"#.utf8)
    static let response: [UInt8] = Array(
        ("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\n"
            + "Connection: keep-alive\r\n\r\n").utf8) + body

    init() throws {
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw ServerError("socket: errno \(errno)") }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(fd, 256) == 0 else {
            close(fd)
            throw ServerError("bind/listen on 127.0.0.1: errno \(errno)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread.detachNewThread { [fd] in Self.acceptLoop(fd) }
    }

    var url: String { "http://127.0.0.1:\(port)/item" }

    private static func acceptLoop(_ listener: Int32) {
        while true {
            let connection = accept(listener, nil, nil)
            if connection < 0 {
                if errno == EINTR || errno == ECONNABORTED { continue }
                return
            }
            var one: Int32 = 1
            setsockopt(connection, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            Thread.detachNewThread { serve(connection) }
        }
    }

    /// Answers each complete request head (ended by CRLF CRLF) with `response`, until the peer closes.
    private static func serve(_ connection: Int32) {
        defer { close(connection) }
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        var filled = 0
        while true {
            if filled == buffer.count { return }  // a head this large is not ours
            let read = buffer.withUnsafeMutableBytes { recv(connection, $0.baseAddress! + filled, $0.count - filled, 0) }
            if read < 0 && errno == EINTR { continue }
            if read <= 0 { return }
            filled += read
            var start = 0
            while let end = headEnd(buffer, from: start, to: filled) {
                guard sendAll(connection, response) else { return }
                start = end
            }
            if start > 0 {
                buffer.withUnsafeMutableBytes { raw in
                    let base = raw.baseAddress!
                    memmove(base, base + start, filled - start)
                }
                filled -= start
            }
        }
    }

    /// The index just past the first CRLF CRLF in `buffer[from..<to]`.
    private static func headEnd(_ buffer: [UInt8], from: Int, to: Int) -> Int? {
        var i = from
        while i + 3 < to {
            if buffer[i] == 13 && buffer[i + 1] == 10 && buffer[i + 2] == 13 && buffer[i + 3] == 10 { return i + 4 }
            i += 1
        }
        return nil
    }

    private static func sendAll(_ connection: Int32, _ bytes: [UInt8]) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let n = bytes.withUnsafeBytes { send(connection, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL)) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return false }
            sent += n
        }
        return true
    }
}

struct ServerError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
