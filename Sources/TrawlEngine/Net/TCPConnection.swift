#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A plain blocking TCP connection with a deadline on every step, for small request/answer protocols (the rate
/// store's Redis). The socket work that needs pointers lives here, in the engine; callers see bytes only. One
/// caller at a time: serialize use (a queue or a lock) around it.
///
/// ```swift
/// let connection = try TCPConnection(host: "127.0.0.1", port: 6379, timeout: .milliseconds(500))
/// try connection.send(Array("PING\r\n".utf8))
/// let answer = try connection.receive()   // "+PONG\r\n"
/// ```
public final class TCPConnection: @unchecked Sendable {
    /// Why a step failed: the peer, the step and the system's reason.
    public struct Failure: Error, CustomStringConvertible, Sendable {
        public var description: String
    }

    private var descriptor: Int32
    private let timeout: Duration
    private let peer: String

    /// Connects within `timeout` (each later send or receive gets the same).
    public init(host: String, port: Int, timeout: Duration) throws(Failure) {
        peer = "\(host):\(port)"
        self.timeout = timeout
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_family = AF_UNSPEC
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            throw Failure(description: "cannot resolve \(host): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(list) }
        var lastError = ECONNREFUSED
        var entry: UnsafeMutablePointer<addrinfo>? = first
        descriptor = -1
        while let address = entry {
            entry = address.pointee.ai_next
            let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
            let socketDescriptor = socket(address.pointee.ai_family, type, 0)
            guard socketDescriptor >= 0 else {
                lastError = errno
                continue
            }
            _ = fcntl(socketDescriptor, F_SETFL, fcntl(socketDescriptor, F_GETFL) | O_NONBLOCK)
            if connect(socketDescriptor, address.pointee.ai_addr, address.pointee.ai_addrlen) == 0
                || (errno == EINPROGRESS && Self.finishConnect(socketDescriptor, timeout: timeout, error: &lastError))
            {
                descriptor = socketDescriptor
                var one: Int32 = 1
                let size = socklen_t(MemoryLayout<Int32>.size)
                _ = setsockopt(socketDescriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one, size)
                return
            }
            if errno != EINPROGRESS { lastError = errno }
            Glibc.close(socketDescriptor)
        }
        throw Failure(description: "cannot connect to \(peer): \(String(cString: strerror(lastError)))")
    }

    deinit { close() }

    /// Closes the connection; later sends and receives fail.
    public func close() {
        if descriptor >= 0 { Glibc.close(descriptor) }
        descriptor = -1
    }

    /// Sends every byte, or throws.
    public func send(_ bytes: [UInt8]) throws(Failure) {
        var sent = 0
        while sent < bytes.count {
            try wait(for: Int16(POLLOUT), step: "send to")
            let count = bytes.withUnsafeBytes { buffer in
                Glibc.send(descriptor, buffer.baseAddress.map { $0 + sent }, bytes.count - sent, Int32(MSG_NOSIGNAL))
            }
            if count < 0 {
                if errno == EAGAIN || errno == EINTR { continue }
                throw Failure(description: "cannot send to \(peer): \(String(cString: strerror(errno)))")
            }
            sent += count
        }
    }

    /// Bytes that arrived (at least one, at most `limit`); throws when the peer closed or nothing came in time.
    public func receive(limit: Int = 16_384) throws(Failure) -> [UInt8] {
        while true {
            try wait(for: Int16(POLLIN), step: "receive from")
            var buffer = [UInt8](repeating: 0, count: limit)
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, limit, 0) }
            if count < 0 {
                if errno == EAGAIN || errno == EINTR { continue }
                throw Failure(description: "cannot receive from \(peer): \(String(cString: strerror(errno)))")
            }
            if count == 0 { throw Failure(description: "\(peer) closed the connection") }
            return Array(buffer.prefix(count))
        }
    }

    private func wait(for events: Int16, step: String) throws(Failure) {
        guard descriptor >= 0 else { throw Failure(description: "the connection to \(peer) is closed") }
        var entry = pollfd(fd: descriptor, events: events, revents: 0)
        while true {
            let ready = poll(&entry, 1, Self.milliseconds(timeout))
            if ready > 0 { return }
            if ready < 0, errno == EINTR { continue }
            throw Failure(description: "cannot \(step) \(peer): no answer within \(timeout)")
        }
    }

    private static func milliseconds(_ duration: Duration) -> Int32 {
        let (seconds, attoseconds) = duration.components
        return Int32(clamping: max(0, seconds) * 1000 + attoseconds / 1_000_000_000_000_000)
    }

    private static func finishConnect(_ descriptor: Int32, timeout: Duration, error: inout Int32) -> Bool {
        var entry = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
        guard poll(&entry, 1, milliseconds(timeout)) > 0 else {
            error = ETIMEDOUT
            return false
        }
        var code: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &code, &length) == 0, code == 0 else {
            error = code == 0 ? errno : code
            return false
        }
        return true
    }
}
