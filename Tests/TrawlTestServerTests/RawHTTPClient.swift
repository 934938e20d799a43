import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// File-scope wrappers: inside the client, `close`/`send` name its own methods.
private func systemClose(_ fd: Int32) -> Int32 { close(fd) }
private func systemSend(_ fd: Int32, _ bytes: UnsafeRawPointer?, _ count: Int, _ flags: Int32) -> Int {
    send(fd, bytes, count, flags)
}
private func systemRecv(_ fd: Int32, _ bytes: UnsafeMutableRawPointer?, _ count: Int, _ flags: Int32) -> Int {
    recv(fd, bytes, count, flags)
}

/// A deliberately small blocking HTTP/1.1 client over a POSIX socket, so the tests see exactly the
/// bytes the server sends (no client library hiding faults).
final class RawHTTPClient {
    struct SocketError: Error, CustomStringConvertible {
        let operation: String
        let code: Int32
        var description: String { "\(self.operation): \(String(cString: strerror(self.code))) (\(self.code))" }
    }

    struct ProtocolError: Error {
        let message: String
    }

    struct Response {
        var status: Int
        var headers: [(String, String)]
        var body: [UInt8]

        func header(_ name: String) -> String? {
            self.headers.first { $0.0.lowercased() == name.lowercased() }?.1
        }

        func headers(_ name: String) -> [String] {
            self.headers.filter { $0.0.lowercased() == name.lowercased() }.map(\.1)
        }

        var text: String { String(decoding: self.body, as: UTF8.self) }

        func json() throws -> [String: Any] {
            guard let object = try JSONSerialization.jsonObject(with: Data(self.body)) as? [String: Any] else {
                throw ProtocolError(message: "body is not a JSON object: \(self.text)")
            }
            return object
        }
    }

    private let fd: Int32
    /// Bytes received but not consumed yet.
    private var pending: [UInt8] = []
    private var closed = false

    /// Connects to 127.0.0.1:`port`. `receiveBuffer` caps the kernel's receive buffer (and so the
    /// TCP window), to keep what the server can push ahead of the reader small.
    init(port: Int, timeout: Double = 10, receiveBuffer: Int32? = nil) throws {
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw SocketError(operation: "socket", code: errno) }
        self.fd = fd
        if var size = receiveBuffer {
            _ = setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            let code = errno
            _ = systemClose(fd)
            throw SocketError(operation: "connect", code: code)
        }
        try self.setTimeout(timeout)
    }

    deinit {
        self.close()
    }

    func close() {
        if !self.closed {
            self.closed = true
            _ = systemClose(self.fd)
        }
    }

    /// Sets how long a read may block before failing with EAGAIN.
    func setTimeout(_ seconds: Double) throws {
        var value = timeval(tv_sec: Int(seconds), tv_usec: Int((seconds - Double(Int(seconds))) * 1_000_000))
        guard setsockopt(self.fd, SOL_SOCKET, SO_RCVTIMEO, &value, socklen_t(MemoryLayout<timeval>.size)) == 0 else {
            throw SocketError(operation: "setsockopt", code: errno)
        }
    }

    func send(_ text: String) throws {
        try self.send(Array(text.utf8))
    }

    func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { systemSend(self.fd, $0.baseAddress, $0.count, 0) }
            guard sent > 0 else { throw SocketError(operation: "send", code: errno) }
            offset += sent
        }
    }

    /// Sends a request; `Content-Length` is added when there is a body.
    func request(
        _ target: String,
        method: String = "GET",
        headers: [(String, String)] = [],
        body: [UInt8] = []
    ) throws {
        var text = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        for (name, value) in headers {
            text += "\(name): \(value)\r\n"
        }
        if !body.isEmpty {
            text += "Content-Length: \(body.count)\r\n"
        }
        text += "\r\n"
        try self.send(Array(text.utf8) + body)
    }

    /// Reads up to `limit` bytes; an empty result means end of stream.
    func readSome(limit: Int = 64 * 1024) throws -> [UInt8] {
        if !self.pending.isEmpty {
            let count = min(limit, self.pending.count)
            defer { self.pending.removeFirst(count) }
            return Array(self.pending[..<count])
        }
        var buffer = [UInt8](repeating: 0, count: limit)
        let count = buffer.withUnsafeMutableBytes { systemRecv(self.fd, $0.baseAddress, limit, 0) }
        guard count >= 0 else { throw SocketError(operation: "recv", code: errno) }
        return Array(buffer[..<count])
    }

    /// Reads everything until the server closes the connection.
    func readToEnd() throws -> [UInt8] {
        var all: [UInt8] = []
        while true {
            let bytes = try self.readSome()
            if bytes.isEmpty { return all }
            all += bytes
        }
    }

    func readExactly(_ count: Int) throws -> [UInt8] {
        var result: [UInt8] = []
        while result.count < count {
            let bytes = try self.readSome(limit: count - result.count)
            guard !bytes.isEmpty else { throw ProtocolError(message: "end of stream after \(result.count) bytes") }
            result += bytes
        }
        return result
    }

    /// Reads one line ending in CRLF, without the CRLF.
    func readLine() throws -> String {
        var line: [UInt8] = []
        while true {
            let byte = try self.readExactly(1)[0]
            if byte == UInt8(ascii: "\n"), line.last == UInt8(ascii: "\r") {
                return String(decoding: line.dropLast(), as: UTF8.self)
            }
            line.append(byte)
        }
    }

    /// Reads a status line and headers, skipping interim (1xx) responses unless `interim` is set.
    func readHead(interim: Bool = false) throws -> Response {
        while true {
            let statusLine = try self.readLine()
            let parts = statusLine.split(separator: " ", maxSplits: 2)
            guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), let status = Int(parts[1]) else {
                throw ProtocolError(message: "bad status line: \(statusLine)")
            }
            var headers: [(String, String)] = []
            while true {
                let line = try self.readLine()
                if line.isEmpty { break }
                guard let colon = line.firstIndex(of: ":") else { throw ProtocolError(message: "bad header \(line)") }
                let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                headers.append((String(line[..<colon]), value))
            }
            if status >= 200 || interim {
                return Response(status: status, headers: headers, body: [])
            }
        }
    }

    /// Reads a complete response: the body by Content-Length, chunked coding (decoded) or to EOF.
    func readResponse(method: String = "GET") throws -> Response {
        var response = try self.readHead()
        if method == "HEAD" || [204, 304].contains(response.status) {
            return response
        }
        if response.header("Transfer-Encoding")?.lowercased() == "chunked" {
            while true {
                let sizeLine = try self.readLine()
                guard let size = Int(sizeLine, radix: 16) else { throw ProtocolError(message: "bad chunk \(sizeLine)") }
                if size == 0 {
                    _ = try self.readLine()
                    return response
                }
                response.body += try self.readExactly(size)
                _ = try self.readExactly(2)
            }
        }
        if let length = response.header("Content-Length").flatMap({ Int($0) }) {
            response.body = try self.readExactly(length)
        } else {
            response.body = try self.readToEnd()
        }
        return response
    }

    /// One request and its response on a fresh connection.
    static func fetch(
        port: Int,
        _ target: String,
        method: String = "GET",
        headers: [(String, String)] = [],
        body: [UInt8] = []
    ) throws -> Response {
        let client = try RawHTTPClient(port: port)
        defer { client.close() }
        try client.request(target, method: method, headers: headers, body: body)
        return try client.readResponse(method: method)
    }
}

/// The process's resident set size in bytes, from /proc/self/status (0 where unavailable).
func residentMemory() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
    for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
        let digits = line.filter(\.isNumber)
        return (Int(digits) ?? 0) * 1024
    }
    return 0
}
