import Foundation
import TrawlEngine

/// A RESP2 value (Redis's wire format).
package enum RESPValue: Sendable, Equatable {
    case simple(String)
    case error(String)
    case integer(Int)
    case bulk([UInt8]?)
    case array([RESPValue]?)

    /// The value as text: a simple or bulk string, or an integer's digits.
    package var text: String? {
        switch self {
        case .simple(let text): return text
        case .bulk(let bytes?): return String(decoding: bytes, as: UTF8.self)
        case .integer(let number): return String(number)
        default: return nil
        }
    }
}

/// Reads RESP2 values out of bytes as they arrive; bounded (a store answers with a few short values, so anything
/// big is a wrong peer, not an answer).
struct RESPReader {
    struct Malformed: Error, CustomStringConvertible {
        var description: String
    }

    static let longestValue = 1 << 20
    private var buffer: [UInt8] = []
    private var position = 0

    mutating func append(_ bytes: [UInt8]) throws(Malformed) {
        if position > 0 {
            buffer.removeFirst(position)
            position = 0
        }
        buffer += bytes
        guard buffer.count <= Self.longestValue else { throw Malformed(description: "an answer over 1 MiB") }
    }

    /// The next whole value, or `nil` until more bytes arrive.
    mutating func next() throws(Malformed) -> RESPValue? {
        var cursor = position
        guard let value = try parse(&cursor) else { return nil }
        position = cursor
        return value
    }

    private func line(_ cursor: inout Int) -> String? {
        var index = cursor
        while index + 1 < buffer.count {
            if buffer[index] == 13, buffer[index + 1] == 10 {
                let text = String(decoding: buffer[cursor..<index], as: UTF8.self)
                cursor = index + 2
                return text
            }
            index += 1
        }
        return nil
    }

    private func parse(_ cursor: inout Int) throws(Malformed) -> RESPValue? {
        guard cursor < buffer.count else { return nil }
        let kind = buffer[cursor]
        var after = cursor + 1
        guard let text = line(&after) else { return nil }
        switch kind {
        case UInt8(ascii: "+"):
            cursor = after
            return .simple(text)
        case UInt8(ascii: "-"):
            cursor = after
            return .error(text)
        case UInt8(ascii: ":"):
            guard let number = Int(text) else { throw Malformed(description: "integer '\(text)'") }
            cursor = after
            return .integer(number)
        case UInt8(ascii: "$"):
            guard let length = Int(text), length >= -1, length <= Self.longestValue else {
                throw Malformed(description: "bulk length '\(text)'")
            }
            if length == -1 {
                cursor = after
                return .bulk(nil)
            }
            guard after + length + 2 <= buffer.count else { return nil }
            let bytes = Array(buffer[after..<(after + length)])
            cursor = after + length + 2
            return .bulk(bytes)
        case UInt8(ascii: "*"):
            guard let count = Int(text), count >= -1, count <= 1024 else {
                throw Malformed(description: "array length '\(text)'")
            }
            if count == -1 {
                cursor = after
                return .array(nil)
            }
            var elements: [RESPValue] = []
            for _ in 0..<count {
                guard let element = try parse(&after) else { return nil }
                elements.append(element)
            }
            cursor = after
            return .array(elements)
        default:
            throw Malformed(description: "a reply starting with byte \(kind)")
        }
    }

    /// A command as RESP: an array of bulk strings.
    static func command(_ arguments: [String]) -> [UInt8] {
        var bytes = Array("*\(arguments.count)\r\n".utf8)
        for argument in arguments {
            let utf8 = Array(argument.utf8)
            bytes += Array("$\(utf8.count)\r\n".utf8) + utf8 + [13, 10]
        }
        return bytes
    }
}

/// One connection to a Redis server, speaking RESP2 over a `TCPConnection`: small and blocking, used from one
/// queue. A small client of our own rather than hiredis: the store needs four commands (SELECT, EVALSHA, EVAL,
/// PING), and this keeps C out of `TrawlJobs` and adds no system library to build against.
final class RedisConnection {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    private let connection: TCPConnection
    private var reader = RESPReader()

    init(_ address: RateStoreAddress, timeout: Duration) throws(Failure) {
        do {
            connection = try TCPConnection(host: address.host, port: address.port, timeout: timeout)
        } catch {
            throw Failure(description: error.description)
        }
        if address.database != 0 {
            let answer = try command(["SELECT", String(address.database)])
            if case .error(let message) = answer {
                throw Failure(description: "SELECT \(address.database) failed: \(message)")
            }
        }
    }

    /// Sends one command and reads its answer (a Redis error comes back as `.error`, not thrown).
    func command(_ arguments: [String]) throws(Failure) -> RESPValue {
        do {
            try connection.send(RESPReader.command(arguments))
            while true {
                if let value = try reader.next() { return value }
                try reader.append(connection.receive())
            }
        } catch let failure as TCPConnection.Failure {
            connection.close()
            throw Failure(description: failure.description)
        } catch {
            connection.close()
            throw Failure(description: "the store's answer is not RESP: \(error)")
        }
    }
}
